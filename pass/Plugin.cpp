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

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/Compiler.h"

using namespace llvm;

static void registerCallbacks(PassBuilder &PB) {
  PB.registerPipelineStartEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(mnemo::MarkPass());
      });
  PB.registerFullLinkTimeOptimizationEarlyEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(mnemo::InstrumentPass());
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
        return false;
      });
}

// The project builds with -fvisibility=hidden: export the one symbol the
// hosts look up with dlsym.
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "mnemo", "0.1.0", registerCallbacks};
}
