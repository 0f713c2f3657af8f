//===- Instrument.cpp - Mnemo instrumentation -----------------------------===//
//
// Inserts the event calls of runtime/abi.h into a program and emits the
// site table that symbolizes them.
//
// Compile time (MarkPass): every function defined in the translation unit
// gets the string attribute "mnemo-instrument".  Nothing else changes, so the
// pre-link optimizer sees the program as written.
//
// Link time (InstrumentPass, on the merged full-LTO module, before the LTO
// optimization pipeline): every tagged function is instrumented in module
// order, and every site gets an id from one counter starting at 1: per
// function, the function itself, then its blocks in layout order (a loop's id
// when its header is reached) and their instructions in order; after all
// functions, the global variables in module order.  Same sources and flags,
// same merged module, same ids.  The LTO pipeline that follows inlines the
// runtime's specialized callbacks, and deletes the calls whose callbacks are
// empty together with the computation of their arguments.
//
// See README.md in this folder for what is instrumented where, and for the
// limitations.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "Sites.h"

#include "abi.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/LoopIterator.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/EscapeEnumerator.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/LowerAtomic.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

#include <dlfcn.h>
#include <mutex>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

using namespace llvm;

#define DEBUG_TYPE "mnemo-instrument"

//===----------------------------------------------------------------------===//
// The runtime interface: every symbol this file emits or calls, as declared
// in runtime/abi.h.  Change one here and there in the same commit, and
// bump the ABI version.
//===----------------------------------------------------------------------===//

constexpr uint32_t MnemoAbiVersion = 7;
constexpr char MnemoLoadName[] = "__mnemo_load";
constexpr char MnemoStoreName[] = "__mnemo_store";
constexpr char MnemoLoadPtrName[] = "__mnemo_load_ptr";
constexpr char MnemoStorePtrName[] = "__mnemo_store_ptr";
constexpr char MnemoPointerCreateName[] = "__mnemo_pointer_create";
constexpr char MnemoHeapSiteName[] = "__mnemo_heap_site";
constexpr char MnemoStackAllocName[] = "__mnemo_stack_alloc";
constexpr char MnemoStackFreeName[] = "__mnemo_stack_free";
constexpr char MnemoFuncEntryName[] = "__mnemo_func_entry";
constexpr char MnemoFuncExitName[] = "__mnemo_func_exit";
constexpr char MnemoLoopInvokeName[] = "__mnemo_loop_invoke";
constexpr char MnemoLoopIterName[] = "__mnemo_loop_iter";
constexpr char MnemoLoopExitName[] = "__mnemo_loop_exit";
constexpr char MnemoLoopSummaryLoadName[] = "__mnemo_loop_summary_load";
constexpr char MnemoLoopSummaryStoreName[] = "__mnemo_loop_summary_store";
constexpr char MnemoLoopSummaryName[] = "__mnemo_loop_summary";
constexpr char MnemoLoopSummaryOpenName[] = "__mnemo_loop_summary_open";
constexpr char MnemoMixedLoadName[] = "__mnemo_mixed_load";
constexpr char MnemoMixedStoreName[] = "__mnemo_mixed_store";
constexpr char MnemoLoopSummaryCloseName[] = "__mnemo_loop_summary_close";
constexpr char MnemoValueName[] = "__mnemo_value";
constexpr char MnemoValueDoneName[] = "__mnemo_value_done";
constexpr char MnemoSummaryPlanName[] = "__mnemo_summary_plan";
constexpr char MnemoGlobalName[] = "__mnemo_global";
constexpr char MnemoAcquireName[] = "__mnemo_acquire";
constexpr char MnemoThreadSiteName[] = "__mnemo_thread_site";
constexpr char MnemoReleaseName[] = "__mnemo_release";
constexpr char MnemoCtxEnterName[] = "__mnemo_ctx_enter";
constexpr char MnemoCtxLeaveName[] = "__mnemo_ctx_leave";
constexpr char MnemoAllocContextsName[] = "__mnemo_alloc_contexts";
constexpr uint64_t MnemoSyncOpenMP = 1; // MNEMO_SYNC_OPENMP
constexpr char MnemoRegisterGlobalsName[] = "__mnemo_register_globals";
constexpr char MnemoSiteTableName[] = "__mnemo_site_table";
constexpr char MnemoSiteTableSizeName[] = "__mnemo_site_table_size";
constexpr char MnemoSiteCountName[] = "__mnemo_site_count";
constexpr char MnemoPassAbiName[] = "__mnemo_pass_abi";

constexpr char MnemoSiteTableHeader[] = "mnemo-sites/3\n";
constexpr char MnemoInstrumentAttr[] = "mnemo-instrument";
constexpr uint64_t MnemoMaxAccessSize = (uint64_t(1) << 24) - 1; // 24 bits
constexpr uint32_t MnemoPointerLoaded = 1;   // __mnemo_pointer_create type
constexpr uint32_t MnemoPointerReturned = 2; // ...
constexpr uint32_t MnemoPointerFromInt = 3;  // ...

// The IR types below are built from these C signatures; fail the build, not
// the program, when abi.h changes under us.
static_assert(MnemoAbiVersion == MNEMO_ABI_VERSION,
              "abi.h changed: update the constexpr block of Instrument.cpp");
static_assert(std::is_same_v<decltype(__mnemo_load),
                             void(uint32_t, const void *, uint64_t, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_store),
                             void(uint32_t, const void *, uint64_t, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_load_ptr),
                             void(uint32_t, const void *, uint64_t, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_store_ptr),
                             void(uint32_t, const void *, uint64_t, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_pointer_create),
                             void(uint32_t, const void *, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_heap_site), void(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_ctx_enter), uint64_t(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_ctx_leave), void(uint64_t)>);
static_assert(std::is_same_v<decltype(__mnemo_acquire), void(const void *)>);
static_assert(std::is_same_v<decltype(__mnemo_thread_site), void(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_release), void(const void *)>);
static_assert(std::is_same_v<decltype(__mnemo_stack_alloc),
                             void(uint32_t, const void *, uint64_t)>);
static_assert(
    std::is_same_v<decltype(__mnemo_stack_free), void(uint32_t, const void *)>);
static_assert(std::is_same_v<decltype(__mnemo_func_entry), void(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_func_exit), void(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_invoke), void(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_iter), void(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_exit), void(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_global),
                             void(uint32_t, const void *, uint64_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_summary_load),
                             void(uint32_t, const void *, int64_t, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_summary_store),
                             void(uint32_t, const void *, int64_t, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_summary),
                             void(uint32_t, uint32_t, uint64_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_summary_open),
                             void(uint32_t, uint32_t)>);
static_assert(
    std::is_same_v<decltype(__mnemo_mixed_load),
                   void(uint32_t, const void *, uint32_t, uint64_t, uint32_t)>);
static_assert(
    std::is_same_v<decltype(__mnemo_mixed_store),
                   void(uint32_t, const void *, uint32_t, uint64_t, uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_loop_summary_close),
                             void(uint32_t, uint64_t)>);
static_assert(std::is_same_v<decltype(__mnemo_summary_plan), const uint32_t>);
static_assert(std::is_same_v<decltype(__mnemo_value), void(uint32_t, uint64_t)>);
static_assert(std::is_same_v<decltype(__mnemo_value_done), uint32_t(uint32_t)>);
static_assert(std::is_same_v<decltype(__mnemo_register_globals), void()>);
static_assert(std::is_same_v<decltype(__mnemo_site_table), const char[]>);
static_assert(
    std::is_same_v<decltype(__mnemo_site_table_size), const uint64_t>);
static_assert(std::is_same_v<decltype(__mnemo_site_count), const uint32_t>);
static_assert(std::is_same_v<decltype(__mnemo_pass_abi), const uint32_t>);

//===----------------------------------------------------------------------===//
// Options (for tests and debugging; the specializer, not these, decides which
// events a build pays for).
//===----------------------------------------------------------------------===//

static cl::opt<bool> ClInstrumentAll(
    "mnemo-instrument-all",
    cl::desc("Instrument every function definition, not only those marked "
             "\"mnemo-instrument\" at compile time (IR tests)"),
    cl::Hidden, cl::init(false));

static cl::opt<bool> ClMemory(
    "mnemo-instrument-memory",
    cl::desc("Instrument loads, stores, atomics and memory intrinsics"),
    cl::Hidden, cl::init(true));

static cl::opt<bool> ClPointers("mnemo-instrument-pointers",
                                cl::desc("Instrument pointer creation"),
                                cl::Hidden, cl::init(true));

static cl::opt<bool> ClHeap("mnemo-instrument-heap",
                            cl::desc("Mark heap allocation call sites"),
                            cl::Hidden, cl::init(true));

static cl::opt<bool> ClStack("mnemo-instrument-stack",
                             cl::desc("Instrument stack objects (allocas)"),
                             cl::Hidden, cl::init(true));

static cl::opt<bool> ClGlobals("mnemo-instrument-globals",
                               cl::desc("Register global variables"),
                               cl::Hidden, cl::init(true));

static cl::opt<int> ClAllocContexts(
    "mnemo-alloc-contexts",
    cl::desc("Call sites for allocation contexts: 1 on, 0 off, -1 as the "
             "module's __mnemo_alloc_contexts says (default)"),
    cl::Hidden, cl::init(-1));

static cl::opt<bool> ClFunctions("mnemo-instrument-functions",
                                 cl::desc("Instrument function entry and exit"),
                                 cl::Hidden, cl::init(true));

static cl::opt<bool> ClLoops("mnemo-instrument-loops",
                             cl::desc("Instrument loop invocation, iteration "
                                      "and exit"),
                             cl::Hidden, cl::init(true));

static cl::opt<int64_t> ClSummaryPlan(
    "mnemo-summary-plan",
    cl::desc("Summarize affine loops as this __mnemo_summary_plan says "
             "(abi.h); -1: read __mnemo_summary_plan from the module, off "
             "when it has none (IR tests set it)"),
    cl::Hidden, cl::init(-1));

STATISTIC(NumLoads, "Number of load events (incl. atomics, memcpy sources)");
STATISTIC(NumStores, "Number of store events (incl. atomics, memcpy/memset)");
STATISTIC(NumPointerLoads,
          "Number of load events of a pointer value (__mnemo_load_ptr)");
STATISTIC(NumPointerStores,
          "Number of store events of a pointer value (__mnemo_store_ptr)");
STATISTIC(NumMemIntrinsics, "Number of memcpy/memmove/memset instrumented");
STATISTIC(NumHeapSites, "Number of heap call sites marked");
STATISTIC(NumContextCalls, "Number of calls entered as allocation contexts");
STATISTIC(NumContextUnleft,
          "Number of invoke edges without __mnemo_ctx_leave (shared successor)");
STATISTIC(NumAllocas, "Number of stack objects instrumented");
STATISTIC(NumGlobals, "Number of global variables registered");
STATISTIC(NumFunctions, "Number of functions instrumented");
STATISTIC(NumLoops, "Number of loops instrumented");
STATISTIC(NumPointerCreations, "Number of pointer creation events");
STATISTIC(NumSummarizedLoops, "Number of loops summarized");
STATISTIC(NumValueChecks,
          "Number of summarized or mixed accesses whose values are checked");
STATISTIC(NumVersionedLoops,
          "Number of value-checked loops given a copy without the checks");
STATISTIC(NumMixedLoops,
          "Number of summarized loops that also keep accesses per access");
STATISTIC(NumSummarizedAccesses,
          "Number of load and store sites summarized in their loop");

namespace {

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

/// Symbols of the runtime and of the profiler's own C API: never instrumented,
/// never registered.
bool isMnemoName(StringRef Name) {
  return Name.starts_with("__mnemo_") || Name.starts_with("mn_");
}

/// What the heap interposer reports for a call.  A call is marked with
/// __mnemo_heap_site only if the interposer (runtime/heap.c) sees it: a
/// site set before a call it does not see would be taken by the next heap
/// event.  Keep this list and heap.c's in step.
enum class HeapCall { None, Alloc, Realloc, Free };

struct HeapFunction {
  const char *Name;
  HeapCall Kind;
};

constexpr HeapFunction HeapFunctions[] = {
    {"malloc", HeapCall::Alloc},
    {"calloc", HeapCall::Alloc},
    {"aligned_alloc", HeapCall::Alloc},
    {"posix_memalign", HeapCall::Alloc},
    {"memalign", HeapCall::Alloc},
    {"valloc", HeapCall::Alloc},
    {"pvalloc", HeapCall::Alloc},
    {"realloc", HeapCall::Realloc},
    {"free", HeapCall::Free},
    // operator new, new[] (LP64 manglings: size_t is m).
    {"_Znwm", HeapCall::Alloc},
    {"_Znam", HeapCall::Alloc},
    {"_ZnwmRKSt9nothrow_t", HeapCall::Alloc},
    {"_ZnamRKSt9nothrow_t", HeapCall::Alloc},
    {"_ZnwmSt11align_val_t", HeapCall::Alloc},
    {"_ZnamSt11align_val_t", HeapCall::Alloc},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t", HeapCall::Alloc},
    {"_ZnamSt11align_val_tRKSt9nothrow_t", HeapCall::Alloc},
    // operator delete, delete[]: plain, sized, nothrow, aligned.
    {"_ZdlPv", HeapCall::Free},
    {"_ZdaPv", HeapCall::Free},
    {"_ZdlPvm", HeapCall::Free},
    {"_ZdaPvm", HeapCall::Free},
    {"_ZdlPvRKSt9nothrow_t", HeapCall::Free},
    {"_ZdaPvRKSt9nothrow_t", HeapCall::Free},
    {"_ZdlPvSt11align_val_t", HeapCall::Free},
    {"_ZdaPvSt11align_val_t", HeapCall::Free},
    {"_ZdlPvmSt11align_val_t", HeapCall::Free},
    {"_ZdaPvmSt11align_val_t", HeapCall::Free},
    {"_ZdlPvSt11align_val_tRKSt9nothrow_t", HeapCall::Free},
    {"_ZdaPvSt11align_val_tRKSt9nothrow_t", HeapCall::Free},
};

HeapCall classifyHeapFunction(StringRef Name) {
  for (const HeapFunction &H : HeapFunctions)
    if (Name == H.Name)
      return H.Kind;
  return HeapCall::None;
}

/// The function a call site calls directly, looking through a cast of the
/// callee (K&R declarations); null for indirect calls and inline asm.
const Function *directCallee(const CallBase &CB) {
  return dyn_cast<Function>(CB.getCalledOperand()->stripPointerCasts());
}

//===----------------------------------------------------------------------===//
// SiteTable: the text blob of abi.h, built one line per id.
//===----------------------------------------------------------------------===//

enum class SiteKind {
  Load,
  Store,
  Pointer,
  Alloc,
  Realloc,
  Free,
  Stack,
  Global,
  Function,
  Loop,
  Thread,
  Call
};

StringRef siteKindName(SiteKind K) {
  switch (K) {
  case SiteKind::Load:
    return "load";
  case SiteKind::Store:
    return "store";
  case SiteKind::Pointer:
    return "pointer";
  case SiteKind::Alloc:
    return "alloc";
  case SiteKind::Realloc:
    return "realloc";
  case SiteKind::Free:
    return "free";
  case SiteKind::Stack:
    return "stack";
  case SiteKind::Global:
    return "global";
  case SiteKind::Function:
    return "function";
  case SiteKind::Loop:
    return "loop";
  case SiteKind::Thread:
    return "thread";
  case SiteKind::Call:
    return "call";
  }
  llvm_unreachable("bad site kind");
}

/// A subprogram's name as the table names functions: its linkage name
/// demangled (C++), else its name (C).
std::string subprogramName(const DISubprogram *SP) {
  StringRef Linkage = SP->getLinkageName();
  return demangle(Linkage.empty() ? SP->getName() : Linkage);
}

/// A source file's name as the site table gives it: as the compiler was given
/// it, relative to the folder it compiled in (the unit's directory).  Where
/// clang split an absolute path at another folder (the path's common prefix
/// with the working folder: /work/src/a.c compiled in /work/build becomes
/// "src/a.c" in "/work"), the two are joined again, so that a relative name is
/// always relative to the compile folder and a reader can open it.
static StringRef sourceFile(const DIFile *File, const DICompileUnit *CU) {
  static std::mutex Lock;
  static StringSet<> Joined; // owns the joined names the sites refer to
  if (!File)
    return "";
  StringRef Name = File->getFilename(), Dir = File->getDirectory();
  if (Name.empty() || sys::path::is_absolute(Name) || Dir.empty() || !CU ||
      Dir == CU->getDirectory())
    return Name;
  SmallString<256> Path(Dir);
  sys::path::append(Path, Name);
  std::lock_guard<std::mutex> G(Lock);
  return Joined.insert(Path).first->getKey();
}

static StringRef sourceFile(const DILocation *L) {
  const DISubprogram *SP = L ? L->getScope()->getSubprogram() : nullptr;
  return L ? sourceFile(L->getFile(), SP ? SP->getUnit() : nullptr) : StringRef();
}

static StringRef sourceFile(const DISubprogram *SP) {
  return SP ? sourceFile(SP->getFile(), SP->getUnit()) : StringRef();
}

static StringRef sourceFile(const DILocalVariable *Var) {
  const DISubprogram *SP = Var->getScope()->getSubprogram();
  return sourceFile(Var->getFile(), SP ? SP->getUnit() : nullptr);
}

/// A global's unit: its scope's, through namespaces, classes and (a function's
/// static variable) the function; else (a string literal has no scope) the unit
/// that lists it.
static StringRef sourceFile(const DIGlobalVariable *Var,
                            const DICompileUnit *Listed) {
  const DIScope *S = Var->getScope();
  while (S && !isa<DICompileUnit>(S) && !isa<DILocalScope>(S))
    S = S->getScope();
  const DICompileUnit *CU = dyn_cast_or_null<DICompileUnit>(S);
  if (const auto *L = dyn_cast_or_null<DILocalScope>(S))
    CU = L->getSubprogram() ? L->getSubprogram()->getUnit() : nullptr;
  return sourceFile(Var->getFile(), CU ? CU : Listed);
}

/// Where a site is in the source: "" and 0 without debug information.
struct SourcePos {
  StringRef File;
  unsigned Line = 0;
  unsigned Column = 0;
  /// Inlined code: the subprogram the line belongs to, demangled, which the
  /// table's `function` names (the enclosing function goes to
  /// `inlined_into`); "" when the code is the enclosing function's own.
  std::string Scope;
  /// Inlined code: the inlining calls from the one of Scope outwards, each
  /// "file:line[:column]", joined by " < ".
  std::string InlinedAt;
  /// The line is the nearest located instruction's (nearestLoc()).
  bool Nearest = false;

