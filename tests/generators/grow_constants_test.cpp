// Constant subexpressions: grown at the configured share, valid, finite, shape operands computed
// exactly, and shrinkable; none without the share.
#include <gtest/gtest.h>

#include "nncheck/generator.h"
#include "nncheck/reference.h"
#include "nncheck/shrink.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"

namespace nncheck {
namespace {

bool finite(const TestCase& tc) {
  TestCase copy = tc;
  return searchValues(copy, {.maxSteps = 0, .restarts = 0}).finite;
}

TEST(GrowConstants, ModelsHoldConstantSubexpressionsThatAreValidAndFinite) {
  GeneratorConfig cfg;
  cfg.constantShare = 0.5;
  int withConstants = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    if (auto why = whyInvalid(tc.model)) FAIL() << "seed " << seed << ": " << *why;
    EXPECT_TRUE(finite(tc)) << "seed " << seed;
    withConstants += aimedPatternsIn(tc.model).constantNodes > 0;
  }
  EXPECT_GT(withConstants, 30) << "of 60 models";
}

// The measure can fail: with neither share, no node ever reads only initializers (a forward node
// reads a computed value or a graph input first, a backward one a graph input).
TEST(GrowConstants, NoneWithoutTheShares) {
  GeneratorConfig cfg;
  cfg.constantShare = cfg.blockShare = 0;
  for (uint64_t seed = 0; seed < 60; ++seed)
    EXPECT_EQ(aimedPatternsIn(makeTestCase(cfg, seed).model).constantNodes, 0) << "seed " << seed;
}

// Reshape's shape as a Concat or Add of initializers: the same contents, so the model stays
// valid; and never when shape operands must stay initializers.
TEST(GrowConstants, ShapeOperandsAreComputedExactlyUnlessTheyMustBeInitializers) {
  GeneratorConfig cfg;
  cfg.ops = {"Reshape", "Relu", "Concat", "Add"};
  cfg.dtypes = {DType::Float32, DType::Int64};
  cfg.constantShare = 0.6;
  cfg.blockShare = 0;
  auto computedShapes = [&](const GeneratorConfig& c) {
    int computed = 0;
    for (uint64_t seed = 0; seed < 40; ++seed) {
      const Model m = generateModel(c, seed);
      if (auto why = whyInvalid(m)) ADD_FAILURE() << "seed " << seed << ": " << *why;
      for (const Node& n : m.graph.nodes)
        computed += n.opType == "Reshape" && !m.graph.initializer(n.inputs[1]);
    }
    return computed;
  };
  EXPECT_GT(computedShapes(cfg), 0);
  cfg.shapeOperandsAsInitializers = true;
  EXPECT_EQ(computedShapes(cfg), 0);
}

// A failure that needs a constant subexpression shrinks to one node reading only initializers.
TEST(GrowConstants, AFailureNeedingOneShrinksToIt) {
  GeneratorConfig cfg;
  cfg.constantShare = 0.5;
  cfg.nodes = 12;
  auto hasConstant = [](const TestCase& tc) { return aimedPatternsIn(tc.model).constantNodes > 0; };
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    if (!hasConstant(tc)) continue;
    const ShrinkResult r = shrinkGreedily(tc, hasConstant);
    EXPECT_TRUE(hasConstant(r.testCase));
    EXPECT_EQ(r.testCase.model.graph.nodes.size(), 1u) << modelToText(r.testCase.model);
    return;
  }
  FAIL() << "no model of 20 held a constant subexpression";
}

}  // namespace
}  // namespace nncheck
