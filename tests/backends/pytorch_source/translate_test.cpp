// ONNX as PyTorch source, in its two dialects: the same statements, with dtypes and
// torch.nn.functional calls written as TorchScript compiled from C++ takes them and as Python
// users write them.
#include "pytorch_source/translate.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace nncheck::pytorch {
namespace {

// LeakyRelu, then Cast to int64, then Resize (linear, half_pixel) of the float input.
Model threeIdioms() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 1, 2, 2})};
  m.graph.initializers = {
      {.name = "scales", .value = Tensor::fromVector<float>({4}, {1, 1, 2, 2}), .docString = ""}};
  Node leaky = Node::make("LeakyRelu", {"x"}, {"l"}, "leaky");
  leaky.attributes = {Attribute::ofFloat("alpha", 0.5f)};
  Node cast = Node::make("Cast", {"l"}, {"c"}, "cast");
  cast.attributes = {Attribute::ofInt("to", 7)};
  Node resize = Node::make("Resize", {"x", "", "scales"}, {"r"}, "resize");
  resize.attributes = {Attribute::ofString("mode", "linear")};
  m.graph.nodes = {leaky, cast, resize};
  m.graph.outputs = {ValueInfo::tensor("c", DType::Int64, {1, 1, 2, 2}),
                     ValueInfo::tensor("r", DType::Float32, {1, 1, 4, 4})};
  return m;
}

using testing::has;

TEST(PytorchSource, TorchScriptNamesAtenBuiltinsAndScalarTypeCodes) {
  const Script s = translate(threeIdioms(), "torchscript");
  EXPECT_TRUE(has(s.source, "torch.leaky_relu(a0, 0.5)")) << s.source;
  EXPECT_TRUE(has(s.source, ".to(4)")) << s.source;  // ScalarType::Long
  EXPECT_TRUE(has(s.source, "torch.upsample_bilinear2d(a0, None, False, [2.0, 2.0])")) << s.source;
  EXPECT_FALSE(has(s.source, "torch.nn.functional")) << s.source;
}

TEST(PytorchSource, PythonNamesFunctionalCallsAndDtypes) {
  const Script s = translate(threeIdioms(), "inductor", Dialect::Python);
  EXPECT_TRUE(has(s.source, "torch.nn.functional.leaky_relu(a0, 0.5)")) << s.source;
  EXPECT_TRUE(has(s.source, ".to(torch.int64)")) << s.source;
  EXPECT_TRUE(has(s.source,
                  "torch.nn.functional.interpolate(a0, size=None, scale_factor=[2.0, 2.0], "
                  "mode='bilinear', align_corners=False)"))
      << s.source;
  EXPECT_FALSE(has(s.source, ".to(4)")) << s.source;
}

TEST(PytorchSource, BuffersNameTheInitializersTheyHold) {
  Model m = threeIdioms();
  m.graph.nodes.push_back(Node::make("Mul", {"r", "r"}, {"unused"}, "mul"));
  const Script s = translate(m, "inductor", Dialect::Python);
  ASSERT_EQ(s.buffers.size(), 1u);
  EXPECT_EQ(s.buffers[0].initializer, "scales");
  EXPECT_EQ(s.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(s.outputs, (std::vector<std::string>{"c", "r"}));
}

}  // namespace
}  // namespace nncheck::pytorch