  /// As llvm-symbolizer reports DL: the innermost frame's function and the
  /// chain of inlining calls.
  static SourcePos of(const DebugLoc &DL) {
    SourcePos P;
    const DILocation *L = DL.get();
    if (!L)
      return P;
    P.File = sourceFile(L);
    P.Line = L->getLine();
    P.Column = L->getColumn();
    if (!L->getInlinedAt())
      return P;
    if (const DISubprogram *SP = L->getScope()->getSubprogram())
      P.Scope = subprogramName(SP);
    for (const DILocation *At = L->getInlinedAt(); At;
         At = At->getInlinedAt()) {
      if (!P.InlinedAt.empty())
        P.InlinedAt += " < ";
      P.InlinedAt += sourceFile(At).str() + ":" +
                     std::to_string(At->getLine());
      if (At->getColumn())
        P.InlinedAt += ":" + std::to_string(At->getColumn());
    }
    return P;
  }
};

/// Hands out site ids, densely from 1, and records one table line per id.
/// The two last columns (loop, fields) can be set after the line is added:
/// a load may come before its loop's header in layout order.
class SiteTable {
public:
  /// Returns the id of a new site.  Fields are copied; a tab or newline in
  /// them becomes a space.
  /// Anchor is what the site stands for in the IR (mnemo::SiteInfo).
  /// Function is the enclosing function; Pos.Scope, when set, replaces it
  /// in the `function` column and moves it to `inlined_into`.
  uint32_t add(SiteKind Kind, const Value *Anchor, StringRef Function,
               const SourcePos &Pos, StringRef Name = "",
               uint64_t TypeSize = 0) {
    if (NextId == UINT32_MAX)
      report_fatal_error("mnemo: more than 2^32-2 sites in one program");
    Row R;
    // Inlined code is named as a symbolizer names it: the function the line
    // belongs to, inlined into the one that holds the instruction.
    if (!Pos.Scope.empty()) {
      R.Info.InlinedInto = Function.str();
      R.Info.InlinedAt = Pos.InlinedAt;
      Function = Pos.Scope;
    }
    R.Info.LineNearest = Pos.Nearest;
    R.Info.Kind = siteKindName(Kind);
    R.Info.Anchor = Anchor;
    R.Info.Function = Function.str();
    R.Info.File = Pos.File.str();
    R.Info.Name = Name.str();
    R.Info.Line = Pos.Line;
    R.Info.Column = Pos.Column;
    R.Info.FunctionSite = Kind == SiteKind::Function ? NextId : CurrentFunction;
    appendField(R.Line, siteKindName(Kind));
    R.Line += '\t';
    appendField(R.Line, Function);
    R.Line += '\t';
    appendField(R.Line, Pos.File);
    R.Line += '\t';
    R.Line += std::to_string(Pos.Line);
    R.Line += '\t';
    R.Line += std::to_string(Pos.Column);
    R.Line += '\t';
    appendField(R.Line, Name);
    R.Line += '\t';
    R.Line += std::to_string(TypeSize);
    Rows.push_back(std::move(R));
    return NextId++;
  }

  /// The innermost loop (its site id) of load or store site Id.
  void setLoop(uint32_t Id, uint32_t Loop) {
    Rows[Id - 1].Loop = Loop;
    Rows[Id - 1].Info.Loop = Loop;
  }
  /// The function site the sites added next belong to (0: none, globals).
  void setCurrentFunction(uint32_t Id) { CurrentFunction = Id; }
  /// The layout of the structure allocated or declared at site Id.
  void setFields(uint32_t Id, StringRef Fields) {
    Rows[Id - 1].Fields.clear();
    appendField(Rows[Id - 1].Fields, Fields);
  }

  /// The highest id handed out (0 if none).
  uint32_t count() const { return NextId - 1; }

  /// The blob, as __mnemo_site_table holds it (without the NUL).
  std::string text() const;
  /// What each site stands for, by id (mnemo::ModuleSites).
  void exportTo(mnemo::ModuleSites &Out) const;

  /// Defines __mnemo_site_table (NUL-terminated for convenience; the NUL is
  /// not counted in __mnemo_site_table_size), __mnemo_site_table_size,
  /// __mnemo_site_count and __mnemo_pass_abi, and adds them to llvm.used.
  void emit(Module &M) const;

private:
  struct Row {
    std::string Line; // the seven columns of mnemo-sites/1
    uint32_t Loop = 0;
    std::string Fields;
    mnemo::SiteInfo Info; // Info.LineNearest, .InlinedInto, .InlinedAt: the
                          // last three columns (mnemo-sites/3)
  };

  static void appendField(std::string &Out, StringRef S) {
    for (char C : S)
      Out += (C == '\t' || C == '\n' || C == '\r') ? ' ' : C;
  }

  std::vector<Row> Rows; // Rows[k - 1] is id k
  uint32_t NextId = 1;
  uint32_t CurrentFunction = 0;
};

/// Defines an external constant named Name, replacing a declaration of it
/// (a reference from another bitcode file) if there is one.
GlobalVariable *defineConstant(Module &M, StringRef Name, Constant *Init,
                               Align Alignment) {
  auto *GV = new GlobalVariable(M, Init->getType(), /*isConstant=*/true,
                                GlobalValue::ExternalLinkage, Init, "");
  if (GlobalValue *Old = M.getNamedValue(Name)) {
    Old->replaceAllUsesWith(GV);
    GV->takeName(Old);
    Old->eraseFromParent();
  } else {
    GV->setName(Name);
  }
  GV->setAlignment(Alignment);
  GV->setVisibility(GlobalValue::DefaultVisibility);
  return GV;
}

std::string SiteTable::text() const {
  std::string Text = MnemoSiteTableHeader;
  for (const Row &R : Rows) {
    Text += R.Line;
    Text += '\t';
    Text += std::to_string(R.Loop);
    Text += '\t';
    Text += R.Fields;
    Text += '\t';
    Text += R.Info.LineNearest ? '1' : '0';
    Text += '\t';
    appendField(Text, R.Info.InlinedInto);
    Text += '\t';
    appendField(Text, R.Info.InlinedAt);
    Text += '\n';
  }
  return Text;
}

void SiteTable::exportTo(mnemo::ModuleSites &Out) const {
  std::string Text = text();
  Out.TableHash = mnemo::fnv1a64(Text);
  Out.TableSize = Text.size();
  Out.Sites.clear();
  Out.Sites.reserve(Rows.size());
  for (const Row &R : Rows)
    Out.Sites.push_back(R.Info);
}

void SiteTable::emit(Module &M) const {
  LLVMContext &Ctx = M.getContext();
  std::string Text = text();
  Constant *Blob = ConstantDataArray::getString(Ctx, Text, /*AddNull=*/true);
  GlobalValue *Used[] = {
      defineConstant(M, MnemoSiteTableName, Blob, Align(1)),
      defineConstant(M, MnemoSiteTableSizeName,
                     ConstantInt::get(Type::getInt64Ty(Ctx), Text.size()),
                     Align(8)),
      defineConstant(M, MnemoSiteCountName,
                     ConstantInt::get(Type::getInt32Ty(Ctx), count()),
                     Align(4)),
      defineConstant(M, MnemoPassAbiName,
                     ConstantInt::get(Type::getInt32Ty(Ctx), MnemoAbiVersion),
                     Align(4)),
  };
  appendToUsed(M, Used);
}

//===----------------------------------------------------------------------===//
// Structure layouts: the `fields` column, from debug information.
//===----------------------------------------------------------------------===//

/// T without typedefs and qualifiers.  *Typedef gets the outermost typedef's
/// name, which names an anonymous structure (typedef struct {...} T).
const DIType *stripQualifiers(const DIType *T, StringRef *Typedef = nullptr) {
  while (auto *D = dyn_cast_or_null<DIDerivedType>(T)) {
    switch (D->getTag()) {
    case dwarf::DW_TAG_typedef:
      if (Typedef && Typedef->empty())
        *Typedef = D->getName();
      [[fallthrough]];
    case dwarf::DW_TAG_const_type:
    case dwarf::DW_TAG_volatile_type:
    case dwarf::DW_TAG_restrict_type:
    case dwarf::DW_TAG_atomic_type:
      T = D->getBaseType();
      continue;
    default:
      return T;
    }
  }
  return T;
}

/// A member or base name in the `fields` column: the characters that
/// separate the column's parts become '_' (a base may be "pair<int, long>").
std::string fieldName(StringRef Name) {
  std::string Out;
  for (char C : Name)
    Out += (C == ',' || C == '@' || C == ':' || C == '/') ? '_' : C;
  return Out;
}

/// The `fields` column for an object of type T: "Name/size:m@off,..." when
/// T, through typedefs, qualifiers and arrays, is a defined struct or class,
/// else "".  Offsets and size in bytes; a bitfield gives the offset of its
/// storage unit; a base class is a field named after its type; static
/// members and virtual bases (no fixed offset) are left out.
std::string structFields(const DIType *T) {
  StringRef Typedef;
  T = stripQualifiers(T, &Typedef);
  while (auto *A = dyn_cast_or_null<DICompositeType>(T)) {
    if (A->getTag() != dwarf::DW_TAG_array_type)
      break;
    T = stripQualifiers(A->getBaseType(), &Typedef);
  }
  auto *S = dyn_cast_or_null<DICompositeType>(T);
  if (!S || S->isForwardDecl() ||
      (S->getTag() != dwarf::DW_TAG_structure_type &&
       S->getTag() != dwarf::DW_TAG_class_type))
    return "";
  // By offset, as a reader matches them (a vtable pointer comes before the
  // bases in offset, after them in the elements).
  SmallVector<std::pair<uint64_t, std::string>, 16> Fields;
  for (const DINode *N : S->getElements()) {
    auto *M = dyn_cast<DIDerivedType>(N);
    if (!M || M->isStaticMember() ||
        (M->getTag() != dwarf::DW_TAG_member &&
         M->getTag() != dwarf::DW_TAG_inheritance) ||
        (M->getTag() == dwarf::DW_TAG_inheritance && M->isVirtual()))
      continue;
    uint64_t Bits = M->getOffsetInBits();
    if (M->isBitField())
      if (auto *C = dyn_cast_or_null<ConstantInt>(M->getStorageOffsetInBits()))
        Bits = C->getZExtValue();
    StringRef Name = M->getName();
    if (M->getTag() == dwarf::DW_TAG_inheritance && M->getBaseType())
      Name = M->getBaseType()->getName();
    Fields.push_back({Bits / 8, fieldName(Name)});
  }
  // Stable: members sharing an offset (bitfields) stay in declaration order.
  SmallVector<unsigned, 16> Order(Fields.size());
  for (unsigned I = 0; I < Order.size(); ++I)
    Order[I] = I;
  std::sort(Order.begin(), Order.end(), [&](unsigned A, unsigned B) {
    return std::make_pair(Fields[A].first, A) <
           std::make_pair(Fields[B].first, B);
  });
  std::string Out = S->getName().empty() ? Typedef.str() : S->getName().str();
  Out += '/';
  Out += std::to_string(S->getSizeInBits() / 8);
  Out += ':';
  for (unsigned I : Order) {
    const auto &[Offset, Name] = Fields[I];
    if (Out.back() != ':')
      Out += ',';
    Out += Name;
    Out += '@';
    Out += std::to_string(Offset);
  }
  return Out;
}

/// The type a C allocation (malloc, calloc, realloc ...: no !heapallocsite)
/// is made for, from the variables its result is assigned to: the dbg.value
/// of the value itself (the variable was promoted), or a store of the value
/// into an alloca a variable lives in (-O0).  Each must be a pointer, and all
/// must point to the same structure, or to void; a char * or a second
/// structure (a buffer carved up by casts) gives "".  An assignment anywhere
/// else (into a structure member, through a pointer) is not seen.
std::string assignedFields(CallBase &CB) {
  SmallVector<const DILocalVariable *, 4> Vars;
  SmallVector<DbgValueInst *, 2> Values;
  SmallVector<DbgVariableRecord *, 2> Records;
  findDbgValues(Values, &CB, &Records);
  // Only a variable that *is* the pointer: no expression, no argument list.
  for (DbgValueInst *DVI : Values)
    if (!DVI->hasArgList() && DVI->getExpression()->getNumElements() == 0)
      Vars.push_back(DVI->getVariable());
  for (DbgVariableRecord *DVR : Records)
    if (!DVR->hasArgList() && DVR->getExpression()->getNumElements() == 0)
      Vars.push_back(DVR->getVariable());
  for (User *U : CB.users())
    if (auto *SI = dyn_cast<StoreInst>(U))
      if (SI->getValueOperand() == &CB)
        if (auto *AI = dyn_cast<AllocaInst>(SI->getPointerOperand())) {
          for (DbgVariableRecord *DVR : findDVRDeclares(AI))
            if (DVR->getExpression()->getNumElements() == 0)
              Vars.push_back(DVR->getVariable());
          for (DbgDeclareInst *DDI : findDbgDeclares(AI))
            if (DDI->getExpression()->getNumElements() == 0)
              Vars.push_back(DDI->getVariable());
        }
  std::string Fields;
  for (const DILocalVariable *V : Vars) {
    auto *P = dyn_cast_or_null<DIDerivedType>(stripQualifiers(V->getType()));
    if (!P || P->getTag() != dwarf::DW_TAG_pointer_type)
      return "";
    const DIType *Pointee = stripQualifiers(P->getBaseType());
    if (!Pointee) // void *
      continue;
    std::string F = structFields(Pointee);
    if (F.empty() || (!Fields.empty() && F != Fields))
      return "";
    Fields = std::move(F);
  }
  return Fields;
}

//===----------------------------------------------------------------------===//
// SummaryPlan: what __mnemo_summary_plan says the callbacks do.
//===----------------------------------------------------------------------===//

/// Written by the specializer into the callbacks, which the LTO link merged
/// into this module (abi.h): for each entry point, whether its body is empty,
/// sends a record an access summary can stand for, or must stay per access.
struct SummaryPlan {
  enum State : unsigned {
    Empty = 0,
    Summarizable = 1,
    PerAccess = 2,
    /// As Summarizable, and checks the value against the site's published
    /// set: a summarized or mixed access calls __mnemo_value instead.
    ValueChecked = 3
  };
  enum Entry : unsigned {
    Load,
    Store,
    LoadPtr,
    StorePtr,
    PointerCreate,
    LoopEvents
  };
  uint32_t Bits = 0;

