// LiteRT through its Python worker: its facts, an NCHW model converted and run at every
// configuration in ONNX's layout, the XNNPACK delegate named when it takes a node and switched
// off by name, and an op onnx2tf lacks unsupported.
#include <gtest/gtest.h>

#include <algorithm>

#include "nncheck/compare.h"
#include "nncheck/engine.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

// Relu(Conv(x)) on NCHW, with a [2,3] output beside: onnx2tf computes the Conv in NHWC, so a
// layout the worker read wrong would move the values of the rank-4 output.
Model convRelu() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "conv_relu";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 2, 3, 4}),
                    ValueInfo::tensor("v", DType::Float32, {2, 3})};
  std::vector<float> w(3 * 2 * 2 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) - 2.0f;
  m.graph.initializers = {{"w", Tensor::fromVector<float>({3, 2, 2, 2}, w), ""}};
  m.graph.nodes = {Node::make("Conv", {"x", "w"}, {"c"}, "conv"),
                   Node::make("Relu", {"c"}, {"y"}, "relu"),
                   Node::make("Neg", {"v"}, {"z"}, "neg")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 3, 2, 3}),
                     ValueInfo::tensor("z", DType::Float32, {2, 3})};
  return m;
}

TensorMap inputs() {
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f - 3.0f;
  return {{"x", Tensor::fromVector<float>({1, 2, 3, 4}, x)},
          {"v", Tensor::fromVector<float>({2, 3}, {1, -2, 3, -4, 5, -6})}};
}

using testing::named;

TEST(LiteRt, ItsFactsComeFromTheWorker) {
  const std::vector<std::string> configs = engines().configurations("litert");
  EXPECT_EQ(configs.front(), "kernels=xnnpack") << "LiteRT's own default";
  EXPECT_TRUE(named(configs, "kernels=reference"));
  EXPECT_EQ(engines().at("litert").baseline, "kernels=reference");
  const auto ref = engines().make("litert", "kernels=reference");
  const auto xnnpack = engines().make("litert", "kernels=xnnpack");
  EXPECT_TRUE(named(ref->unreportedOptimizations(), "onnxsim")) << "the converter's, everywhere";
  EXPECT_FALSE(named(ref->optimizations(), "xnnpack"));
  EXPECT_TRUE(named(xnnpack->optimizations(), "xnnpack"));
}

TEST(LiteRt, EachConfigurationMatchesTheReferenceInOnnxsLayout) {
  const TensorMap want = runReference(convRelu(), inputs());
  for (const std::string& config : engines().configurations("litert")) {
    auto engine = engines().make("litert", config);
    const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
    const RunOutcome r = isolated.run(convRelu(), inputs());
    ASSERT_EQ(r.kind, Outcome::Pass) << config << ": " << r.message;
    for (const char* name : {"y", "z"}) {
      const Comparison c = compareTensors(r.outputs.at(name), want.at(name));
      EXPECT_TRUE(c.ok) << config << ", " << name << ": " << c.message;
    }
    EXPECT_EQ(named(r.optimizations, "xnnpack"), config == "kernels=xnnpack") << config;
    EXPECT_FALSE(named(r.optimizations, "onnxsim")) << "a switch is never named as applied";
  }
}

TEST(LiteRt, TheDelegateAndTheSimplifierAreSwitchedOffByName) {
  for (const char* config :
       {"kernels=xnnpack,disable=xnnpack", "kernels=builtin,disable=onnxsim"}) {
    auto engine = engines().make("litert", config);
    const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
    const RunOutcome r = isolated.run(convRelu(), inputs());
    ASSERT_EQ(r.kind, Outcome::Pass) << config << ": " << r.message;
    EXPECT_FALSE(named(r.optimizations, "xnnpack")) << config;
    const Comparison c =
        compareTensors(r.outputs.at("y"), runReference(convRelu(), inputs()).at("y"));
    EXPECT_TRUE(c.ok) << config << ": " << c.message;
  }
}

TEST(LiteRt, AnOpOnnx2tfLacksIsUnsupported) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "castlike";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3}),
                    ValueInfo::tensor("t", DType::Int32, {1})};
  m.graph.nodes = {Node::make("CastLike", {"x", "t"}, {"y"}, "castlike")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Int32, {2, 3})};
  auto engine = engines().make("litert", "kernels=reference");
  const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
  const RunOutcome r =
      isolated.run(m, {{"x", Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                       {"t", Tensor::fromVector<int32_t>({1}, {0})}});
  EXPECT_EQ(r.kind, Outcome::Unsupported) << r.message;
  EXPECT_NE(r.message.find("CastLike"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace nncheck
