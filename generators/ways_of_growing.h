// The ways a model grows, each in its own file, each built on the core's interface
// (generators/growth.h):
// - grow.cpp: the growth loop, which picks a way for each insertion;
// - grow_mutation.cpp: a mutant of a kept case (coverage-guided generation);
// - grow_seed.cpp: a part of a seed pattern planted first;
// - grow_control_flow.cpp: If, Loop and Scan with bodies of their own;
// - grow_constants.cpp: constant subexpressions;
// - grow_blocks.cpp: the blocks real networks are made of (generators/blocks.h).
//
//   gen::Growth g(cfg, table, seed, stats);
//   TestCase tc = gen::growTo(g, cfg.nodes);
#pragma once

#include "generators/growth.h"

namespace nncheck::gen {

// Grows g to `nodes` nodes (a first graph input when it has no value yet) and assembles it.
// Throws nncheck::Error when the config leaves no way past a dead end.
TestCase growTo(Growth& g, size_t nodes);

// A mutant of `parent` (see mutateTestCase).
TestCase mutate(Growth& g, const TestCase& parent);

// Adopts a part of one of cfg.seeds: the whole when it leaves room for surroundings, else a
// window of consecutive nodes.
void plantSeed(Growth& g);

// An If, Loop or Scan node (op `e`) reading existing values, its bodies grown by plain forward
// insertions; false, with g unchanged, when none fits.
bool growControlFlow(Growth& g, const OpEntry& e);

// Makes an initializer the model reads the output of a node reading only fresh initializers
// (see cfg.constantShare); false, with g unchanged, when none fits.
bool growConstant(Growth& g);

// A block of the prior, at most `room` nodes of it (see cfg.blockShare); false, with g
// unchanged, when not even its first node fits.
bool growBlock(Growth& g, size_t room);

}  // namespace nncheck::gen