  bool on() const { return (Bits >> 31) & 1; }
  /// Loops may also keep accesses per access, with their position
  /// (mixed loops, README.md).
  bool mixedOn() const { return on() && ((Bits >> 30) & 1); }
  State state(Entry E) const {
    return State((Bits >> (2 * E)) & 3);
  }
  /// -mnemo-summary-plan if given, else the module's __mnemo_summary_plan,
  /// else off (callbacks that know nothing of summaries).
  static SummaryPlan of(const Module &M) {
    SummaryPlan P;
    if (ClSummaryPlan >= 0) {
      P.Bits = uint32_t(ClSummaryPlan);
      return P;
    }
    if (const GlobalVariable *G = M.getNamedGlobal(MnemoSummaryPlanName))
      if (G->hasDefinitiveInitializer())
        if (auto *C = dyn_cast<ConstantInt>(G->getInitializer()))
          P.Bits = uint32_t(C->getZExtValue());
    return P;
  }
};

//===----------------------------------------------------------------------===//
// RuntimeCallbacks: the entry points, declared in the module.
//===----------------------------------------------------------------------===//

struct RuntimeCallbacks {
  FunctionCallee Load, Store, LoadPtr, StorePtr, PointerCreate, HeapSite,
      StackAlloc, StackFree, FuncEntry, FuncExit, LoopInvoke, LoopIter,
      LoopExit, LoopSummaryLoad, LoopSummaryStore, LoopSummary,
      LoopSummaryOpen, MixedLoad, MixedStore, LoopSummaryClose, Value, ValueDone, Global,
      Acquire, Release, ThreadSite, CtxEnter, CtxLeave;

  explicit RuntimeCallbacks(Module &M) {
    LLVMContext &Ctx = M.getContext();
    Type *Void = Type::getVoidTy(Ctx);
    Type *I32 = Type::getInt32Ty(Ctx);
    Type *I64 = Type::getInt64Ty(Ctx);
    Type *Ptr = PointerType::getUnqual(Ctx);
    // The entry points never throw (abi.h): calls to them stay calls when
    // EscapeEnumerator turns throwing calls into invokes.
    AttributeList Attrs =
        AttributeList().addFnAttribute(Ctx, Attribute::NoUnwind);
    auto Get = [&](StringRef Name, Type *Ret, ArrayRef<Type *> Params) {
      return M.getOrInsertFunction(Name, FunctionType::get(Ret, Params, false),
                                   Attrs);
    };
    Load = Get(MnemoLoadName, Void, {I32, Ptr, I64, I32});
    Store = Get(MnemoStoreName, Void, {I32, Ptr, I64, I32});
    LoadPtr = Get(MnemoLoadPtrName, Void, {I32, Ptr, I64, I32});
    StorePtr = Get(MnemoStorePtrName, Void, {I32, Ptr, I64, I32});
    PointerCreate = Get(MnemoPointerCreateName, Void, {I32, Ptr, I32});
    HeapSite = Get(MnemoHeapSiteName, Void, {I32});
    StackAlloc = Get(MnemoStackAllocName, Void, {I32, Ptr, I64});
    StackFree = Get(MnemoStackFreeName, Void, {I32, Ptr});
    FuncEntry = Get(MnemoFuncEntryName, Void, {I32});
    FuncExit = Get(MnemoFuncExitName, Void, {I32});
    LoopInvoke = Get(MnemoLoopInvokeName, Void, {I32});
    LoopIter = Get(MnemoLoopIterName, Void, {I32});
    LoopExit = Get(MnemoLoopExitName, Void, {I32});
    LoopSummaryLoad = Get(MnemoLoopSummaryLoadName, Void, {I32, Ptr, I64, I32});
    LoopSummaryStore =
        Get(MnemoLoopSummaryStoreName, Void, {I32, Ptr, I64, I32});
    LoopSummary = Get(MnemoLoopSummaryName, Void, {I32, I32, I64});
    LoopSummaryOpen = Get(MnemoLoopSummaryOpenName, Void, {I32, I32});
    MixedLoad = Get(MnemoMixedLoadName, Void, {I32, Ptr, I32, I64, I32});
    MixedStore = Get(MnemoMixedStoreName, Void, {I32, Ptr, I32, I64, I32});
    LoopSummaryClose = Get(MnemoLoopSummaryCloseName, Void, {I32, I64});
    Value = Get(MnemoValueName, Void, {I32, I64});
    ValueDone = Get(MnemoValueDoneName, I32, {I32});
    Global = Get(MnemoGlobalName, Void, {I32, Ptr, I64});
    Acquire = Get(MnemoAcquireName, Void, {Ptr});
    Release = Get(MnemoReleaseName, Void, {Ptr});
    ThreadSite = Get(MnemoThreadSiteName, Void, {I32});
    CtxEnter = Get(MnemoCtxEnterName, I64, {I32});
    CtxLeave = Get(MnemoCtxLeaveName, Void, {I64});
  }

  /// The load (store) entry point for a value of type Ty: the _ptr one for a
  /// scalar pointer (abi.h), so that the specializer can empty the other one
  /// for modules that declare `accesses: pointer`.
  FunctionCallee loadOf(Type *Ty) const {
    return Ty->isPointerTy() ? LoadPtr : Load;
  }
  FunctionCallee storeOf(Type *Ty) const {
    return Ty->isPointerTy() ? StorePtr : Store;
  }
};

/// Whether I has a location with a line (not 0, the merged locations' line).
/// Debug intrinsics do not count: their lines are their variables'.
static bool hasLine(const Instruction &I) {
  const DILocation *L = I.getDebugLoc().get();
  return L && L->getLine() && !isa<DbgInfoIntrinsic>(I);
}

/// Where a loop starts in the source: its llvm.loop start location, else
/// its header's first located instruction.  In an OpenMP outlined body clang
/// gives the loops of a worksharing construct the directive's location (the
/// `#pragma` line), and the `for` itself only to their latch branches: the
/// latch's line names the loop the user wrote, whichever thread runs it.
static DebugLoc loopStart(const Function &F, const Loop &L) {
  DebugLoc Start = L.getStartLoc();
  if (!Start)
    for (const Instruction &I : *L.getHeader())
      if ((Start = I.getDebugLoc()))
        break;
  const BasicBlock *Latch = L.getLoopLatch();
  if (Start && Latch && F.getName().contains(".omp_outlined"))
    if (DebugLoc Back = Latch->getTerminator()->getDebugLoc())
      if (Back.getLine() && Back.getLine() != Start.getLine())
        return Back;
  return Start;
}

/// The source variable an alloca holds, from its dbg.declare or (with
/// assignment tracking, the default at -O1 and above with -g) its dbg.assign.
const DILocalVariable *stackVariable(AllocaInst &AI) {
  for (DbgVariableRecord *DVR : findDVRDeclares(&AI))
    return DVR->getVariable();
  for (DbgDeclareInst *DDI : findDbgDeclares(&AI))
    return DDI->getVariable();
  for (DbgVariableRecord *DVR : at::getDVRAssignmentMarkers(&AI))
    return DVR->getVariable();
  for (DbgAssignIntrinsic *DAI : at::getAssignmentMarkers(&AI))
    return DAI->getVariable();
  return nullptr;
}

//===----------------------------------------------------------------------===//
// FunctionInstrumenter: one function, collected first, then rewritten.
//===----------------------------------------------------------------------===//

class FunctionInstrumenter {
public:
  FunctionInstrumenter(Function &F, FunctionAnalysisManager &FAM,
                       SiteTable &Sites, Function *&StackFreeSlot)
      : F(F), M(*F.getParent()), Ctx(F.getContext()), DL(M.getDataLayout()),
        FAM(FAM), Sites(Sites), StackFreeSlot(StackFreeSlot),
        FuncName(demangle(F.getName())) {}

  /// Simplifies the loops (preheaders, dedicated exits), then assigns the
  /// function's site ids in the order the file header states and records
  /// what to insert.  Changes nothing else.
  void collect();
  /// Inserts the calls to RT's entry points, summarizing the loops that
  /// qualify under Plan.  Call once, after collect().
  void rewrite(const RuntimeCallbacks &Callbacks, SummaryPlan Plan);
  Function &function() const { return F; }
  uint32_t functionSite() const { return FunctionSite; }

private:
  struct LoopSite {
    Loop *L;
    uint32_t Site;
  };

  /// A stack object: an alloca with a site.
  struct StackObject {
    AllocaInst *AI;
    uint32_t Site;
    bool Markers = false;  // has llvm.lifetime.start: alloc/free at markers
    bool AtEntry = false;  // allocated in the entry sequence
    bool UsesSlot = false; // freed through a slot (see planStackFrees)
    AllocaInst *Slot = nullptr;
  };

  enum class EventKind {
    Load,          // Site: load, PtrSite: pointer (type 1)
    Store,         // Site: store
    AtomicRMW,     // Site: load, Site2: store, PtrSite: pointer
    CmpXchg,       // Site: load, Site2: store, PtrSite: pointer
    MemTransfer,   // Site: load (source), Site2: store (destination)
    MemSet,        // Site: store
    HeapCall,      // Site: alloc, realloc or free
    ThreadCall,    // Site: a call of pthread_create
    CallPointer,   // PtrSite: pointer (type 2)
    IntToPtr,      // PtrSite: pointer (type 3)
    Alloca,        // Obj: stack object allocated right after its alloca
    LifetimeStart, // the stack object is found from the marker's operand
    LifetimeEnd,   // ...
    StackRestore   // frees RestoreFrees[I]
  };

  /// What to insert around one instruction; a zero site means "nothing".
  struct Event {
    EventKind Kind;
    Instruction *I;
    uint32_t Site = 0;
    uint32_t Site2 = 0;
    uint32_t PtrSite = 0;
    unsigned Obj = 0;
    bool Summarized = false; // Site's access goes out in its loop's summary
    int MixedIn = -1;  // index in Summaries: Site's access goes out with its
                       // position in that mixed loop's iterations
    unsigned Rank = 0; // ... after this many of its summarized accesses
    bool CheckValue = false; // summarized or mixed: __mnemo_value at it
  };

  /// A loop whose invocations go out as one summary each (README.md, "Loop
  /// summaries"): its affine accesses in the order an iteration runs them.
  struct Summary {
    struct Access {
      unsigned Event;  // index in Events
      bool IsStore;
      uint32_t Site;
      uint32_t Size;   // bytes, saturated as accessSize() does
      const SCEV *StartS, *StepS; // address in iteration 0; bytes per iteration
      Value *Start = nullptr; // expanded in the preheader
      Value *Step = nullptr;  // i64, bytes per iteration
    };
    /// An access that stays per access in a mixed loop.
    struct Other {
      unsigned Event;  // index in Events
      unsigned Rank;   // summarized accesses before it in an iteration
    };
    Loop *L;  // the summarized loop
    uint32_t Site;
    SmallVector<Access, 8> Accesses;
    SmallVector<Other, 4> Others; // non-empty: a mixed loop
    Value *Iterations = nullptr; // header executions so far, from the header
    Value *Iteration = nullptr;  // the current one, from 0 (mnemo.iter)
    bool mixed() const { return !Others.empty(); }
  };

  /// What one event of a loop is to its summary.
  enum class SummaryFit {
    Taken,   // an affine access, added to the summary
    Silent,  // sends nothing: neither in the summary nor in its way
    Other,   // a plain access that can go out per access with its position
    Blocks   // the loop cannot be summarized
  };

  // ---- collection ----
  void simplifyLoops();
  void findEntryPoint();
  void findLifetimeMarkers();
  void collectInstruction(Instruction &I);
  void collectAccess(Instruction &I, Value *Ptr, Type *ValueTy, bool Reads,
                     bool Writes, bool MakesPointer);
  void collectCall(CallBase &CB);
  void collectAlloca(AllocaInst &AI);
  void planStackFrees();
  bool isInstrumentablePointer(Value *Ptr) const;
  uint32_t site(SiteKind Kind, const Instruction &I, StringRef Name = "",
                uint64_t TypeSize = 0) {
    bool Nearest = false;
    DebugLoc Loc = nearestLoc(I, Nearest);
    SourcePos Pos = SourcePos::of(Loc);
    Pos.Nearest = Nearest;
    uint32_t Id = Sites.add(Kind, &I, FuncName, Pos, Name, TypeSize);
    if (Kind == SiteKind::Load || Kind == SiteKind::Store)
      Accesses.push_back({&I, Id});
    return Id;
  }
  void setAccessLoops();
  DebugLoc nearestLoc(const Instruction &I, bool &Nearest);
  const Instruction *firstLocated(const BasicBlock &BB) const;

  // ---- loop summaries ----
  void planSummaries(SummaryPlan Plan);
  std::optional<Summary> qualify(const LoopSite &LS, SummaryPlan Plan,
                                 ScalarEvolution &SE, SCEVExpander &Exp) const;
  bool hasSummaryShape(const Loop *L) const;
  bool runsOncePerIteration(const BasicBlock *BB, const Loop *L) const;
  SummaryFit addSummaryAccess(Summary &S, unsigned EventIdx, SummaryPlan Plan,
                              ScalarEvolution &SE, SCEVExpander &Exp) const;
  void orderSummaryAccesses(Summary &S) const;
  void expandStarts(Summary &S, SCEVExpander &Exp);
  void countIterations(Summary &S);
  static SummaryPlan::Entry entryOf(const Event &E);
  void versionChecks(const Summary &S);
  void splitExitsOfCopy(Loop *L, Loop *Copy, ValueToValueMapTy &VMap);
  void emitSummary(IRBuilder<> &IRB, const Summary &S) const;
  void emitSummaryOpen(IRBuilder<> &IRB, const Summary &S) const;

