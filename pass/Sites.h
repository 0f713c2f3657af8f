//===- Sites.h - Site ids of a module, shared by the passes -----*- C++ -*-===//
//
// The site ids InstrumentPass hands out, computed by the same code
// (Instrument.cpp, ModuleInstrumenter::collect) for the mnemo-use pass, which
// maps a profile's sites back to the IR: by id when its build's site table
// hashes as the profile's `binary: site_table_hash`, else by debug location.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_PASS_SITES_H
#define MNEMO_PASS_SITES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Value;
} // namespace llvm

namespace mnemo {

/// Named metadata of a module compiled with -mnemo-use=PROFILE in an LTO
/// build: one operand, a tuple holding the profile's absolute path.  At link
/// time InstrumentPass leaves such a module alone and the use pass runs.
inline constexpr char UseMetadataName[] = "mnemo.use";

/// One site: what the site table says of it, and what it stands for in the
/// IR now.
struct SiteInfo {
  llvm::StringRef Kind; // load, store, pointer, alloc, ... (static storage)
  /// The instruction (accesses, heap calls, allocas, pointer creations); the
  /// llvm::Function (function sites); the loop's header block (loop sites);
  /// the llvm::GlobalVariable (globals).
  const llvm::Value *Anchor = nullptr;
  /// Demangled; "" for globals.  For inlined code the function the line
  /// belongs to, as llvm-symbolizer names it; the enclosing function is then
  /// InlinedInto.
  std::string Function;
  std::string InlinedInto; // "" unless inlined
  std::string InlinedAt;   // the inlining calls, "file:line:col < ..."
  std::string File;
  std::string Name; // the table's name column (globals: the symbol)
  unsigned Line = 0, Column = 0;
  bool LineNearest = false; // Line is the nearest located instruction's
  uint32_t Loop = 0;         // load, store: the innermost loop's site
  uint32_t FunctionSite = 0; // the enclosing function's site; 0 for globals
};

struct ModuleSites {
  std::vector<SiteInfo> Sites; // Sites[id - 1]
  uint64_t TableHash = 0;      // FNV-1a 64 of the blob, as the backend's
  uint64_t TableSize = 0;      // the blob's bytes (__mnemo_site_table_size)
  uint32_t count() const { return uint32_t(Sites.size()); }
};

/// The ids InstrumentPass would give M now (same code, same order), and the
/// hash of the table it would emit.  Simplifies loops as InstrumentPass does
/// (LoopSimplify) and changes nothing else.  False when InstrumentPass would
/// not instrument M (no marked function; instrumented before).
bool computeModuleSites(llvm::Module &M, llvm::ModuleAnalysisManager &MAM,
                        ModuleSites &Out);

/// FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
uint64_t fnv1a64(llvm::StringRef Data);

} // namespace mnemo

#endif // MNEMO_PASS_SITES_H
