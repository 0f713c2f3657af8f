//===- Use.h - What a Mnemo profile says about this module ------*- C++ -*-===//
//
// The query API of the mnemo-use analysis.  A pass in (or loaded with) the
// plugin asks:
//
//   const mnemo::UseInfo &U = MAM.getResult<mnemo::UseAnalysis>(M);
//   if (mnemo::DependenceAnswer A = U.loopDependences(*L);
//       A.Profiled && !A.carried())
//     ...; // no loop-carried memory dependence manifested in the profiled run
//
// The analysis reads the profile named by -mnemo-use=PROFILE (or, in an LTO
// link, by the module's !mnemo.use metadata), recomputes the module's site ids
// with InstrumentPass's own code (Sites.h), maps every site of the profile to
// its IR object (by id when the site tables hash the same, else by debug
// location), and keeps what the modules measured, keyed by IR object.
// pass/README.md ("mnemo-use") documents what is taken from each module.
//
// Answers are about the profiled run: "not manifested" means "not seen", and
// anything the profile does not cover (an unmatched site, a module not in the
// profile, a loop that never ran) answers "unknown" (Profiled false, null).
//
// The dependence profile sees memory only.  A value the optimized loop keeps
// in a register from one iteration to the next (a header phi: a pointer being
// chased, a store forwarded to the next iteration's load) is a loop-carried
// dependence no profile shows; carriedValues() (below, static, no profile)
// names them.  A loop is parallel only if both are clean:
//
//   CarriedValues C = mnemo::carriedValues(*L, SE);
//   if (A.Profiled && !A.carried() && C.Judged && C.Others.empty())
//     ...; // C.Reductions each need a reduction clause
//
// Computing the analysis simplifies loops (LoopSimplify), as InstrumentPass
// does before it hands out ids; instructions and blocks are held by pointer,
// so query it before transforming the code it describes.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_PASS_USE_H
#define MNEMO_PASS_USE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Analysis/IVDescriptors.h"
#include "llvm/IR/PassManager.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Instruction;
class Loop;
class MemIntrinsic;
class PHINode;
class ScalarEvolution;
class Value;
} // namespace llvm

namespace mnemo {

/// dependence: one row of `dependences:`.
struct DependenceRow {
  enum Kind { RAW, WAR, WAW } K = RAW;
  uint32_t Loop = 0, Src = 0, Dst = 0; // profile site ids
  uint32_t SrcVia = 0, DstVia = 0;     // 0: in the loop's own function
  bool Carried = false;
  uint64_t Count = 0;
  uint64_t MinDistance = 0, MaxDistance = 0; // carried rows only
};

/// The answer to "did a dependence manifest ...".
struct DependenceAnswer {
  /// The profile has the dependence module and the loop ran in it (and, for
  /// a pair, both instructions matched a site).  False: nothing is known.
  bool Profiled = false;
  bool Manifested = false;   // at least one row
  uint64_t Count = 0;        // all rows
  uint64_t CarriedCount = 0; // rows the loop carried
  uint64_t IntraCount = 0;   // rows inside one iteration
  unsigned CarriedRows = 0, IntraRows = 0;
  uint64_t MinDistance = 0, MaxDistance = 0; // over carried rows
  bool carried() const { return CarriedRows != 0; }
};

/// value-pattern: one row of `entries:`.
struct AccessValues {
  uint32_t Site = 0;
  bool IsStore = false;
  uint64_t Executions = 0;
  bool Constant = false;
  uint64_t Value = 0; // when Constant
  uint64_t Distinct = 0;
  bool DistinctCapped = false;
  bool HasStride = false; // executions >= 2
  int64_t Stride = 0;
  double StrideFraction = 0;
  bool StronglyStrided = false;
};

/// value-pattern: one row of `memops:`.
struct MemOpSizes {
  uint32_t Site = 0; // the destination store site
  std::string Op;    // memcpy, memmove, memset
  uint64_t Executions = 0, Other = 0;
  llvm::SmallVector<std::pair<uint64_t, uint64_t>, 8> Sizes; // size, count
};

/// rds-shape: one row of `types:`.
struct RDSType {
  uint64_t Type = 0;
  uint32_t AllocSite = 0; // the root: its smallest allocation site
  llvm::SmallVector<uint32_t, 4> Sites;
  uint64_t Instances = 0, Nodes = 0, Traversals = 0;
  double AvgStabilityFactor = 0;
  uint64_t MaxStabilityFactor = 0;
  /// Walked, and every walked instance stayed one piece between
  /// alterations: its largest interval held 99% of its traversals.
  bool stable() const { return Traversals && MaxStabilityFactor == 1; }
};

/// structure-affinity: one entry of `structures:`.
struct AffinityAdvice {
  uint32_t Site = 0;
  std::string Kind, Name, Type, Advice;
  double Share = 0;
  std::vector<std::vector<uint64_t>> Clusters; // field offsets
  /// The advice splits the structure (more than one cluster).
  bool splits() const { return Clusters.size() > 1; }
};

class UseInfo {
public:
  // ---- The profile and the matching ----
  bool hasProfile() const { return Loaded; }
  llvm::StringRef path() const { return Path; }
  bool hasModule(llvm::StringRef Name) const;
  bool matchedById() const { return ById; }
  unsigned matchedSites() const { return Matched; }
  unsigned profileSites() const { return Total; }
  /// The profile's site ids an IR object stands for: a load and a store site
  /// for an atomic or a memcpy; the site of a function, of a loop's header
  /// block, of a global, of an allocation call.  Empty: unmatched.
  llvm::ArrayRef<uint32_t> sitesOf(const llvm::Value *V) const;
  /// The profile's site of loop L (its header), or 0.
  uint32_t loopSite(const llvm::Loop &L) const;
  /// What a profile site matched, or null.
  const llvm::Value *anchorOf(uint32_t Site) const;

