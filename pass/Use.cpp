//===- Use.cpp - mnemo-use: a Mnemo profile applied to a build ------------===//
//
// UseAnalysis reads a profile (libmnemo-profile, compiled into the plugin),
// recomputes the module's site ids with InstrumentPass's own collection
// (Sites.h), maps every site of the profile to its IR object and keeps what
// the modules measured (Use.h is the query API).  UsePass writes it into the
// module: !mnemo.* metadata, optimization remarks (pass name "mnemo"),
// value-profile !prof metadata on memory intrinsics with the function entry
// counts PGOMemOPSizeOpt needs, and then runs PGOMemOPSizeOpt on those
// functions.  A loop's remark weighs the profile's memory dependences with
// what the loop carries in registers (carriedValues()), which no memory
// profile sees.  UsePrintPass asks the analysis about every loop and pair of
// accesses and prints the answers (tests).
//
// See README.md in this folder, "mnemo-use".
//
//===----------------------------------------------------------------------===//

#include "Use.h"
#include "Passes.h"
#include "Sites.h"

#include "profile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/IVDescriptors.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DebugProgramInstruction.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/ProfileData/InstrProf.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Instrumentation/PGOInstrumentation.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;
using namespace mnemo;

// clang and lld parse -mllvm before they load pass plugins: clang needs the
// plugin loaded with -fplugin= as well; an LTO link gets the path from the
// bitcode (!mnemo.use), never from this option.
static cl::opt<std::string>
    ClUse("mnemo-use",
          cl::desc("Apply a Mnemo profile to this build (the mnemo-use pass)"),
          cl::value_desc("profile"), cl::Hidden, cl::init(""));

static cl::opt<bool>
    ClUseVerbose("mnemo-use-verbose",
                 cl::desc("mnemo-use: list every site that did not match"),
                 cl::Hidden, cl::init(false));

static cl::opt<unsigned> ClRemarkMin(
    "mnemo-use-remark-min",
    cl::desc("mnemo-use: fewest executions (iterations for loops) for a "
             "remark or metadata about an access or a loop"),
    cl::Hidden, cl::init(100));

AnalysisKey UseAnalysis::Key;

//===----------------------------------------------------------------------===//
// What the analysis keeps.
//===----------------------------------------------------------------------===//

struct UseInfo::Data {
  // Matching: profile site -> IR object, and back.
  DenseMap<uint32_t, const Value *> Anchor;
  DenseMap<const Value *, SmallVector<uint32_t, 2>> SitesOf;
  std::vector<std::string> Modules;

  // dependence
  bool HasDependence = false;
  std::vector<DependenceRow> Deps;                            // sorted by loop
  DenseMap<uint32_t, std::pair<unsigned, unsigned>> DepRange; // loop -> [b, e)
  DenseMap<uint32_t, std::pair<uint64_t, uint64_t>> LoopRuns;

  // value-pattern
  DenseMap<uint32_t, AccessValues> Values;
  DenseMap<uint32_t, MemOpSizes> MemOps;
  DenseMap<uint32_t, uint64_t> Entries; // function site -> entries

  // rds-shape
  std::vector<RDSType> Types;
  DenseMap<uint32_t, unsigned> RootOf, TypeOf; // alloc site -> Types index

  // structure-affinity
  std::vector<AffinityAdvice> Advice;
  DenseMap<uint32_t, unsigned> AdviceOf; // object site -> Advice index
};

bool UseInfo::hasModule(StringRef Name) const {
  return D && is_contained(D->Modules, Name);
}

ArrayRef<uint32_t> UseInfo::sitesOf(const Value *V) const {
  if (!D)
    return {};
  auto It = D->SitesOf.find(V);
  if (It == D->SitesOf.end())
    return {};
  return It->second;
}

uint32_t UseInfo::loopSite(const Loop &L) const {
  ArrayRef<uint32_t> S = sitesOf(L.getHeader());
  return S.empty() ? 0 : S.front();
}

const Value *UseInfo::anchorOf(uint32_t Site) const {
  return D ? D->Anchor.lookup(Site) : nullptr;
}

ArrayRef<DependenceRow> UseInfo::dependenceRows(const Loop &L) const {
  uint32_t Site = loopSite(L);
  if (!D || !Site)
    return {};
  auto It = D->DepRange.find(Site);
  if (It == D->DepRange.end())
    return {};
  return ArrayRef<DependenceRow>(D->Deps).slice(
      It->second.first, It->second.second - It->second.first);
}

std::optional<std::pair<uint64_t, uint64_t>>
UseInfo::loopRuns(const Loop &L) const {
  uint32_t Site = loopSite(L);
  if (!D || !D->HasDependence || !Site)
    return std::nullopt;
  auto It = D->LoopRuns.find(Site);
  if (It == D->LoopRuns.end())
    return std::nullopt;
  return It->second;
}

/// Adds one row to an answer.
static void addRow(DependenceAnswer &A, const DependenceRow &R) {
  A.Manifested = true;
  A.Count += R.Count;
  if (R.Carried) {
    if (!A.CarriedRows || R.MinDistance < A.MinDistance)
      A.MinDistance = R.MinDistance;
    A.MaxDistance = std::max(A.MaxDistance, R.MaxDistance);
    A.CarriedCount += R.Count;
    ++A.CarriedRows;
  } else {
    A.IntraCount += R.Count;
    ++A.IntraRows;
  }
}

DependenceAnswer UseInfo::loopDependences(const Loop &L) const {
  DependenceAnswer A;
  auto Runs = loopRuns(L);
  if (!Runs || Runs->first == 0)
    return A; // not profiled, or never ran: nothing is known
  A.Profiled = true;
  for (const DependenceRow &R : dependenceRows(L))
    addRow(A, R);
  return A;
}

DependenceAnswer UseInfo::dependence(const Instruction &Src,
                                     const Instruction &Dst,
                                     const Loop &L) const {
  DependenceAnswer A;
  auto Runs = loopRuns(L);
  ArrayRef<uint32_t> S = sitesOf(&Src), T = sitesOf(&Dst);
  if (!Runs || Runs->first == 0 || S.empty() || T.empty())
    return A;
  A.Profiled = true;
  for (const DependenceRow &R : dependenceRows(L))
    if (is_contained(S, R.Src) && is_contained(T, R.Dst))
      addRow(A, R);
  return A;
}

const AccessValues *UseInfo::values(const Instruction &I, bool IsStore) const {
  if (!D)
    return nullptr;
  for (uint32_t S : sitesOf(&I)) {
    auto It = D->Values.find(S);
    if (It != D->Values.end() && It->second.IsStore == IsStore)
      return &It->second;
  }
  return nullptr;
}

std::optional<uint64_t> UseInfo::constantLoad(const Instruction &I) const {
  const AccessValues *V = values(I, false);
  if (!V || !V->Constant || !V->Executions)
    return std::nullopt;
  return V->Value;
}

std::optional<int64_t> UseInfo::strongStride(const Instruction &I) const {
  for (bool Store : {false, true})
    if (const AccessValues *V = values(I, Store))
      if (V->HasStride && V->StronglyStrided)
        return V->Stride;
  return std::nullopt;
}

