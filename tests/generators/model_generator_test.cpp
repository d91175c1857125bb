#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/test_case.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"
#include "ops/op_spec.h"

namespace nncheck {
namespace {

// Every dtype the reference computes on: the quantized ops (int8, uint8, int32) and the float16
// and float64 forms of the others need them.
GeneratorConfig everyDTypeConfig() {
  GeneratorConfig cfg;
  cfg.dtypes = computeDTypes();
  cfg.controlFlow = true;
  return cfg;
}

// The CI sweep: 2,000 seeds over sizes 1..30, each valid and runnable on the reference; odd seeds
// draw from every dtype and grow control flow. NNCHECK_SWEEP_SEEDS shortens it for slow (sanitized,
// unoptimized) builds.
TEST(Generator, TwoThousandSeedsAcrossSizesAreValidAndRun) {
  GenerationStats stats;
  const char* env = std::getenv("NNCHECK_SWEEP_SEEDS");
  const uint64_t seeds = env ? std::strtoull(env, nullptr, 10) : 2000;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    GeneratorConfig cfg = seed % 2 ? everyDTypeConfig() : GeneratorConfig{};
    cfg.nodes = 1 + static_cast<int>(seed % 30);
    Model m = generateModel(cfg, seed, &stats);
    ASSERT_EQ(static_cast<int>(m.graph.nodes.size()), cfg.nodes) << "seed " << seed;
    if (auto why = whyInvalid(m)) FAIL() << "seed " << seed << ": " << *why;
    TensorMap out;
    ASSERT_NO_THROW(out = runReference(m, randomInputs(m, seed))) << "seed " << seed;
    ASSERT_EQ(out.size(), m.graph.outputs.size());
  }
  EXPECT_GT(stats.attempts, 0);
}

// The values makeTestCase gives keep every value finite and every op in its domain, whatever
// the config, with the vulnerable ops weighted up; without finiteValues, the inputs are the
// plain random ones.
RC_GTEST_PROP(Generator, CasesComeWithFiniteValues, ()) {
  GeneratorConfig cfg;
  cfg.nodes = *rc::gen::inRange(1, 25);
  cfg.dtypes = {DType::Float32};
  if (*rc::gen::arbitrary<bool>()) cfg.dtypes.push_back(DType::Float64);
  if (*rc::gen::arbitrary<bool>()) cfg.dtypes.push_back(DType::Int64);
  cfg.opWeights = {{"Log", 4}, {"Sqrt", 4}, {"Asin", 4}, {"Acos", 4}, {"Pow", 4}, {"Div", 4}};
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  TestCase tc = makeTestCase(cfg, seed);
  RC_ASSERT(generateModel(cfg, seed) == tc.model);
  TestCase checked = tc;
  RC_ASSERT(searchValues(checked, {.maxSteps = 0, .restarts = 0}).finite);
  cfg.finiteValues = false;
  TestCase blind = makeTestCase(cfg, seed);
  RC_ASSERT(blind.inputs == randomInputs(blind.model, seed));
}

// Any config a user may write, drawn by RapidCheck: generated models are valid.
RC_GTEST_PROP(Generator, ModelsAreValidUnderRandomConfigs, ()) {
  GeneratorConfig cfg;
  cfg.nodes = *rc::gen::inRange(1, 16);
  cfg.maxDim = *rc::gen::inRange(1, 12);
  cfg.maxRank = *rc::gen::inRange(2, 6);
  cfg.opset = *rc::gen::inRange(13, 18);
  cfg.weightsAsInitializers = *rc::gen::arbitrary<bool>();
  cfg.dtypes = {DType::Float32};
  for (DType t : {DType::Float64, DType::Float16, DType::Int32, DType::Int64, DType::Int8,
                  DType::UInt8, DType::Bool})
    if (*rc::gen::arbitrary<bool>()) cfg.dtypes.push_back(t);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  Model m;
  try {
    m = generateModel(cfg, seed);
  } catch (const std::exception& e) {
    RC_FAIL(std::string("generation failed: ") + e.what());
  }
  RC_ASSERT(static_cast<int>(m.graph.nodes.size()) == cfg.nodes);
  if (auto why = whyInvalid(m)) RC_FAIL(*why);
  for (const auto& [name, t] : runReferenceAllValues(m, randomInputs(m, seed))) {
    RC_ASSERT(t.rank() <= cfg.maxRank);
    RC_ASSERT(t.size() <= cfg.maxElements);
  }
}

TEST(Generator, SameSeedSameBytesAtAnyPositionInARun) {
  GeneratorConfig cfg;
  cfg.nodes = 12;
  std::string first = serializeModel(generateModel(cfg, 77));
  for (uint64_t s = 0; s < 20; ++s) generateModel(cfg, s);  // z3 and sampler state must not leak
  EXPECT_EQ(serializeModel(generateModel(cfg, 77)), first);
  EXPECT_NE(serializeModel(generateModel(cfg, 78)), first);
}

bool nested(const Model& m) {
  return std::any_of(m.graph.nodes.begin(), m.graph.nodes.end(),
                     [](const Node& n) { return !n.subgraphs().empty(); });
}

// With control flow on, bodies grow in a good share of models; each model is valid (ONNX's
// checker and strict shape inference go into bodies), runs, keeps every value inside its domain
// at every iteration of every body (seed 106 did not while search's moves of a body's
// initializers were dropped), and comes out the same again.
TEST(Generator, ControlFlowGrowsBodiesInManyValidModels) {
  GeneratorConfig cfg;
  cfg.nodes = 20;
  cfg.controlFlow = true;
  int withBodies = 0;
  std::set<std::string> kinds;
  for (uint64_t seed = 0; seed < 120; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    if (!nested(tc.model)) continue;
    ++withBodies;
    for (const Node& n : tc.model.graph.nodes)
      if (!n.subgraphs().empty()) kinds.insert(n.opType);
    if (auto why = whyInvalid(tc.model)) FAIL() << "seed " << seed << ": " << *why;
    EXPECT_NO_THROW(runReference(tc.model, tc.inputs)) << "seed " << seed;
    TestCase checked = tc;
    EXPECT_TRUE(searchValues(checked, {.maxSteps = 0, .restarts = 0}).finite) << "seed " << seed;
    EXPECT_EQ(serializeModel(makeTestCase(cfg, seed).model), serializeModel(tc.model));
  }
  EXPECT_GE(withBodies, 5) << "of 120 models of 20 nodes";
  // Mutants of parents with bodies are valid too (their control-flow nodes grow anew).
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const TestCase parent = makeTestCase(cfg, seed);
    if (!nested(parent.model)) continue;
    const TestCase mutant = mutateTestCase(cfg, parent, 500 + seed);
    if (auto why = whyInvalid(mutant.model)) FAIL() << "mutant of seed " << seed << ": " << *why;
    EXPECT_NO_THROW(runReference(mutant.model, mutant.inputs)) << "mutant of seed " << seed;
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"If", "Loop", "Scan"}));
  cfg.controlFlow = false;
  for (uint64_t seed = 0; seed < 50; ++seed) EXPECT_FALSE(nested(generateModel(cfg, seed)));
}

