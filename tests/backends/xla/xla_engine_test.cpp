// XLA through JAX in its Python worker: its facts, a model translated on the host and run in every
// mode, the HLO passes that changed the module named from XLA's dumps and switched off by name,
// and an op the translation lacks unsupported before any worker starts.
#include <gtest/gtest.h>

#include <algorithm>

#include "nncheck/compare.h"
#include "nncheck/engine.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

// Reshape(Relu(x @ W' + b) * 1) to the shape it has: a product to fuse with what follows, a
// multiplication by one for the algebraic simplifier, and a reshape that does nothing.
Model linearRelu() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.initializers = {
      {.name = "w",
       .value = Tensor::fromVector<float>({4, 3}, {1, 2, 3, -1, 0, 1, 2, 2, -2, 0, 1, 0}),
       .docString = ""},
      {.name = "b", .value = Tensor::fromVector<float>({4}, {0.5f, -1, 0, 2}), .docString = ""},
      {.name = "one", .value = Tensor::fromVector<float>({1}, {1}), .docString = ""},
      {.name = "s", .value = Tensor::fromVector<int64_t>({2}, {2, 4}), .docString = ""}};
  Node gemm = Node::make("Gemm", {"x", "w", "b"}, {"g"}, "gemm");
  gemm.attributes = {Attribute::ofInt("transB", 1)};
  m.graph.nodes = {gemm, Node::make("Relu", {"g"}, {"r"}, "relu"),
                   Node::make("Mul", {"r", "one"}, {"m"}, "mul"),
                   Node::make("Reshape", {"m", "s"}, {"y"}, "reshape")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 4})};
  return m;
}

using testing::named;

TEST(Xla, ItsFactsComeFromTheWorker) {
  const std::vector<std::string> modes = engines().configurations("xla");
  EXPECT_EQ(modes.front(), "mode=jit");
  for (const char* m : {"mode=eager", "mode=jit-O0", "mode=jit-no-simplify"})
    EXPECT_TRUE(named(modes, m)) << m;
  EXPECT_EQ(engines().at("xla").baseline, "mode=eager");
  EXPECT_TRUE(named(engines().make("xla", "mode=jit")->optimizations(), "algsimp"));
  EXPECT_FALSE(named(engines().make("xla", "mode=jit-no-simplify")->optimizations(), "algsimp"))
      << "a pass the mode switches off is none it may apply";
  EXPECT_TRUE(engines().make("xla", "mode=eager")->optimizations().empty());
}

TEST(Xla, EachModeMatchesTheReferenceAndNamesThePassesThatChangedTheModule) {
  const TensorMap want = runReference(linearRelu(), testing::kInputX2x3);
  auto persistent = [](Backend& engine) {
    return Isolated(engine, std::chrono::seconds(60), Isolation::Persistent);
  };
  std::vector<std::string> fired;  // what mode=jit applied, switched off by name next
  for (const std::string config :
       {"mode=eager", "mode=jit", "mode=jit-O0", "mode=jit-no-simplify"}) {
    auto engine = engines().make("xla", config);
    const RunOutcome r = persistent(*engine).run(linearRelu(), testing::kInputX2x3);
    ASSERT_EQ(r.kind, Outcome::Pass) << config << ": " << r.message;
    const Comparison c = compareTensors(r.outputs.at("y"), want.at("y"));
    EXPECT_TRUE(c.ok) << config << ": " << c.message;
    for (const std::string& o : r.optimizations)
      EXPECT_TRUE(named(engine->optimizations(), o)) << config << " applied " << o;
    if (config == "mode=eager") {
      EXPECT_TRUE(r.optimizations.empty());
    }
    if (config == "mode=jit") fired = r.optimizations;
  }
  ASSERT_TRUE(named(fired, "fusion")) << "XLA fused nothing";
  auto engine = engines().make("xla", "mode=jit,disable=fusion");
  const RunOutcome r = persistent(*engine).run(linearRelu(), testing::kInputX2x3);
  ASSERT_EQ(r.kind, Outcome::Pass) << r.message;
  EXPECT_TRUE(compareTensors(r.outputs.at("y"), want.at("y")).ok);
  EXPECT_FALSE(named(r.optimizations, "fusion")) << "fusion ran although disabled";
}

TEST(Xla, AnOpTheTranslationLacksIsUnsupportedOnTheHost) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.nodes = {Node::make("LpNormalization", {"x"}, {"y"}, "lp")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  auto engine = engines().make("xla", "mode=jit");
  try {
    engine->run(m, testing::kInputX2x3);
    FAIL() << "LpNormalization ran";
  } catch (const Unsupported& u) {
    EXPECT_NE(std::string(u.what()).find("LpNormalization"), std::string::npos) << u.what();
  }
}

}  // namespace
}  // namespace nncheck
