// Value search: each op's safe domain, as a loss, drives bad values into it; search never
// claims success it did not check; it is deterministic.
#include "nncheck/value_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "ops/op_spec.h"

namespace nncheck {
namespace {

// The ops with a safe range on some input.
std::vector<std::string> opsWithSafeRanges() {
  std::vector<std::string> out;
  for (const auto& spec : ops::Registry::instance().all())
    for (const ops::InputSpec& is : spec->inputs)
      if (is.safe) {
        out.push_back(spec->type);
        break;
      }
  return out;
}

// A value just outside the range: below lo, above hi, or 0 when it must stay away from 0.
double outside(const ops::SafeRange& r) {
  if (std::isfinite(r.lo)) return r.lo - 1;
  if (std::isfinite(r.hi)) return r.hi + 1;
  return 0;
}

class SafeDomain : public ::testing::TestWithParam<std::string> {};

TEST_P(SafeDomain, ItsLossDrivesABadInputInside) {
  const ops::OpSpec& spec = *ops::Registry::instance().find(GetParam());
  GeneratorConfig cfg;
  cfg.nodes = 1;
  cfg.ops = {GetParam()};
  cfg.dtypes = {DType::Float32, DType::Bool};  // Bool: some ops have bool outputs (Dropout's mask)
  int checked = 0;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    TestCase tc = makeTestCase(cfg, seed);
    const Node& node = tc.model.graph.nodes[0];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ops::InputSpec& is = spec.inputs[std::min(i, spec.inputs.size() - 1)];
      if (!is.safe || node.inputs[i].empty()) continue;
      // Every element of the guarded input outside its range.
      Tensor* t = tc.inputs.count(node.inputs[i]) ? &tc.inputs.at(node.inputs[i]) : nullptr;
      for (Initializer& w : tc.model.graph.initializers)
        if (w.name == node.inputs[i]) t = &w.value;
      ASSERT_NE(t, nullptr);
      if (t->dtype() != DType::Float32) continue;
      for (float& x : t->span<float>()) x = static_cast<float>(outside(*is.safe));
      ValueSearchResult r = searchValues(tc);
      EXPECT_FALSE(r.wasFinite) << GetParam();
      ASSERT_TRUE(r.finite) << GetParam() << " seed " << seed << ": " << r.violations
                            << " violations left\n"
                            << modelToText(tc.model);
      for (float x : t->span<float>()) {
        EXPECT_GE(x, is.safe->lo) << GetParam();
        EXPECT_LE(x, is.safe->hi) << GetParam();
        EXPECT_GE(std::fabs(x), is.safe->awayFromZero) << GetParam();
      }
      for (const auto& [name, v] : runReferenceAllValues(tc.model, tc.inputs))
        for (int64_t k = 0; isFloatDType(v.dtype()) && k < v.size(); ++k) {
          EXPECT_TRUE(std::isfinite(v.toDouble(k))) << name;
        }
      ++checked;
      break;
    }
  }
  EXPECT_GT(checked, 0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Registry, SafeDomain, ::testing::ValuesIn(opsWithSafeRanges()),
                         [](const auto& info) { return info.param; });

TEST(ValueSearch, PowsResultIsKeptBounded) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "pow_bound";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2}),
                    ValueInfo::tensor("e", DType::Float32, {2})};
  m.graph.nodes = {Node::make("Pow", {"x", "e"}, {"y"}, "pow")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2})};
  TestCase tc{m,
              {{"x", Tensor::fromVector<float>({2}, {30.0f, 2.0f})},
               {"e", Tensor::fromVector<float>({2}, {8.0f, 1.0f})}}};
  ValueSearchResult r = searchValues(tc);
  ASSERT_TRUE(r.finite);
  EXPECT_LE(std::fabs(runReference(tc.model, tc.inputs).at("y").toDouble(0)), 1e4);
}