const MemOpSizes *UseInfo::memop(const MemIntrinsic &MI) const {
  if (!D)
    return nullptr;
  for (uint32_t S : sitesOf(&MI)) {
    auto It = D->MemOps.find(S);
    if (It != D->MemOps.end())
      return &It->second;
  }
  return nullptr;
}

std::optional<uint64_t> UseInfo::entryCount(const Function &F) const {
  if (!D)
    return std::nullopt;
  for (uint32_t S : sitesOf(&F)) {
    auto It = D->Entries.find(S);
    if (It != D->Entries.end())
      return It->second;
  }
  return std::nullopt;
}

const RDSType *UseInfo::rdsRoot(const Value &AllocCall) const {
  if (!D)
    return nullptr;
  for (uint32_t S : sitesOf(&AllocCall)) {
    auto It = D->RootOf.find(S);
    if (It != D->RootOf.end())
      return &D->Types[It->second];
  }
  return nullptr;
}

const RDSType *UseInfo::rdsType(const Value &AllocCall) const {
  if (!D)
    return nullptr;
  for (uint32_t S : sitesOf(&AllocCall)) {
    auto It = D->TypeOf.find(S);
    if (It != D->TypeOf.end())
      return &D->Types[It->second];
  }
  return nullptr;
}

const AffinityAdvice *UseInfo::affinity(const Value &Object) const {
  if (!D)
    return nullptr;
  for (uint32_t S : sitesOf(&Object)) {
    auto It = D->AdviceOf.find(S);
    if (It != D->AdviceOf.end())
      return &D->Advice[It->second];
  }
  return nullptr;
}

bool UseInfo::invalidate(Module &, const PreservedAnalyses &PA,
                         ModuleAnalysisManager::Invalidator &) {
  auto PAC = PA.getChecker<UseAnalysis>();
  return !PAC.preserved() && !PAC.preservedSet<AllAnalysesOn<Module>>();
}

//===----------------------------------------------------------------------===//
// Reading the profile's module sections.  A section that does not match its
// schema is reported once (libmnemo-profile's message: file, line, field) and
// left out; the rest of the profile is still used.
//===----------------------------------------------------------------------===//

namespace {

class SectionReader {
public:
  SectionReader(const mn_profile *P, StringRef Module) : P(P), Module(Module) {}

  /// The rows of table Key (a sequence of mappings), or none.
  std::vector<const mn_pnode *> rows(const mn_pnode *Sec, const char *Key) {
    std::vector<const mn_pnode *> Out;
    const mn_pnode *T = mn_pnode_get(Sec, Key);
    if (!T || mn_pnode_is_null(T))
      return Out;
    if (mn_pnode_kind(T) != MN_PNODE_SEQ) {
      mn_pnode_errorf(P, T, Err, sizeof(Err), "expected a sequence for '%s'",
                      Key);
      Failed = true;
      return Out;
    }
    for (size_t I = 0, N = mn_pnode_len(T); I < N; ++I)
      Out.push_back(mn_pnode_at(T, I));
    return Out;
  }

  template <typename T>
  bool req(int (*Fn)(const mn_profile *, const mn_pnode *, const char *, T *,
                     char *, size_t),
           const mn_pnode *Row, const char *Key, T &V) {
    if (Failed)
      return false;
    if (Fn(P, Row, Key, &V, Err, sizeof(Err))) {
      Failed = true;
      return false;
    }
    return true;
  }
  /// An optional field: a missing key keeps V; a wrong type fails.
  template <typename T>
  bool opt(int (*Fn)(const mn_profile *, const mn_pnode *, const char *, T *,
                     char *, size_t),
           const mn_pnode *Row, const char *Key, T &V) {
    if (Failed)
      return false;
    int R = Fn(P, Row, Key, &V, nullptr, 0);
    if (R == -ENOENT)
      return false;
    if (R) {
      Fn(P, Row, Key, &V, Err, sizeof(Err));
      Failed = true;
      return false;
    }
    return true;
  }

  /// Prints the first failure, if any; true if the section read.
  bool finish() {
    if (Failed)
      errs() << "mnemo-use: error: " << Err << " (the " << Module
             << " section is not used)\n";
    return !Failed;
  }

