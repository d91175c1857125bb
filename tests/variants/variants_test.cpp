// The rewrite table: every rule keeps a generated model valid and computes what it computed
// (bit for bit where the rule says exact, within the tolerance elsewhere); rewrites are drawn
// from the seed alone and leave when shrinking takes their value away.
#include "nncheck/variants.h"

#include <gtest/gtest.h>

#include <map>

#include "nncheck/compare.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/reference.h"
#include "nncheck/tolerance.h"
#include "nncheck/validity.h"

namespace nncheck {
namespace {

GeneratorConfig config() {
  GeneratorConfig cfg;
  cfg.nodes = 8;
  cfg.dtypes = {DType::Float32, DType::Int32, DType::Int64, DType::Bool};
  cfg.blockShare = 0.5;  // Conv -> BatchNormalization, MatMul -> Add, attention's Softmax
  cfg.opWeights = {{"Sub", 3}, {"Gemm", 3}, {"Softmax", 3}, {"Relu", 3}, {"Add", 3}};
  return cfg;
}

TEST(Variants, EveryRuleKeepsTheModelValidAndComputesWhatItComputed) {
  std::map<std::string, int> applied;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const TestCase tc = makeTestCase(config(), seed);
    const TensorMap want = runReference(tc.model, tc.inputs);
    for (const RewriteRule& rule : rewriteRules())
      for (const Node& n : tc.model.graph.nodes)
        for (int64_t form = 0; form < 3; ++form) {
          std::vector<Rewrite> done;
          const Rewrite r{rule.name, n.outputs.empty() ? "" : n.outputs[0], form};
          const Model variant = applyRewrites(tc.model, {r}, &done);
          if (done.empty()) continue;
          ++applied[rule.name];
          const std::string where = "seed " + std::to_string(seed) + ", " + describeRewrites(done);
          const std::optional<std::string> invalid = whyInvalid(variant);
          ASSERT_FALSE(invalid) << where << ": " << *invalid << "\n" << modelToText(variant);
          const TensorMap got = runReference(variant, tc.inputs);
          for (const auto& [name, t] : want) {
            ASSERT_TRUE(got.count(name)) << where;
            if (rule.exact)
              EXPECT_TRUE(got.at(name) == t)
                  << where << ": " << name << " " << tensorToString(got.at(name)) << " vs "
                  << tensorToString(t);
            else
              EXPECT_TRUE(compareTensors(got.at(name), t, toleranceFor(variant)).ok)
                  << where << ": " << name;
          }
        }
  }
  // The test means something only where each rule applied.
  for (const RewriteRule& rule : rewriteRules())
    EXPECT_GT(applied[rule.name], 0) << rule.name << " never applied to a generated model";
}

TEST(Variants, RewritesAreDrawnFromTheSeedAloneAndEachApplies) {
  int drawn = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const TestCase tc = makeTestCase(config(), seed);
    const std::vector<Rewrite> a = drawRewrites(tc.model, seed, 3);
    EXPECT_EQ(a, drawRewrites(tc.model, seed, 3));
    EXPECT_LE(a.size(), 3u);
    drawn += static_cast<int>(a.size());
    std::vector<Rewrite> applied;
    const Model variant = applyRewrites(tc.model, a, &applied);
    EXPECT_EQ(applied, a) << describeRewrites(a);
    EXPECT_FALSE(whyInvalid(variant)) << describeRewrites(a);
  }
  EXPECT_GT(drawn, 60);
  EXPECT_TRUE(drawRewrites(makeTestCase(config(), 1).model, 1, 0).empty());
}

// A variant holds only what the engine takes: the ops the rules add and the dtypes of the values
// they add are within the limits (an OpenCV without float64 gets no float32 -> float64 Cast).
TEST(Variants, DrawnRewritesStayWithinTheEnginesOpsAndDtypes) {
  const VariantLimits limits{.ops = {"Transpose", "Mul", "Cast", "Relu", "MatMul", "Add"},
                             .dtypes = {DType::Float32}};
  std::map<std::string, int> drawn;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const TestCase tc = makeTestCase(config(), seed);
    for (const Rewrite& r : drawRewrites(tc.model, seed, 6, limits)) ++drawn[r.rule];
  }
  EXPECT_GT(drawn["transpose-pair"], 0);
  EXPECT_GT(drawn["mul-one"], 0);
  for (const auto& [rule, n] : drawn)
    EXPECT_TRUE(rule == "transpose-pair" || rule == "mul-one" || rule == "add-zero" ||
                rule == "commute" || rule == "integer-reassociation" ||
                rule == "batchnorm-to-mul-add" || rule == "gemm-to-matmul-add" ||
                rule == "conv1x1-to-matmul")
        << rule << " adds an op outside the limits";
  EXPECT_EQ(drawn.count("cast-round-trip"), 0u) << "float32's round trip goes through float64";
  EXPECT_GT(drawRewrites(makeTestCase(config(), 1).model, 1, 6).size(), 0u);
}

TEST(Variants, ARewriteWhoseValueIsGoneIsLeftOutAndAnUnknownRuleIsAnError) {
  const TestCase tc = makeTestCase(config(), 3);
  std::vector<Rewrite> applied;
  applyRewrites(tc.model, {{"identity", "no-such-value", 0}}, &applied);
  EXPECT_TRUE(applied.empty());
  EXPECT_THROW(applyRewrites(tc.model, {{"no-such-rule", "x", 0}}), Error);
}

TEST(Variants, TheGeneratorDrawsThemWhenAskedAndValidatesTheCount) {
  GeneratorConfig cfg = config();
  EXPECT_TRUE(makeTestCase(cfg, 5).rewrites.empty());
  cfg.rewrites = 2;
  EXPECT_FALSE(makeTestCase(cfg, 5).rewrites.empty());
  cfg.rewrites = -1;
  EXPECT_THROW(validateConfig(cfg), Error);
}

}  // namespace
}  // namespace nncheck
