// Quantized arithmetic beyond what ONNX 1.12's node tests pin down: rounding half to even before
// the zero point is added, saturation of int8, and per-axis and per-row parameters.
#include <gtest/gtest.h>

#include "nncheck/reference.h"
#include "nncheck/validity.h"

namespace nncheck {
namespace {

Tensor quantize(const std::vector<float>& x, float scale, Tensor zeroPoint) {
  Node n = Node::make("QuantizeLinear", {"x", "s", "z"}, {"y"}, "q");
  return runReferenceNode(n, {Tensor::fromVector<float>({static_cast<int64_t>(x.size())}, x),
                              Tensor::scalar<float>(scale), std::move(zeroPoint)})
      .at(0);
}

TEST(Quantization, QuantizeLinearRoundsHalfToEvenThenAddsTheZeroPoint) {
  // x / 1: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2; then + 3 (odd, so rounding after
  // adding would give 4, 4, 6, 2, 2).
  EXPECT_EQ(quantize({0.5f, 1.5f, 2.5f, -0.5f, -1.5f}, 1, Tensor::scalar<uint8_t>(3)),
            Tensor::fromVector<uint8_t>({5}, {3, 5, 5, 3, 1}));
}

TEST(Quantization, QuantizeLinearSaturatesInt8) {
  EXPECT_EQ(quantize({1000, -1000, 127.4f, -128.6f}, 1, Tensor::scalar<int8_t>(0)),
            Tensor::fromVector<int8_t>({4}, {127, -128, 127, -128}));
}

TEST(Quantization, DequantizeLinearPerAxisUsesEachChannelsParameters) {
  Node n = Node::make("DequantizeLinear", {"x", "s", "z"}, {"y"}, "dq");
  n.attributes = {Attribute::ofInt("axis", 0)};
  const Tensor y = runReferenceNode(n, {Tensor::fromVector<uint8_t>({2, 2}, {10, 20, 10, 20}),
                                        Tensor::fromVector<float>({2}, {0.5f, 2}),
                                        Tensor::fromVector<uint8_t>({2}, {10, 0})})
                       .at(0);
  EXPECT_EQ(y, Tensor::fromVector<float>({2, 2}, {0, 5, 20, 40}));
}

TEST(Quantization, AnInt32DequantizeLinearTakesNoZeroPoint) {
  // DequantizeLinear-13: "In the case of dequantizing int32, there's no zero point (zero point
  // is supposed to be 0)." LiteRT, following it, was once reported as wrong here.
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Int32, {2})};
  m.graph.initializers = {{"s", Tensor::scalar<float>(0.5f), ""},
                          {"z", Tensor::scalar<int32_t>(5), ""}};
  m.graph.nodes = {Node::make("DequantizeLinear", {"x", "s", "z"}, {"y"}, "dq")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2})};
  const std::optional<std::string> why = whyInvalid(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("int32 x has no zero point"), std::string::npos) << *why;
  m.graph.nodes[0].inputs.pop_back();
  m.graph.initializers.pop_back();
  EXPECT_EQ(whyInvalid(m), std::nullopt);
}

TEST(Quantization, QLinearMatMulScalesPerRowAndRequantizes) {
  Node n =
      Node::make("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"}, "qmm");
  // (a - 1) @ (b - 0) = [[1 + 2], [3 + 4]] = [[3], [7]]; row scales 1 and 0.5, y_scale 2:
  // 3 * 1 / 2 = 1.5 -> 2, 7 * 0.5 / 2 = 1.75 -> 2; plus y's zero point 10.
  const Tensor y =
      runReferenceNode(
          n, {Tensor::fromVector<uint8_t>({2, 2}, {2, 3, 4, 5}),
              Tensor::fromVector<float>({2}, {1, 0.5f}), Tensor::scalar<uint8_t>(1),
              Tensor::fromVector<uint8_t>({2, 1}, {1, 1}), Tensor::scalar<float>(1),
              Tensor::scalar<uint8_t>(0), Tensor::scalar<float>(2), Tensor::scalar<uint8_t>(10)})
          .at(0);
  EXPECT_EQ(y, Tensor::fromVector<uint8_t>({2, 1}, {12, 12}));
}

TEST(Quantization, ConvIntegerSubtractsPerChannelWeightZeroPoints) {
  Node n = Node::make("ConvInteger", {"x", "w", "xz", "wz"}, {"y"}, "ci");
  // x [1, 1, 1, 2] = {5, 7} - 1; w [2, 1, 1, 1] = {3, 4} - {1, 2}: y = {4 * 2, 6 * 2; 4 * 2, 6 *
  // 2}.
  const Tensor y =
      runReferenceNode(n, {Tensor::fromVector<uint8_t>({1, 1, 1, 2}, {5, 7}),
                           Tensor::fromVector<uint8_t>({2, 1, 1, 1}, {3, 4}),
                           Tensor::scalar<uint8_t>(1), Tensor::fromVector<uint8_t>({2}, {1, 2})})
          .at(0);
  EXPECT_EQ(y, Tensor::fromVector<int32_t>({1, 2, 1, 2}, {8, 12, 8, 12}));
}

}  // namespace
}  // namespace nncheck
