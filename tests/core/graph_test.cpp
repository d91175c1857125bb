// The graph IR's helpers: typed values, attributes as text, initializers, feeds, opsets.
#include "nncheck/graph.h"

#include <gtest/gtest.h>

#include <limits>

#include "nncheck/onnx_io.h"

namespace nncheck {
namespace {

TEST(Graph, FeedInputsAreTheInputsThatAreNotInitializers) {
  Model m;
  m.opsets = {{"", 13}, {"ai.onnx.ml", 3}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2}),
                    ValueInfo::tensor("w", DType::Float32, {2})};
  m.graph.initializers = {{"w", Tensor(DType::Float32, {2}), ""}};
  ASSERT_EQ(m.graph.feedInputs().size(), 1u);
  EXPECT_EQ(m.graph.feedInputs()[0]->name, "x");
  EXPECT_NE(m.graph.initializer("w"), nullptr);
  EXPECT_EQ(m.graph.initializer("x"), nullptr);
  EXPECT_EQ(m.defaultOpset(), 13);
}

TEST(Graph, ValueShapesAreKnownOnlyWhenEveryDimIs) {
  ValueInfo v = ValueInfo::tensor("x", DType::Float32, {2, 3});
  EXPECT_EQ(v.shape(), (Shape{2, 3}));
  (*v.dims)[1] = Dim{std::nullopt, "N", ""};
  EXPECT_EQ(v.shape(), std::nullopt);
}

TEST(Graph, AnAttributeHoldingNaNEqualsItselfAndSurvivesARoundTrip) {
  // The model round-trip fuzzer's smoke run in CI: LRN with bias NaN came back "different",
  // because floats compared as numbers and NaN != NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Attribute bias = Attribute::ofFloat("bias", nan);
  EXPECT_EQ(bias, bias);
  EXPECT_EQ(Attribute::ofFloats("scales", {1, nan}), Attribute::ofFloats("scales", {1, nan}));
  EXPECT_NE(Attribute::ofFloat("bias", 0.0f), Attribute::ofFloat("bias", -0.0f));
  EXPECT_NE(Attribute::ofFloats("s", {1}), Attribute::ofFloats("s", {1, 2}));
  Model m;
  m.opsets = {{"", 13}};
  m.graph.name = "lrn";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 2, 2, 2})};
  Node lrn = Node::make("LRN", {"x"}, {"y"}, "lrn");
  lrn.attributes = {Attribute::ofInt("size", 3), bias};
  m.graph.nodes = {lrn};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 2, 2, 2})};
  EXPECT_EQ(parseModel(serializeModel(m), "round trip"), m);
}

TEST(Graph, AttributesReadAsText) {
  EXPECT_EQ(attributeToString(Attribute::ofInts("perm", {1, 0})), "perm=[1, 0]");
  EXPECT_EQ(attributeToString(Attribute::ofInt("axis", -1)), "axis=-1");
  Node n = Node::make("Transpose", {"x"}, {"y"}, "t");
  n.attributes = {Attribute::ofInts("perm", {1, 0})};
  ASSERT_NE(n.attribute("perm"), nullptr);
  EXPECT_EQ(n.attribute("axis"), nullptr);
  EXPECT_FALSE(n.hasInput(1));
}

}  // namespace
}  // namespace nncheck