  bool Failed = false;
  char Err[512] = "";

private:
  const mn_profile *P;
  StringRef Module;
};

#define U64 mn_pfield_u64
#define U32 mn_pfield_u32
#define I64 mn_pfield_i64
#define F64 mn_pfield_f64
#define BOOL mn_pfield_bool
#define STR mn_pfield_str

void readDependence(const mn_profile *P, const mn_pnode *Sec,
                    UseInfo::Data &D) {
  SectionReader R(P, "dependence");
  std::vector<DependenceRow> Rows;
  DenseMap<uint32_t, std::pair<uint64_t, uint64_t>> Runs;
  for (const mn_pnode *Row : R.rows(Sec, "loops")) {
    uint32_t Loop = 0;
    uint64_t Inv = 0, Iter = 0;
    R.req(U32, Row, "loop", Loop);
    R.req(U64, Row, "invocations", Inv);
    R.req(U64, Row, "iterations", Iter);
    Runs[Loop] = {Inv, Iter};
  }
  for (const mn_pnode *Row : R.rows(Sec, "dependences")) {
    DependenceRow D;
    const char *Kind = "";
    R.req(U32, Row, "loop", D.Loop);
    R.req(STR, Row, "kind", Kind);
    R.req(U32, Row, "src", D.Src);
    R.req(U32, Row, "dst", D.Dst);
    R.req(BOOL, Row, "carried", D.Carried);
    R.req(U64, Row, "count", D.Count);
    R.opt(U32, Row, "src_via", D.SrcVia);
    R.opt(U32, Row, "dst_via", D.DstVia);
    R.opt(U64, Row, "min_distance", D.MinDistance);
    R.opt(U64, Row, "max_distance", D.MaxDistance);
    StringRef K = Kind;
    D.K = K == "war"   ? DependenceRow::WAR
          : K == "waw" ? DependenceRow::WAW
                       : DependenceRow::RAW;
    Rows.push_back(D);
  }
  if (!R.finish())
    return;
  std::sort(Rows.begin(), Rows.end(),
            [](const DependenceRow &A, const DependenceRow &B) {
              return std::tie(A.Loop, A.Src, A.Dst, A.K, A.Carried, A.SrcVia,
                              A.DstVia, A.Count) <
                     std::tie(B.Loop, B.Src, B.Dst, B.K, B.Carried, B.SrcVia,
                              B.DstVia, B.Count);
            });
  for (unsigned I = 0; I < Rows.size();) {
    unsigned J = I;
    while (J < Rows.size() && Rows[J].Loop == Rows[I].Loop)
      ++J;
    D.DepRange[Rows[I].Loop] = {I, J};
    I = J;
  }
  D.Deps = std::move(Rows);
  D.LoopRuns = std::move(Runs);
  D.HasDependence = true;
}

void readValuePattern(const mn_profile *P, const mn_pnode *Sec,
                      UseInfo::Data &D) {
  SectionReader R(P, "value-pattern");
  DenseMap<uint32_t, AccessValues> Values;
  DenseMap<uint32_t, MemOpSizes> MemOps;
  DenseMap<uint32_t, uint64_t> Entries;
  for (const mn_pnode *Row : R.rows(Sec, "entries")) {
    AccessValues V;
    const char *Access = "";
    R.req(U32, Row, "site", V.Site);
    R.req(STR, Row, "access", Access);
    R.req(U64, Row, "executions", V.Executions);
    R.req(BOOL, Row, "constant", V.Constant);
    R.opt(U64, Row, "value", V.Value);
    R.opt(U64, Row, "distinct", V.Distinct);
    R.opt(BOOL, Row, "distinct_capped", V.DistinctCapped);
    V.HasStride = R.opt(I64, Row, "stride", V.Stride);
    R.opt(F64, Row, "stride_fraction", V.StrideFraction);
    R.opt(BOOL, Row, "strongly_strided", V.StronglyStrided);
    V.IsStore = StringRef(Access) == "store";
    Values[V.Site] = V;
  }
  for (const mn_pnode *Row : R.rows(Sec, "functions")) {
    uint32_t Site = 0;
    uint64_t N = 0;
    R.req(U32, Row, "site", Site);
    R.req(U64, Row, "entries", N);
    Entries[Site] = N;
  }
  for (const mn_pnode *Row : R.rows(Sec, "memops")) {
    MemOpSizes M;
    const char *Op = "";
    R.req(U32, Row, "site", M.Site);
    R.req(STR, Row, "op", Op);
    R.req(U64, Row, "executions", M.Executions);
    R.opt(U64, Row, "other", M.Other);
    M.Op = Op;
    for (const mn_pnode *S : R.rows(Row, "sizes")) {
      uint64_t Size = 0, Count = 0;
      R.req(U64, S, "size", Size);
      R.req(U64, S, "count", Count);
      M.Sizes.push_back({Size, Count});
    }
    MemOps[M.Site] = std::move(M);
  }
  if (!R.finish())
    return;
  D.Values = std::move(Values);
  D.MemOps = std::move(MemOps);
  D.Entries = std::move(Entries);
}

void readRDSShape(const mn_profile *P, const mn_pnode *Sec, UseInfo::Data &D) {
  SectionReader R(P, "rds-shape");
  std::vector<RDSType> Types;
  for (const mn_pnode *Row : R.rows(Sec, "types")) {
    RDSType T;
    R.req(U64, Row, "type", T.Type);
    R.req(U32, Row, "alloc_site", T.AllocSite);
    R.opt(U64, Row, "instances", T.Instances);
    R.opt(U64, Row, "nodes", T.Nodes);
    R.opt(U64, Row, "traversals", T.Traversals);
    R.opt(F64, Row, "avg_stability_factor", T.AvgStabilityFactor);
    R.opt(U64, Row, "max_stability_factor", T.MaxStabilityFactor);
    const mn_pnode *Sites = mn_pnode_get(Row, "sites");
    for (size_t I = 0, N = mn_pnode_len(Sites); I < N; ++I) {
      uint64_t S = 0;
      if (mn_pnode_u64(mn_pnode_at(Sites, I), &S) == 0)
        T.Sites.push_back(uint32_t(S));
    }
    Types.push_back(std::move(T));
  }
  if (!R.finish())
    return;
  D.Types = std::move(Types);
  for (unsigned I = 0; I < D.Types.size(); ++I) {
    D.RootOf[D.Types[I].AllocSite] = I;
    D.TypeOf[D.Types[I].AllocSite] = I;
    for (uint32_t S : D.Types[I].Sites)
      D.TypeOf[S] = I;
  }
}

void readAffinity(const mn_profile *P, const mn_pnode *Sec, UseInfo::Data &D) {
  SectionReader R(P, "structure-affinity");
  std::vector<AffinityAdvice> Advice;
  const mn_pnode *Structs = mn_pnode_get(Sec, "structures");
  for (size_t I = 0, N = mn_pnode_len(Structs);
       mn_pnode_kind(Structs) == MN_PNODE_MAP && I < N; ++I) {
    const mn_pnode *Row = mn_pnode_at(Structs, I);
    AffinityAdvice A;
    const char *S = "";
    R.req(U32, Row, "site", A.Site);
    if (R.opt(STR, Row, "kind", S))
      A.Kind = S;
    if (R.opt(STR, Row, "name", S))
      A.Name = S;
    if (R.opt(STR, Row, "type", S))
      A.Type = S;
    if (R.opt(STR, Row, "advice", S))
      A.Advice = S;
    R.opt(F64, Row, "share", A.Share);
    const mn_pnode *Clusters = mn_pnode_get(Row, "clusters");
    for (size_t C = 0, NC = mn_pnode_len(Clusters); C < NC; ++C) {
      const mn_pnode *Cl = mn_pnode_at(Clusters, C);
      std::vector<uint64_t> Offsets;
      for (size_t K = 0, NK = mn_pnode_len(Cl); K < NK; ++K) {
        uint64_t Off = 0;
        if (mn_pnode_u64(mn_pnode_at(Cl, K), &Off) == 0)
          Offsets.push_back(Off);
      }
      A.Clusters.push_back(std::move(Offsets));
    }
    Advice.push_back(std::move(A));
  }
  if (!R.finish())
    return;
  D.Advice = std::move(Advice);
  for (unsigned I = 0; I < D.Advice.size(); ++I)
    D.AdviceOf[D.Advice[I].Site] = I;
}

#undef U64
#undef U32
#undef I64
#undef F64
#undef BOOL
#undef STR

//===----------------------------------------------------------------------===//
// Matching the profile's sites to this build's.
//===----------------------------------------------------------------------===//

std::string hex64(uint64_t V) {
  std::string S;
  raw_string_ostream OS(S);
  OS << format_hex_no_prefix(V, 16, /*Upper=*/false);
  return OS.str();
}

/// A site as both sides describe it.  Copies of one inlined line differ by
/// the function they are inlined into, and where.
struct SiteKey {
  std::string Kind, Function, File;
  int64_t Line;
  unsigned Column;
  std::string InlinedInto, InlinedAt;
  bool operator<(const SiteKey &O) const {
    return std::tie(Kind, Function, File, Line, Column, InlinedInto,
                    InlinedAt) < std::tie(O.Kind, O.Function, O.File, O.Line,
                                          O.Column, O.InlinedInto,
                                          O.InlinedAt);
  }
};

class Matcher {
public:
  Matcher(const mn_profile *P, const ModuleSites &Here) : P(P), Here(Here) {}

