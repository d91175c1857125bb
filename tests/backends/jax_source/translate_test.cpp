// ONNX as JAX source: the idioms JAX users write (jax.nn, jnp, lax's windows), the parameters as
// the function's first argument, and the refusals that name the node. Whether the source computes
// what ONNX does is the xla engine's tests' (the probe's drift test, the node tests) to say.
#include "jax_source/translate.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace nncheck::jax {
namespace {

using testing::has;

// Conv (uneven pads) with a weight initializer, Relu, then ReduceSum over axis 1 of int32.
Model convReluSum() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 1, 4, 4}),
                    ValueInfo::tensor("n", DType::Int32, {2, 3})};
  m.graph.initializers = {
      {.name = "w",
       .value = Tensor::fromVector<float>({1, 1, 2, 2}, {1, 2, 3, 4}),
       .docString = ""},
      {.name = "axes", .value = Tensor::fromVector<int64_t>({1}, {1}), .docString = ""}};
  Node conv = Node::make("Conv", {"x", "w"}, {"c"}, "conv");
  conv.attributes = {Attribute::ofInts("pads", {0, 1, 1, 0})};
  Node relu = Node::make("Relu", {"c"}, {"r"}, "relu");
  Node sum = Node::make("ReduceSum", {"n", "axes"}, {"s"}, "sum");
  m.graph.nodes = {conv, relu, sum};
  m.graph.outputs = {ValueInfo::tensor("r", DType::Float32, {1, 1, 4, 4}),
                     ValueInfo::tensor("s", DType::Int32, {2, 1})};
  return m;
}

TEST(JaxSource, WritesAPureFunctionOfParamsAndInputs) {
  const Program p = translate(convReluSum(), "xla");
  EXPECT_TRUE(has(p.source, "def model(params, a0, a1):\n")) << p.source;
  EXPECT_TRUE(has(p.source, "lax.conv_general_dilated(a0, params['w0'], (1, 1), [(0, 1), (1, 0)]"))
      << p.source;
  EXPECT_TRUE(has(p.source, "dimension_numbers=('NCHW', 'OIHW', 'NCHW')")) << p.source;
  EXPECT_TRUE(has(p.source, "jax.nn.relu(v0)")) << p.source;
  EXPECT_TRUE(has(p.source, "return (v1, v2, )")) << p.source;
  ASSERT_EQ(p.params.size(), 2u);  // the weight and the axes, which the source also writes out
  EXPECT_EQ(p.params[0].initializer, "w");
  EXPECT_EQ(p.inputs, (std::vector<std::string>{"x", "n"}));
  EXPECT_EQ(p.outputs, (std::vector<std::string>{"r", "s"}));
}

TEST(JaxSource, SumsKeepTheirIntegerType) {  // jnp.sum, like numpy's, widens int32
  const Program p = translate(convReluSum(), "xla");
  EXPECT_TRUE(has(p.source, "jnp.sum(a1, axis=(1,), keepdims=True, dtype=jnp.int32)")) << p.source;
}

TEST(JaxSource, RefusesAnOpItDoesNotTranslateNamingTheNode) {
  Model m = convReluSum();
  Node lrn = Node::make("LRN", {"r"}, {"l"}, "my_lrn");
  lrn.attributes = {Attribute::ofInt("size", 3)};
  m.graph.nodes.push_back(lrn);
  try {
    translate(m, "xla");
    FAIL() << "an LRN was translated";
  } catch (const Unsupported& u) {
    EXPECT_TRUE(has(u.what(), "xla: LRN node 'my_lrn' is not translated")) << u.what();
  }
}

}  // namespace
}  // namespace nncheck::jax
