// nncheck::inferShapes, the public static shape inference: dtypes and shapes of every value,
// contents where known before running, and a clear error where a shape needs a run.
#include "nncheck/shapes.h"

#include <gtest/gtest.h>

#include "nncheck/error.h"

namespace nncheck {
namespace {

// y = MatMul(a, b) with b an initializer, and s = Shape(a), r = Reshape(y, target).
Model model(bool targetIsInput) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {2, 3})};
  m.graph.initializers.push_back(
      {"b", Tensor::fromVector<float>({3, 4}, std::vector<float>(12, 1.f)), ""});
  m.graph.nodes.push_back(Node::make("MatMul", {"a", "b"}, {"y"}, "mm"));
  m.graph.nodes.push_back(Node::make("Shape", {"a"}, {"s"}, "shape"));
  if (targetIsInput)
    m.graph.inputs.push_back(ValueInfo::tensor("target", DType::Int64, {2}));
  else
    m.graph.initializers.push_back({"target", Tensor::fromVector<int64_t>({2}, {4, 2}), ""});
  m.graph.nodes.push_back(Node::make("Reshape", {"y", "target"}, {"r"}, "reshape"));
  m.graph.outputs = {ValueInfo::tensor("r", DType::Float32, {4, 2}),
                     ValueInfo::tensor("s", DType::Int64, {2})};
  return m;
}

TEST(InferShapes, GivesEveryValuesTypeAndTheContentsKnownBeforeRunning) {
  const auto facts = inferShapes(model(false));
  EXPECT_EQ(facts.at("y").dtype, DType::Float32);
  EXPECT_EQ(facts.at("y").shape, (Shape{2, 4}));
  EXPECT_FALSE(facts.at("y").value) << "computed from a graph input: known only by running";
  ASSERT_TRUE(facts.at("b").value);
  EXPECT_EQ(facts.at("b").value->shape(), (Shape{3, 4}));
  ASSERT_TRUE(facts.at("s").value) << "Shape of a static shape is known";
  EXPECT_EQ(facts.at("s").value->toInt64(1), 3);
  EXPECT_EQ(facts.at("r").shape, (Shape{4, 2}));
}

TEST(InferShapes, AShapeKnownOnlyByRunningIsUnsupportedNamingTheNode) {
  try {
    inferShapes(model(true));
    FAIL() << "a Reshape whose shape is a graph input has no static shape";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("reshape"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nncheck
