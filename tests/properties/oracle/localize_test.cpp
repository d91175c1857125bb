#include "nncheck/localize.h"

#include <gtest/gtest.h>

#include "doubles.h"
#include "nncheck/generator.h"
#include "nncheck/tolerance.h"
#include "nncheck/validity.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

using testing::matMulRelu;

TEST(Localize, ExposingValuesFindsTheNodeWhoseInputsAgree) {
  testing::MatMulReluOddInner engine;  // wrong whether or not the MatMul is exposed
  TestCase tc = matMulRelu(true);
  auto d = localizeDivergence(isolated(engine, 5s), tc, toleranceFor(tc.model));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "relu");
  EXPECT_EQ(d->opType, "Relu");
  EXPECT_EQ(d->output, "r");
  EXPECT_TRUE(d->exposed);
  EXPECT_NE(d->describe().find("node 'relu' (Relu), output 'r'"), std::string::npos)
      << d->describe();
}

TEST(Localize, AFusionBugIsFoundInTheNodesOwnSubModel) {
  testing::FusedMatMulRelu engine;  // right as soon as the MatMul's output is exposed
  TestCase tc = matMulRelu(true);
  auto d = localizeDivergence(isolated(engine, 5s), tc, toleranceFor(tc.model));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "relu");
  EXPECT_FALSE(d->exposed);
  EXPECT_NE(d->describe().find("fusion"), std::string::npos);
}

TEST(Localize, NothingDivergesOnTheReference) {
  TestCase tc = matMulRelu(true);
  EXPECT_EQ(localizeDivergence(isolated(reference(), 5s), tc, toleranceFor(tc.model)),
            std::nullopt);
}

TEST(Localize, ExposedAndSubModelsAreValidForGeneratedModels) {
  GeneratorConfig cfg;
  cfg.nodes = 8;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    TestCase tc = makeTestCase(cfg, seed);
    TensorMap values = runReferenceAllValues(tc.model, tc.inputs);
    EXPECT_EQ(whyInvalid(exposeAllValues(tc.model, values)), std::nullopt) << "seed " << seed;
    for (size_t i = 0; i < tc.model.graph.nodes.size(); ++i) {
      TestCase sub = subModelFor(tc, i, values);
      ASSERT_EQ(whyInvalid(sub.model), std::nullopt) << "seed " << seed << " node " << i;
      // The sub-model computes the node's outputs exactly as the whole model does.
      TensorMap got = runReference(sub.model, sub.inputs);
      for (const auto& [name, t] : got) EXPECT_TRUE(t == values.at(name)) << name;
    }
  }
}

}  // namespace
}  // namespace nncheck