TEST(Generator, EveryUsableOpAppearsInAThousandModelsOfTenNodes) {
  const GeneratorConfig cfg = everyDTypeConfig();
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 1000; ++seed)
    for (const Node& n : generateModel(cfg, seed).graph.nodes) seen.insert(n.opType);
  auto usable = usableOps(cfg);
  // Every registered op is usable with every dtype allowed, but those generators cannot make
  // valid (each says why).
  size_t generatable = 0;
  for (const auto& spec : ops::Registry::instance().all())
    generatable += spec->notGeneratedWhy.empty();
  EXPECT_EQ(usable.size(), generatable);
  for (const auto& op : usable) EXPECT_TRUE(seen.count(op)) << op << " never generated";
}

TEST(Generator, ConfigIsHonored) {
  GeneratorConfig cfg;
  cfg.nodes = 8;
  cfg.ops = {"Conv", "Relu", "Add", "MaxPool"};
  cfg.dtypes = {DType::Float32};
  cfg.maxElements = 512;
  cfg.maxRank = 4;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Model m = generateModel(cfg, seed);
    for (const Node& n : m.graph.nodes)
      EXPECT_TRUE(std::count(cfg.ops.begin(), cfg.ops.end(), n.opType)) << n.opType;
    for (const auto& [name, t] : runReferenceAllValues(m, randomInputs(m, seed))) {
      EXPECT_EQ(t.dtype(), DType::Float32) << name;
      EXPECT_LE(t.size(), 512) << name;
      EXPECT_LE(t.rank(), 4) << name;
    }
    for (const Initializer& w : m.graph.initializers)
      if (w.value.dtype() == DType::Float32) {
        EXPECT_TRUE(w.name[0] == 'w') << w.name;
      }
  }
}

