// Shrinking a test case over its graph: smaller candidates, each valid by nncheck::checkValid,
// in the order worth trying. Cut a chunk of nodes (their values consumed later are fed in as
// graph inputs, or initializers where the consumer wants a weight, so downstream values do not
// change), drop a graph output, bypass a node whose input has its output's type, move
// attributes toward defaults, simplify input values (zeros, ones, integers). Every edit makes
// the case strictly simpler, so repeated shrinking ends.
//
//   nncheck::ShrinkCandidates c(tc);
//   for (size_t i = 0; i < c.size(); ++i)
//     if (auto smaller = c.make(i)) { /* does it still fail? */ }
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "nncheck/test_case.h"

namespace nncheck {

class ShrinkCandidates {
 public:
  explicit ShrinkCandidates(TestCase tc);
  ~ShrinkCandidates();
  ShrinkCandidates(ShrinkCandidates&&) noexcept;

  size_t size() const;
  // The i-th candidate, or nullopt when that edit does not give a valid case.
  std::optional<TestCase> make(size_t i) const;
  // What the i-th edit does: "cut 3 nodes from #2", "bypass Relu_4", "zeros for x0", ...
  std::string describe(size_t i) const;
  // The case's node `node` alone, what it reads fed in as a cut feeds it and what it computes
  // the graph's outputs: what shrinking an error at that node ends at. Nullopt when that is no
  // valid case (the node computes no output, its values leave the finite).
  std::optional<TestCase> alone(size_t node) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ShrinkBudget {
  int steps = 2000;     // candidate runs
  double seconds = 60;  // wall time
};

struct ShrinkResult {
  TestCase testCase;  // the smallest failing case found
  int steps = 0;      // candidates run
  double seconds = 0;
};

// Greedy shrinking outside RapidCheck (campaigns, nncheck reduce): the first candidate that
// still fails replaces the case, until no candidate fails or the budget is spent. `focus`: the
// node the failure starts at, when known (its first diverging node, the node its error names):
// that node alone (ShrinkCandidates::alone), where shrinking a one-node bug ends, is the first
// candidate, so such a bug costs a few runs instead of a cut at a time (each a compile on a
// compiler).
ShrinkResult shrinkGreedily(TestCase tc, const std::function<bool(const TestCase&)>& stillFails,
                            const ShrinkBudget& budget = {},
                            std::optional<size_t> focus = std::nullopt);

// Removes nodes that reach no graph output, then graph inputs, input values and initializers
// nothing reads.
void pruneDeadNodes(TestCase& tc);

}  // namespace nncheck