  /// Profile id -> this build's id (0: unmatched).  True: by id.
  bool run(DenseMap<uint32_t, uint32_t> &Out) {
    const mn_binary *B = mn_profile_binary(P);
    if (B && *B->site_table_hash && B->site_count == Here.count() &&
        hex64(Here.TableHash) == B->site_table_hash) {
      for (size_t I = 0, N = mn_profile_site_count(P); I < N; ++I) {
        const mn_site *S = mn_profile_site_at(P, I);
        if (S->id >= 1 && S->id <= Here.count() &&
            Here.Sites[S->id - 1].Kind == S->kind)
          Out[S->id] = S->id;
      }
      return true;
    }
    byLocation(Out);
    return false;
  }

private:
  /// Pairs the ids of equal keys, in id order on both sides (an unrolled
  /// loop's copies keep their order).
  template <typename KeyFn, typename HereKeyFn>
  void pairUp(DenseMap<uint32_t, uint32_t> &Out, KeyFn ProfKey,
              HereKeyFn BuildKey) {
    std::map<SiteKey, std::vector<uint32_t>> Prof, Build;
    for (size_t I = 0, N = mn_profile_site_count(P); I < N; ++I) {
      const mn_site *S = mn_profile_site_at(P, I);
      if (Out.count(S->id))
        continue;
      if (std::optional<SiteKey> K = ProfKey(*S))
        Prof[*K].push_back(S->id);
    }
    for (uint32_t Id = 1; Id <= Here.count(); ++Id) {
      if (Taken.count(Id))
        continue;
      if (std::optional<SiteKey> K = BuildKey(Here.Sites[Id - 1]))
        Build[*K].push_back(Id);
    }
    for (auto &[K, Ids] : Prof) {
      auto It = Build.find(K);
      if (It == Build.end())
        continue;
      for (size_t I = 0; I < Ids.size() && I < It->second.size(); ++I) {
        Out[Ids[I]] = It->second[I];
        Taken.insert(It->second[I]);
      }
    }
  }

  void byLocation(DenseMap<uint32_t, uint32_t> &Out) {
    // 1. Same kind, function, file, line and column.
    pairUp(
        Out,
        [](const mn_site &S) -> std::optional<SiteKey> {
          return SiteKey{S.kind,   S.function,     S.file,      S.line,
                         S.column, S.inlined_into, S.inlined_at};
        },
        [](const SiteInfo &S) -> std::optional<SiteKey> {
          return SiteKey{S.Kind.str(), S.Function,    S.File,     S.Line,
                         S.Column,     S.InlinedInto, S.InlinedAt};
        });
    // 2. Lines relative to the enclosing function's (its `function` site):
    // an edit elsewhere in the file moves a function whole.  Inlined code:
    // relative to the function the line belongs to, else (no out-of-line
    // copy, so no function site) to the one it is inlined into; the inlining
    // calls' lines are left out, as they move with another function.
    std::map<std::string, int64_t> ProfFn, BuildFn;
    std::map<std::string, int> ProfFnN, BuildFnN;
    for (size_t I = 0, N = mn_profile_site_count(P); I < N; ++I) {
      const mn_site *S = mn_profile_site_at(P, I);
      if (StringRef(S->kind) == "function") {
        ProfFn[S->function] = S->line;
        ++ProfFnN[S->function];
      }
    }
    for (const SiteInfo &S : Here.Sites)
      if (S.Kind == "function") {
        BuildFn[S.Function] = S.Line;
        ++BuildFnN[S.Function];
      }
    // A name two functions share (static functions of two files) says
    // nothing about either.
    for (auto &[Name, N] : ProfFnN)
      if (N > 1)
        ProfFn.erase(Name);
    for (auto &[Name, N] : BuildFnN)
      if (N > 1)
        BuildFn.erase(Name);
    // The key of a site of kind Kind at Line in Function (inlined into Into),
    // relative to its base in Fns.  The base taken is part of the key.
    auto Relative = [](const std::map<std::string, int64_t> &Fns,
                       const std::string &Kind, const std::string &Function,
                       const std::string &File, unsigned Line,
                       unsigned Column,
                       const std::string &Into) -> std::optional<SiteKey> {
      if (Function.empty() || !Line)
        return std::nullopt;
      auto It = Fns.find(Function);
      std::string Base;
      if (It == Fns.end() && !Into.empty()) {
        It = Fns.find(Into);
        Base = "into";
      }
      if (It == Fns.end())
        return std::nullopt;
      return SiteKey{Kind,   Function, File, int64_t(Line) - It->second,
                     Column, Into,     Base};
    };
    pairUp(
        Out,
        [&](const mn_site &S) {
          return Relative(ProfFn, S.kind, S.function, S.file, S.line,
                          S.column, S.inlined_into);
        },
        [&](const SiteInfo &S) {
          return Relative(BuildFn, S.Kind.str(), S.Function, S.File, S.Line,
                          S.Column, S.InlinedInto);
        });
    // 3. Globals by name (their declarations move with the lines too).
    pairUp(
        Out,
        [](const mn_site &S) -> std::optional<SiteKey> {
          if (StringRef(S.kind) != "global")
            return std::nullopt;
          return SiteKey{S.kind, S.name, S.file, 0, 0, "", ""};
        },
        [](const SiteInfo &S) -> std::optional<SiteKey> {
          if (S.Kind != "global")
            return std::nullopt;
          return SiteKey{S.Kind.str(), S.Name, S.File, 0, 0, "", ""};
        });
  }

  const mn_profile *P;
  const ModuleSites &Here;
  DenseSet<uint32_t> Taken;
};

/// The profile to apply: -mnemo-use, else the module's !mnemo.use.
std::string profilePath(const Module &M) {
  if (!ClUse.empty())
    return ClUse;
  const NamedMDNode *NMD = M.getNamedMetadata(UseMetadataName);
  if (!NMD)
    return "";
  std::string Path;
  for (const MDNode *N : NMD->operands()) {
    if (N->getNumOperands() < 1)
      continue;
    auto *S = dyn_cast<MDString>(N->getOperand(0));
    if (!S)
      continue;
    if (Path.empty())
      Path = S->getString().str();
    else if (Path != S->getString())
      errs() << "mnemo-use: warning: translation units were compiled with "
                "different profiles; using "
             << Path << "\n";
  }
  return Path;
}

std::string describe(const mn_site &S) {
  std::string Out;
  raw_string_ostream OS(Out);
  OS << S.id << " (" << S.kind;
  if (*S.function)
    OS << " in " << S.function;
  if (*S.inlined_into)
    OS << ", inlined into " << S.inlined_into;
  if (*S.file)
    OS << " at " << S.file << ":" << S.line << ":" << S.column;
  else if (*S.name)
    OS << " " << S.name;
  OS << ")";
  return OS.str();
}

} // namespace

