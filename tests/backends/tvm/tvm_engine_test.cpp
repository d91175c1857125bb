// TVM 0.27 (Relax) through its Python worker: its facts, a model through each pipeline, the
// passes that changed it named and switched off by name, and an op its frontend lacks
// unsupported.
#include <gtest/gtest.h>

#include "nncheck/compare.h"
#include "nncheck/engine.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

// Relu(x) + c with c = Exp(constant): a constant to fold (TVM's frontend folds Neg of a constant
// itself, not Exp), and two elementwise ops to fuse.
Model foldAndFuse() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.initializers = {
      {.name = "k", .value = Tensor::fromVector<float>({3}, {1, 2, 3}), .docString = ""}};
  m.graph.nodes = {Node::make("Exp", {"k"}, {"c"}, "exp"), Node::make("Relu", {"x"}, {"r"}, "relu"),
                   Node::make("Add", {"r", "c"}, {"y"}, "add")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  return m;
}

TEST(Tvm, ItsFactsComeFromTheWorker) {
  EXPECT_EQ(engines().configurations("tvm"),
            (std::vector<std::string>{"pipeline=zero", "pipeline=full", "pipeline=default"}));
  EXPECT_EQ(engines().at("tvm").baseline, "pipeline=default");
  const auto zero = engines().make("tvm", "pipeline=zero");
  EXPECT_EQ(zero->optimizations(),
            (std::vector<std::string>{"FoldConstant", "FuseOps", "FuseTIR"}));
  const Capabilities caps = zero->capabilities();
  EXPECT_TRUE(testing::named(caps.ops, "Relu"));
  EXPECT_FALSE(testing::named(caps.ops, "LSTM")) << "an op its frontend lacks stays out";
}

TEST(Tvm, EachPipelineMatchesTheReferenceAndNamesThePassesThatChangedTheModel) {
  const TensorMap want = runReference(foldAndFuse(), testing::kInputX2x3);
  for (const std::string config : {"pipeline=default", "pipeline=zero", "pipeline=full",
                                   "pipeline=zero,disable=FoldConstant"}) {
    auto engine = engines().make("tvm", config);
    const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
    const RunOutcome r = isolated.run(foldAndFuse(), testing::kInputX2x3);
    ASSERT_EQ(r.kind, Outcome::Pass) << config << ": " << r.message;
    const Comparison c = compareTensors(r.outputs.at("y"), want.at("y"));
    EXPECT_TRUE(c.ok) << config << ": " << c.message;
    const auto fired = [&](const char* pass) {
      return std::find(r.optimizations.begin(), r.optimizations.end(), pass) !=
             r.optimizations.end();
    };
    const bool optimizing = config != "pipeline=default";
    EXPECT_EQ(fired("FuseOps"), optimizing) << config;
    EXPECT_EQ(fired("FoldConstant"), optimizing && config.find("disable") == std::string::npos)
        << config;
  }
}

TEST(Tvm, AnOpItsFrontendLacksIsUnsupported) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.nodes = {Node::make("Celu", {"x"}, {"y"}, "celu")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  auto engine = engines().make("tvm", "pipeline=zero");
  const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
  const RunOutcome r = isolated.run(m, testing::kInputX2x3);
  EXPECT_EQ(r.kind, Outcome::Unsupported) << r.message;
  EXPECT_NE(r.message.find("Celu"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace nncheck
