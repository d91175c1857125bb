// Reverse-mode gradients against finite differences, for every op of the registry that declares
// an exact gradient, on generated single-op float64 models (float32 for ops declared for it alone).
#include "interp/gradients.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "nncheck/generator.h"
#include "nncheck/test_case.h"
#include "ops/op_spec.h"

namespace nncheck {
namespace {

// L = sum_j w_j * y_j over every output element, with fixed random weights w.
struct Loss {
  std::map<std::string, std::vector<double>> weights;
  double operator()(const Model& m, const TensorMap& in) const {
    TensorMap out = runReference(m, in);
    double l = 0;
    for (const auto& [name, w] : weights)
      for (size_t i = 0; i < w.size(); ++i)
        l += w[i] * out.at(name).toDouble(static_cast<int64_t>(i));
    return l;
  }
};

void setElement(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DType::Float32)
    t.span<float>()[static_cast<size_t>(i)] = static_cast<float>(v);
  else
    t.span<double>()[static_cast<size_t>(i)] = v;
}

// float64 where the op admits it; ops ONNX declares for float32 alone (Celu) are checked in
// float32 with coarser steps.
DType checkedDType(const std::string& op) {
  const ops::OpSpec& spec = *ops::Registry::instance().find(op);
  const std::vector<DType>& data = spec.typeVar(spec.inputs.at(0).typeVar)->allowed;
  return std::find(data.begin(), data.end(), DType::Float64) == data.end() ? DType::Float32
                                                                           : DType::Float64;
}

// The central difference with step h of L with respect to element i of the value `name` (a
// graph input or an initializer).
double finiteDifference(const Loss& loss, TestCase tc, const std::string& name, int64_t i,
                        double h) {
  Tensor* t = nullptr;
  if (tc.inputs.count(name)) t = &tc.inputs.at(name);
  for (Initializer& w : tc.model.graph.initializers)
    if (w.name == name) t = &w.value;
  const double x = t->toDouble(i);
  setElement(*t, i, x + h);
  const double up = loss(tc.model, tc.inputs);
  setElement(*t, i, x - h);
  const double down = loss(tc.model, tc.inputs);
  return (up - down) / (2 * h);
}

std::vector<std::string> opsWithExactGradients() {
  std::vector<std::string> out;
  for (const auto& spec : ops::Registry::instance().all())
    if (spec->gradientFn && spec->gradientKind == ops::GradientKind::Exact &&
        spec->notGeneratedWhy.empty())
      out.push_back(spec->type);
  return out;
}

class Gradient : public ::testing::TestWithParam<std::string> {};

// Where's condition: bool operands come with float64 ones when the op needs them.
bool needsBoolOperand(const std::string& op) {
  const ops::OpSpec& spec = *ops::Registry::instance().find(op);
  for (const ops::TypeVarSpec& t : spec.typeVars)
    if (t.allowed == std::vector<DType>{DType::Bool}) return true;
  return false;
}

TEST_P(Gradient, MatchesFiniteDifferences) {
  GeneratorConfig cfg;
  cfg.nodes = 1;
  cfg.ops = {GetParam()};
  const DType dtype = checkedDType(GetParam());
  const double h = dtype == DType::Float64 ? 1e-6 : 1e-3;
  const double coarse = dtype == DType::Float64 ? 1e-4 : 1e-2;
  const double rtol = dtype == DType::Float64 ? 1e-5 : 1e-3;
  cfg.dtypes = {dtype};
  if (needsBoolOperand(GetParam())) cfg.dtypes.push_back(DType::Bool);
  // An op with an int64 output beside its float one (TopK's Indices) needs int64 allowed; a
  // quantized op (DequantizeLinear, whose gradient reaches its scale) needs its integer types.
  auto usable = [&cfg] {
    try {
      return !usableOps(cfg).empty();
    } catch (const Error&) {
      return false;  // no op usable
    }
  };
  for (DType more : {DType::Int64, DType::UInt8, DType::Int8, DType::Int32}) {
    if (usable()) break;
    cfg.dtypes.push_back(more);
  }
  int checked = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    TestCase tc = makeTestCase(cfg, seed / 2);
    // Odd seeds move every float value into [0.1, 0.9], inside Log's, Sqrt's, Pow's and Asin's
    // domains; even seeds keep the signs (the negative branches of Relu-like ops).
    if (seed % 2) {
      auto squash = [dtype](Tensor& t) {
        if (t.dtype() != dtype) return;  // not a shape operand (Resize's float32 scales)
        for (int64_t i = 0; i < t.size(); ++i)
          setElement(t, i, 0.1 + 0.8 * std::fabs(std::fmod(t.toDouble(i), 1.0)));
      };
      for (auto& [name, t] : tc.inputs) squash(t);
      for (Initializer& w : tc.model.graph.initializers) squash(w.value);  // shape operands: int64
    }
    const TensorMap values = runReferenceAllValues(tc.model, tc.inputs);
    Rng rng(seed);
    Loss loss;
    Gradients seeds;
    for (const ValueInfo& o : tc.model.graph.outputs) {
      std::vector<double> w(static_cast<size_t>(values.at(o.name).size()));
      for (double& x : w) x = rng.real(-1.0, 1.0);
      loss.weights[o.name] = w;
      seeds[o.name] = w;
    }
    Gradients grads = backpropagate(tc.model, values, seeds);
    for (const auto& [name, g] : grads) {
      if (loss.weights.count(name)) continue;          // an output
      if (values.at(name).dtype() != dtype) continue;  // a bool's gradient: a proxy
      for (int64_t i = 0; i < static_cast<int64_t>(g.size()) && i < 6; ++i) {
        const double fd = finiteDifference(loss, tc, name, i, h);
        const double fdCoarse = finiteDifference(loss, tc, name, i, coarse);
        // Off the domain, or at a kink (the two steps disagree): no derivative to compare with.
        if (!std::isfinite(fd) || !std::isfinite(g[static_cast<size_t>(i)]) ||
            std::fabs(fd - fdCoarse) > 1e-3 * (1 + std::fabs(fd)))
          continue;
        EXPECT_NEAR(g[static_cast<size_t>(i)], fd, rtol * (1 + std::fabs(fd)))
            << GetParam() << " seed " << seed << ": d/d " << name << "[" << i << "]\n"
            << modelToText(tc.model);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0) << GetParam() << ": no element could be checked";
}

INSTANTIATE_TEST_SUITE_P(Registry, Gradient, ::testing::ValuesIn(opsWithExactGradients()),
                         [](const auto& info) { return info.param; });

TEST(Gradient, ProxyGradientsGiveADirectionWhereTheTrueOneIsZero) {
  for (const char* op : {"Floor", "Ceil", "Round", "Relu", "Sign"}) {
    Model m;
    m.opsets = {{"", 14}};
    m.graph.name = "g";
    m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2})};
    m.graph.nodes = {Node::make(op, {"x"}, {"y"}, "n")};
    m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2})};
    TensorMap in = {{"x", Tensor::fromVector<float>({2}, {-0.7f, 0.3f})}};
    Gradients g = backpropagate(m, runReferenceAllValues(m, in), {{"y", {1.0, 1.0}}});
    ASSERT_TRUE(g.count("x")) << op;
    EXPECT_GT(g["x"][0], 0) << op;
    EXPECT_GT(g["x"][1], 0) << op;
  }
}

