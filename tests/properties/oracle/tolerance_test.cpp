#include "nncheck/tolerance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "nncheck/property.h"

namespace nncheck {
namespace {

Model unary(const std::string& op, DType dtype) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", dtype, {2})};
  m.graph.nodes = {Node::make(op, {"x"}, {"y"}, "n0")};
  m.graph.outputs = {ValueInfo::tensor("y", dtype, {2})};
  return m;
}

TEST(Tolerance, PerDtype) {
  EXPECT_EQ(toleranceFor(DType::Float32).rtol, 1e-3);
  EXPECT_EQ(toleranceFor(DType::Float32).atol, 1e-5);
  EXPECT_GT(toleranceFor(DType::Float16).rtol, toleranceFor(DType::Float32).rtol);
  EXPECT_LT(toleranceFor(DType::Float64).rtol, toleranceFor(DType::Float32).rtol);
  EXPECT_EQ(toleranceFor(unary("Relu", DType::Float16)).rtol, 1e-2);
}

TEST(Tolerance, AnOpThatAccumulatesWidensTheModels) {
  Model relu = unary("Relu", DType::Float32);
  EXPECT_EQ(toleranceFor(relu).atol, 1e-5);
  Model withMatMul = relu;
  withMatMul.graph.nodes.push_back(Node::make("MatMul", {"y", "y"}, {"z"}, "n1"));
  EXPECT_EQ(toleranceFor(withMatMul).atol, 1e-4);
  EXPECT_EQ(toleranceFor(withMatMul).rtol, 1e-3);
}

// x -> op0 -> op1 ... over float32[2].
Model opChain(const std::vector<std::string>& ops) {
  Model m = unary(ops[0], DType::Float32);
  for (size_t i = 1; i < ops.size(); ++i) {
    const std::string in = m.graph.nodes.back().outputs[0], out = "y" + std::to_string(i);
    m.graph.nodes.push_back(Node::make(ops[i], {in}, {out}, "n" + std::to_string(i)));
    m.graph.outputs = {ValueInfo::tensor(out, DType::Float32, {2})};
  }
  return m;
}

TEST(RoundingAllowance, IsTinyOnAWellConditionedChainAndLargeNearAPole) {
  const Model m = opChain({"Tan", "Sin"});
  // Tan's pole amplifies an ulp of x 10^8 times; at 0.3 nothing is amplified.
  const TensorMap in = {{"x", Tensor::fromVector<float>({2}, {1.5707f, 0.3f})}};
  const TensorMap want = runReference(m, in);
  const Tensor a = roundingAllowance(m, in, want).at("y1");
  EXPECT_GT(a.toDouble(0), 1e-2);
  EXPECT_GT(a.toDouble(1), 0);
  EXPECT_LT(a.toDouble(1), 1e-5);
}

// LogSoftmax of [13, -1, 1] is -7e-6 at 13, off by about an epsilon absolute in any float32
// engine (PyTorch's: 0.8% of the product below); Reciprocal makes that a relative error of 1%.
TEST(RoundingAllowance, LogSoftmaxsAbsoluteErrorReachesAQuotientDownstream) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 3})};
  m.graph.nodes = {Node::make("LogSoftmax", {"x"}, {"l"}, "n0"),
                   Node::make("Reciprocal", {"l"}, {"y"}, "n1")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 3})};
  const TensorMap in = {{"x", Tensor::fromVector<float>({1, 3}, {13.0f, -1.0f, 1.0f})}};
  const TensorMap want = runReference(m, in);
  const double y = want.at("y").toDouble(0);
  EXPECT_GT(roundingAllowance(m, in, want).at("y").toDouble(0), 0.01 * std::fabs(y)) << y;
}

// An instance of equal elements normalizes to B exactly, but computed as x a + b in float32
// (a = scale / sqrt(eps), 251 here) its x a cancels against b only to an ulp of 8.4e7, which is
// 8: ATen's answer is 1.9 off, and a correct engine may be several units off either way. A Relu
// after it clips the downward side, so every element must see the upward one too. (Perturbed
// inputs alone hide all this: they give the instance a variance, and a a hundred times smaller.)
TEST(RoundingAllowance, AConstantInstanceNormalizesToBOnlyUpToTheCancellation) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 1, 64}),
                    ValueInfo::tensor("s", DType::Float32, {1}),
                    ValueInfo::tensor("b", DType::Float32, {1})};
  m.graph.nodes = {Node::make("InstanceNormalization", {"x", "s", "b"}, {"n"}, "n0"),
                   Node::make("Relu", {"n"}, {"y"}, "n1")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1, 1, 64})};
  Tensor x(DType::Float32, {1, 1, 64});
  for (float& v : x.span<float>()) v = 335093.0f;
  const TensorMap in = {{"x", x},
                        {"s", Tensor::fromVector<float>({1}, {0.794f})},
                        {"b", Tensor::fromVector<float>({1}, {0.06f})}};
  const TensorMap want = runReference(m, in);
  EXPECT_FLOAT_EQ(static_cast<float>(want.at("y").toDouble(0)), 0.06f);
  const Tensor allowed = roundingAllowance(m, in, want).at("y");
  for (int64_t i = 0; i < allowed.size(); ++i) EXPECT_GT(allowed.toDouble(i), 4.0) << i;
}