  // ---- rewriting ----
  void instrumentEntry();
  void instrumentLoops();
  /// Inserts E's calls: one method per kind of event.
  void instrumentEvent(const Event &E);
  void instrumentLoad(const Event &E);
  void instrumentStore(const Event &E);
  void instrumentAtomicRMW(const Event &E);
  void instrumentCmpXchg(const Event &E);
  void instrumentMemTransfer(const Event &E);
  void instrumentMemSet(const Event &E);
  void instrumentHeapCall(const Event &E);
  void instrumentThreadCall(const Event &E);
  void instrumentCallPointer(const Event &E);
  void instrumentIntToPtr(const Event &E);
  void instrumentAlloca(const Event &E);
  void instrumentLifetime(const Event &E);
  void instrumentStackRestore(const Event &E);
  void instrumentExits();
  void collectSync();
  void instrumentSync();
  bool isOpenMPBody() const;
  DebugLoc locFor(const Instruction *I) const;
  void setInsertPoint(IRBuilder<> &IRB, BasicBlock::iterator It,
                      const Instruction *LocFrom) const;
  void insertBefore(IRBuilder<> &IRB, Instruction *I) const;
  void insertAfter(IRBuilder<> &IRB, Instruction *I) const;
  CallInst *emit(IRBuilder<> &IRB, FunctionCallee Callee,
                 ArrayRef<Value *> Args) const;
  Value *toI64(IRBuilder<> &IRB, Value *V) const;
  Value *accessSize(IRBuilder<> &IRB, Type *Ty) const;
  Value *lengthSize(IRBuilder<> &IRB, Value *Len) const;
  Value *allocaSize(IRBuilder<> &IRB, AllocaInst *AI) const;
  void emitStackFree(IRBuilder<> &IRB, unsigned Obj);
  Function *getStackFreeSlot();

  Function &F;
  Module &M;
  LLVMContext &Ctx;
  const DataLayout &DL;
  FunctionAnalysisManager &FAM;
  const RuntimeCallbacks *RT = nullptr; // set by rewrite()
  SiteTable &Sites;
  Function *&StackFreeSlot; // module-wide helper, made on first use
  std::string FuncName;     // demangled
  // The walk of collect(), for nearestLoc(): the last instruction of the
  // current block with a line, and firstLocated() of the block (on demand).
  const Instruction *LastLocated = nullptr;
  const BasicBlock *FirstLocatedOf = nullptr;
  const Instruction *FirstLocated = nullptr;

  DominatorTree *DT = nullptr;
  LoopInfo *LI = nullptr;

  uint32_t FunctionSite = 0;
  Instruction *EntryPoint = nullptr; // first non-alloca of the entry block
  SmallVector<LoopSite, 8> Loops;    // in id order
  std::vector<StackObject> Stack;    // in id order
  DenseMap<const AllocaInst *, unsigned> StackIndex;
  SmallPtrSet<const AllocaInst *, 8> WithMarkers;
  /// The stack objects each llvm.stackrestore releases.
  DenseMap<const Instruction *, SmallVector<unsigned, 2>> RestoreFrees;
  std::vector<Event> Events; // in instruction order
  std::vector<Summary> Summaries;
  DenseMap<const Loop *, unsigned> SummaryOf; // index in Summaries
  /// Load and store sites, for their `loop` column.
  SmallVector<std::pair<const Instruction *, uint32_t>, 32> Accesses;
  /// Synchronizations: where, on what, release before and acquire after At
  /// (or, Before, just before it too).
  struct SyncPoint {
    Instruction *At;
    Value *Object;
    bool Rel, Acq, Before;
  };
  SmallVector<SyncPoint, 4> SyncPoints;
};

bool FunctionInstrumenter::isInstrumentablePointer(Value *Ptr) const {
  // The entry points take generic (address space 0) pointers; swifterror
  // values may only be loaded, stored or passed as swifterror.
  if (!Ptr->getType()->isPointerTy() ||
      Ptr->getType()->getPointerAddressSpace() != 0 || Ptr->isSwiftError())
    return false;
  if (auto *GV = dyn_cast<GlobalVariable>(getUnderlyingObject(Ptr)))
    if (isMnemoName(GV->getName()) || GV->getName().starts_with("llvm."))
      return false;
  return true;
}

void FunctionInstrumenter::simplifyLoops() {
  DT = &FAM.getResult<DominatorTreeAnalysis>(F);
  LI = &FAM.getResult<LoopAnalysis>(F);
  if (!ClLoops)
    return;
  // Every loop gets a preheader and dedicated exits where the CFG allows it
  // (not for edges from indirectbr or callbr); simplifyLoop keeps DT and LI
  // up to date and visits the subloops.
  auto &AC = FAM.getResult<AssumptionAnalysis>(F);
  SmallVector<Loop *, 8> TopLevel(LI->begin(), LI->end());
  for (Loop *L : TopLevel)
    simplifyLoop(L, DT, LI, /*SE=*/nullptr, &AC, /*MSSAU=*/nullptr,
                 /*PreserveLCSSA=*/false);
}

void FunctionInstrumenter::findEntryPoint() {
  BasicBlock &Entry = F.getEntryBlock();
  auto It = Entry.getFirstInsertionPt();
  while (isa<AllocaInst>(*It) || isa<DbgInfoIntrinsic>(*It))
    ++It;
  EntryPoint = &*It;
}

void FunctionInstrumenter::findLifetimeMarkers() {
  for (Instruction &I : instructions(F))
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      if (II->getIntrinsicID() == Intrinsic::lifetime_start)
        if (auto *AI =
                dyn_cast<AllocaInst>(getUnderlyingObject(II->getArgOperand(1))))
          WithMarkers.insert(AI);
}

void FunctionInstrumenter::collect() {
  simplifyLoops();
  findEntryPoint();
  findLifetimeMarkers();

  DISubprogram *SP = F.getSubprogram();
  SourcePos FnPos;
  if (SP) {
    FnPos.File = sourceFile(SP);
    FnPos.Line = SP->getLine();
  }
  FunctionSite = Sites.add(SiteKind::Function, &F, FuncName, FnPos);
  Sites.setCurrentFunction(FunctionSite);
  if (ClFunctions)
    ++NumFunctions;

  for (BasicBlock &BB : F) {
    if (ClLoops && LI->isLoopHeader(&BB)) {
      Loop *L = LI->getLoopFor(&BB);
      DebugLoc Start = loopStart(F, *L);
      Loops.push_back(
          {L, Sites.add(SiteKind::Loop, &BB, FuncName, SourcePos::of(Start))});
      ++NumLoops;
    }
    LastLocated = nullptr;
    for (Instruction &I : BB) {
      collectInstruction(I);
      if (hasLine(I))
        LastLocated = &I;
    }
  }
  setAccessLoops();
  planStackFrees();
}

/// I's location, or, when it has no line (a missing location, or line 0: a
/// location merged from several, as when GVN or SimplifyCFG hoists or sinks
/// equal instructions of several places into one), the nearest preceding
/// instruction of its block that has a line, else its block's first one,
/// else the last one of the nearest dominating block that has one (code sunk
/// into a join block of its own); Nearest says so.  Without any, I's own
/// (line 0).  Call in the walk of collect(): the preceding one is the walk's
/// last.
DebugLoc FunctionInstrumenter::nearestLoc(const Instruction &I,
                                          bool &Nearest) {
  Nearest = false;
  if (hasLine(I) || !F.getSubprogram())
    return I.getDebugLoc();
  const Instruction *From = LastLocated;
  if (!From) {
    // No located instruction before I in its block: the one after it is
    // the block's first, or there is none and a dominator's is the nearest.
    if (FirstLocatedOf != I.getParent()) {
      FirstLocatedOf = I.getParent();
      FirstLocated = firstLocated(*I.getParent());
    }
    From = FirstLocated;
  }
  if (!From)
    return I.getDebugLoc();
  Nearest = true;
  return From->getDebugLoc();
}

/// BB's first instruction that has a line, else the last one of the nearest
/// block dominating BB that has one; null if none.
const Instruction *
FunctionInstrumenter::firstLocated(const BasicBlock &BB) const {
  for (const Instruction &J : BB)
    if (hasLine(J))
      return &J;
  const DomTreeNode *N = DT->getNode(&BB);
  for (N = N ? N->getIDom() : nullptr; N; N = N->getIDom())
    for (const Instruction &J : reverse(*N->getBlock()))
      if (hasLine(J))
        return &J;
  return nullptr;
}

/// Every load and store site gets the site of the innermost loop holding it,
/// so that a module can attribute accesses to loops without loop events.
/// After the walk: a block of a loop may come before its header.
void FunctionInstrumenter::setAccessLoops() {
  DenseMap<const Loop *, uint32_t> SiteOf;
  for (const LoopSite &LS : Loops)
    SiteOf[LS.L] = LS.Site;
  for (const auto &[I, Id] : Accesses)
    if (const Loop *L = LI->getLoopFor(I->getParent()))
      Sites.setLoop(Id, SiteOf.lookup(L));
}

void FunctionInstrumenter::collectInstruction(Instruction &I) {
  // A pointer the entry points can take: address space 0.
  auto IsGenericPointer = [](Type *Ty) {
    return Ty->isPointerTy() && Ty->getPointerAddressSpace() == 0;
  };
  if (auto *Load = dyn_cast<LoadInst>(&I)) {
    collectAccess(I, Load->getPointerOperand(), Load->getType(), true, false,
                  IsGenericPointer(Load->getType()));
  } else if (auto *SI = dyn_cast<StoreInst>(&I)) {
    collectAccess(I, SI->getPointerOperand(),
                  SI->getValueOperand()->getType(), false, true, false);
  } else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
    collectAccess(I, RMW->getPointerOperand(), RMW->getType(), true, true,
                  IsGenericPointer(RMW->getType()));
  } else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
    Type *Ty = CX->getCompareOperand()->getType();
    collectAccess(I, CX->getPointerOperand(), Ty, true, true,
                  IsGenericPointer(Ty));
  } else if (auto *MT = dyn_cast<AnyMemTransferInst>(&I)) {
    if (ClMemory && isInstrumentablePointer(MT->getRawSource()) &&
        isInstrumentablePointer(MT->getRawDest())) {
      // name: the base operation (also for .inline and element-atomic
      // forms), so that value-pattern can tell the size tables apart.
      StringRef Op = isa<AnyMemMoveInst>(MT) ? "memmove" : "memcpy";
      Event E{EventKind::MemTransfer, &I};
      E.Site = site(SiteKind::Load, I, Op);
      E.Site2 = site(SiteKind::Store, I, Op);
      Events.push_back(E);
      ++NumMemIntrinsics;
      ++NumLoads;
      ++NumStores;
    }
  } else if (auto *MS = dyn_cast<AnyMemSetInst>(&I)) {
    if (ClMemory && isInstrumentablePointer(MS->getRawDest())) {
      Event E{EventKind::MemSet, &I};
      E.Site = site(SiteKind::Store, I, "memset");
      Events.push_back(E);
      ++NumMemIntrinsics;
      ++NumStores;
    }
  } else if (auto *II = dyn_cast<IntrinsicInst>(&I)) {
    switch (II->getIntrinsicID()) {
    case Intrinsic::lifetime_start:
    case Intrinsic::lifetime_end:
      if (ClStack)
        Events.push_back({II->getIntrinsicID() == Intrinsic::lifetime_start
                              ? EventKind::LifetimeStart
                              : EventKind::LifetimeEnd,
                          &I});
      break;
    case Intrinsic::stackrestore:
      if (ClStack)
        Events.push_back({EventKind::StackRestore, &I});
      break;
    default: // Masked, gather/scatter and other intrinsics: see README.
      break;
    }
  } else if (auto *CB = dyn_cast<CallBase>(&I)) {
    collectCall(*CB);
  } else if (auto *AI = dyn_cast<AllocaInst>(&I)) {
    collectAlloca(*AI);
  } else if (isa<IntToPtrInst>(&I) && I.getType()->isPointerTy() &&
             ClPointers && isInstrumentablePointer(&I)) {
    Event E{EventKind::IntToPtr, &I};
    E.PtrSite = site(SiteKind::Pointer, I);
    Events.push_back(E);
    ++NumPointerCreations;
  }
}

void FunctionInstrumenter::collectAccess(Instruction &I, Value *Ptr,
                                         Type *ValueTy, bool Reads, bool Writes,
                                         bool MakesPointer) {
  if (!isInstrumentablePointer(Ptr))
    return;
  Event E{EventKind::Load, &I};
  if (isa<AtomicRMWInst>(I))
    E.Kind = EventKind::AtomicRMW;
  else if (isa<AtomicCmpXchgInst>(I))
    E.Kind = EventKind::CmpXchg;
  else if (Writes)
    E.Kind = EventKind::Store;
  // name "ptr": the value is a pointer (the _ptr entry points' accesses), so
  // that a profile can say its values are addresses; "double", "float": the
  // bits sent are a floating-point value's, which readers print as numbers.
  StringRef ValueName = ValueTy->isPointerTy()  ? "ptr"
                        : ValueTy->isDoubleTy() ? "double"
                        : ValueTy->isFloatTy()  ? "float"
                                                : "";
  if (ClMemory && Reads) {
    E.Site = site(SiteKind::Load, I, ValueName);
    ++NumLoads;
    if (ValueTy->isPointerTy())
      ++NumPointerLoads;
  }
  if (ClMemory && Writes) {
    (Reads ? E.Site2 : E.Site) = site(SiteKind::Store, I, ValueName);
    ++NumStores;
    if (ValueTy->isPointerTy())
      ++NumPointerStores;
  }
  if (ClPointers && MakesPointer) {
    E.PtrSite = site(SiteKind::Pointer, I);
    ++NumPointerCreations;
  }
  if (E.Site || E.Site2 || E.PtrSite)
    Events.push_back(E);
}

void FunctionInstrumenter::collectCall(CallBase &CB) {
  const Function *Callee = directCallee(CB);
  if (Callee && (isMnemoName(Callee->getName()) || Callee->isIntrinsic()))
    return;
  if (Callee && Callee->getName() == "pthread_create") {
    // The thread's creation site, which the runtime's pthread_create hands
    // to the thread's thread_start event.
    Event E{EventKind::ThreadCall, &CB};
    E.Site = site(SiteKind::Thread, CB, "pthread_create");
    Events.push_back(E);
    return;
  }
  HeapCall Heap =
      Callee ? classifyHeapFunction(Callee->getName()) : HeapCall::None;
  if (Heap != HeapCall::None) {
    if (!ClHeap)
      return;
    // name: the callee, and the allocated type where clang recorded it
    // (operator new; "callee:type"); type_size: that type's size.
    std::string Name = demangle(Callee->getName());
    uint64_t Bytes = 0;
    if (auto *Ty = dyn_cast_or_null<DIType>(CB.getMetadata("heapallocsite"))) {
      const DIType *Sized = Ty;
      while (Sized && Sized->getSizeInBits() == 0)
        if (auto *Derived = dyn_cast<DIDerivedType>(Sized))
          Sized = Derived->getBaseType(); // typedef, const, volatile
        else
          break;
      if (Sized)
        Bytes = Sized->getSizeInBits() / 8;
      if (!Ty->getName().empty())
        Name += (":" + Ty->getName()).str();
    }
    SiteKind Kind = Heap == HeapCall::Alloc     ? SiteKind::Alloc
                    : Heap == HeapCall::Realloc ? SiteKind::Realloc
                                                : SiteKind::Free;
    Event E{EventKind::HeapCall, &CB};
    E.Site = site(Kind, CB, Name, Bytes);
    if (Kind != SiteKind::Free) {
      auto *Ty = dyn_cast_or_null<DIType>(CB.getMetadata("heapallocsite"));
      Sites.setFields(E.Site, Ty ? structFields(Ty) : assignedFields(CB));
    }
    Events.push_back(E);
    ++NumHeapSites;
    return;
  }
  // A pointer returned by a call.  Not after a musttail call (it must be
  // followed by the ret), nor after callbr (no single continuation).
  if (!ClPointers || !CB.getType()->isPointerTy() || isa<CallBrInst>(CB) ||
      !isInstrumentablePointer(&CB))
    return;
  if (auto *CI = dyn_cast<CallInst>(&CB); CI && CI->isMustTailCall())
    return;
  Event E{EventKind::CallPointer, &CB};
  E.PtrSite = site(SiteKind::Pointer, CB);
  Events.push_back(E);
  ++NumPointerCreations;
}