TEST(ValueSearch, IsDeterministicAndHonest) {
  GeneratorConfig cfg;
  cfg.nodes = 12;
  cfg.dtypes = {DType::Float32};
  cfg.opWeights = {{"Log", 5}, {"Sqrt", 5}, {"Asin", 5}};
  cfg.finiteValues = false;  // random values: search has work to do
  int searched = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    TestCase a = makeTestCase(cfg, seed), b = a;
    ValueSearchResult ra = searchValues(a), rb = searchValues(b);
    EXPECT_EQ(ra.finite, rb.finite);
    for (const auto& [name, t] : a.inputs) EXPECT_TRUE(t == b.inputs.at(name)) << name;
    EXPECT_EQ(serializeModel(a.model), serializeModel(b.model));
    // Success is claimed only when every value is finite.
    bool allFinite = true;
    for (const auto& [name, v] : runReferenceAllValues(a.model, a.inputs))
      for (int64_t k = 0; isFloatDType(v.dtype()) && k < v.size(); ++k)
        allFinite = allFinite && std::isfinite(v.toDouble(k));
    if (ra.finite) {
      EXPECT_TRUE(allFinite) << "seed " << seed;
    }
    searched += ra.finite && !ra.wasFinite;
  }
  EXPECT_GT(searched, 0);
}

// Log(Cast(Less(a, b))) is Log(0) while a >= b: only the comparison's proxy gradient says which
// way a and b must move.
TEST(ValueSearch, FixesADomainThroughAComparison) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "log_of_less";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {3}),
                    ValueInfo::tensor("b", DType::Float32, {3})};
  Node cast = Node::make("Cast", {"c"}, {"f"}, "cast");
  cast.attributes.push_back(Attribute::ofInt("to", static_cast<int64_t>(DType::Float32)));
  m.graph.nodes = {Node::make("Less", {"a", "b"}, {"c"}, "less"), cast,
                   Node::make("Log", {"f"}, {"y"}, "log")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {3})};
  TestCase tc{m,
              {{"a", Tensor::fromVector<float>({3}, {1.0f, 2.0f, -0.5f})},
               {"b", Tensor::fromVector<float>({3}, {0.0f, 2.0f, -3.0f})}}};
  ValueSearchResult r = searchValues(tc);
  EXPECT_FALSE(r.wasFinite);
  ASSERT_TRUE(r.finite) << r.violations << " left";
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_LT(tc.inputs.at("a").toDouble(i), tc.inputs.at("b").toDouble(i)) << i;
}

// Inside a body: an If's branch divides by a value it captures, and a Loop body takes the Log of
// its carried value and of its own initializer. Search sees those nodes (interp/unroll.h) and
// moves the graph input and the body's initializer: without it, the divisor's 0 is never seen
// (the output is finite) and no gradient reaches the Log's inputs.
TEST(ValueSearch, ReachesInsideIfAndLoopBodies) {
  auto f32 = [](std::string name) {
    return ValueInfo::tensor(std::move(name), DType::Float32, {3});
  };
  Graph thenG;
  thenG.name = "then";
  thenG.nodes = {Node::make("Div", {"one", "d"}, {"q"}), Node::make("Tanh", {"q"}, {"t"})};
  thenG.outputs = {f32("t")};
  Graph elseG;
  elseG.name = "else";
  elseG.nodes = {Node::make("Identity", {"d"}, {"e"})};
  elseG.outputs = {f32("e")};
  Graph body;
  body.name = "body";
  body.inputs = {ValueInfo::tensor("i", DType::Int64, {}), ValueInfo::tensor("c", DType::Bool, {}),
                 f32("s")};
  body.initializers = {{"k", Tensor::fromVector<float>({3}, {-2.0f, 1.0f, -0.5f}), ""}};
  body.nodes = {Node::make("Log", {"s"}, {"ls"}), Node::make("Log", {"k"}, {"lk"}),
                Node::make("Add", {"ls", "lk"}, {"s2"}), Node::make("Identity", {"c"}, {"c2"})};
  body.outputs = {ValueInfo::tensor("c2", DType::Bool, {}), f32("s2")};
  Model m;
  m.opsets = {{"", 16}};
  m.graph.inputs = {f32("d"), f32("x")};
  m.graph.initializers = {{"one", Tensor::fromVector<float>({3}, {1, 1, 1}), ""},
                          {"yes", Tensor::scalar<bool>(true), ""},
                          {"M", Tensor::scalar<int64_t>(1), ""}};
  Node iff = Node::make("If", {"yes"}, {"y"}, "if");
  iff.attributes = {Attribute::ofGraph("then_branch", thenG),
                    Attribute::ofGraph("else_branch", elseG)};
  Node loop = Node::make("Loop", {"M", "", "x"}, {"z"}, "loop");
  loop.attributes = {Attribute::ofGraph("body", body)};
  m.graph.nodes = {iff, loop};
  m.graph.outputs = {f32("y"), f32("z")};
  TestCase tc{m,
              {{"d", Tensor::fromVector<float>({3}, {0.0f, 2.0f, -1e-30f})},
               {"x", Tensor::fromVector<float>({3}, {-1.0f, 3.0f, 2.0f})}}};
  ValueSearchResult r = searchValues(tc);
  EXPECT_FALSE(r.wasFinite);
  ASSERT_TRUE(r.finite) << r.violations << " left";
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_GE(std::fabs(tc.inputs.at("d").toDouble(i)), 0.01) << i;
    EXPECT_GT(tc.inputs.at("x").toDouble(i), 0) << i;
    EXPECT_GT(tc.model.graph.nodes[1].attribute("body")->graph().initializers[0].value.toDouble(i),
              0)
        << i;
  }
}

}  // namespace
}  // namespace nncheck

