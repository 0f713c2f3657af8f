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

} // namespace mnemo

#endif // MNEMO_PASS_PASSES_H
