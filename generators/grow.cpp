// The growth loop: insertions until the model has its nodes, each forward (a new node reads
// existing values), backward (a new node computes a graph input from fresh leaves, which forms
// nodes with several computed inputs), a block of the prior or a constant subexpression.
#include "generators/ways_of_growing.h"
#include "nncheck/error.h"

namespace nncheck::gen {

TestCase growTo(Growth& g, size_t nodes) {
  // The first leaf: a graph input of a dtype some op can consume.
  if (g.values().empty()) g.addInput(2, 4);
  int failures = 0;
  while (g.nodes().size() < nodes) {
    // A share of 0 draws nothing, so that generation without them is what it was before them.
    const GeneratorConfig& cfg = g.cfg();
    if (cfg.blockShare > 0 && g.rng().chance(cfg.blockShare) &&
        growBlock(g, nodes - g.nodes().size()))
      continue;
    if (cfg.constantShare > 0 && !g.nodes().empty() && g.rng().chance(cfg.constantShare) &&
        growConstant(g))
      continue;
    const bool backward = !g.nodes().empty() && g.rng().chance(g.cfg().backwardProbability);
    if (g.insert({.backward = backward})) continue;
    // A dead end (say, only bool values and no op takes them): a fresh input opens new paths.
    if (++failures > 64)
      throw Error("generator: cannot grow the model past " + std::to_string(g.nodes().size()) +
                  " nodes with this config (seed " + std::to_string(g.seed()) + ")");
    g.addInput(1, 4);
  }
  return g.assemble();
}

}  // namespace nncheck::gen
