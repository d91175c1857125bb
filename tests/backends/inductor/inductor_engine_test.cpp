// PyTorch 2.15's torch.compile through its Python worker: its facts, a model translated on the
// host and run in every mode, the graph passes that changed it named and switched off by name, a
// switch flipped for the culprit search, and an op the translation lacks unsupported before any
// worker starts.
#include <gtest/gtest.h>

#include <algorithm>

#include "nncheck/compare.h"
#include "nncheck/engine.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

// Reshape(Relu(x @ W + b)) to the shape it has: a Gemm PyTorch writes as linear, an activation to
// fuse with it, and a reshape that does nothing.
Model linearRelu() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.initializers = {
      {.name = "w",
       .value = Tensor::fromVector<float>({4, 3}, {1, 2, 3, -1, 0, 1, 2, 2, -2, 0, 1, 0}),
       .docString = ""},
      {.name = "b", .value = Tensor::fromVector<float>({4}, {0.5f, -1, 0, 2}), .docString = ""}};
  Node gemm = Node::make("Gemm", {"x", "w", "b"}, {"g"}, "gemm");
  gemm.attributes = {Attribute::ofInt("transB", 1)};
  m.graph.initializers.push_back(
      {.name = "s", .value = Tensor::fromVector<int64_t>({2}, {2, 4}), .docString = ""});
  m.graph.nodes = {gemm, Node::make("Relu", {"g"}, {"r"}, "relu"),
                   Node::make("Reshape", {"r", "s"}, {"y"}, "reshape")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 4})};
  return m;
}

using testing::named;

TEST(Inductor, ItsFactsComeFromTheWorker) {
  const std::vector<std::string> modes = engines().configurations("inductor");
  EXPECT_EQ(modes.front(), "mode=inductor");
  for (const char* m : {"mode=eager", "mode=aot_eager", "mode=freezing", "mode=dynamic"})
    EXPECT_TRUE(named(modes, m)) << m;
  EXPECT_EQ(engines().at("inductor").baseline, "mode=eager");
  const auto inductor = engines().make("inductor", "mode=inductor");
  EXPECT_TRUE(named(inductor->optimizations(), "pass_pattern_1"));
  EXPECT_TRUE(named(inductor->unreportedOptimizations(), "fusion"));
  EXPECT_TRUE(named(inductor->optimizations(), "vectorization"));
  EXPECT_TRUE(engines().make("inductor", "mode=eager")->optimizations().empty());
  EXPECT_GT(inductor->startTime().count(), 0) << "a fresh worker's first compile is no hang";
}

TEST(Inductor, EachModeMatchesTheReferenceAndNamesThePassesThatChangedTheGraph) {
  const TensorMap want = runReference(linearRelu(), testing::kInputX2x3);
  std::string fired;  // a pass mode=inductor applied, switched off by name next
  for (std::string config : {"mode=eager", "mode=aot_eager", "mode=inductor",
                             "mode=inductor,disable=", "mode=freezing,disable=weight_prepack",
                             "mode=dynamic", "mode=inductor,disable=fusion+vectorization"}) {
    if (config.ends_with("=")) config += fired;
    auto engine = engines().make("inductor", config);
    const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
    const RunOutcome r = isolated.run(linearRelu(), testing::kInputX2x3);
    ASSERT_EQ(r.kind, Outcome::Pass) << config << ": " << r.message;
    const Comparison c = compareTensors(r.outputs.at("y"), want.at("y"));
    EXPECT_TRUE(c.ok) << config << ": " << c.message;
    for (const std::string& o : r.optimizations)
      EXPECT_TRUE(named(engine->optimizations(), o)) << config << " applied " << o;
    if (config == "mode=eager" || config == "mode=aot_eager") {
      EXPECT_TRUE(r.optimizations.empty()) << config;
    }
    if (config == "mode=inductor") {
      ASSERT_FALSE(r.optimizations.empty()) << "no pass changed the graph";
      fired = r.optimizations.front();
      // Inductor vectorizes only where a vector ISA passed its probe: one build that links
      // against another libtorch than the wheel's writes scalar kernels alone.
      EXPECT_TRUE(named(r.optimizations, "vectorization")) << "no vector kernel";
    }
    if (config.ends_with("vectorization")) {
      EXPECT_FALSE(named(r.optimizations, "vectorization")) << config;
    }
    if (config == "mode=inductor,disable=" + fired) {
      EXPECT_FALSE(named(r.optimizations, fired)) << config;
    }
  }
}

TEST(Inductor, AnOpTheTranslationLacksIsUnsupportedOnTheHost) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.nodes = {Node::make("LpNormalization", {"x"}, {"y"}, "lp")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  auto engine = engines().make("inductor", "mode=inductor");
  try {
    engine->run(m, testing::kInputX2x3);
    FAIL() << "LpNormalization ran";
  } catch (const Unsupported& u) {
    EXPECT_NE(std::string(u.what()).find("LpNormalization"), std::string::npos) << u.what();
  }
}

}  // namespace
}  // namespace nncheck
