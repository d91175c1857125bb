// IREE through its Python worker: its facts, a model run at every level, the passes that changed
// the model named but not switched off, a switch switched off by name, and an op its importer
// lacks unsupported.
#include <gtest/gtest.h>

#include <algorithm>

#include "nncheck/compare.h"
#include "nncheck/engine.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

// Softmax(x W + b) with a constant W: a matmul for the fusion switches and a reduction, with
// a constant operand for constant evaluation.
Model denseSoftmax() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "dense_softmax";  // IREE's function name: ONNX's checker requires one
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.initializers = {
      {"w", Tensor::fromVector<float>({3, 4}, {1, -2, 0.5f, 3, 0, 1, -1, 2, 0.25f, -0.5f, 1, 1}),
       ""},
      {"b", Tensor::fromVector<float>({4}, {0.1f, -0.2f, 0.3f, 0}), ""}};
  m.graph.nodes = {Node::make("MatMul", {"x", "w"}, {"t"}, "matmul"),
                   Node::make("Add", {"t", "b"}, {"u"}, "add"),
                   Node::make("Softmax", {"u"}, {"y"}, "softmax")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 4})};
  return m;
}

using testing::named;

TEST(Iree, ItsFactsComeFromTheWorker) {
  const std::vector<std::string> configs = engines().configurations("iree");
  EXPECT_EQ(configs.front(), "opt=O0");
  EXPECT_TRUE(named(configs, "opt=O3"));
  EXPECT_EQ(engines().at("iree").baseline, "opt=O0");
  const auto o0 = engines().make("iree", "opt=O0"), o3 = engines().make("iree", "opt=O3");
  EXPECT_TRUE(named(o0->unreportedOptimizations(), "const-eval")) << "on at every level";
  EXPECT_FALSE(named(o0->unreportedOptimizations(), "aggressive-fusion")) << "on from O2";
  EXPECT_TRUE(named(o3->unreportedOptimizations(), "aggressive-fusion"));
  EXPECT_TRUE(named(o3->optimizations(), "ElementwiseOpFusionPass")) << "a pass of its pipeline";
  EXPECT_FALSE(named(o3->optimizations(), "CSEPass")) << "it changes even a lone Relu";
}

TEST(Iree, EachLevelMatchesTheReferenceAndNamesWhatChangedTheModel) {
  const TensorMap want = runReference(denseSoftmax(), testing::kInputX2x3);
  for (const std::string& config : engines().configurations("iree")) {
    auto engine = engines().make("iree", config);
    const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
    const RunOutcome r = isolated.run(denseSoftmax(), testing::kInputX2x3);
    ASSERT_EQ(r.kind, Outcome::Pass) << config << ": " << r.message;
    const Comparison c = compareTensors(r.outputs.at("y"), want.at("y"));
    EXPECT_TRUE(c.ok) << config << ": " << c.message;
    EXPECT_FALSE(r.optimizations.empty()) << config << ": a pass changed the model";
    EXPECT_FALSE(named(r.optimizations, "const-eval")) << "a switch is never named as applied";
  }
}

TEST(Iree, ASwitchIsSwitchedOffAndAPassIsNot) {
  auto engine = engines().make("iree", "opt=O3,disable=aggressive-fusion");
  const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
  const RunOutcome r = isolated.run(denseSoftmax(), testing::kInputX2x3);
  EXPECT_EQ(r.kind, Outcome::Pass) << r.message;
  const std::string e =
      testing::errorOf([] { engines().key("iree", "opt=O3,disable=ElementwiseOpFusionPass"); });
  EXPECT_NE(e.find("cannot switch off 'ElementwiseOpFusionPass'"), std::string::npos) << e;
}

TEST(Iree, AnOpItsImporterLacksIsUnsupported) {
  // Softsign: no conversion in the ONNX importer's patterns.
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "softsign";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.nodes = {Node::make("Softsign", {"x"}, {"y"}, "softsign")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  auto engine = engines().make("iree", "opt=O0");
  const Isolated isolated(*engine, std::chrono::seconds(60), Isolation::Persistent);
  const RunOutcome r = isolated.run(m, testing::kInputX2x3);
  EXPECT_EQ(r.kind, Outcome::Unsupported) << r.message;
  EXPECT_NE(r.message.find("Softsign"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace nncheck
