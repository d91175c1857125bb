// The root cause a finding is grouped under, and the known bugs a campaign recognises.
//
// Minimized patterns are made of ops and wiring, so one bug shows under many of them (ReduceSum's
// `noop_with_empty_axes` read by ReduceL1, ReduceMax, ReduceProd...). A root cause is what those
// patterns share:
// - a failure that needs some of the optimizations the culprit search chose among, and not all
//   of them: those optimizations (one rewrite's bug shows under many ops and kinds);
// - else the kind of failure (a shape apart from values), the op where it starts (the first
//   diverging node; else, for a crash or an error no node explains, the last node), that node's
//   attributes that differ from their defaults (shrinking drops the others), for a crash, hang
//   or error no wrong value explains the dtypes of that node's inputs, and the optimizations it
//   needs when they are all there were (OpenCV's one `fusion` switch).
//
//   std::string cause = nncheck::rootCause(finding.info, finding.minimized.model);
//   // "mismatch at ReduceSum (noop_with_empty_axes)"
//   nncheck::KnownBugs known;
//   known.add("examples/opencv/corpus");
//   if (const nncheck::KnownBug* k = known.match(finding.info, finding.minimized.model)) ...
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "nncheck/corpus.h"

namespace nncheck {

// The node a failure starts at: the first diverging node, else the last (a crash or an error
// that no wrong value before it explains happens at the end of what shrinking kept); null for an
// empty graph.
const Node* rootNode(const FailureInfo& info, const Graph& minimized);
// The node's attributes that differ from their defaults (all it sets, for an op nncheck lacks).
std::vector<std::string> nonDefaultAttributes(const Node& n);

// Whether the failure's culprit optimizations are its root cause: some of those searched, not
// all of them.
bool causedByOptimizations(const FailureInfo& info);

// The root cause of a recorded failure of `minimized`: one line, equal for failures of one bug.
std::string rootCause(const FailureInfo& info, const Model& minimized);

// Where a failure's fault lies, read from its triage (configuration -> outcome), one line:
// every configuration fails, so the fault is in what they share (the engine's `sharedStage`,
// when it names one: LiteRT's conversion); else the baseline fails too (the engine's kernels or
// its adapter, not its optimizations); else the baseline passes (a bug of the optimizing
// configurations). "" when the triage did not run the baseline.
std::string faultStage(const std::map<std::string, Outcome>& triage, const std::string& baseline,
                       const std::string& sharedStage);

// Findings grouped by root cause, groups in the order of their first member, members in order.
struct RootCauseGroup {
  std::string rootCause;
  std::vector<size_t> members;  // indices into what was grouped
};
std::vector<RootCauseGroup> groupByRootCause(const std::vector<std::string>& causes);

// The known bugs (nncheck/corpus.h) of some corpora (an engine's shipped corpus, a team's own
// list). A failure is a known bug when a known case has its root cause (not merely its pattern:
// one pattern of ops and wiring with other attributes is another bug), whichever oracle showed
// either: a wrong value at a Resize is one bug whether the reference, the baseline or an
// equivalent variant shows it (14 of an equivalence campaign's 17 root causes were the
// reference's known bugs).
class KnownBugs {
 public:
  // Every readable case under `corpus` (a corpus, or a folder of cases). Throws nncheck::Error
  // naming the folder when it is not one, or a case that cannot be read.
  void add(const std::filesystem::path& corpus);
  const KnownBug* match(const FailureInfo& info, const Model& minimized) const;
  // The optimizations each known bug needs, as its culprit search found them (a case without
  // one adds none).
  std::vector<std::vector<std::string>> culprits() const { return culprits_; }
  size_t size() const { return bugs_.size(); }
  const std::vector<std::filesystem::path>& folders() const { return folders_; }

 private:
  std::vector<KnownBug> bugs_;
  std::vector<std::string> causes_;  // each bug's root cause less its oracle
  std::vector<std::vector<std::string>> culprits_;
  std::vector<std::filesystem::path> folders_;
};

}  // namespace nncheck