TEST(RoundingAllowance, AComparisonNearATieMayGoEitherWay) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {16}),
                    ValueInfo::tensor("b", DType::Float32, {16})};
  m.graph.nodes = {Node::make("Greater", {"a", "b"}, {"y"}, "n0")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Bool, {16})};
  // Eight ties (a perturbed run decides each either way, about evenly) and eight far apart.
  std::vector<float> a(16, 1.0f), b(16, 1.0f);
  for (size_t i = 8; i < 16; ++i) b[i] = 2.0f;
  const TensorMap in = {{"a", Tensor::fromVector<float>({16}, a)},
                        {"b", Tensor::fromVector<float>({16}, b)}};
  const Tensor allowed = roundingAllowance(m, in, runReference(m, in)).at("y");
  int anything = 0;
  for (int64_t i = 0; i < 8; ++i) anything += std::isinf(allowed.toDouble(i));
  EXPECT_GE(anything, 6);
  for (int64_t i = 8; i < 16; ++i) EXPECT_EQ(allowed.toDouble(i), 0) << i;
}

// A correct float32 engine whose ops round differently from the reference's: the reference with
// its own perturbation of every op's inputs.
struct OtherRounding : Backend {
  double scale = 1;  // 1: correct; else every output off by this factor (a bug)
  std::string name() const override { return "double:other-rounding"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    TensorMap out = runReferencePerturbed(m, inputs, 12345, 2);
    for (auto& [name, t] : out)
      for (float& v : t.span<float>()) v = static_cast<float>(v * scale);
    return out;
  }
};

TEST(RoundingAllowance, ACorrectEngineOnAnIllConditionedChainPassesAndAWrongOneFails) {
  const Model m = opChain({"Tan", "Sin"});
  const TestCase tc{m, {{"x", Tensor::fromVector<float>({2}, {1.5707f, 0.3f})}}};
  OtherRounding correct;
  // The tolerance alone would call it a bug: the false alarm the estimate removes.
  EXPECT_THROW(
      assertAllClose(correct.run(m, tc.inputs), runReference(m, tc.inputs), toleranceFor(m)),
      PropertyFailure);
  EXPECT_NO_THROW(assertMatchesReference(correct, tc));
  OtherRounding wrong;
  wrong.scale = 1.01;
  try {
    assertMatchesReference(wrong, tc);
    ADD_FAILURE() << "a 1% error at a well-conditioned element passed";
  } catch (const PropertyFailure& f) {
    EXPECT_GE(f.verdict.estimatedError, 0);
    EXPECT_LT(f.verdict.estimatedError, f.verdict.maxAbsError);
    EXPECT_NE(std::string(f.what()).find("float error there is estimated at"), std::string::npos)
        << f.what();
  }
  // Two engines each may err: they agree within twice the estimate.
  EXPECT_NO_THROW(assertAgree(correct, reference(), tc));
  EXPECT_THROW(assertAgree(wrong, reference(), tc), PropertyFailure);
}

TEST(NonFinitePolicy, NamesTheFirstNodeComputingNaNOrInf) {
  Model m = unary("Log", DType::Float32);
  m.graph.nodes.push_back(Node::make("Relu", {"y"}, {"z"}, "n1"));
  m.graph.outputs = {ValueInfo::tensor("z", DType::Float32, {2})};
  TensorMap in = {{"x", Tensor::fromVector<float>({2}, {1.0f, 2.0f})}};
  EXPECT_EQ(firstNonFinite(m, runReferenceAllValues(m, in)), std::nullopt);
  in["x"] = Tensor::fromVector<float>({2}, {1.0f, -1.0f});
  auto where = firstNonFinite(m, runReferenceAllValues(m, in));
  ASSERT_TRUE(where);
  EXPECT_EQ(*where, "node 'n0' (Log): output 'y' has NaN");
  in["x"] = Tensor::fromVector<float>({2}, {INFINITY, 1.0f});
  EXPECT_EQ(firstNonFinite(m, runReferenceAllValues(m, in)), "graph input 'x' has Inf");
}

}  // namespace
}  // namespace nncheck