namespace nncheck {
namespace {

// Each op with a stability check, given inputs sitting on its step (Floor on integers, Less on
// equal operands, ArgMax on ties, Mod at multiples) or where it amplifies rounding (Sin of 3000,
// Tan near pi/2, ReduceProd's partial products out of float32's range): search moves them off,
// and the op's check then finds nothing.
struct StepCase {
  const char* op;
  std::vector<float> a, b;  // b empty: a unary op
  std::vector<Attribute> attrs = {};
  DType out = DType::Undefined;  // Undefined: float32 for unary ops, bool for binary ones
};

void PrintTo(const StepCase& c, std::ostream* os) { *os << c.op; }

// INT64_MIN / -1 has no int64 answer (and traps on CPUs): such a model is rejected, its
// neighbour with a representable quotient is not. Integers are not searched, so it stays.
TEST(ValueSearch, IntegerDivisionOverflowIsNeverStable) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (const int64_t divisor : {int64_t{-1}, int64_t{2}}) {
    Model m;
    m.opsets = {{"", 14}};
    m.graph.name = "div";
    m.graph.inputs = {ValueInfo::tensor("a", DType::Int64, {2}),
                      ValueInfo::tensor("b", DType::Int64, {1})};
    m.graph.nodes = {Node::make("Div", {"a", "b"}, {"y"}, "div")};
    m.graph.outputs = {ValueInfo::tensor("y", DType::Int64, {2})};
    TestCase tc{m,
                {{"a", Tensor::fromVector<int64_t>({2}, {kMin, 7})},
                 {"b", Tensor::fromVector<int64_t>({1}, {divisor})}}};
    const ValueSearchResult r = searchValues(tc);
    EXPECT_EQ(r.wasFinite, divisor != -1) << divisor;
    EXPECT_EQ(r.finite, divisor != -1) << divisor;
  }
}

// An integer base to a float power is truncated: the exponent moves off 0 where the base is 0,
// and off the exponents where the power crosses an integer (2^1, 3^2).
TEST(ValueSearch, IntegerPowersMoveOffTheirSteps) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "pow";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Int64, {3}),
                    ValueInfo::tensor("b", DType::Float32, {3})};
  m.graph.nodes = {Node::make("Pow", {"a", "b"}, {"y"}, "pow")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Int64, {3})};
  TestCase tc{m,
              {{"a", Tensor::fromVector<int64_t>({3}, {0, 2, 3})},
               {"b", Tensor::fromVector<float>({3}, {0.0f, 1.0f, 2.0f})}}};
  const ValueSearchResult r = searchValues(tc);
  EXPECT_FALSE(r.wasFinite);
  ASSERT_TRUE(r.finite) << r.violations << " left";
  const auto a = tc.inputs.at("a").span<int64_t>();
  const auto b = tc.inputs.at("b").span<float>();
  EXPECT_GE(std::fabs(b[0]), 1e-4) << "0^b with b at 0";
  for (size_t i = 1; i < 3; ++i) {
    const double p = std::pow(static_cast<double>(a[i]), b[i]);
    EXPECT_GE(std::fabs(p - std::nearbyint(p)), 1e-4 * p) << a[i] << "^" << b[i];
  }
}

