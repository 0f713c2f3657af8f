//===- Plugin.cpp - Entry point of mnemo-pass.so --------------------------===//
//
// Registers the mnemo passes with the host's PassBuilder:
//
//   clang -flto -fpass-plugin=mnemo-pass.so   MarkPass at pipeline start
//   ld.lld --load-pass-plugin=mnemo-pass.so   InstrumentPass at the full-LTO
//                                             early extension point
//   opt -load-pass-plugin=mnemo-pass.so       -passes=mnemo-mark or
//                                             -passes=mnemo-instrument
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "Use.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static void registerCallbacks(PassBuilder &PB) {
  PB.registerAnalysisRegistrationCallback([](ModuleAnalysisManager &MAM) {
    MAM.registerPass([] { return mnemo::UseAnalysis(); });
  });
  PB.registerPipelineStartEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(mnemo::MarkPass());
        MPM.addPass(mnemo::UseRecordPass());
      });
  PB.registerOptimizerLastEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(mnemo::UsePass(mnemo::UsePass::OptimizerLast));
      });
  // InstrumentPass leaves a module carrying !mnemo.use alone: a build that
  // applies a profile is not a profiling build.
  PB.registerFullLinkTimeOptimizationEarlyEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(mnemo::InstrumentPass());
        MPM.addPass(mnemo::UsePass(mnemo::UsePass::FullLTO));
      });
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (Name == "mnemo-mark") {
          MPM.addPass(mnemo::MarkPass());
          return true;
        }
        if (Name == "mnemo-instrument") {
          MPM.addPass(mnemo::InstrumentPass());
          return true;
        }
        if (Name == "mnemo-use") {
          MPM.addPass(mnemo::UsePass());
          return true;
        }
        if (Name == "mnemo-use-print") {
          MPM.addPass(mnemo::UsePrintPass(outs()));
          return true;
        }
        return false;
      });
}

// The project builds with -fvisibility=hidden: export the one symbol the
// hosts look up with dlsym.
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "mnemo", "0.1.0", registerCallbacks};
}