  // ---- dependence ----
  /// Did a dependence manifest from Src (the earlier access) to Dst in L?
  DependenceAnswer dependence(const llvm::Instruction &Src,
                              const llvm::Instruction &Dst,
                              const llvm::Loop &L) const;
  /// Every dependence that manifested in L, between any accesses.
  DependenceAnswer loopDependences(const llvm::Loop &L) const;
  llvm::ArrayRef<DependenceRow> dependenceRows(const llvm::Loop &L) const;
  /// invocations, iterations of L in the dependence profile.
  std::optional<std::pair<uint64_t, uint64_t>>
  loopRuns(const llvm::Loop &L) const;

  // ---- value-pattern ----
  /// The load (or, IsStore, store) site of I: values and strides.
  const AccessValues *values(const llvm::Instruction &I,
                             bool IsStore = false) const;
  /// The value a load always read, if it was constant (and ran).
  std::optional<uint64_t> constantLoad(const llvm::Instruction &I) const;
  /// The dominant stride of a strongly strided access (load site first).
  std::optional<int64_t> strongStride(const llvm::Instruction &I) const;
  const MemOpSizes *memop(const llvm::MemIntrinsic &MI) const;
  /// Times F was entered (value-pattern's `functions:`).
  std::optional<uint64_t> entryCount(const llvm::Function &F) const;

  // ---- rds-shape ----
  /// The RDS type whose root (alloc_site) is this allocation call.
  const RDSType *rdsRoot(const llvm::Value &AllocCall) const;
  /// The RDS type this allocation call is one of the sites of.
  const RDSType *rdsType(const llvm::Value &AllocCall) const;

  // ---- structure-affinity ----
  /// The advice for the data object allocated or declared by V (a heap
  /// call, an alloca, a global variable).
  const AffinityAdvice *affinity(const llvm::Value &Object) const;

  // Filled by UseAnalysis (Use.cpp).
  struct Data;
  std::shared_ptr<Data> D;
  std::string Path;
  bool Loaded = false, ById = false;
  unsigned Matched = 0, Total = 0;

  /// Kept across passes that do not abandon it explicitly: it holds IR
  /// pointers, and is meant to be queried right after it is computed.
  bool invalidate(llvm::Module &, const llvm::PreservedAnalyses &PA,
                  llvm::ModuleAnalysisManager::Invalidator &);
};

/// A reduction a loop carries in a register, as LLVM recognizes it.
struct CarriedReduction {
  llvm::PHINode *Phi = nullptr;
  llvm::RecurKind Kind = llvm::RecurKind::None;
  /// Floating point without reassociation allowed: reduced in another order
  /// (in parallel), the result may round differently.
  bool ExactFP = false;
};

/// What a loop carries from one iteration to the next in registers: its
/// header phis that are not induction variables (InductionDescriptor).
struct CarriedValues {
  /// False: nothing is known (the loop is not in simplified form, or a header
  /// phi holds a vector: the loop was vectorized before this was asked).
  bool Judged = false;
  /// Reductions LLVM recognizes (RecurrenceDescriptor::isReductionPHI).
  llvm::SmallVector<CarriedReduction, 2> Reductions;
  /// Floating-point induction variables without reassociation allowed:
  /// computed from the iteration number instead (in parallel), they may round
  /// differently.  Integer and pointer inductions are not listed.
  llvm::SmallVector<llvm::PHINode *, 1> ExactFPInductions;
  /// Neither an induction variable nor a reduction: each iteration needs the
  /// previous one's value (a first-order recurrence included).
  llvm::SmallVector<llvm::PHINode *, 2> Others;
};

/// Classifies the header phis of L.  Static: it needs no profile.  Meant for
/// optimized IR before vectorization (mnemo-cc compiles with -fno-vectorize):
/// at -O0 locals live in memory and no phi carries them; a vectorized loop
/// (vector phis) or one not in simplified form comes back not Judged.
CarriedValues carriedValues(llvm::Loop &L, llvm::ScalarEvolution &SE);

/// The module analysis: MAM.getResult<mnemo::UseAnalysis>(M).
class UseAnalysis : public llvm::AnalysisInfoMixin<UseAnalysis> {
  friend llvm::AnalysisInfoMixin<UseAnalysis>;
  static llvm::AnalysisKey Key;

public:
  using Result = UseInfo;
  Result run(llvm::Module &M, llvm::ModuleAnalysisManager &MAM);
};

} // namespace mnemo

#endif // MNEMO_PASS_USE_H