// An integer power the spec leaves without a value (0 to a negative power is infinite, a negative
// base to a fractional power NaN; ORT wraps them to INT64_MIN, the reference saturated) is moved
// off: the exponents become ones whose powers are finite integers.
TEST(ValueSearch, IntegerPowersAreFiniteValuesOfTheirType) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "pow";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Int64, {2}),
                    ValueInfo::tensor("b", DType::Float32, {2})};
  m.graph.nodes = {Node::make("Pow", {"a", "b"}, {"y"}, "pow")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Int64, {2})};
  TestCase tc{m,
              {{"a", Tensor::fromVector<int64_t>({2}, {0, -2})},
               {"b", Tensor::fromVector<float>({2}, {-1.0f, 0.5f})}}};
  const ValueSearchResult r = searchValues(tc);
  EXPECT_FALSE(r.wasFinite);
  ASSERT_TRUE(r.finite) << r.violations << " left";
  const auto a = tc.inputs.at("a").span<int64_t>();
  const auto b = tc.inputs.at("b").span<float>();
  for (size_t i = 0; i < 2; ++i) {
    const double p = std::pow(static_cast<double>(a[i]), b[i]);
    EXPECT_TRUE(std::isfinite(p)) << a[i] << "^" << b[i];
  }
}

// An integer product must fit its type: the spec leaves overflow undefined (numpy wraps, ONNX
// Runtime 1.30 saturates int64). The product ORT's campaign found (about 2^81) is never stable,
// so such a case is no test (as an integer division overflow); one that fits is.
TEST(ValueSearch, IntegerProductsMustFitTheirType) {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "prod";
  m.graph.inputs = {ValueInfo::tensor("a", DType::Int64, {6, 4})};
  m.graph.nodes = {Node::make("ReduceProd", {"a"}, {"y"}, "prod")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Int64, {1, 1})};
  const std::vector<int64_t> found = {6,  -12, -15, 9,  -6, 12,  15,  -9, -8, 16,  20,  -12,
                                      -6, 12,  15,  -9, 6,  -12, -15, 9,  6,  -12, -15, 9};
  std::vector<int64_t> fits(24, 1);
  fits[0] = int64_t{1} << 30;
  fits[1] = -(int64_t{1} << 30);  // a product of -2^60
  for (const auto& [values, stable] : {std::pair{found, false}, {fits, true}}) {
    TestCase tc{m, {{"a", Tensor::fromVector<int64_t>({6, 4}, values)}}};
    const ValueSearchResult r = searchValues(tc);
    EXPECT_EQ(r.wasFinite, stable);
    EXPECT_EQ(r.finite, stable);
  }
}

class Flakiness : public ::testing::TestWithParam<StepCase> {};