UseInfo UseAnalysis::run(Module &M, ModuleAnalysisManager &MAM) {
  UseInfo U;
  U.Path = profilePath(M);
  if (U.Path.empty())
    return U;

  char Err[1024] = "";
  mn_profile *P = nullptr;
  if (mn_profile_open(&P, U.Path.c_str(), Err, sizeof(Err))) {
    // Never fail the build for a profile: it only makes the build better.
    errs() << "mnemo-use: error: " << Err
           << " (building without the profile)\n";
    return U;
  }

  ModuleSites Here;
  computeModuleSites(M, MAM, Here);
  DenseMap<uint32_t, uint32_t> Match;
  U.ById = Matcher(P, Here).run(Match);

  auto D = std::make_shared<UseInfo::Data>();
  SmallVector<const mn_site *, 8> Unmatched;
  unsigned NUnmatched = 0;
  for (size_t I = 0, N = mn_profile_site_count(P); I < N; ++I) {
    const mn_site *S = mn_profile_site_at(P, I);
    // Site 0 (`kind: unknown`) is no site: loop 0 of dependence rows.
    if (S->id == 0)
      continue;
    ++U.Total;
    uint32_t Id = Match.lookup(S->id);
    const Value *A = Id ? Here.Sites[Id - 1].Anchor : nullptr;
    if (!A) {
      ++NUnmatched;
      if (Unmatched.size() < 3 || ClUseVerbose)
        Unmatched.push_back(S);
      continue;
    }
    ++U.Matched;
    D->Anchor[S->id] = A;
    D->SitesOf[A].push_back(S->id);
  }
  errs() << "mnemo-use: " << U.Path << ": " << U.Matched << " of " << U.Total
         << " sites matched (" << (U.ById ? "by id" : "by location") << ")\n";
  if (NUnmatched) {
    errs() << "mnemo-use: warning: " << U.Path << ": " << NUnmatched << " site"
           << (NUnmatched == 1 ? "" : "s") << " did not match this build";
    for (size_t I = 0; I < Unmatched.size(); ++I)
      errs() << (I ? ", " : (ClUseVerbose ? ": " : ", e.g. "))
             << describe(*Unmatched[I]);
    errs() << "\n";
  }

  for (size_t I = 0, N = mn_profile_module_count(P); I < N; ++I) {
    StringRef Name = mn_profile_module_name(P, I);
    const mn_pnode *Sec = mn_profile_module_section(P, I);
    D->Modules.push_back(Name.str());
    if (Name == "dependence")
      readDependence(P, Sec, *D);
    else if (Name == "value-pattern")
      readValuePattern(P, Sec, *D);
    else if (Name == "rds-shape")
      readRDSShape(P, Sec, *D);
    else if (Name == "structure-affinity")
      readAffinity(P, Sec, *D);
  }
  mn_profile_close(P);
  U.D = std::move(D);
  U.Loaded = true;
  return U;
}

//===----------------------------------------------------------------------===//
// What a loop carries in registers.
//===----------------------------------------------------------------------===//

CarriedValues mnemo::carriedValues(Loop &L, ScalarEvolution &SE) {
  CarriedValues C;
  // Both descriptors want one preheader and one latch.
  if (!L.isLoopSimplifyForm())
    return C;
  // The predicated form, as the loop vectorizer asks (with no predicates
  // assumed): it also recognizes floating-point inductions.
  PredicatedScalarEvolution PSE(SE, L);
  for (PHINode &Phi : L.getHeader()->phis()) {
    // A vectorized loop: its vector inductions and reductions are not what
    // the descriptors recognize, and they would call them carried.
    if (Phi.getType()->isVectorTy())
      return CarriedValues();
    InductionDescriptor ID;
    if (InductionDescriptor::isInductionPHI(&Phi, &L, PSE, ID)) {
      if (ID.getExactFPMathInst())
        C.ExactFPInductions.push_back(&Phi);
      continue;
    }
    RecurrenceDescriptor RD;
    if (RecurrenceDescriptor::isReductionPHI(&Phi, &L, RD, /*DB=*/nullptr,
                                             /*AC=*/nullptr, /*DT=*/nullptr,
                                             &SE)) {
      C.Reductions.push_back(
          {&Phi, RD.getRecurrenceKind(), RD.hasExactFPMath()});
      continue;
    }
    C.Others.push_back(&Phi);
  }
  C.Judged = true;
  return C;
}

//===----------------------------------------------------------------------===//
// UsePass: metadata, remarks, memop sizes.
//===----------------------------------------------------------------------===//

namespace {

constexpr char RemarkPass[] = "mnemo";

ConstantAsMetadata *mdInt(LLVMContext &Ctx, uint64_t V, unsigned Bits = 64) {
  return ConstantAsMetadata::get(
      ConstantInt::get(IntegerType::get(Ctx, Bits), V));
}

ConstantAsMetadata *mdFloat(LLVMContext &Ctx, double V) {
  return ConstantAsMetadata::get(ConstantFP::get(Type::getDoubleTy(Ctx), V));
}

/// Adds (or replaces) the property named Name in L's llvm.loop metadata.
void setLoopProperty(Loop &L, StringRef Name, ArrayRef<Metadata *> Values) {
  LLVMContext &Ctx = L.getHeader()->getContext();
  SmallVector<Metadata *, 8> Ops;
  Ops.push_back(nullptr); // the self reference
  if (MDNode *ID = L.getLoopID())
    for (unsigned I = 1; I < ID->getNumOperands(); ++I) {
      auto *Prop = dyn_cast<MDNode>(ID->getOperand(I));
      if (Prop && Prop->getNumOperands() &&
          isa<MDString>(Prop->getOperand(0)) &&
          cast<MDString>(Prop->getOperand(0))->getString() == Name)
        continue;
      Ops.push_back(ID->getOperand(I));
    }
  SmallVector<Metadata *, 4> Prop{MDString::get(Ctx, Name)};
  Prop.append(Values.begin(), Values.end());
  Ops.push_back(MDNode::get(Ctx, Prop));
  MDNode *NewID = MDNode::getDistinct(Ctx, Ops);
  NewID->replaceOperandWith(0, NewID);
  L.setLoopID(NewID);
}

/// Where a remark about a loop goes: its start, else its header's first
/// located instruction.
DebugLoc loopLoc(const Loop &L) {
  if (DebugLoc DL = L.getStartLoc())
    return DL;
  for (const Instruction &I : *L.getHeader())
    if (I.getDebugLoc())
      return I.getDebugLoc();
  return DebugLoc();
}

/// The source variable a debug record says V holds (one with a plain
/// expression first), or null.
const DILocalVariable *variableOf(Value *V) {
  SmallVector<DbgValueInst *, 2> Intrinsics;
  SmallVector<DbgVariableRecord *, 2> Records;
  findDbgValues(Intrinsics, V, &Records);
  const DILocalVariable *Any = nullptr;
  for (DbgVariableRecord *R : Records) {
    if (!R->getExpression()->getNumElements())
      return R->getVariable();
    Any = Any ? Any : R->getVariable();
  }
  for (DbgValueInst *I : Intrinsics) {
    if (!I->getExpression()->getNumElements())
      return I->getVariable();
    Any = Any ? Any : I->getVariable();
  }
  return Any;
}

/// How a remark names a value L carries in Phi: the source variable the phi
/// (else the value it takes from the latch) holds; else where it is (the
/// phi's own location, which LoopLoadElimination gives the phi of a load it
/// forwarded, else the latch value's); else its IR name.
std::string carriedName(PHINode &Phi, const Loop &L) {
  Value *Next = nullptr;
  if (BasicBlock *Latch = L.getLoopLatch())
    Next = Phi.getIncomingValueForBlock(Latch);
  if (const DILocalVariable *V = variableOf(&Phi))
    return V->getName().str();
  if (Next)
    if (const DILocalVariable *V = variableOf(Next))
      return V->getName().str();
  DebugLoc DL = Phi.getDebugLoc();
  if ((!DL || !DL.getLine()) && isa_and_nonnull<Instruction>(Next))
    DL = cast<Instruction>(Next)->getDebugLoc();
  if (DL && DL.getLine())
    return (Twine("the value at line ") + Twine(DL.getLine()) + ", column " +
            Twine(DL.getCol()))
        .str();
  if (Phi.hasName())
    return Phi.getName().str();
  return "an unnamed value";
}

/// An OpenMP-style name of a reduction's operator.
StringRef reductionOperator(RecurKind K) {
  switch (K) {
  case RecurKind::Add:
  case RecurKind::FAdd:
  case RecurKind::FMulAdd:
    return "+";
  case RecurKind::Mul:
  case RecurKind::FMul:
    return "*";
  case RecurKind::Or:
    return "|";
  case RecurKind::And:
    return "&";
  case RecurKind::Xor:
    return "^";
  case RecurKind::SMin:
  case RecurKind::FMin:
  case RecurKind::FMinimum:
    return "min";
  case RecurKind::SMax:
  case RecurKind::FMax:
  case RecurKind::FMaximum:
    return "max";
  case RecurKind::UMin:
    return "unsigned min";
  case RecurKind::UMax:
    return "unsigned max";
  case RecurKind::IAnyOf:
  case RecurKind::FAnyOf:
    return "any-of";
  case RecurKind::None:
    break;
  }
  return "?";
}

/// Appends "a", "a and b", "a, b and c": Each(R, Item) writes one item.
template <typename T, typename EachFn>
void appendList(OptimizationRemarkAnalysis &R, ArrayRef<T> Items, EachFn Each) {
  for (size_t I = 0; I < Items.size(); ++I) {
    if (I)
      R << (I + 1 == Items.size() ? " and " : ", ");
    Each(R, Items[I]);
  }
}

class Applier {
public:
  Applier(Module &M, ModuleAnalysisManager &MAM, const UseInfo &U)
      : M(M), Ctx(M.getContext()),
        FAM(MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager()),
        U(U) {}

