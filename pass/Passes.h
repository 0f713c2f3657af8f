//===- Passes.h - The passes of the mnemo plugin ----------------*- C++ -*-===//
//
// The passes mnemo-pass.so registers (Plugin.cpp) and implements
// (Instrument.cpp).  Instrumentation is split in two so that site ids are
// dense and stable over the whole program:
//
//  - MarkPass runs at compile time (clang -fpass-plugin, pipeline start, at
//    every -O level) and only tags each function defined in the translation
//    unit with the string attribute "mnemo-instrument".
//  - InstrumentPass runs at link time on the merged full-LTO module (lld
//    --load-pass-plugin, full-LTO early extension point) and instruments the
//    tagged functions: code that was not compiled with the plugin (the
//    runtime's callbacks, libraries) is never instrumented.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_PASS_PASSES_H
#define MNEMO_PASS_PASSES_H

#include "llvm/IR/PassManager.h"

namespace mnemo {

/// Adds "mnemo-instrument" to every function definition of the module.
struct MarkPass : llvm::PassInfoMixin<MarkPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

/// Instruments the functions tagged by MarkPass (all functions with
/// -mnemo-instrument-all), emits the site table, __mnemo_pass_abi and
/// __mnemo_register_globals.  Does nothing when no function is tagged, or when
/// the module already defines __mnemo_site_table (instrumented before).
struct InstrumentPass : llvm::PassInfoMixin<InstrumentPass> {
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
  static bool isRequired() { return true; }
};

/// Compile time (pipeline start, with MarkPass): when -mnemo-use=PROFILE is
/// set, records the profile's absolute path as named metadata !mnemo.use, so
/// that the LTO link (which cannot take the option) applies it.
struct UseRecordPass : llvm::PassInfoMixin<UseRecordPass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

/// The mnemo-use pass (Use.cpp): applies a profile (mnemo::UseAnalysis) to
/// the module: !mnemo.* metadata, remarks, memop sizes and PGOMemOPSizeOpt.
struct UsePass : llvm::PassInfoMixin<UsePass> {
  enum Point {
    Explicit,      // opt -passes=mnemo-use: -mnemo-use or !mnemo.use
    OptimizerLast, // clang without LTO: -mnemo-use; nothing in LTO compiles
    FullLTO        // the LTO link: modules carrying !mnemo.use
  };
  explicit UsePass(Point Where = Explicit) : Where(Where) {}
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
  static bool isRequired() { return true; }
  Point Where;
};

/// Asks mnemo::UseAnalysis about every loop, pair of accesses in it, load,
/// memory intrinsic and allocation, and prints the answers (tests).
struct UsePrintPass : llvm::PassInfoMixin<UsePrintPass> {
  explicit UsePrintPass(llvm::raw_ostream &OS) : OS(OS) {}
  llvm::PreservedAnalyses run(llvm::Module &M,
                              llvm::ModuleAnalysisManager &MAM);
  static bool isRequired() { return true; }
  llvm::raw_ostream &OS;
};

} // namespace mnemo

#endif // MNEMO_PASS_PASSES_H
