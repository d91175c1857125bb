// What every layer does with a test case: print it, cut out the part that computes one node.
#include "nncheck/test_case.h"

#include <gtest/gtest.h>

namespace nncheck {
namespace {

// x -> Relu -> a; (a, w) -> Add -> b; x -> Neg -> c.  Outputs b and c.
TestCase threeNodes() {
  TestCase tc;
  tc.model.opsets = {{"", 14}};
  tc.model.graph.name = "g";
  tc.model.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2})};
  tc.model.graph.initializers = {{"w", Tensor::fromVector<float>({2}, {1, 2}), ""}};
  tc.model.graph.nodes = {Node::make("Relu", {"x"}, {"a"}, "relu"),
                          Node::make("Add", {"a", "w"}, {"b"}, "add"),
                          Node::make("Neg", {"x"}, {"c"}, "neg")};
  tc.model.graph.outputs = {ValueInfo::tensor("b", DType::Float32, {2}),
                            ValueInfo::tensor("c", DType::Float32, {2})};
  tc.inputs = {{"x", Tensor::fromVector<float>({2}, {-1, 3})}};
  return tc;
}

TEST(TestCase, TextShowsInputsInitializersNodesAndOutputs) {
  const std::string text = modelToText(threeNodes().model);
  for (const char* line : {"graph g (opset 14, 3 nodes)", "input  x: float32[2]",
                           "init   w:", "a = Relu(x)", "b = Add(a, w)", "output c: float32[2]"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

TEST(TestCase, SubModelKeepsTheNodeAndItsAncestorsOnly) {
  TestCase tc = threeNodes();
  TensorMap values = {{"a", Tensor(DType::Float32, {2})}, {"b", Tensor(DType::Float32, {2})}};
  TestCase sub = subModelFor(tc, 1, values);
  ASSERT_EQ(sub.model.graph.nodes.size(), 2u);
  EXPECT_EQ(sub.model.graph.nodes[0].opType, "Relu");
  EXPECT_EQ(sub.model.graph.nodes[1].opType, "Add");
  ASSERT_EQ(sub.model.graph.outputs.size(), 1u);
  EXPECT_EQ(sub.model.graph.outputs[0].name, "b");
  EXPECT_EQ(sub.model.graph.initializers.size(), 1u);
  EXPECT_EQ(sub.inputs.size(), 1u);
  // The Neg node's cone needs no initializer.
  values["c"] = Tensor(DType::Float32, {2});
  TestCase neg = subModelFor(tc, 2, values);
  EXPECT_EQ(neg.model.graph.nodes.size(), 1u);
  EXPECT_TRUE(neg.model.graph.initializers.empty());
}

TEST(TestCase, ControlCharactersInNamesAreEscapedNotSentToTheTerminal) {
  TestCase tc = threeNodes();
  tc.model.graph.nodes[0].outputs[0] = "a\x1b[2J";  // ESC: clear the screen
  const std::string text = modelToText(tc.model);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("a\\x1b[2J = Relu(x)"), std::string::npos) << text;
  EXPECT_EQ(printable("tab\there"), "tab\\x09here");
}

}  // namespace
}  // namespace nncheck