// y = Cast(op(a, b)) to float with dL/dy = 1: the loss falls as the comparison turns false, so
// the gradient pushes a and b that way (a value moves against its gradient).
TEST(Gradient, ComparisonsAndLogicTakeProxyGradientsThroughBools) {
  struct Case {
    std::vector<std::pair<const char*, std::vector<std::string>>> nodes;  // op, inputs
    float a, b;
    double signA, signB;  // of dL/da, dL/db
  };
  const std::vector<Case> cases = {
      {{{"Less", {"a", "b"}}}, 1, 2, -1, 1},                       // a < b: a up, b down
      {{{"Greater", {"a", "b"}}}, 2, 1, 1, -1},                    // a > b: a down, b up
      {{{"Equal", {"a", "b"}}}, 1, 2, 1, -1},                      // a != b already: apart
      {{{"Less", {"a", "b"}}, {"Not", {"c"}}}, 1, 2, 1, -1},       // not (a < b): a down
      {{{"Less", {"a", "b"}}, {"And", {"c", "c"}}}, 1, 2, -1, 1},  // as Less
      {{{"Less", {"a", "b"}}, {"Or", {"c", "c"}}}, 1, 2, -1, 1},   // as Less
  };
  for (const Case& k : cases) {
    Model m;
    m.opsets = {{"", 14}};
    m.graph.name = "g";
    m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {1}),
                      ValueInfo::tensor("b", DType::Float32, {1})};
    std::string desc, last;
    for (size_t i = 0; i < k.nodes.size(); ++i) {
      last = i + 1 == k.nodes.size() ? "t" : "c";
      m.graph.nodes.push_back(Node::make(k.nodes[i].first, k.nodes[i].second, {last}, "n"));
      desc += std::string(k.nodes[i].first) + " ";
    }
    Node cast = Node::make("Cast", {"t"}, {"y"}, "cast");
    cast.attributes.push_back(Attribute::ofInt("to", static_cast<int64_t>(DType::Float32)));
    m.graph.nodes.push_back(cast);
    m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1})};
    TensorMap in = {{"a", Tensor::fromVector<float>({1}, {k.a})},
                    {"b", Tensor::fromVector<float>({1}, {k.b})}};
    Gradients g = backpropagate(m, runReferenceAllValues(m, in), {{"y", {1.0}}});
    auto sign = [&](const char* v) { return g.count(v) ? (g[v][0] > 0) - (g[v][0] < 0) : 0; };
    EXPECT_EQ(sign("a"), k.signA) << desc;
    EXPECT_EQ(sign("b"), k.signB) << desc;
  }
}