  bool run();

private:
  void loops(Function &F, OptimizationRemarkEmitter &ORE);
  void loopVerdict(Loop &L, const DependenceAnswer &A,
                   std::pair<uint64_t, uint64_t> Runs,
                   OptimizationRemarkEmitter &ORE);
  void accesses(Function &F, OptimizationRemarkEmitter &ORE);
  void objects(Function &F, OptimizationRemarkEmitter &ORE);
  void globals();
  bool memops(Function &F);

  /// One remark of a kind per source position: the copies of an unrolled
  /// or vectorized access say the same thing.
  bool firstAt(StringRef Remark, const DebugLoc &DL) {
    if (!DL)
      return true;
    return Said
        .insert({Remark.str(), DL->getFilename().str(), DL->getLine(),
                 DL->getColumn()})
        .second;
  }

  Module &M;
  LLVMContext &Ctx;
  FunctionAnalysisManager &FAM;
  const UseInfo &U;
  bool Changed = false;
  std::set<std::tuple<std::string, std::string, unsigned, unsigned>> Said;
};

void Applier::loops(Function &F, OptimizationRemarkEmitter &ORE) {
  if (!U.hasModule("dependence"))
    return;
  LoopInfo &LI = FAM.getResult<LoopAnalysis>(F);
  for (Loop *L : LI.getLoopsInPreorder()) {
    auto Runs = U.loopRuns(*L);
    if (!Runs)
      continue;
    DependenceAnswer A = U.loopDependences(*L);
    setLoopProperty(*L, "mnemo.loop",
                    {mdInt(Ctx, U.loopSite(*L), 32), mdInt(Ctx, Runs->first),
                     mdInt(Ctx, Runs->second)});
    if (A.Profiled)
      setLoopProperty(*L, "mnemo.dependence",
                      {mdInt(Ctx, A.CarriedCount), mdInt(Ctx, A.IntraCount)});
    Changed = true;
    if (A.Profiled && Runs->second >= ClRemarkMin)
      loopVerdict(*L, A, *Runs, ORE);
  }
}

/// One remark per profiled loop and source position: a parallelization
/// candidate only when the profile shows no carried memory dependence and
/// every value the loop carries in a register is an induction variable or a
/// reduction (named: it needs a reduction clause).  Otherwise the remark says
/// which dependence stands in the way.  No remark when the loop's registers
/// cannot be judged (CarriedValues::Judged).
void Applier::loopVerdict(Loop &L, const DependenceAnswer &A,
                          std::pair<uint64_t, uint64_t> Runs,
                          OptimizationRemarkEmitter &ORE) {
  auto AppendRuns = [&](OptimizationRemarkAnalysis &R) {
    R << ore::NV("Iterations", Runs.second) << " iterations in "
      << ore::NV("Invocations", Runs.first)
      << (Runs.first == 1 ? " invocation" : " invocations");
  };
  DebugLoc DL = loopLoc(L);
  if (A.carried()) {
    if (!firstAt("LoopVerdict", DL))
      return;
    ORE.emit([&] {
      OptimizationRemarkAnalysis R(RemarkPass, "CarriedDependence", DL,
                                   L.getHeader());
      R << "loop carried memory dependences in the profile (";
      AppendRuns(R);
      R << "; " << ore::NV("Dependences", A.CarriedCount);
      if (A.MinDistance == A.MaxDistance)
        R << " at distance " << ore::NV("Distance", A.MinDistance);
      else
        R << " at distances " << ore::NV("MinDistance", A.MinDistance) << " to "
          << ore::NV("MaxDistance", A.MaxDistance);
      R << "): not a parallelization candidate";
      return R;
    });
    return;
  }
  CarriedValues C = carriedValues(
      L, FAM.getResult<ScalarEvolutionAnalysis>(*L.getHeader()->getParent()));
  if (!C.Judged || !firstAt("LoopVerdict", DL))
    return;
  if (!C.Others.empty()) {
    ORE.emit([&] {
      OptimizationRemarkAnalysis R(RemarkPass, "CarriedValue", DL,
                                   L.getHeader());
      R << "loop carried no memory dependence in the profile (";
      AppendRuns(R);
      R << "), but it is not a parallelization candidate: it carries ";
      appendList(R, ArrayRef<PHINode *>(C.Others),
                 [&](OptimizationRemarkAnalysis &R, PHINode *Phi) {
                   R << ore::NV("CarriedValue", carriedName(*Phi, L));
                 });
      bool One = C.Others.size() == 1;
      R << " from one iteration to the next in "
        << (One ? "a register, neither an induction variable nor a "
                  "reduction"
                : "registers, neither induction variables nor reductions");
      return R;
    });
    return;
  }
  ORE.emit([&] {
    OptimizationRemarkAnalysis R(RemarkPass, "NoCarriedDependence", DL,
                                 L.getHeader());
    R << "loop carried no memory dependence in the profile (";
    AppendRuns(R);
    R << "): a parallelization candidate";
    if (!C.Reductions.empty()) {
      R << (C.Reductions.size() == 1 ? " with a reduction of "
                                     : " with reductions of ");
      appendList(
          R, ArrayRef<CarriedReduction>(C.Reductions),
          [&](OptimizationRemarkAnalysis &R, const CarriedReduction &Red) {
            R << ore::NV("Reduction", carriedName(*Red.Phi, L)) << " ("
              << ore::NV("Operator", reductionOperator(Red.Kind));
            if (Red.ExactFP)
              R << ", floating point: in another order it may round "
                   "differently";
            R << ")";
          });
    }
    if (!C.ExactFPInductions.empty()) {
      R << "; ";
      appendList(R, ArrayRef<PHINode *>(C.ExactFPInductions),
                 [&](OptimizationRemarkAnalysis &R, PHINode *Phi) {
                   R << ore::NV("Induction", carriedName(*Phi, L));
                 });
      R << (C.ExactFPInductions.size() == 1
                ? ", a floating-point induction variable, may round "
                  "differently when computed from the iteration number"
                : ", floating-point induction variables, may round "
                  "differently when computed from the iteration number");
    }
    return R;
  });
}

void Applier::accesses(Function &F, OptimizationRemarkEmitter &ORE) {
  for (Instruction &I : instructions(F)) {
    ArrayRef<uint32_t> Sites = U.sitesOf(&I);
    if (Sites.empty())
      continue;
    SmallVector<Metadata *, 2> Ids;
    for (uint32_t S : Sites)
      Ids.push_back(mdInt(Ctx, S, 32));
    I.setMetadata("mnemo.site", MDNode::get(Ctx, Ids));
    Changed = true;

    if (isa<LoadInst>(I))
      if (const AccessValues *V = U.values(I, false))
        if (V->Constant && V->Executions >= ClRemarkMin) {
          I.setMetadata("mnemo.constant",
                        MDNode::get(Ctx, {mdInt(Ctx, V->Value),
                                          mdInt(Ctx, V->Executions)}));
          if (firstAt("ConstantLoad", I.getDebugLoc()))
            ORE.emit([&] {
              return OptimizationRemarkAnalysis(RemarkPass, "ConstantLoad", &I)
                     << "load always read "
                     << ore::NV("Value", std::to_string(V->Value))
                     << " in the profile ("
                     << ore::NV("Executions", V->Executions) << " executions)";
            });
        }
    for (bool Store : {false, true}) {
      const AccessValues *V = U.values(I, Store);
      if (!V || !V->HasStride || !V->StronglyStrided ||
          V->Executions < ClRemarkMin)
        continue;
      I.setMetadata("mnemo.stride",
                    MDNode::get(Ctx, {mdInt(Ctx, uint64_t(V->Stride)),
                                      mdFloat(Ctx, V->StrideFraction),
                                      mdInt(Ctx, V->Executions)}));
      // Stride 0 is one address every time (a scalar kept in memory), not
      // a walk: metadata, no remark.
      if (V->Stride != 0 && firstAt("StronglyStrided", I.getDebugLoc()))
        ORE.emit([&] {
          return OptimizationRemarkAnalysis(RemarkPass, "StronglyStrided", &I)
                 << (Store ? "store" : "load")
                 << " is strongly strided: " << ore::NV("Stride", V->Stride)
                 << " bytes in "
                 << ore::NV("Percent", unsigned(V->StrideFraction * 100 + 0.5))
                 << "% of " << ore::NV("Executions", V->Executions)
                 << " executions";
        });
      break;
    }
  }
}

void Applier::objects(Function &F, OptimizationRemarkEmitter &ORE) {
  for (Instruction &I : instructions(F)) {
    if (!isa<CallBase>(I) && !isa<AllocaInst>(I))
      continue;
    if (const RDSType *T = U.rdsType(I)) {
      bool Root = U.rdsRoot(I) == T;
      I.setMetadata(
          "mnemo.rds",
          MDNode::get(Ctx, {mdInt(Ctx, T->Type), mdInt(Ctx, Root, 1),
                            mdInt(Ctx, T->Instances), mdInt(Ctx, T->Nodes),
                            mdInt(Ctx, T->Traversals),
                            mdInt(Ctx, T->MaxStabilityFactor)}));
      Changed = true;
      if (Root && firstAt("RDSRoot", I.getDebugLoc()))
        ORE.emit([&] {
          OptimizationRemarkAnalysis R(RemarkPass, "RDSRoot", &I);
          R << "allocation site is the root of recursive data structure type "
            << ore::NV("Type", T->Type) << " ("
            << ore::NV("Instances", T->Instances) << " instances, "
            << ore::NV("Nodes", T->Nodes) << " nodes): ";
          if (!T->Traversals)
            R << "never traversed";
          else if (T->stable())
            R << "stable (stability factor 1: linearizable once)";
          else
            R << "unstable (stability factor up to "
              << ore::NV("StabilityFactor", T->MaxStabilityFactor) << ")";
          return R;
        });
    }
    if (const AffinityAdvice *A = U.affinity(I)) {
      I.setMetadata("mnemo.affinity",
                    MDNode::get(Ctx, {MDString::get(Ctx, A->Advice),
                                      mdFloat(Ctx, A->Share)}));
      Changed = true;
      if (A->splits() && firstAt("StructureSplitting", I.getDebugLoc()))
        ORE.emit([&] {
          return OptimizationRemarkAnalysis(RemarkPass, "StructureSplitting",
                                            &I)
                 << "structure "
                 << ore::NV("Type", A->Type.empty() ? A->Name : A->Type) << ": "
                 << ore::NV("Advice", A->Advice);
        });
    }
  }
}

void Applier::globals() {
  for (GlobalVariable &G : M.globals()) {
    const AffinityAdvice *A = U.affinity(G);
    if (!A)
      continue;
    G.setMetadata("mnemo.affinity",
                  MDNode::get(Ctx, {MDString::get(Ctx, A->Advice),
                                    mdFloat(Ctx, A->Share)}));
    Changed = true;
    if (!A->splits())
      continue;
    // A remark needs a place in code: the global's first located use.
    for (User *Us : G.users()) {
      auto *I = dyn_cast<Instruction>(Us);
      if (!I || !I->getDebugLoc())
        continue;
      OptimizationRemarkEmitter ORE(I->getFunction());
      ORE.emit([&] {
        return OptimizationRemarkAnalysis(RemarkPass, "StructureSplitting", I)
               << "structure "
               << ore::NV("Type", A->Type.empty() ? A->Name : A->Type)
               << " (global " << ore::NV("Global", G.getName())
               << "): " << ore::NV("Advice", A->Advice);
      });
      break;
    }
  }
}

/// Writes the sizes value-pattern saw as value-profile !prof metadata
/// (IPVK_MemOPSize) on each matched memory intrinsic, gives the function its
/// entry count (PGOMemOPSizeOpt scales the sizes' counts by the block's
/// profile count, which needs one), and runs PGOMemOPSizeOpt.
bool Applier::memops(Function &F) {
  bool Annotated = false;
  for (Instruction &I : instructions(F)) {
    auto *MI = dyn_cast<MemIntrinsic>(&I);
    if (!MI || isa<ConstantInt>(MI->getLength()))
      continue;
    const MemOpSizes *Op = U.memop(*MI);
    if (!Op || Op->Sizes.empty() || !Op->Executions)
      continue;
    SmallVector<InstrProfValueData, 8> VDs;
    for (auto [Size, Count] : Op->Sizes)
      VDs.push_back({Size, Count});
    // By count, descending: PGOMemOPSizeOpt stops at the first size below
    // its thresholds.
    std::sort(VDs.begin(), VDs.end(),
              [](const InstrProfValueData &A, const InstrProfValueData &B) {
                return A.Count != B.Count ? A.Count > B.Count
                                          : A.Value < B.Value;
              });
    MI->setMetadata(LLVMContext::MD_prof, nullptr);
    annotateValueSite(M, *MI, VDs, Op->Executions, IPVK_MemOPSize, VDs.size());
    Annotated = true;
  }
  if (!Annotated)
    return false;
  Changed = true;
  if (!F.getEntryCount())
    if (std::optional<uint64_t> N = U.entryCount(F))
      F.setEntryCount(Function::ProfileCount(*N, Function::PCT_Real));
  PreservedAnalyses PA = PGOMemOPSizeOpt().run(F, FAM);
  FAM.invalidate(F, PA);
  return true;
}

bool Applier::run() {
  for (Function &F : M) {
    if (F.isDeclaration())
      continue;
    OptimizationRemarkEmitter ORE(&F);
    loops(F, ORE);
    accesses(F, ORE);
    objects(F, ORE);
  }
  globals();
  // Last: PGOMemOPSizeOpt changes the CFG.
  for (Function &F : M)
    if (!F.isDeclaration())
      memops(F);
  return Changed;
}

/// A compile whose output is bitcode for an LTO link: clang records these
/// module flags before running the pipeline (-flto: "ThinLTO" 0 and
/// "EnableSplitLTOUnit"; -flto=thin: "ThinLTO" absent, "EnableSplitLTOUnit").
bool isLTOPreLink(const Module &M) {
  return M.getModuleFlag("ThinLTO") || M.getModuleFlag("EnableSplitLTOUnit");
}

} // namespace