void FunctionInstrumenter::collectAlloca(AllocaInst &AI) {
  if (!ClStack || AI.isSwiftError() || AI.isUsedWithInAlloca() ||
      AI.getType()->getAddressSpace() != 0)
    return;
  // name: the source variable if debug information names one, else the IR
  // name.  Position: the alloca's, else the variable's declaration.
  StringRef Name = AI.getName();
  SourcePos Pos = SourcePos::of(AI.getDebugLoc());
  const DILocalVariable *Var = stackVariable(AI);
  if (Var) {
    Name = Var->getName();
    if (!AI.getDebugLoc()) {
      Pos.File = sourceFile(Var);
      Pos.Line = Var->getLine();
      // A variable of inlined code: named by its own function.
      const DISubprogram *VarSP = Var->getScope()->getSubprogram();
      if (VarSP && VarSP != F.getSubprogram())
        Pos.Scope = subprogramName(VarSP);
    }
  }
  uint64_t Bytes = 0;
  if (std::optional<TypeSize> Size = AI.getAllocationSize(DL))
    if (!Size->isScalable())
      Bytes = Size->getFixedValue();

  StackObject Obj{&AI,
                  Sites.add(SiteKind::Stack, &AI, FuncName, Pos, Name, Bytes)};
  // The variable's layout, unless the alloca holds only part of it (SROA
  // splits a structure into several allocas, each described by a fragment).
  std::optional<uint64_t> VarBits = Var ? Var->getSizeInBits() : std::nullopt;
  if (Var && (!Bytes || !VarBits || *VarBits == Bytes * 8))
    Sites.setFields(Obj.Site, structFields(Var->getType()));
  Obj.Markers = WithMarkers.contains(&AI);
  if (!Obj.Markers && AI.getParent() == &F.getEntryBlock() &&
      AI.comesBefore(EntryPoint))
    Obj.AtEntry = true;
  StackIndex[&AI] = Stack.size();
  Stack.push_back(Obj);
  if (!Obj.Markers && !Obj.AtEntry) {
    Event E{EventKind::Alloca, &AI};
    E.Obj = Stack.size() - 1;
    Events.push_back(E);
  }
  ++NumAllocas;
}

/// Stack objects without lifetime markers are freed at every exit of the
/// function.  An object whose alloca is in the entry block and that no
/// stackrestore releases dominates every exit, and is freed directly.  Any
/// other (a VLA, an alloca() in a branch) may not have run, or may have been
/// released by a stackrestore already: its address is kept in a slot that is
/// null while the object is dead, and freed through the slot.
void FunctionInstrumenter::planStackFrees() {
  for (const Event &E : Events) {
    if (E.Kind != EventKind::StackRestore)
      continue;
    auto *Save = dyn_cast<IntrinsicInst>(E.I->getOperand(0));
    if (!Save || Save->getIntrinsicID() != Intrinsic::stacksave)
      continue; // Unknown save point: the objects are freed at exit.
    for (unsigned Obj = 0; Obj < Stack.size(); ++Obj)
      if (!Stack[Obj].Markers && DT->dominates(Save, Stack[Obj].AI)) {
        RestoreFrees[E.I].push_back(Obj);
        Stack[Obj].UsesSlot = true;
      }
  }
  for (StackObject &Obj : Stack)
    if (!Obj.Markers && Obj.AI->getParent() != &F.getEntryBlock())
      Obj.UsesSlot = true;
}

DebugLoc FunctionInstrumenter::locFor(const Instruction *I) const {
  // Every inserted call carries a location when the function has debug info:
  // a call without one fails verification once it is inlined.
  DISubprogram *SP = F.getSubprogram();
  if (!SP)
    return DebugLoc();
  if (I && I->getDebugLoc())
    return I->getDebugLoc();
  return DILocation::get(Ctx, 0, 0, SP);
}

void FunctionInstrumenter::setInsertPoint(IRBuilder<> &IRB,
                                          BasicBlock::iterator It,
                                          const Instruction *LocFrom) const {
  IRB.SetInsertPoint(It->getParent(), It);
  IRB.SetCurrentDebugLocation(locFor(LocFrom));
}

CallInst *FunctionInstrumenter::emit(IRBuilder<> &IRB, FunctionCallee Callee,
                                     ArrayRef<Value *> Args) const {
  CallInst *CI = IRB.CreateCall(Callee, Args);
  CI->setDoesNotThrow();
  return CI;
}

/// The bits of V, zero-extended to 64 or truncated to their low 64; 0 for
/// aggregates and types without a bit pattern (see README).
Value *FunctionInstrumenter::toI64(IRBuilder<> &IRB, Value *V) const {
  Type *I64 = IRB.getInt64Ty();
  Type *Ty = V->getType();
  if (Ty->isPtrOrPtrVectorTy()) {
    V = IRB.CreatePtrToInt(V, DL.getIntPtrType(Ty));
    Ty = V->getType();
  }
  if (Ty->isIntegerTy())
    return IRB.CreateZExtOrTrunc(V, I64);
  if (Ty->isFloatingPointTy() || (isa<FixedVectorType>(Ty) &&
                                  (Ty->getScalarType()->isIntegerTy() ||
                                   Ty->getScalarType()->isFloatingPointTy()))) {
    unsigned Bits = Ty->getPrimitiveSizeInBits().getFixedValue();
    V = IRB.CreateBitCast(V, IRB.getIntNTy(Bits));
    return IRB.CreateZExtOrTrunc(V, I64);
  }
  return ConstantInt::get(I64, 0);
}

Value *FunctionInstrumenter::accessSize(IRBuilder<> &IRB, Type *Ty) const {
  uint64_t Size = 0;
  if (Ty->isSized())
    Size = DL.getTypeStoreSize(Ty).getKnownMinValue();
  return IRB.getInt32(std::min(Size, MnemoMaxAccessSize));
}

Value *FunctionInstrumenter::lengthSize(IRBuilder<> &IRB, Value *Len) const {
  if (auto *C = dyn_cast<ConstantInt>(Len))
    return IRB.getInt32(std::min(C->getZExtValue(), MnemoMaxAccessSize));
  Value *Len64 = IRB.CreateZExtOrTrunc(Len, IRB.getInt64Ty());
  Value *Max = IRB.getInt64(MnemoMaxAccessSize);
  Value *Sat = IRB.CreateSelect(IRB.CreateICmpUGT(Len64, Max), Max, Len64);
  return IRB.CreateTrunc(Sat, IRB.getInt32Ty());
}

Value *FunctionInstrumenter::allocaSize(IRBuilder<> &IRB,
                                        AllocaInst *AI) const {
  uint64_t Elem =
      DL.getTypeAllocSize(AI->getAllocatedType()).getKnownMinValue();
  Value *Count = IRB.CreateZExtOrTrunc(AI->getArraySize(), IRB.getInt64Ty());
  return IRB.CreateMul(Count, IRB.getInt64(Elem));
}

/// void mnemo.stack_free_slot(i32 site, ptr slot): if *slot is not null,
/// clears it and calls __mnemo_stack_free(site, old *slot).  Internal and
/// always inlined by the LTO pipeline that follows.
Function *FunctionInstrumenter::getStackFreeSlot() {
  if (StackFreeSlot)
    return StackFreeSlot;
  Type *Ptr = PointerType::getUnqual(Ctx);
  auto *FTy = FunctionType::get(Type::getVoidTy(Ctx),
                                {Type::getInt32Ty(Ctx), Ptr}, false);
  Function *H = Function::Create(FTy, GlobalValue::InternalLinkage,
                                 "mnemo.stack_free_slot", M);
  H->addFnAttr(Attribute::AlwaysInline);
  H->addFnAttr(Attribute::NoUnwind);
  BasicBlock *Entry = BasicBlock::Create(Ctx, "entry", H);
  BasicBlock *Live = BasicBlock::Create(Ctx, "live", H);
  BasicBlock *Done = BasicBlock::Create(Ctx, "done", H);
  IRBuilder<> IRB(Entry);
  Value *Site = H->getArg(0), *Slot = H->getArg(1);
  Value *Obj = IRB.CreateLoad(Ptr, Slot);
  IRB.CreateCondBr(IRB.CreateIsNotNull(Obj), Live, Done);
  IRB.SetInsertPoint(Live);
  IRB.CreateStore(ConstantPointerNull::get(cast<PointerType>(Ptr)), Slot);
  emit(IRB, RT->StackFree, {Site, Obj});
  IRB.CreateBr(Done);
  IRB.SetInsertPoint(Done);
  IRB.CreateRetVoid();
  return StackFreeSlot = H;
}

void FunctionInstrumenter::emitStackFree(IRBuilder<> &IRB, unsigned Obj) {
  const StackObject &S = Stack[Obj];
  if (S.UsesSlot)
    emit(IRB, getStackFreeSlot(), {IRB.getInt32(S.Site), S.Slot});
  else
    emit(IRB, RT->StackFree, {IRB.getInt32(S.Site), S.AI});
}

void FunctionInstrumenter::instrumentEntry() {
  IRBuilder<> IRB(Ctx);
  BasicBlock &Entry = F.getEntryBlock();
  // Slots first, at the top of the entry block (static allocas).
  IRB.SetInsertPoint(&Entry, Entry.begin());
  for (StackObject &S : Stack)
    if (S.UsesSlot)
      S.Slot = IRB.CreateAlloca(IRB.getPtrTy(), nullptr, "mnemo.slot");

  DebugLoc EntryLoc;
  if (DISubprogram *SP = F.getSubprogram())
    EntryLoc = DILocation::get(Ctx, SP->getScopeLine(), 0, SP);
  IRB.SetInsertPoint(EntryPoint);
  IRB.SetCurrentDebugLocation(EntryLoc);
  if (ClFunctions)
    emit(IRB, RT->FuncEntry, {IRB.getInt32(FunctionSite)});
  for (StackObject &S : Stack) {
    if (S.UsesSlot)
      IRB.CreateStore(ConstantPointerNull::get(IRB.getPtrTy()), S.Slot);
    if (S.AtEntry)
      emit(IRB, RT->StackAlloc,
           {IRB.getInt32(S.Site), S.AI, allocaSize(IRB, S.AI)});
  }
}

//===----------------------------------------------------------------------===//
// Loop summaries: one record per loop invocation instead of one per access.
//===----------------------------------------------------------------------===//

/// Most accesses one summary carries: the loop_summary record counts them in
/// 16 bits, and a loop with more is rare enough to go per access.
constexpr unsigned MaxSummaryAccesses = 256;

/// Picks the loops whose every event can be described by a summary and gives
/// them their values in the preheader.  Runs before anything else is
/// inserted in the function, while ScalarEvolution sees the IR it analyzed.
void FunctionInstrumenter::planSummaries(SummaryPlan Plan) {
  if (!Plan.on() || !ClLoops || !ClMemory || Loops.empty())
    return;
  // LoopSimplify changed the CFG after anything cached; it kept DT and LI.
  PreservedAnalyses PA;
  PA.preserve<DominatorTreeAnalysis>();
  PA.preserve<LoopAnalysis>();
  FAM.invalidate(F, PA);
  auto &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
  SCEVExpander Exp(SE, DL, "mnemo.sum");
  for (const LoopSite &LS : Loops)
    if (std::optional<Summary> S = qualify(LS, Plan, SE, Exp)) {
      SummaryOf[LS.L] = Summaries.size();
      Summaries.push_back(std::move(*S));
    }
  // A value-checked access (plan state 3) keeps __mnemo_value where it was.
  auto Checked = [&](const Event &E) {
    return Plan.state(entryOf(E)) == SummaryPlan::ValueChecked;
  };
  for (Summary &S : Summaries) {
    expandStarts(S, Exp);
    for (const Summary::Access &A : S.Accesses) {
      Events[A.Event].Summarized = true;
      Events[A.Event].CheckValue = Checked(Events[A.Event]);
      NumValueChecks += Events[A.Event].CheckValue;
    }
    for (const Summary::Other &O : S.Others) {
      Events[O.Event].MixedIn = int(&S - Summaries.data());
      Events[O.Event].Rank = O.Rank;
      Events[O.Event].CheckValue = Checked(Events[O.Event]);
      NumValueChecks += Events[O.Event].CheckValue;
    }
    NumMixedLoops += S.mixed();
    countIterations(S);
    ++NumSummarizedLoops;
    NumSummarizedAccesses += S.Accesses.size();
  }
}

/// A summary when every event inside L is an access it can stand for, or one
/// that sends nothing (an empty callback), and L calls nothing.
std::optional<FunctionInstrumenter::Summary>
FunctionInstrumenter::qualify(const LoopSite &LS, SummaryPlan Plan,
                              ScalarEvolution &SE, SCEVExpander &Exp) const {
  Loop *L = LS.L;
  if (!hasSummaryShape(L))
    return std::nullopt;
  for (BasicBlock *BB : L->blocks())
    for (Instruction &I : *BB)
      if (auto *CB = dyn_cast<CallBase>(&I); CB && !isa<IntrinsicInst>(CB))
        return std::nullopt;
  Summary S{L, LS.Site, {}, {}};
  for (unsigned Idx = 0; Idx < Events.size(); ++Idx) {
    if (!L->contains(Events[Idx].I))
      continue;
    switch (addSummaryAccess(S, Idx, Plan, SE, Exp)) {
    case SummaryFit::Taken:
    case SummaryFit::Silent:
      break;
    case SummaryFit::Other:
      if (!Plan.mixedOn())
        return std::nullopt;
      S.Others.push_back({Idx, 0});
      break;
    case SummaryFit::Blocks:
      return std::nullopt;
    }
  }
  if (S.Accesses.size() > MaxSummaryAccesses)
    return std::nullopt;
  // A mixed loop pays off only when something goes into its summary.
  if (S.mixed() && S.Accesses.empty())
    return std::nullopt;
  // Nothing at all to send: leave the loop as it is (its calls are empty).
  if (S.Accesses.empty() &&
      Plan.state(SummaryPlan::LoopEvents) == SummaryPlan::Empty)
    return std::nullopt;
  orderSummaryAccesses(S);
  return S;
}

/// Innermost, entered from a preheader, one latch, and left only into
/// dedicated exit blocks that can hold the summary's calls: the places where
/// the per-access build puts loop_invoke, loop_iter and loop_exit.
bool FunctionInstrumenter::hasSummaryShape(const Loop *L) const {
  if (!L->isInnermost() || !L->getLoopPreheader() || !L->getLoopLatch())
    return false;
  SmallVector<BasicBlock *, 4> Exits;
  L->getUniqueExitBlocks(Exits);
  for (BasicBlock *Exit : Exits) {
    if (Exit->isEHPad() || Exit->getFirstInsertionPt() == Exit->end())
      return false;
    for (BasicBlock *P : predecessors(Exit))
      if (!L->contains(P))
        return false;
  }
  return L->getHeader()->getFirstInsertionPt() != L->getHeader()->end();
}

/// BB runs once in every iteration, the last included: it dominates the
/// latch (no path around it, back to the header) and every block the loop is
/// left from (no way out before it).
bool FunctionInstrumenter::runsOncePerIteration(const BasicBlock *BB,
                                                const Loop *L) const {
  if (LI->getLoopFor(BB) != L || !DT->dominates(BB, L->getLoopLatch()))
    return false;
  SmallVector<BasicBlock *, 4> Exiting;
  L->getExitingBlocks(Exiting);
  return all_of(Exiting,
                [&](const BasicBlock *E) { return DT->dominates(BB, E); });
}

