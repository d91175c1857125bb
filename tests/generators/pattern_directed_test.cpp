// Pattern-directed generation: pair weights, seed patterns, and mutants of kept cases.
#include <gtest/gtest.h>

#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

// How many times a value `producer` computed is read by a `consumer` node.
int pairsIn(const Model& m, const std::string& producer, const std::string& consumer) {
  std::map<std::string, std::string> made;
  for (const Node& n : m.graph.nodes)
    for (const std::string& o : n.outputs) made[o] = n.opType;
  int pairs = 0;
  for (const Node& n : m.graph.nodes)
    if (n.opType == consumer)
      for (const std::string& in : n.inputs)
        if (auto it = made.find(in); it != made.end() && it->second == producer) ++pairs;
  return pairs;
}

bool allFinite(const TestCase& tc) {
  TestCase copy = tc;
  return searchValues(copy, {.maxSteps = 0, .restarts = 0}).finite;
}

TEST(PairWeights, MakeTheProducerFeedTheConsumer) {
  GeneratorConfig cfg;
  // Pair weights alone: the prior's transpose-transpose block forms the pair without weights.
  cfg.blockShare = cfg.constantShare = 0;
  int blind = 0, directed = 0;
  for (uint64_t seed = 0; seed < 300; ++seed)
    blind += pairsIn(generateModel(cfg, seed), "Transpose", "Transpose");
  cfg.pairWeights = {{{"Transpose", "Transpose"}, 30}};
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const Model m = generateModel(cfg, seed);
    ASSERT_FALSE(whyInvalid(m)) << *whyInvalid(m);
    directed += pairsIn(m, "Transpose", "Transpose");
  }
  EXPECT_GE(directed, 20);
  EXPECT_GT(directed, 5 * std::max(blind, 1)) << "blind " << blind;
}

TEST(PairWeights, BadOnesAreRejectedNamingThePair) {
  GeneratorConfig cfg;
  cfg.pairWeights = {{{"MatMul", "Frobnicate"}, 3}};
  try {
    validateConfig(cfg);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MatMul>Frobnicate"), std::string::npos) << e.what();
  }
  cfg.pairWeights = {{{"MatMul", "Add"}, -1}};
  EXPECT_THROW(validateConfig(cfg), Error);
}

TEST(Mutation, MutantsAreValidFiniteDeterministicAndKeepTheParentsNodes) {
  GeneratorConfig cfg;
  cfg.nodes = 6;
  int grown = 0, shrunk = 0, sharing = 0;
  for (uint64_t seed = 0; seed < 120; ++seed) {
    const TestCase parent = makeTestCase(cfg, seed);
    const TestCase mutant = mutateTestCase(cfg, parent, 1000 + seed);
    if (auto why = whyInvalid(mutant.model)) FAIL() << "seed " << seed << ": " << *why;
    ASSERT_NO_THROW(runReference(mutant.model, mutant.inputs)) << "seed " << seed;
    EXPECT_TRUE(allFinite(mutant)) << "seed " << seed << "\n" << modelToText(mutant.model);
    EXPECT_LE(mutant.model.graph.nodes.size(), 2u * cfg.nodes);
    const TestCase again = mutateTestCase(cfg, parent, 1000 + seed);
    EXPECT_EQ(serializeModel(mutant.model), serializeModel(again.model)) << "seed " << seed;
    const size_t before = parent.model.graph.nodes.size(), after = mutant.model.graph.nodes.size();
    grown += after > before;
    shrunk += after < before;
    // The kept part: some op sequence of the parent's survives, in order.
    std::multiset<std::string> ops, kept;
    for (const Node& n : parent.model.graph.nodes) ops.insert(n.opType);
    for (const Node& n : mutant.model.graph.nodes) kept.insert(n.opType);
    std::vector<std::string> common;
    std::set_intersection(ops.begin(), ops.end(), kept.begin(), kept.end(),
                          std::back_inserter(common));
    sharing += !common.empty();
  }
  EXPECT_GT(grown, 20);
  EXPECT_GT(sharing, 100);
  (void)shrunk;
}

