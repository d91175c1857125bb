// OpenVINO through its Python worker: its facts, a model run in every mode, snippets named when
// they fused and switched off by name, the transformations OpenVINO's profile says changed the
// model named but not switched off, and a limit OpenVINO states unsupported.
#include <gtest/gtest.h>

#include <algorithm>

#include "nncheck/compare.h"
#include "nncheck/engine.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

// Sigmoid(Relu(x) + x) * (Relu(x) + x): an elementwise chain for snippets to fuse, with Swish's
// pattern (x * Sigmoid(x)) for the transformations to rewrite.
Model swishChain() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.nodes = {
      Node::make("Relu", {"x"}, {"r"}, "relu"), Node::make("Add", {"r", "x"}, {"a"}, "add"),
      Node::make("Sigmoid", {"a"}, {"s"}, "sigmoid"), Node::make("Mul", {"a", "s"}, {"y"}, "mul")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  return m;
}

using testing::named;

TEST(OpenVino, ItsFactsComeFromTheWorker) {
  EXPECT_EQ(engines().configurations("openvino"),
            (std::vector<std::string>{"mode=accuracy", "mode=performance",
                                      "mode=performance-no-snippets"}));
  EXPECT_EQ(engines().at("openvino").baseline, "mode=accuracy");
  const auto accuracy = engines().make("openvino", "mode=accuracy");
  const std::vector<std::string> all = accuracy->optimizations();
  EXPECT_TRUE(named(all, "snippets"));
  EXPECT_TRUE(named(all, "NopElimination")) << "a transformation of its pipeline";
  EXPECT_FALSE(named(all, "SymbolicPropagation"))
      << "one that says it changed even a lone Relu is bookkeeping";
  EXPECT_FALSE(named(engines().make("openvino", "mode=performance-no-snippets")->optimizations(),
                     "snippets"));
}

TEST(OpenVino, EachModeMatchesTheReferenceAndNamesWhatChangedTheModel) {
  const TensorMap want = runReference(swishChain(), testing::kInputX2x3);
  for (const std::string config :
       {"mode=accuracy", "mode=performance", "mode=performance-no-snippets",
        "mode=accuracy,disable=snippets"}) {
    auto engine = engines().make("openvino", config);
    const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
    const RunOutcome r = isolated.run(swishChain(), testing::kInputX2x3);
    ASSERT_EQ(r.kind, Outcome::Pass) << config << ": " << r.message;
    const Comparison c = compareTensors(r.outputs.at("y"), want.at("y"));
    EXPECT_TRUE(c.ok) << config << ": " << c.message;
    const bool snippets = config == "mode=accuracy" || config == "mode=performance";
    EXPECT_EQ(named(r.optimizations, "snippets"), snippets) << config;
    EXPECT_TRUE(std::any_of(r.optimizations.begin(), r.optimizations.end(),
                            [](const std::string& o) { return o != "snippets"; }))
        << config << ": a transformation changed the model";
  }
}

TEST(OpenVino, ATransformationCannotBeSwitchedOff) {
  const std::string e =
      testing::errorOf([] { engines().key("openvino", "mode=accuracy,disable=NopElimination"); });
  EXPECT_NE(e.find("cannot switch off 'NopElimination'"), std::string::npos) << e;
}

TEST(OpenVino, ALimitItStatesIsUnsupported) {
  // Dropout whose training_mode is a graph input: "Non-constant training_mode input is not
  // supported."
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3}),
                    ValueInfo::tensor("t", DType::Bool, {})};
  m.graph.nodes = {Node::make("Dropout", {"x", "", "t"}, {"y"}, "dropout")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  TensorMap inputs = testing::kInputX2x3;
  inputs["t"] = Tensor::fromVector<bool>({}, {false});
  auto engine = engines().make("openvino", "mode=accuracy");
  const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
  const RunOutcome r = isolated.run(m, inputs);
  EXPECT_EQ(r.kind, Outcome::Unsupported) << r.message;
  EXPECT_NE(r.message.find("training_mode input is not supported"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace nncheck