/// Adds event EventIdx of S's loop to S if it is an access the summary can
/// stand for, and says what the event is to the summary.
FunctionInstrumenter::SummaryFit
FunctionInstrumenter::addSummaryAccess(Summary &S, unsigned EventIdx,
                                       SummaryPlan Plan, ScalarEvolution &SE,
                                       SCEVExpander &Exp) const {
  const Event &E = Events[EventIdx];
  bool PointerCreateSent =
      Plan.state(SummaryPlan::PointerCreate) != SummaryPlan::Empty;
  if (E.Kind == EventKind::IntToPtr)
    return PointerCreateSent ? SummaryFit::Blocks : SummaryFit::Silent;
  if (E.Kind != EventKind::Load && E.Kind != EventKind::Store)
    return SummaryFit::Blocks; // atomics, memory intrinsics, heap, stack
  if (E.PtrSite && PointerCreateSent)
    return SummaryFit::Blocks;
  if (!E.Site)
    return SummaryFit::Silent;
  bool IsStore = E.Kind == EventKind::Store;
  Type *Ty = getLoadStoreType(E.I);
  // What a plain access that no summary can stand for becomes: a record
  // with its position, when its record carries no value.
  SummaryFit NotAffine = SummaryFit::Other;
  switch (Plan.state(entryOf(E))) {
  case SummaryPlan::Empty:
    return SummaryFit::Silent;
  case SummaryPlan::PerAccess:
    return SummaryFit::Blocks;
  case SummaryPlan::ValueChecked:
  case SummaryPlan::Summarizable:
    break;
  }
  TypeSize Bytes = DL.getTypeStoreSize(Ty);
  if (Bytes.isScalable())
    return SummaryFit::Blocks;
  bool Simple = IsStore ? cast<StoreInst>(E.I)->isSimple()
                        : cast<LoadInst>(E.I)->isSimple();
  if (!Simple || !runsOncePerIteration(E.I->getParent(), S.L))
    return NotAffine;
  // {start,+,step} in this loop, or the same address every time.
  const SCEV *Addr = SE.getSCEV(getLoadStorePointerOperand(E.I));
  const SCEV *Start, *Step;
  if (auto *AR = dyn_cast<SCEVAddRecExpr>(Addr);
      AR && AR->getLoop() == S.L && AR->isAffine()) {
    Start = AR->getStart();
    Step = AR->getStepRecurrence(SE);
  } else if (SE.isLoopInvariant(Addr, S.L)) {
    Start = Addr;
    Step = SE.getZero(DL.getIndexType(Addr->getType()));
  } else {
    return NotAffine;
  }
  Instruction *At = S.L->getLoopPreheader()->getTerminator();
  if (!Exp.isSafeToExpandAt(Start, At) || !Exp.isSafeToExpandAt(Step, At))
    return NotAffine;
  uint64_t Size = std::min<uint64_t>(Bytes.getFixedValue(), MnemoMaxAccessSize);
  S.Accesses.push_back({EventIdx, IsStore, E.Site, uint32_t(Size), Start, Step});
  return SummaryFit::Taken;
}

/// The order the events come in within one iteration.  The loop is
/// innermost, so an iteration runs its blocks along a path of an acyclic
/// graph, in an order every topological order of it agrees with: reverse
/// post-order here, and instruction order within a block.  A summarized
/// access runs in every iteration, so each other access's rank (summarized
/// accesses before it) is the same in every iteration it runs in.
void FunctionInstrumenter::orderSummaryAccesses(Summary &S) const {
  LoopBlocksRPO RPO(S.L);
  RPO.perform(LI);
  DenseMap<const Instruction *, unsigned> Pos;
  unsigned N = 0;
  for (BasicBlock *BB : RPO)
    for (Instruction &I : *BB)
      Pos[&I] = N++;
  auto PosOf = [&](unsigned Event) { return Pos.lookup(Events[Event].I); };
  std::sort(S.Accesses.begin(), S.Accesses.end(),
            [&](const Summary::Access &A, const Summary::Access &B) {
              return PosOf(A.Event) < PosOf(B.Event);
            });
  for (Summary::Other &O : S.Others)
    O.Rank = count_if(S.Accesses, [&](const Summary::Access &A) {
      return PosOf(A.Event) < PosOf(O.Event);
    });
}

/// Computes each access's start and step in the preheader.
void FunctionInstrumenter::expandStarts(Summary &S, SCEVExpander &Exp) {
  Instruction *At = S.L->getLoopPreheader()->getTerminator();
  IRBuilder<> IRB(At);
  for (Summary::Access &A : S.Accesses) {
    A.Start = Exp.expandCodeFor(A.StartS, PointerType::getUnqual(Ctx), At);
    Value *Step = Exp.expandCodeFor(A.StepS, nullptr, At);
    IRB.SetInsertPoint(At);
    A.Step = IRB.CreateSExtOrTrunc(Step, IRB.getInt64Ty());
  }
}

/// Counts the header's executions: mnemo.iter.next is the number of
/// iterations begun, available in every exit block, since the header
/// dominates their predecessors.
void FunctionInstrumenter::countIterations(Summary &S) {
  Type *I64 = Type::getInt64Ty(Ctx);
  BasicBlock *Preheader = S.L->getLoopPreheader();
  IRBuilder<> IRB(Ctx);
  BasicBlock *Header = S.L->getHeader();
  IRB.SetInsertPoint(Header, Header->begin());
  PHINode *Iter = IRB.CreatePHI(I64, 2, "mnemo.iter");
  IRB.SetInsertPoint(Header, Header->getFirstInsertionPt());
  Value *Next = IRB.CreateAdd(Iter, IRB.getInt64(1), "mnemo.iter.next",
                              /*HasNUW=*/true);
  Iter->addIncoming(IRB.getInt64(0), Preheader);
  Iter->addIncoming(Next, S.L->getLoopLatch());
  S.Iterations = Next;
  S.Iteration = Iter;
}

/// The entry point a load or store event's access goes through (abi.h).
SummaryPlan::Entry FunctionInstrumenter::entryOf(const Event &E) {
  bool Ptr = getLoadStoreType(E.I)->isPointerTy();
  if (E.Kind == EventKind::Store)
    return Ptr ? SummaryPlan::StorePtr : SummaryPlan::Store;
  return Ptr ? SummaryPlan::LoadPtr : SummaryPlan::Load;
}

/// A summarized loop with value-checked accesses (plan state 3) gets a copy
/// without the checks, taken when the published set of every checked site
/// says no more of its values are needed (__mnemo_value_done): the copy then
/// calls nothing (unless mixed), and LTO can vectorize it again.  Made once
/// the loop is instrumented, so that both send the same summary records.
void FunctionInstrumenter::versionChecks(const Summary &S) {
  SmallVector<uint32_t, 8> Checked;
  for (const Summary::Access &A : S.Accesses)
    if (Events[A.Event].CheckValue)
      Checked.push_back(A.Site);
  for (const Summary::Other &O : S.Others)
    if (Events[O.Event].CheckValue)
      Checked.push_back(Events[O.Event].Site);
  if (Checked.empty())
    return;
  Loop *L = S.L;
  DT->recalculate(F);
  BasicBlock *Check = L->getLoopPreheader();
  // The summary's calls at the exits, and the program's own uses of L's
  // values, then go through phis that learn the copy's values.
  formLCSSA(*L, *DT, LI, nullptr);
  BasicBlock *Preheader = SplitEdge(Check, L->getHeader(), DT, LI);
  ValueToValueMapTy VMap;
  SmallVector<BasicBlock *, 16> Blocks;
  Loop *Copy = cloneLoopWithPreheader(Preheader, Check, L, VMap, ".mnemo.fast",
                                      LI, DT, Blocks);
  remapInstructionsInBlocks(Blocks, VMap);
  splitExitsOfCopy(L, Copy, VMap);
  for (BasicBlock *BB : Copy->blocks())
    for (Instruction &I : make_early_inc_range(*BB))
      if (auto *CI = dyn_cast<CallInst>(&I);
          CI && CI->getCalledFunction() &&
          CI->getCalledFunction()->getName() == MnemoValueName)
        CI->eraseFromParent();

  Instruction *Term = Check->getTerminator();
  IRBuilder<> IRB(Ctx);
  setInsertPoint(IRB, Term->getIterator(), Term);
  Value *Done = nullptr;
  for (uint32_t Site : Checked) {
    Value *D = IRB.CreateICmpNE(emit(IRB, RT->ValueDone, {IRB.getInt32(Site)}),
                                IRB.getInt32(0), "mnemo.value.done");
    Done = Done ? IRB.CreateAnd(Done, D) : D;
  }
  Term->eraseFromParent();
  BranchInst::Create(cast<BasicBlock>(VMap[Preheader]), Preheader, Done, Check);
  DT->recalculate(F);
  ++NumVersionedLoops;
}

/// The copy's exits go to L's exit blocks: their phis learn the copy's
/// values, then each exit block gets one predecessor block per copy, so that
/// both loops have dedicated exits again.
void FunctionInstrumenter::splitExitsOfCopy(Loop *L, Loop *Copy,
                                            ValueToValueMapTy &VMap) {
  SmallVector<BasicBlock *, 4> Exits;
  L->getUniqueExitBlocks(Exits);
  DT->recalculate(F);
  for (BasicBlock *X : Exits) {
    for (PHINode &Phi : X->phis())
      for (unsigned I = 0, E = Phi.getNumIncomingValues(); I < E; ++I) {
        BasicBlock *From = Phi.getIncomingBlock(I);
        if (!L->contains(From))
          continue;
        Value *V = Phi.getIncomingValue(I);
        Value *CopyV = VMap.lookup(V);
        Phi.addIncoming(CopyV ? CopyV : V, cast<BasicBlock>(VMap[From]));
      }
    SmallVector<BasicBlock *, 4> FromL, FromCopy;
    for (BasicBlock *P : predecessors(X))
      (Copy->contains(P) ? FromCopy : FromL).push_back(P);
    SplitBlockPredecessors(X, FromCopy, ".mnemo.fast", DT, LI);
    SplitBlockPredecessors(X, FromL, ".mnemo.checked", DT, LI);
  }
}

/// At an exit: one record per access, in iteration order, then the loop's;
/// a mixed loop sent its accesses when it was entered.
void FunctionInstrumenter::emitSummary(IRBuilder<> &IRB,
                                       const Summary &S) const {
  if (S.mixed()) {
    emit(IRB, RT->LoopSummaryClose, {IRB.getInt32(S.Site), S.Iterations});
    return;
  }
  for (const Summary::Access &A : S.Accesses)
    emit(IRB, A.IsStore ? RT->LoopSummaryStore : RT->LoopSummaryLoad,
         {IRB.getInt32(A.Site), A.Start, A.Step, IRB.getInt32(A.Size)});
  emit(IRB, RT->LoopSummary,
       {IRB.getInt32(S.Site), IRB.getInt32(S.Accesses.size()), S.Iterations});
}

/// At the end of a mixed loop's preheader: its summarized accesses, in
/// iteration order, and the record that opens the loop; its other accesses
/// then come with their positions, and the backend interleaves the two.
void FunctionInstrumenter::emitSummaryOpen(IRBuilder<> &IRB,
                                           const Summary &S) const {
  for (const Summary::Access &A : S.Accesses)
    emit(IRB, A.IsStore ? RT->LoopSummaryStore : RT->LoopSummaryLoad,
         {IRB.getInt32(A.Site), A.Start, A.Step, IRB.getInt32(A.Size)});
  emit(IRB, RT->LoopSummaryOpen,
       {IRB.getInt32(S.Site), IRB.getInt32(S.Accesses.size())});
}

void FunctionInstrumenter::instrumentLoops() {
  if (Loops.empty())
    return;
  // Several calls may go before one instruction: they are emitted in this
  // order, exits of inner loops, exits of outer loops, iteration, invocation
  // (a block can exit one loop and be the preheader of the next).  Every
  // anchor is found before the first insertion, since inserting moves the
  // first insertion point of a block.
  struct Anchor {
    Instruction *Before;
    FunctionCallee Callee;
    uint32_t Site;
    const Summary *Sum = nullptr; // the summary's calls instead of Callee's
    bool Open = false;            // ... those that open a mixed loop
  };
  auto SummaryFor = [&](const Loop *L) -> const Summary * {
    auto It = SummaryOf.find(L);
    return It == SummaryOf.end() ? nullptr : &Summaries[It->second];
  };
  DenseMap<const Loop *, uint32_t> SiteOf;
  for (const LoopSite &LS : Loops)
    SiteOf[LS.L] = LS.Site;
  SmallVector<Anchor, 16> Anchors;
  SmallVector<Loop *, 8> Preorder = LI->getLoopsInPreorder();
  for (Loop *L : reverse(Preorder)) {
    SmallVector<BasicBlock *, 4> Exits;
    L->getUniqueExitBlocks(Exits);
    for (BasicBlock *Exit : Exits) {
      // Only dedicated exits (entered from the loop only), and not EH pads:
      // a loop left by an exception is closed by func_exit (events.yaml).
      if (Exit->isEHPad() || !all_of(predecessors(Exit), [&](BasicBlock *P) {
            return L->contains(P);
          }))
        continue;
      BasicBlock::iterator It = Exit->getFirstInsertionPt();
      if (It != Exit->end())
        Anchors.push_back({&*It, RT->LoopExit, SiteOf[L], SummaryFor(L)});
    }
  }
  for (const LoopSite &LS : Loops) {
    if (SummaryFor(LS.L))
      continue;
    BasicBlock *Header = LS.L->getHeader();
    BasicBlock::iterator It = Header->getFirstInsertionPt();
    if (It != Header->end())
      Anchors.push_back({&*It, RT->LoopIter, LS.Site});
  }
  for (const LoopSite &LS : Loops) {
    BasicBlock *Preheader = LS.L->getLoopPreheader();
    const Summary *Sum = SummaryFor(LS.L);
    if (Preheader && (!Sum || Sum->mixed()))
      Anchors.push_back({Preheader->getTerminator(), RT->LoopInvoke, LS.Site,
                         Sum, /*Open=*/true});
  }

  IRBuilder<> IRB(Ctx);
  for (const Anchor &A : Anchors) {
    setInsertPoint(IRB, A.Before->getIterator(), A.Before);
    if (A.Sum && A.Open)
      emitSummaryOpen(IRB, *A.Sum);
    else if (A.Sum)
      emitSummary(IRB, *A.Sum);
    else
      emit(IRB, A.Callee, {IRB.getInt32(A.Site)});
  }
}

void FunctionInstrumenter::instrumentEvent(const Event &E) {
  switch (E.Kind) {
  case EventKind::Load:
    return instrumentLoad(E);
  case EventKind::Store:
    return instrumentStore(E);
  case EventKind::AtomicRMW:
    return instrumentAtomicRMW(E);
  case EventKind::CmpXchg:
    return instrumentCmpXchg(E);
  case EventKind::MemTransfer:
    return instrumentMemTransfer(E);
  case EventKind::MemSet:
    return instrumentMemSet(E);
  case EventKind::HeapCall:
    return instrumentHeapCall(E);
  case EventKind::ThreadCall:
    return instrumentThreadCall(E);
  case EventKind::CallPointer:
    return instrumentCallPointer(E);
  case EventKind::IntToPtr:
    return instrumentIntToPtr(E);
  case EventKind::Alloca:
    return instrumentAlloca(E);
  case EventKind::LifetimeStart:
  case EventKind::LifetimeEnd:
    return instrumentLifetime(E);
  case EventKind::StackRestore:
    return instrumentStackRestore(E);
  }
}

void FunctionInstrumenter::insertBefore(IRBuilder<> &IRB,
                                        Instruction *I) const {
  setInsertPoint(IRB, I->getIterator(), I);
}

void FunctionInstrumenter::insertAfter(IRBuilder<> &IRB, Instruction *I) const {
  setInsertPoint(IRB, std::next(I->getIterator()), I);
}

void FunctionInstrumenter::instrumentLoad(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto *L = cast<LoadInst>(E.I);
  insertAfter(IRB, L);
  if (E.Site && E.MixedIn >= 0)
    emit(IRB, RT->MixedLoad,
         {IRB.getInt32(E.Site), L->getPointerOperand(),
          accessSize(IRB, L->getType()), Summaries[E.MixedIn].Iteration,
          IRB.getInt32(E.Rank)});
  else if (E.Site && !E.Summarized)
    emit(IRB, RT->loadOf(L->getType()),
         {IRB.getInt32(E.Site), L->getPointerOperand(), toI64(IRB, L),
          accessSize(IRB, L->getType())});
  if (E.CheckValue)
    emit(IRB, RT->Value, {IRB.getInt32(E.Site), toI64(IRB, L)});
  if (E.PtrSite)
    emit(IRB, RT->PointerCreate,
         {IRB.getInt32(E.PtrSite), L, IRB.getInt32(MnemoPointerLoaded)});
}