PreservedAnalyses UseRecordPass::run(Module &M, ModuleAnalysisManager &) {
  if (ClUse.empty())
    return PreservedAnalyses::all();
  SmallString<256> Abs(ClUse);
  sys::fs::make_absolute(Abs);
  LLVMContext &Ctx = M.getContext();
  NamedMDNode *NMD = M.getOrInsertNamedMetadata(UseMetadataName);
  NMD->clearOperands();
  NMD->addOperand(MDNode::get(Ctx, {MDString::get(Ctx, Abs)}));
  return PreservedAnalyses::all();
}

PreservedAnalyses UsePass::run(Module &M, ModuleAnalysisManager &MAM) {
  switch (Where) {
  case Explicit:
    break;
  case OptimizerLast:
    // In an LTO compile the link applies the profile (UseRecordPass left the
    // path in the bitcode).
    if (ClUse.empty() || isLTOPreLink(M))
      return PreservedAnalyses::all();
    break;
  case FullLTO:
    if (!M.getNamedMetadata(UseMetadataName))
      return PreservedAnalyses::all();
    break;
  }
  const UseInfo &U = MAM.getResult<UseAnalysis>(M);
  if (!U.hasProfile())
    return PreservedAnalyses::all();
  if (!Applier(M, MAM, U).run())
    return PreservedAnalyses::all();
  PreservedAnalyses PA;
  PA.preserve<UseAnalysis>();
  return PA;
}

