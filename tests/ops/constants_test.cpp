// Constant nodes and shape operands the graph computes: static inference knows their contents
// (a Reshape whose shape comes from Shape -> Concat is valid), and bad Constants are rejected
// with the node named.
#include <gtest/gtest.h>

#include "nncheck/reference.h"
#include "nncheck/validity.h"

namespace nncheck {
namespace {

Model modelOf(std::vector<ValueInfo> inputs, std::vector<Node> nodes, ValueInfo output) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = std::move(inputs);
  m.graph.nodes = std::move(nodes);
  m.graph.outputs = {std::move(output)};
  return m;
}

// y = Reshape(x, Concat(Shape(x)[1:], Constant [-1])): x [2, 3, 4] -> [3, 4, 2].
Model computedShapeModel() {
  Node shape = Node::make("Shape", {"x"}, {"s"}, "shape");
  shape.attributes = {Attribute::ofInt("start", 1)};
  Node minusOne = Node::make("Constant", {}, {"m"}, "minus_one");
  minusOne.attributes = {Attribute::ofTensor("value", Tensor::fromVector<int64_t>({1}, {-1}))};
  Node concat = Node::make("Concat", {"s", "m"}, {"t"}, "concat");
  concat.attributes = {Attribute::ofInt("axis", 0)};
  return modelOf({ValueInfo::tensor("x", DType::Float32, {2, 3, 4})},
                 {shape, minusOne, concat, Node::make("Reshape", {"x", "t"}, {"y"}, "reshape")},
                 ValueInfo::tensor("y", DType::Float32, {3, 4, 2}));
}

TEST(Constants, ShapeOperandsComputedFromShapesAndConstantsAreKnownStatically) {
  EXPECT_EQ(whyInvalid(computedShapeModel()), std::nullopt);
  Model wrong = computedShapeModel();
  wrong.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {4, 3, 2})};
  EXPECT_TRUE(whyInvalid(wrong).has_value()) << "a wrong declared output shape must be caught";
}

TEST(Constants, ReferenceRunsAComputedShapeModel) {
  Tensor x(DType::Float32, {2, 3, 4});
  for (int64_t i = 0; i < x.size(); ++i) x.span<float>()[static_cast<size_t>(i)] = float(i);
  const TensorMap out = runReference(computedShapeModel(), {{"x", x}});
  ASSERT_EQ(out.at("y").shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(out.at("y").span<const float>()[23], 23.0f);
}

TEST(Constants, AConstantWithTwoValuesIsRejectedNamingTheNode) {
  Node c = Node::make("Constant", {}, {"y"}, "twice");
  c.attributes = {Attribute::ofInt("value_int", 1), Attribute::ofFloat("value_float", 2)};
  try {
    runReferenceNode(c, {});
    FAIL() << "a Constant with two value attributes ran";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
  }
}

TEST(Constants, RangeCountsAsTheSpecificationSays) {
  Node n = Node::make("Range", {"a", "b", "d"}, {"y"}, "range");
  // ceil((10 - 1) / 3) = 3 elements: 1, 4, 7; an empty range when delta points away.
  Tensor y = runReferenceNode(n, {Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(10),
                                  Tensor::scalar<int64_t>(3)})
                 .at(0);
  EXPECT_EQ(y, Tensor::fromVector<int64_t>({3}, {1, 4, 7}));
  y = runReferenceNode(
          n, {Tensor::scalar<float>(1), Tensor::scalar<float>(10), Tensor::scalar<float>(-1)})
          .at(0);
  EXPECT_EQ(y.shape(), (Shape{0}));
  EXPECT_THROW(runReferenceNode(n, {Tensor::scalar<float>(1), Tensor::scalar<float>(10),
                                    Tensor::scalar<float>(0)}),
               std::exception);
}

}  // namespace
}  // namespace nncheck
