// The optimizing test double: each planted bug fires on its pattern and parameter condition
// only, and with no bug enabled every rewrite is correct.
#include "doubles/optimizer.h"

#include <gtest/gtest.h>

#include "nncheck/compare.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"

namespace nncheck::testing {
namespace {

// Whether the engine's outputs match the reference's (an engine error counts as not).
bool matches(Backend& engine, const TestCase& tc) {
  TensorMap got;
  try {
    got = engine.run(tc.model, tc.inputs);
  } catch (const Error&) {
    return false;
  }
  for (const auto& [name, want] : runReference(tc.model, tc.inputs))
    if (!got.count(name) || !compareTensors(got.at(name), want, {.rtol = 1e-4, .atol = 1e-5}).ok)
      return false;
  return true;
}

// Models where the rewrite's pattern is common: within the optimizer's ops, as a compiler team's
// campaign stays within its compiler's, its ops weighted up, the pair weighted up more (constant
// folding's: constant subexpressions made common).
GeneratorConfig aimedAt(Optimizer::Bug bug) {
  GeneratorConfig cfg = configFor(Optimizer().capabilities());
  cfg.nodes = 5;
  const auto [producer, consumer] = Optimizer::patternOf(bug);
  if (producer.empty()) {
    cfg.constantShare = 0.5;
    return cfg;
  }
  cfg.opWeights = {{producer, 15}, {consumer, 15}};
  cfg.pairWeights = {{{producer, consumer}, 50}};
  return cfg;
}

TEST(Optimizer, WithNoBugEveryRewriteIsCorrect) {
  Optimizer correct;
  for (Optimizer::Bug bug : Optimizer::allBugs()) {
    const GeneratorConfig cfg = aimedAt(bug);
    int rewritten = 0;
    for (uint64_t seed = 0; seed < 300; ++seed) {
      const TestCase tc = makeTestCase(cfg, seed);
      const Model opt = correct.optimize(tc.model, tc.inputs);
      rewritten += opt.graph.nodes != tc.model.graph.nodes;
      if (auto why = whyInvalid(opt)) FAIL() << "seed " << seed << ": " << *why;
      EXPECT_TRUE(matches(correct, tc)) << "seed " << seed << "\n" << modelToText(tc.model);
    }
    // (Some are rare even when aimed at: a zero-padded Pad before a Conv, say.)
    EXPECT_GT(rewritten, 0) << Optimizer::bugName(bug) << ": its rewrite never fired";
  }
}

TEST(Optimizer, EachBugFiresOnItsPatternAndCondition) {
  for (Optimizer::Bug bug : Optimizer::allBugs()) {
    const GeneratorConfig cfg = aimedAt(bug);
    Optimizer buggy(bug), others(~0u & ~static_cast<unsigned>(bug));
    int failing = 0;
    for (uint64_t seed = 0; seed < 1500 && !failing; ++seed) {
      const TestCase tc = makeTestCase(cfg, seed);
      if (!matches(buggy, tc)) {
        ++failing;
        // Only this bug: the optimizer with every other bug passes the case.
        EXPECT_TRUE(matches(others, tc)) << Optimizer::bugName(bug) << "\n"
                                         << modelToText(tc.model);
      }
    }
    EXPECT_GT(failing, 0) << Optimizer::bugName(bug) << " never fired";
  }
}

}  // namespace
}  // namespace nncheck::testing