//===----------------------------------------------------------------------===//
// UsePrintPass: every loop and pair of accesses, asked and answered.
//===----------------------------------------------------------------------===//

static std::string where(const Instruction &I) {
  std::string S;
  raw_string_ostream OS(S);
  if (const DILocation *L = I.getDebugLoc())
    OS << L->getFilename() << ":" << L->getLine() << ":" << L->getColumn();
  else
    OS << "?";
  return OS.str();
}

static std::string accessName(const Instruction &I) {
  if (isa<LoadInst>(I))
    return "load";
  if (isa<StoreInst>(I))
    return "store";
  if (auto *MI = dyn_cast<MemIntrinsic>(&I))
    return isa<MemSetInst>(MI) ? "memset" : "memcpy";
  return I.getOpcodeName();
}

PreservedAnalyses UsePrintPass::run(Module &M, ModuleAnalysisManager &MAM) {
  const UseInfo &U = MAM.getResult<UseAnalysis>(M);
  if (!U.hasProfile()) {
    OS << "mnemo-use-print: no profile\n";
    return PreservedAnalyses::all();
  }
  OS << "profile " << U.path() << ": " << U.matchedSites() << " of "
     << U.profileSites() << " sites matched "
     << (U.matchedById() ? "by id" : "by location") << "\n";
  FunctionAnalysisManager &FAM =
      MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
  for (Function &F : M) {
    if (F.isDeclaration())
      continue;
    LoopInfo &LI = FAM.getResult<LoopAnalysis>(F);
    for (Loop *L : LI.getLoopsInPreorder()) {
      DebugLoc DL = loopLoc(*L);
      OS << "loop " << F.getName() << " ";
      if (DL)
        OS << DL->getFilename() << ":" << DL->getLine();
      else
        OS << "?";
      auto Runs = U.loopRuns(*L);
      DependenceAnswer A = U.loopDependences(*L);
      if (Runs && Runs->first == 0) {
        OS << ": never ran\n";
        continue;
      }
      if (!Runs || !A.Profiled) {
        OS << ": unknown\n";
        continue;
      }
      OS << ": invocations " << Runs->first << " iterations " << Runs->second
         << " carried " << (A.carried() ? "yes" : "no") << " ("
         << A.CarriedCount << ") intra " << (A.IntraRows ? "yes" : "no") << " ("
         << A.IntraCount << ")\n";
      // Every ordered pair of the loop's matched accesses (its own blocks,
      // inner loops included).
      SmallVector<const Instruction *, 32> Acc;
      for (BasicBlock *BB : L->blocks())
        for (Instruction &I : *BB)
          if ((isa<LoadInst>(I) || isa<StoreInst>(I) || isa<MemIntrinsic>(I)) &&
              !U.sitesOf(&I).empty())
            Acc.push_back(&I);
      for (const Instruction *S : Acc)
        for (const Instruction *T : Acc) {
          DependenceAnswer P = U.dependence(*S, *T, *L);
          if (!P.Manifested)
            continue;
          OS << "  " << accessName(*S) << " " << where(*S) << " -> "
             << accessName(*T) << " " << where(*T) << ":";
          if (P.carried())
            OS << " carried " << P.CarriedCount << " distance " << P.MinDistance
               << ".." << P.MaxDistance;
          if (P.IntraRows)
            OS << " intra " << P.IntraCount;
          OS << "\n";
        }
    }
    for (Instruction &I : instructions(F)) {
      if (std::optional<uint64_t> V = U.constantLoad(I))
        OS << "constant load " << where(I) << ": " << *V << "\n";
      if (std::optional<int64_t> S = U.strongStride(I))
        OS << "strided " << accessName(I) << " " << where(I) << ": " << *S
           << "\n";
      if (auto *MI = dyn_cast<MemIntrinsic>(&I))
        if (const MemOpSizes *Op = U.memop(*MI)) {
          OS << "memop " << Op->Op << " " << where(I) << ":";
          for (auto [Size, Count] : Op->Sizes)
            OS << " " << Size << "x" << Count;
          OS << "\n";
        }
      if (const RDSType *T = U.rdsRoot(I))
        OS << "rds root " << where(I) << ": type " << T->Type
           << (T->stable() ? " stable" : " not stable") << "\n";
      if (const AffinityAdvice *A = U.affinity(I))
        OS << "affinity " << where(I) << ": " << A->Advice << "\n";
    }
  }
  return PreservedAnalyses::all();
}
