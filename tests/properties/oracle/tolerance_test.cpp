#include "nncheck/tolerance.h"

#include <gtest/gtest.h>

#include <cmath>

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