void FunctionInstrumenter::instrumentStore(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto *S = cast<StoreInst>(E.I);
  insertBefore(IRB, S);
  Value *V = S->getValueOperand();
  if (E.CheckValue)
    emit(IRB, RT->Value, {IRB.getInt32(E.Site), toI64(IRB, V)});
  if (E.Summarized)
    return;
  if (E.MixedIn >= 0) {
    emit(IRB, RT->MixedStore,
         {IRB.getInt32(E.Site), S->getPointerOperand(),
          accessSize(IRB, V->getType()), Summaries[E.MixedIn].Iteration,
          IRB.getInt32(E.Rank)});
    return;
  }
  emit(IRB, RT->storeOf(V->getType()),
       {IRB.getInt32(E.Site), S->getPointerOperand(), toI64(IRB, V),
        accessSize(IRB, V->getType())});
}

// Read, then write: both events after the instruction, the store with the
// value the operation wrote.
void FunctionInstrumenter::instrumentAtomicRMW(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto *RMW = cast<AtomicRMWInst>(E.I);
  insertAfter(IRB, RMW);
  Value *Ptr = RMW->getPointerOperand();
  Value *Size = accessSize(IRB, RMW->getType());
  if (E.Site)
    emit(IRB, RT->loadOf(RMW->getType()),
         {IRB.getInt32(E.Site), Ptr, toI64(IRB, RMW), Size});
  if (E.PtrSite)
    emit(IRB, RT->PointerCreate,
         {IRB.getInt32(E.PtrSite), RMW, IRB.getInt32(MnemoPointerLoaded)});
  if (E.Site2) {
    Value *New = buildAtomicRMWValue(RMW->getOperation(), IRB, RMW,
                                     RMW->getValOperand());
    emit(IRB, RT->storeOf(RMW->getType()),
         {IRB.getInt32(E.Site2), Ptr, toI64(IRB, New), Size});
  }
}

// Read, then write only if the exchange succeeded.
void FunctionInstrumenter::instrumentCmpXchg(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto *CX = cast<AtomicCmpXchgInst>(E.I);
  insertAfter(IRB, CX);
  Value *Ptr = CX->getPointerOperand();
  Type *Ty = CX->getNewValOperand()->getType();
  Value *Old = IRB.CreateExtractValue(CX, 0);
  if (E.Site)
    emit(IRB, RT->loadOf(Ty),
         {IRB.getInt32(E.Site), Ptr, toI64(IRB, Old), accessSize(IRB, Ty)});
  if (E.PtrSite)
    emit(IRB, RT->PointerCreate,
         {IRB.getInt32(E.PtrSite), Old, IRB.getInt32(MnemoPointerLoaded)});
  if (E.Site2) {
    Value *Success = IRB.CreateExtractValue(CX, 1);
    Instruction *Then =
        SplitBlockAndInsertIfThen(Success, IRB.GetInsertPoint(), false);
    setInsertPoint(IRB, Then->getIterator(), CX);
    emit(IRB, RT->storeOf(Ty),
         {IRB.getInt32(E.Site2), Ptr, toI64(IRB, CX->getNewValOperand()),
          accessSize(IRB, Ty)});
  }
}

void FunctionInstrumenter::instrumentMemTransfer(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto *MT = cast<AnyMemTransferInst>(E.I);
  insertBefore(IRB, MT);
  Value *Size = lengthSize(IRB, MT->getLength());
  emit(IRB, RT->Load,
       {IRB.getInt32(E.Site), MT->getRawSource(), IRB.getInt64(0), Size});
  emit(IRB, RT->Store,
       {IRB.getInt32(E.Site2), MT->getRawDest(), IRB.getInt64(0), Size});
}

void FunctionInstrumenter::instrumentMemSet(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto *MS = cast<AnyMemSetInst>(E.I);
  insertBefore(IRB, MS);
  emit(IRB, RT->Store,
       {IRB.getInt32(E.Site), MS->getRawDest(),
        IRB.CreateZExtOrTrunc(MS->getValue(), IRB.getInt64Ty()),
        lengthSize(IRB, MS->getLength())});
}

void FunctionInstrumenter::instrumentHeapCall(const Event &E) {
  IRBuilder<> IRB(Ctx);
  insertBefore(IRB, E.I);
  emit(IRB, RT->HeapSite, {IRB.getInt32(E.Site)});
}

void FunctionInstrumenter::instrumentThreadCall(const Event &E) {
  IRBuilder<> IRB(Ctx);
  insertBefore(IRB, E.I);
  emit(IRB, RT->ThreadSite, {IRB.getInt32(E.Site)});
}

void FunctionInstrumenter::instrumentCallPointer(const Event &E) {
  IRBuilder<> IRB(Ctx);
  Instruction *I = E.I;
  if (auto *Inv = dyn_cast<InvokeInst>(I)) {
    // The result is available only on the normal edge: give that edge a
    // block of its own if the destination has other predecessors.
    BasicBlock *Dest = Inv->getNormalDest();
    if (!Dest->getSinglePredecessor())
      Dest = SplitEdge(Inv->getParent(), Dest);
    setInsertPoint(IRB, Dest->getFirstInsertionPt(), I);
  } else {
    insertAfter(IRB, I);
  }
  emit(IRB, RT->PointerCreate,
       {IRB.getInt32(E.PtrSite), I, IRB.getInt32(MnemoPointerReturned)});
}

void FunctionInstrumenter::instrumentIntToPtr(const Event &E) {
  IRBuilder<> IRB(Ctx);
  insertAfter(IRB, E.I);
  emit(IRB, RT->PointerCreate,
       {IRB.getInt32(E.PtrSite), E.I, IRB.getInt32(MnemoPointerFromInt)});
}

void FunctionInstrumenter::instrumentAlloca(const Event &E) {
  IRBuilder<> IRB(Ctx);
  const StackObject &S = Stack[E.Obj];
  insertAfter(IRB, E.I);
  emit(IRB, RT->StackAlloc,
       {IRB.getInt32(S.Site), S.AI, allocaSize(IRB, S.AI)});
  if (S.UsesSlot)
    IRB.CreateStore(S.AI, S.Slot);
}

// The stack object is the marker's operand, if it has a site.
void FunctionInstrumenter::instrumentLifetime(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto *AI = dyn_cast<AllocaInst>(
      getUnderlyingObject(cast<IntrinsicInst>(E.I)->getArgOperand(1)));
  auto It = StackIndex.find(AI);
  if (It == StackIndex.end())
    return;
  const StackObject &S = Stack[It->second];
  if (E.Kind == EventKind::LifetimeStart) {
    insertAfter(IRB, E.I);
    emit(IRB, RT->StackAlloc,
         {IRB.getInt32(S.Site), S.AI, allocaSize(IRB, S.AI)});
  } else {
    insertBefore(IRB, E.I);
    emit(IRB, RT->StackFree, {IRB.getInt32(S.Site), S.AI});
  }
}

void FunctionInstrumenter::instrumentStackRestore(const Event &E) {
  IRBuilder<> IRB(Ctx);
  auto It = RestoreFrees.find(E.I);
  if (It == RestoreFrees.end())
    return;
  insertBefore(IRB, E.I);
  for (unsigned Obj : reverse(It->second))
    emitStackFree(IRB, Obj);
}

void FunctionInstrumenter::instrumentExits() {
  bool FreesAtExit =
      any_of(Stack, [](const StackObject &S) { return !S.Markers; });
  if (!ClFunctions && !FreesAtExit)
    return;
  // Every way out: ret, resume, and (once EscapeEnumerator has turned them
  // into invokes to a cleanup pad) unwinding through calls.  The stack
  // objects are freed in reverse order of their allocas.
  EscapeEnumerator EE(F, "mnemo.cleanup", /*HandleExceptions=*/true);
  while (IRBuilder<> *IRB = EE.Next()) {
    IRB->SetCurrentDebugLocation(locFor(&*IRB->GetInsertPoint()));
    for (unsigned Obj = Stack.size(); Obj-- > 0;)
      if (!Stack[Obj].Markers)
        emitStackFree(*IRB, Obj);
    if (ClFunctions)
      emit(*IRB, RT->FuncExit, {IRB->getInt32(FunctionSite)});
  }
}

void FunctionInstrumenter::rewrite(const RuntimeCallbacks &Callbacks,
                                   SummaryPlan Plan) {
  RT = &Callbacks;
  collectSync();
  planSummaries(Plan);
  instrumentEntry();
  instrumentLoops();
  for (Event &E : Events)
    instrumentEvent(E);
  instrumentExits();
  instrumentSync();
  for (const Summary &S : Summaries)
    versionChecks(S);
  FAM.invalidate(F, PreservedAnalyses::none());
}

//===----------------------------------------------------------------------===//
// Synchronizations: atomics and OpenMP (abi.h, __mnemo_acquire).
//===----------------------------------------------------------------------===//

/// The OpenMP calls that fork a team, whose third argument is the outlined
/// body every thread of the team runs.
static bool isOpenMPFork(const Function *Callee) {
  return Callee && (Callee->getName() == "__kmpc_fork_call" ||
                    Callee->getName() == "__kmpc_fork_teams");
}

/// F is the body an OpenMP fork runs on each thread of its team.
bool FunctionInstrumenter::isOpenMPBody() const {
  for (const User *U : F.users())
    if (const auto *CB = dyn_cast<CallBase>(U))
      if (isOpenMPFork(CB->getCalledFunction()) && CB->arg_size() > 2 &&
          CB->getArgOperand(2)->stripPointerCasts() == &F)
        return true;
  return false;
}

/// Finds F's synchronizations before any event is inserted, so that an
/// atomic read-modify-write's place is known by the original instruction that
/// follows it: its load and store events come after it (a cmpxchg's store in a
/// block of its own), and its release and acquire go after those, so that the
/// value it wrote is among the events before the ordering point.  A release
/// there comes just after the write rather than at it: another thread that
/// read the value in between orders before it (README, limitations).
void FunctionInstrumenter::collectSync() {
  Value *OpenMP = ConstantExpr::getIntToPtr(
      ConstantInt::get(Type::getInt64Ty(Ctx), MnemoSyncOpenMP),
      PointerType::getUnqual(Ctx));
  auto Atomic = [&](Instruction &I, Value *Ptr, AtomicOrdering O, bool Reads,
                    bool Writes) {
    bool Rel = Writes && isReleaseOrStronger(O);
    bool Acq = Reads && isAcquireOrStronger(O);
    if (!Rel && !Acq)
      return;
    if (Reads && Writes) // after its events: before the next instruction
      SyncPoints.push_back({I.getNextNode(), Ptr, Rel, Acq, true});
    else
      SyncPoints.push_back({&I, Ptr, Rel, Acq, false});
  };
  for (Instruction &I : instructions(F)) {
    if (auto *L = dyn_cast<LoadInst>(&I)) {
      if (L->isAtomic())
        Atomic(I, L->getPointerOperand(), L->getOrdering(), true, false);
    } else if (auto *S = dyn_cast<StoreInst>(&I)) {
      if (S->isAtomic())
        Atomic(I, S->getPointerOperand(), S->getOrdering(), false, true);
    } else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
      Atomic(I, RMW->getPointerOperand(), RMW->getOrdering(), true, true);
    } else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(&I)) {
      Atomic(I, CX->getPointerOperand(), CX->getSuccessOrdering(), true, true);
    } else if (auto *CB = dyn_cast<CallInst>(&I)) {
      const Function *Callee = CB->getCalledFunction();
      StringRef Name = Callee ? Callee->getName() : "";
      if (isOpenMPFork(Callee) || Name == "__kmpc_barrier")
        SyncPoints.push_back({&I, OpenMP, true, true, false});
      else if ((Name == "__kmpc_critical" ||
                Name == "__kmpc_critical_with_hint") && CB->arg_size() > 2)
        SyncPoints.push_back({&I, CB->getArgOperand(2), false, true, false});
      else if (Name == "__kmpc_end_critical" && CB->arg_size() > 2)
        SyncPoints.push_back({&I, CB->getArgOperand(2), true, false, false});
    }
  }
}

/// Acquire and release calls around the synchronizations collectSync()
/// found, after every other event is in place: a release is the last thing
/// before the instruction that releases, an acquire the first thing after
/// one that acquires.
void FunctionInstrumenter::instrumentSync() {
  IRBuilder<> IRB(Ctx);
  for (const SyncPoint &P : SyncPoints) {
    if (P.Rel) {
      insertBefore(IRB, P.At);
      emit(IRB, RT->Release, {P.Object});
    }
    if (P.Acq) {
      if (P.Before)
        insertBefore(IRB, P.At);
      else
        insertAfter(IRB, P.At);
      emit(IRB, RT->Acquire, {P.Object});
    }
  }
  Value *OpenMP = ConstantExpr::getIntToPtr(
      ConstantInt::get(Type::getInt64Ty(Ctx), MnemoSyncOpenMP),
      PointerType::getUnqual(Ctx));
  if (!isOpenMPBody())
    return;
  IRB.SetInsertPoint(EntryPoint);
  emit(IRB, RT->Acquire, {OpenMP});
  for (BasicBlock &BB : F)
    if (auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator())) {
      insertBefore(IRB, Ret);
      emit(IRB, RT->Release, {OpenMP});
    }
}

//===----------------------------------------------------------------------===//
// GlobalRegistrar: __mnemo_register_globals.
//===----------------------------------------------------------------------===//

class GlobalRegistrar {
public:
  /// Gives every global variable to register a site id (in module order).
  void collect(Module &M, SiteTable &Sites);
  /// Defines void __mnemo_register_globals(void), which calls
  /// __mnemo_global(site, &g, size) for each collected global.  Returns it.
  Function *emit(Module &M, const RuntimeCallbacks &RT) const;

private:
  static bool shouldRegister(const GlobalVariable &G);
  void emitLoop(Module &M, const RuntimeCallbacks &RT, IRBuilder<> &IRB) const;

  struct Entry {
    GlobalVariable *G;
    uint32_t Site;
    uint64_t Size;
  };
  std::vector<Entry> Globals;
};

bool GlobalRegistrar::shouldRegister(const GlobalVariable &G) {
  // Not thread-locals: one registration at start-up could only give the main
  // thread's copy.
  return !G.isDeclaration() && !G.hasAvailableExternallyLinkage() &&
         !G.getName().starts_with("llvm.") && !isMnemoName(G.getName()) &&
         G.getSection() != "llvm.metadata" && !G.isThreadLocal() &&
         G.getAddressSpace() == 0 && G.getValueType()->isSized();
}

void GlobalRegistrar::collect(Module &M, SiteTable &Sites) {
  const DataLayout &DL = M.getDataLayout();
  DenseMap<const DIGlobalVariable *, const DICompileUnit *> Listed;
  for (const DICompileUnit *CU : M.debug_compile_units())
    for (const DIGlobalVariableExpression *E : CU->getGlobalVariables())
      Listed[E->getVariable()] = CU;
  Sites.setCurrentFunction(0);
  for (GlobalVariable &G : M.globals()) {
    if (!shouldRegister(G))
      continue;
    SourcePos Pos;
    SmallVector<DIGlobalVariableExpression *, 1> GVEs;
    G.getDebugInfo(GVEs);
    if (!GVEs.empty()) {
      DIGlobalVariable *Var = GVEs.front()->getVariable();
      Pos.File = sourceFile(Var, Listed.lookup(Var));
      Pos.Line = Var->getLine();
    }
    uint64_t Size = DL.getTypeAllocSize(G.getValueType()).getKnownMinValue();
    uint32_t Site =
        Sites.add(SiteKind::Global, &G, "", Pos, demangle(G.getName()), Size);
    // Only a global that is the whole variable: GlobalOpt's pieces of one
    // (fragments) and merged globals (an offset) carry an expression.
    if (GVEs.size() == 1 &&
        GVEs.front()->getExpression()->getNumElements() == 0)
      Sites.setFields(Site,
                      structFields(GVEs.front()->getVariable()->getType()));
    Globals.push_back({&G, Site, Size});
    ++NumGlobals;
  }
}