TEST(Mutation, ANodeGoesBeforeAConsumerWhichKeepsItsShapes) {
  // Conv reading a graph input: the consumer side of Pad->Conv. A node inserted before it, or
  // one replaced in place, computes a value of the shape the Conv read, so the Conv stays.
  GeneratorConfig cfg;
  cfg.nodes = 4;
  TestCase parent;
  Model& m = parent.model;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 2, 6, 6})};
  Tensor w(DType::Float32, {3, 2, 3, 3});
  for (float& v : w.span<float>()) v = 0.1f;
  m.graph.initializers = {{"w", w, ""}};
  m.graph.nodes = {Node::make("Conv", {"x", "w"}, {"y"}, "n0")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 3, 4, 4})};
  parent.inputs["x"] = Tensor(DType::Float32, {1, 2, 6, 6});
  std::set<std::string> producers;
  for (uint64_t seed = 0; seed < 150; ++seed) {
    const TestCase mutant = mutateTestCase(cfg, parent, seed);
    if (auto why = whyInvalid(mutant.model)) FAIL() << "seed " << seed << ": " << *why;
    const TensorMap values = runReferenceAllValues(mutant.model, mutant.inputs);
    std::map<std::string, std::string> made;
    for (const Node& n : mutant.model.graph.nodes)
      for (const std::string& o : n.outputs) made[o] = n.opType;
    for (const Node& n : mutant.model.graph.nodes)
      if (n.opType == "Conv" && made.count(n.inputs[0]) &&
          values.at(n.inputs[0]).shape() == Shape{1, 2, 6, 6} &&
          values.at(n.outputs[0]).shape() == Shape{1, 3, 4, 4})
        producers.insert(made[n.inputs[0]]);
  }
  EXPECT_GE(producers.size(), 3u);
}

TEST(Mutation, RepeatedMutationReachesAPatternGenerationRarelyMakes) {
  // Transpose then Transpose: rare in blind generation; kept cases holding a Transpose mutated
  // again and again form it.
  GeneratorConfig cfg;
  cfg.nodes = 5;
  int found = 0;
  for (uint64_t chain = 0; chain < 40 && !found; ++chain) {
    TestCase tc = makeTestCase(cfg, chain);
    for (uint64_t step = 0; step < 60; ++step) {
      TestCase next = mutateTestCase(cfg, tc, chain * 100 + step);
      // Keep a mutant that still holds a Transpose (a crude stand-in for "new coverage").
      if (pairsIn(next.model, "Transpose", "Transpose") > 0) {
        found = 1;
        break;
      }
      bool hasTranspose = false;
      for (const Node& n : next.model.graph.nodes) hasTranspose |= n.opType == "Transpose";
      if (hasTranspose) tc = next;
    }
  }
  EXPECT_TRUE(found);
}

class SeedPatterns : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"seeds"};
  // MatMul then Add of a rank-1 bias: a fusion's pattern.
  fs::path writeMatMulAdd() {
    Model m;
    m.opsets = {{"", 14}};
    m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {3, 4})};
    m.graph.initializers = {{"b", Tensor(DType::Float32, {4, 5}), ""},
                            {"c", Tensor(DType::Float32, {5}), ""}};
    m.graph.nodes = {Node::make("MatMul", {"a", "b"}, {"ab"}, "mm"),
                     Node::make("Add", {"ab", "c"}, {"y"}, "add")};
    m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {3, 5})};
    saveModel(m, tmp_.path() / "matmul_add.onnx");
    return tmp_.path();
  }
};

TEST_F(SeedPatterns, ArePlantedInsideRandomSurroundings) {
  GeneratorConfig cfg;
  cfg.seeds = loadSeedPatterns(writeMatMulAdd(), cfg);
  ASSERT_EQ(cfg.seeds->size(), 1u);
  int planted = 0, surrounded = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    if (auto why = whyInvalid(tc.model)) FAIL() << "seed " << seed << ": " << *why;
    ASSERT_EQ(tc.model.graph.nodes.size(), 10u);
    EXPECT_TRUE(allFinite(tc)) << "seed " << seed;
    const int pairs = pairsIn(tc.model, "MatMul", "Add");
    planted += pairs > 0;
    surrounded += pairs > 0 && tc.model.graph.nodes.front().opType != "MatMul";
  }
  EXPECT_GE(planted, 20);    // seedShare 0.5
  EXPECT_GT(surrounded, 0);  // backward insertions feed the pattern
}

TEST_F(SeedPatterns, AFolderWithoutModelsOrWithABadModelIsAnErrorNamingIt) {
  GeneratorConfig cfg;
  EXPECT_THROW(loadSeedPatterns(tmp_.path() / "nowhere", cfg), Error);
  EXPECT_THROW(loadSeedPatterns(tmp_.path(), cfg), Error);
  writeMatMulAdd();
  Model bad = loadModel(tmp_.path() / "matmul_add.onnx");
  bad.graph.nodes[1].opType = "Frobnicate";
  saveModel(bad, tmp_.path() / "bad.onnx");
  try {
    loadSeedPatterns(tmp_.path(), cfg);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.onnx"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nncheck