TEST(Generator, WeightsBecomeInitializersWhenAsked) {
  GeneratorConfig cfg;
  cfg.nodes = 3;
  cfg.ops = {"Conv"};
  cfg.dtypes = {DType::Float32};
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Model m = generateModel(cfg, seed);
    for (const Node& n : m.graph.nodes)
      EXPECT_TRUE(m.graph.initializer(n.inputs[1])) << "seed " << seed;
  }
}

TEST(Generator, CapabilitiesMapOntoTheConfig) {
  Capabilities caps;
  caps.ops = {"Conv", "Relu", "Reshape", "Add"};
  caps.dtypes = {DType::Float32};
  caps.opset = 13;
  caps.opWeights = {{"Conv", 0.5}};
  GeneratorConfig cfg = configFor(caps, 6);
  EXPECT_EQ(cfg.nodes, 6);
  EXPECT_EQ(cfg.opWeights, caps.opWeights);
  EXPECT_TRUE(cfg.weightsAsInitializers);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Model m = generateModel(cfg, seed);
    EXPECT_EQ(m.defaultOpset(), 13);
    for (const Node& n : m.graph.nodes)
      EXPECT_TRUE(std::count(caps.ops.begin(), caps.ops.end(), n.opType));
    for (const ValueInfo& v : m.graph.inputs) EXPECT_EQ(v.dtype, DType::Float32);
  }
}

TEST(Generator, OpWeightsSteerFrequencies) {
  GeneratorConfig cfg;
  cfg.blockShare = 0;  // blocks take their own ops (one weighted 0 never: see Blocks' tests)
  cfg.opWeights = {{"Relu", 50.0}, {"Conv", 0.0}};
  int relu = 0, conv = 0, total = 0;
  for (uint64_t seed = 0; seed < 100; ++seed)
    for (const Node& n : generateModel(cfg, seed).graph.nodes) {
      relu += n.opType == "Relu";
      conv += n.opType == "Conv";
      ++total;
    }
  EXPECT_EQ(conv, 0);
  EXPECT_GT(relu, total / 4);
}

TEST(Generator, BadConfigsAreRejectedNamingTheProblem) {
  auto expectError = [](GeneratorConfig cfg, const std::string& needle) {
    try {
      validateConfig(cfg);
      FAIL() << "accepted; expected an error mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  GeneratorConfig c;
  c.ops = {"Conv", "Frobnicate"};
  expectError(c, "Frobnicate");
  c = {};
  c.opset = 9;
  expectError(c, "opset 9");
  c = {};
  c.dtypes = {DType::BFloat16};
  expectError(c, "bfloat16");
  c = {};
  c.nodes = 0;
  expectError(c, "nodes");
  c = {};
  c.ops = {"Not"};
  c.dtypes = {DType::Float32};
  expectError(c, "no op is usable");
}

TEST(Generator, BackwardAndForwardInsertionsBothHappen) {
  // Backward insertion puts a node in front of existing ones: its output is consumed by an
  // earlier-created node. Detect it by node names (op_creationIndex) out of order.
  GeneratorConfig cfg;
  cfg.nodes = 10;
  int outOfOrder = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Model m = generateModel(cfg, seed);
    auto index = [](const Node& n) { return std::stoi(n.name.substr(n.name.rfind('_') + 1)); };
    for (size_t i = 1; i < m.graph.nodes.size(); ++i)
      outOfOrder += index(m.graph.nodes[i - 1]) > index(m.graph.nodes[i]);
  }
  EXPECT_GT(outOfOrder, 20);
}

}  // namespace
}  // namespace nncheck