Function *GlobalRegistrar::emit(Module &M, const RuntimeCallbacks &RT) const {
  LLVMContext &Ctx = M.getContext();
  auto *FTy = FunctionType::get(Type::getVoidTy(Ctx), false);
  Function *Reg = M.getFunction(MnemoRegisterGlobalsName);
  if (Reg && (Reg->getFunctionType() != FTy || !Reg->isDeclaration())) {
    Ctx.emitError(Twine("mnemo: the module already has a ") +
                  MnemoRegisterGlobalsName +
                  " that is not a declaration of void(void)");
    return nullptr;
  }
  if (!Reg)
    Reg = Function::Create(FTy, GlobalValue::ExternalLinkage,
                           MnemoRegisterGlobalsName, M);
  // A declaration (the runtime's call, when it is bitcode too) may carry the
  // caller's view of it as a subprogram, which a definition may not.
  Reg->setSubprogram(nullptr);
  Reg->setVisibility(GlobalValue::DefaultVisibility);
  Reg->addFnAttr(Attribute::NoUnwind);
  IRBuilder<> IRB(BasicBlock::Create(Ctx, "entry", Reg));
  if (!Globals.empty())
    emitLoop(M, RT, IRB);
  IRB.CreateRetVoid();
  return Reg;
}

// A loop over a constant table of (site, &g, size), not one call per global:
// LTO inlines __mnemo_global's body into each call, and the one function of
// thousands of copies (Lua: a global per string literal) took more of the
// link's code generation than the whole interpreter.  The calls and their
// order are the same.
void GlobalRegistrar::emitLoop(Module &M, const RuntimeCallbacks &RT,
                               IRBuilder<> &IRB) const {
  LLVMContext &Ctx = M.getContext();
  auto *EntryTy = StructType::get(IRB.getInt32Ty(), IRB.getPtrTy(),
                                  IRB.getInt64Ty());
  auto *TableTy = ArrayType::get(EntryTy, Globals.size());
  std::vector<Constant *> Rows;
  for (const Entry &E : Globals)
    Rows.push_back(ConstantStruct::get(
        EntryTy, {IRB.getInt32(E.Site), E.G, IRB.getInt64(E.Size)}));
  auto *Table = new GlobalVariable(M, TableTy, /*isConstant=*/true,
                                   GlobalValue::PrivateLinkage,
                                   ConstantArray::get(TableTy, Rows),
                                   "__mnemo_globals_table");
  Function *Reg = IRB.GetInsertBlock()->getParent();
  BasicBlock *Entry = IRB.GetInsertBlock();
  BasicBlock *Loop = BasicBlock::Create(Ctx, "row", Reg);
  BasicBlock *Done = BasicBlock::Create(Ctx, "done", Reg);
  IRB.CreateBr(Loop);
  IRB.SetInsertPoint(Loop);
  PHINode *I = IRB.CreatePHI(IRB.getInt64Ty(), 2);
  I->addIncoming(IRB.getInt64(0), Entry);
  auto Field = [&](unsigned K, Type *Ty) {
    return IRB.CreateLoad(
        Ty, IRB.CreateInBoundsGEP(TableTy, Table,
                                  {IRB.getInt64(0), I, IRB.getInt32(K)}));
  };
  Value *Site = Field(0, IRB.getInt32Ty());
  Value *G = Field(1, IRB.getPtrTy());
  Value *Size = Field(2, IRB.getInt64Ty());
  IRB.CreateCall(RT.Global, {Site, G, Size})->setDoesNotThrow();
  Value *Next = IRB.CreateAdd(I, IRB.getInt64(1));
  I->addIncoming(Next, Loop);
  IRB.CreateCondBr(IRB.CreateICmpEQ(Next, IRB.getInt64(Globals.size())),
                   Done, Loop);
  IRB.SetInsertPoint(Done);
}

//===----------------------------------------------------------------------===//
// AllocContexts: the call sites of allocation contexts (abi.h,
// __mnemo_ctx_enter), around every call whose callee may allocate.  Only when
// the callbacks take them (__mnemo_alloc_contexts); their ids come after the
// globals', so that no other site's id depends on the modules chosen.
//===----------------------------------------------------------------------===//

class AllocContexts {
public:
  /// -mnemo-alloc-contexts if given, else the module's __mnemo_alloc_contexts.
  static bool wanted(const Module &M);
  /// Gives each call to wrap a `call` site, in the order of Targets (the
  /// instrumented functions with their function sites) and of their
  /// instructions.  Changes nothing.
  void collect(Module &M,
               ArrayRef<std::pair<Function *, uint32_t>> Targets,
               SiteTable &Sites);
  /// Inserts the enter and leave calls.
  void emit(const RuntimeCallbacks &RT) const;

private:
  static DenseSet<const Function *> mayAllocate(Module &M);
  static void leaveAt(BasicBlock *BB, Value *Saved, const CallBase &CB,
                      const RuntimeCallbacks &RT);

  struct Call {
    CallBase *CB;
    uint32_t Site;
  };
  std::vector<Call> Calls;
};

bool AllocContexts::wanted(const Module &M) {
  if (ClAllocContexts >= 0)
    return ClAllocContexts > 0;
  if (const GlobalVariable *G = M.getNamedGlobal(MnemoAllocContextsName))
    if (G->hasDefinitiveInitializer())
      if (auto *C = dyn_cast<ConstantInt>(G->getInitializer()))
        return !C->isZero();
  return false;
}

/// Defined functions that may reach an allocation: those that call an
/// allocation function (not free) or make an indirect call, and their
/// callers, transitively.
DenseSet<const Function *> AllocContexts::mayAllocate(Module &M) {
  DenseMap<const Function *, SmallVector<const Function *, 4>> Callers;
  DenseSet<const Function *> Set;
  SmallVector<const Function *, 32> Work;
  for (Function &F : M) {
    if (F.isDeclaration())
      continue;
    bool Seed = false;
    for (Instruction &I : instructions(F)) {
      auto *CB = dyn_cast<CallBase>(&I);
      if (!CB || CB->isInlineAsm())
        continue;
      const Function *Callee = directCallee(*CB);
      if (!Callee) {
        Seed = true;
        continue;
      }
      if (Callee->isIntrinsic() || isMnemoName(Callee->getName()))
        continue;
      HeapCall H = classifyHeapFunction(Callee->getName());
      if (H == HeapCall::Alloc || H == HeapCall::Realloc)
        Seed = true;
      else if (!Callee->isDeclaration())
        Callers[Callee].push_back(&F);
    }
    if (Seed && Set.insert(&F).second)
      Work.push_back(&F);
  }
  while (!Work.empty())
    for (const Function *C : Callers.lookup(Work.pop_back_val()))
      if (Set.insert(C).second)
        Work.push_back(C);
  return Set;
}

void AllocContexts::collect(Module &M,
                            ArrayRef<std::pair<Function *, uint32_t>> Targets,
                            SiteTable &Sites) {
  DenseSet<const Function *> May = mayAllocate(M);
  for (auto [F, FunctionSite] : Targets) {
    std::string FuncName = demangle(F->getName());
    Sites.setCurrentFunction(FunctionSite);
    for (Instruction &I : instructions(*F)) {
      auto *CB = dyn_cast<CallBase>(&I);
      if (!CB || CB->isInlineAsm() || isa<CallBrInst>(CB))
        continue;
      // Nothing may follow a musttail call but its ret.
      if (auto *CI = dyn_cast<CallInst>(CB); CI && CI->isMustTailCall())
        continue;
      // Direct recursion adds no context: a recursive builder's nodes keep
      // the context of the outermost call, whatever their depth.
      const Function *Callee = directCallee(*CB);
      if (Callee && (!May.contains(Callee) || Callee == F))
        continue;
      StringRef Name = Callee ? Callee->getName() : StringRef();
      Calls.push_back({CB, Sites.add(SiteKind::Call, CB, FuncName,
                                     SourcePos::of(CB->getDebugLoc()),
                                     demangle(Name))});
    }
  }
  Sites.setCurrentFunction(0);
}

void AllocContexts::leaveAt(BasicBlock *BB, Value *Saved, const CallBase &CB,
                            const RuntimeCallbacks &RT) {
  IRBuilder<> IRB(BB, BB->getFirstInsertionPt());
  IRB.SetCurrentDebugLocation(CB.getDebugLoc());
  IRB.CreateCall(RT.CtxLeave, {Saved})->setDoesNotThrow();
}

void AllocContexts::emit(const RuntimeCallbacks &RT) const {
  for (const Call &C : Calls) {
    IRBuilder<> IRB(C.CB);
    CallInst *Saved = IRB.CreateCall(RT.CtxEnter, {IRB.getInt32(C.Site)});
    Saved->setDoesNotThrow();
    ++NumContextCalls;
    if (auto *II = dyn_cast<InvokeInst>(C.CB)) {
      // An edge into a block other edges reach too would need a phi of
      // the saved values; left out: the next leave of a caller repairs it.
      for (BasicBlock *Succ : {II->getNormalDest(), II->getUnwindDest()})
        if (Succ->getSinglePredecessor())
          leaveAt(Succ, Saved, *C.CB, RT);
        else
          ++NumContextUnleft;
      continue;
    }
    IRB.SetInsertPoint(C.CB->getNextNode());
    IRB.SetCurrentDebugLocation(C.CB->getDebugLoc());
    IRB.CreateCall(RT.CtxLeave, {Saved})->setDoesNotThrow();
  }
}

//===----------------------------------------------------------------------===//
// ModuleInstrumenter: the link-time pass.
//===----------------------------------------------------------------------===//

class ModuleInstrumenter {
public:
  ModuleInstrumenter(Module &M, ModuleAnalysisManager &MAM)
      : M(M),
        FAM(MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager()) {
  }

  /// Hands out every site id of the module (collects every function to
  /// instrument and the globals).  Simplifies loops; changes nothing else.
  /// Returns false when there is nothing to instrument: no marked function,
  /// or the module was instrumented before.
  bool collect();
  /// Inserts the calls and emits the table.  Call once, after collect().
  void rewrite();
  const SiteTable &sites() const { return Sites; }
  /// After collect() alone: what LoopSimplify changed is seen by later
  /// analyses (it keeps the dominator tree and loop info up to date).
  void invalidateCollected() {
    PreservedAnalyses PA;
    PA.preserve<DominatorTreeAnalysis>();
    PA.preserve<LoopAnalysis>();
    for (auto &FI : Functions)
      FAM.invalidate(FI->function(), PA);
  }

private:
  static bool shouldInstrument(const Function &F);

  Module &M;
  FunctionAnalysisManager &FAM;
  SiteTable Sites;
  Function *StackFreeSlot = nullptr;
  std::vector<std::unique_ptr<FunctionInstrumenter>> Functions;
  GlobalRegistrar Globals;
  AllocContexts Contexts;
};

bool ModuleInstrumenter::shouldInstrument(const Function &F) {
  if (F.isDeclaration() || F.hasAvailableExternallyLinkage() ||
      F.isIntrinsic() || isMnemoName(F.getName()) ||
      F.getName().starts_with("llvm.") || F.hasFnAttribute(Attribute::Naked) ||
      F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation))
    return false;
  return ClInstrumentAll || F.hasFnAttribute(MnemoInstrumentAttr);
}

bool ModuleInstrumenter::collect() {
  // Instrumented before (the table exists): instrumenting again would count
  // every event twice.
  if (auto *Table = M.getNamedGlobal(MnemoSiteTableName);
      Table && !Table->isDeclaration())
    return false;

  std::vector<Function *> Targets;
  for (Function &F : M)
    if (shouldInstrument(F))
      Targets.push_back(&F);
  if (Targets.empty())
    return false;

  // Collect everything (and hand out every id) before the first rewrite, so
  // the ids do not depend on what instrumentation adds to the module.  The
  // mnemo-use pass calls this alone: one piece of code gives the ids both.
  for (Function *F : Targets) {
    Functions.push_back(
        std::make_unique<FunctionInstrumenter>(*F, FAM, Sites, StackFreeSlot));
    Functions.back()->collect();
  }
  if (ClGlobals)
    Globals.collect(M, Sites);
  if (AllocContexts::wanted(M)) {
    std::vector<std::pair<Function *, uint32_t>> Targets;
    for (auto &FI : Functions)
      Targets.push_back({&FI->function(), FI->functionSite()});
    Contexts.collect(M, Targets, Sites);
  }
  return true;
}

/// A local symbol named like a function or variable of libc (or of any
/// library loaded here: lld links them too) gets a suffix no C or C++ name
/// has, as ThinLTO's promotion gives one: lld's parallel code generation
/// (--lto-partitions) makes locals external (hidden) under their names, and
/// the runtime's call to libc's connect() would then call a program's static
/// connect().  Other names stay as the user wrote them (perf, nm).
static void suffixLibcNamedLocals(Module &M) {
  auto Suffix = [](GlobalValue &G) {
    if (G.hasLocalLinkage() && G.hasName() && !G.getName().contains('.') &&
        !isMnemoName(G.getName()) &&
        dlsym(RTLD_DEFAULT, G.getName().str().c_str()))
      G.setName(G.getName() + ".mnemo");
  };
  for (Function &F : M)
    Suffix(F);
  for (GlobalVariable &G : M.globals())
    Suffix(G);
  for (GlobalAlias &A : M.aliases())
    Suffix(A);
}

void ModuleInstrumenter::rewrite() {
  RuntimeCallbacks RT(M);
  SummaryPlan Plan = SummaryPlan::of(M);
  // First, so that a loop the functions' rewrite copies keeps them.
  Contexts.emit(RT);
  for (auto &FI : Functions)
    FI->rewrite(RT, Plan);
  Function *Reg = Globals.emit(M, RT);
  Sites.emit(M);
  if (Reg) {
    GlobalValue *Used = Reg;
    appendToUsed(M, Used);
  }
  suffixLibcNamedLocals(M);
}

} // namespace

//===----------------------------------------------------------------------===//
// The passes.
//===----------------------------------------------------------------------===//

PreservedAnalyses mnemo::MarkPass::run(Module &M, ModuleAnalysisManager &) {
  for (Function &F : M)
    if (!F.isDeclaration())
      F.addFnAttr(MnemoInstrumentAttr);
  // A string attribute changes no analysis result.
  return PreservedAnalyses::all();
}

PreservedAnalyses mnemo::InstrumentPass::run(Module &M,
                                             ModuleAnalysisManager &MAM) {
  // A build that applies a profile is not a profiling build (the mnemo-use
  // pass runs instead).
  if (M.getNamedMetadata(UseMetadataName))
    return PreservedAnalyses::all();
  ModuleInstrumenter MI(M, MAM);
  if (!MI.collect())
    return PreservedAnalyses::all();
  MI.rewrite();
  return PreservedAnalyses::none();
}

uint64_t mnemo::fnv1a64(StringRef Data) {
  uint64_t H = 0xcbf29ce484222325ULL;
  for (unsigned char C : Data) {
    H ^= C;
    H *= 0x100000001b3ULL;
  }
  return H;
}

bool mnemo::computeModuleSites(Module &M, ModuleAnalysisManager &MAM,
                               ModuleSites &Out) {
  ModuleInstrumenter MI(M, MAM);
  Out.Sites.clear();
  if (!MI.collect())
    return false;
  MI.sites().exportTo(Out);
  MI.invalidateCollected();
  return true;
}