TEST_P(Flakiness, SearchMovesInputsOffTheStep) {
  const StepCase& c = GetParam();
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "step";
  const int64_t n = static_cast<int64_t>(c.a.size());
  const bool arg = std::string(c.op).starts_with("Arg");
  const std::string op = c.op;
  const bool reduce = op == "ReduceProd";
  const DType outType = c.out != DType::Undefined ? c.out
                        : arg                     ? DType::Int64
                        : c.b.empty()             ? DType::Float32
                                                  : DType::Bool;
  m.graph.inputs = {ValueInfo::tensor("a", DType::Float32, {n})};
  TestCase tc{m, {{"a", Tensor::fromVector<float>({n}, c.a)}}};
  std::vector<std::string> ins = {"a"};
  if (!c.b.empty()) {
    tc.model.graph.inputs.push_back(ValueInfo::tensor("b", DType::Float32, {n}));
    tc.inputs["b"] = Tensor::fromVector<float>({n}, c.b);
    ins.push_back("b");
  }
  tc.model.graph.nodes = {Node::make(c.op, ins, {"y"}, "step")};
  tc.model.graph.nodes[0].attributes = c.attrs;
  tc.model.graph.outputs = {ValueInfo::tensor("y", outType, arg || reduce ? Shape{1} : Shape{n})};
  ValueSearchResult r = searchValues(tc);
  EXPECT_FALSE(r.wasFinite) << c.op << ": the inputs on the step must count as unstable";
  ASSERT_TRUE(r.finite) << c.op << ": " << r.violations << " left";
  const auto a = tc.inputs.at("a").span<float>();
  double product = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i];
    product *= x;
    if (op == "Floor" || op == "Ceil" || (op == "Cast" && outType == DType::Int64)) {
      EXPECT_GT(std::fabs(x - std::nearbyint(x)), 1e-5) << op << " " << x;
    }
    if (op == "Round") {
      EXPECT_GT(std::fabs(std::fabs(x - std::floor(x)) - 0.5), 1e-5) << x;
    }
    if (op == "Cast" && outType == DType::Bool) {
      EXPECT_GT(std::fabs(x), 1e-5) << x;
    }
    if (op == "Mod") {
      const double q = x / tc.inputs.at("b").span<float>()[i];
      EXPECT_GT(std::fabs(q - std::nearbyint(q)), 1e-5) << x << " mod " << x / q;
    } else if (!c.b.empty()) {
      EXPECT_GT(std::fabs(x - tc.inputs.at("b").span<float>()[i]), 1e-5) << op;
    }
  }
  if (reduce) {
    EXPECT_LT(product, 1e30);
  }
  if (arg) {
    std::vector<float> v(a.begin(), a.end());
    std::sort(v.begin(), v.end());
    EXPECT_GT(std::fabs(v.back() - v[v.size() - 2]), 1e-5);
    EXPECT_GT(std::fabs(v[0] - v[1]), std::string(c.op) == "ArgMin" ? 1e-5 : -1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Steps, Flakiness,
    ::testing::Values(
        StepCase{"Floor", {1.0f, -2.0f, 0.0f}, {}}, StepCase{"Ceil", {3.0f, 0.0f}, {}},
        StepCase{"Round", {0.5f, -1.5f, 2.5f}, {}}, StepCase{"Less", {1.0f, 0.25f}, {1.0f, 0.25f}},
        StepCase{"Greater", {-3.0f}, {-3.0f}}, StepCase{"Equal", {0.5f, 0.5f}, {0.5f, 0.5f}},
        StepCase{"Sin", {3000.0f, -3.1416f}, {}},  // ill-conditioned
        StepCase{"Cos", {-1e4f, 1.5708f}, {}}, StepCase{"Tan", {1.5707f, 200.0f}, {}},
        StepCase{"ArgMax", {0.5f, 0.5f, 0.1f}, {}}, StepCase{"ArgMin", {0.1f, 0.5f, 0.1f}, {}},
        StepCase{"Cast", {2.0f, -0.99999994f, 0.5f}, {}, {Attribute::ofInt("to", 7)}, DType::Int64},
        StepCase{"Cast", {0.0f, 1e-7f, 1.0f}, {}, {Attribute::ofInt("to", 9)}, DType::Bool},
        StepCase{"Mod",
                 {3.0f, -1.0f, 0.7f},
                 {1.5f, 0.5f, 2.0f},
                 {Attribute::ofInt("fmod", 1)},
                 DType::Float32},
        StepCase{"ReduceProd", {1e16f, 1e16f, 2.0f}, {}, {}, DType::Float32}),
    [](const auto& info) {
      // Cast twice: named by the dtype it casts to.
      const StepCase& c = info.param;
      return std::string(c.op) + (std::string(c.op) == "Cast" ? std::string(dtypeName(c.out)) : "");
    });

}  // namespace
}  // namespace nncheck