// Where(c, x, y): x and y take dZ where picked; the condition the blend's slope x - y.
TEST(Gradient, WhereRoutesToThePickedOperandAndTellsTheConditionWhichWayToFlip) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {
      ValueInfo::tensor("a", DType::Float32, {2}), ValueInfo::tensor("b", DType::Float32, {2}),
      ValueInfo::tensor("x", DType::Float32, {2}), ValueInfo::tensor("y", DType::Float32, {2})};
  m.graph.nodes = {Node::make("Less", {"a", "b"}, {"c"}, "less"),
                   Node::make("Where", {"c", "x", "y"}, {"z"}, "where")};
  m.graph.outputs = {ValueInfo::tensor("z", DType::Float32, {2})};
  TensorMap in = {{"a", Tensor::fromVector<float>({2}, {0, 1})},  // c = {true, false}
                  {"b", Tensor::fromVector<float>({2}, {1, 0})},
                  {"x", Tensor::fromVector<float>({2}, {5, 5})},
                  {"y", Tensor::fromVector<float>({2}, {1, 1})}};
  Gradients g = backpropagate(m, runReferenceAllValues(m, in), {{"z", {1.0, 1.0}}});
  EXPECT_EQ(g["x"], (std::vector<double>{1, 0}));
  EXPECT_EQ(g["y"], (std::vector<double>{0, 1}));
  EXPECT_EQ(g["c"], (std::vector<double>{4, 4}));    // z falls if c picks y (the smaller)
  EXPECT_EQ(g["a"], (std::vector<double>{-4, -4}));  // so a rises: a < b turns false
}

TEST(Gradient, AValueReadTwiceGetsBothContributions) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1})};
  m.graph.nodes = {Node::make("Mul", {"x", "x"}, {"y"}, "n")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1})};
  TensorMap in = {{"x", Tensor::fromVector<float>({1}, {3.0f})}};
  Gradients g = backpropagate(m, runReferenceAllValues(m, in), {{"y", {1.0}}});
  EXPECT_DOUBLE_EQ(g["x"][0], 6.0);  // d(x*x)/dx = 2x
}

}  // namespace
}  // namespace nncheck
