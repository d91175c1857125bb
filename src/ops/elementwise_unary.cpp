// Elementwise unary ops: one entry each; the output has the input's shape and dtype.
#include <cmath>

#include "ops/kernels.h"

namespace nncheck::ops {
namespace {

// A float-only unary op: Y = f(X) in double.
template <class F>
OpSpec floatUnary(std::string type, int64_t minVersion, F f) {
  return std::move(OpSpec(std::move(type), minVersion)
                       .types("T", floatTypes())
                       .input("X", "T")
                       .output("Y")
                       .shapeRule(sameShapeAsInput0)
                       .kernel([f](KernelCall& k) { mapUnaryFloat(k, f); }));
}

// A float op with attributes: make(k) returns the double -> double function.
template <class Make>
OpSpec floatUnaryWithAttrs(std::string type, int64_t minVersion, std::vector<AttrSpec> attrs,
                           Make make) {
  OpSpec s(std::move(type), minVersion);
  s.types("T", floatTypes()).input("X", "T").output("Y").shapeRule(sameShapeAsInput0);
  for (auto& a : attrs) s.attr(std::move(a));
  s.kernel([make](KernelCall& k) { mapUnaryFloat(k, make(k)); });
  return s;
}

// A unary op on any listed dtype: Y = f(X) in the element's arithmetic type.
template <bool AllowBool = false, class F>
OpSpec typedUnary(std::string type, int64_t minVersion, std::vector<DType> dtypes, F f) {
  return std::move(OpSpec(std::move(type), minVersion)
                       .types("T", std::move(dtypes))
                       .input("X", "T")
                       .output("Y")
                       .shapeRule(sameShapeAsInput0)
                       .kernel([f](KernelCall& k) { mapUnary<AllowBool>(k, f); }));
}

template <class A>
A negate(A x) {
  if constexpr (std::is_same_v<A, bool>)
    return x;
  else if constexpr (std::is_integral_v<A>)
    return wrapSub<A>(0, x);
  else
    return -x;
}

}  // namespace

void registerElementwiseUnary(Registry& reg) {
  reg.add(typedUnary("Abs", 6, numericTypes(), [](auto x) {
    if constexpr (std::is_unsigned_v<decltype(x)>)
      return x;
    else
      return x < 0 ? negate(x) : x;
  }));
  reg.add(typedUnary("Neg", 6, signedNumericTypes(), [](auto x) { return negate(x); }));
  reg.add(typedUnary("Relu", 6, signedNumericTypes(),
                     [](auto x) { return x > 0 ? x : decltype(x)(0); }));
  reg.add(typedUnary("Sign", 9, numericTypes(), [](auto x) {
    using A = decltype(x);
    if constexpr (std::is_floating_point_v<A>)
      if (std::isnan(x)) return x;
    return x > 0 ? A(1) : (x < 0 ? A(-1) : A(0));
  }));
  reg.add(floatUnaryWithAttrs("LeakyRelu", 6, {floatAttr("alpha", 0.01f, 0.0, 1.0)},
                              [](const KernelCall& k) {
                                double a = k.attrFloat("alpha");
                                return [a](double x) { return x >= 0 ? x : a * x; };
                              }));
  reg.add(
      floatUnaryWithAttrs("Elu", 6, {floatAttr("alpha", 1.0f, 0.0, 2.0)}, [](const KernelCall& k) {
        double a = k.attrFloat("alpha");
        return [a](double x) { return x >= 0 ? x : a * std::expm1(x); };
      }));
  reg.add(floatUnaryWithAttrs("Selu", 6,
                              {floatAttr("alpha", 1.67326319217681884765625f, 0.5, 2.0),
                               floatAttr("gamma", 1.05070102214813232421875f, 0.5, 2.0)},
                              [](const KernelCall& k) {
                                double a = k.attrFloat("alpha"), g = k.attrFloat("gamma");
                                return [a, g](double x) {
                                  return x > 0 ? g * x : g * a * std::expm1(x);
                                };
                              }));
  reg.add(floatUnaryWithAttrs(
      "HardSigmoid", 6, {floatAttr("alpha", 0.2f, 0.0, 1.0), floatAttr("beta", 0.5f, 0.0, 1.0)},
      [](const KernelCall& k) {
        double a = k.attrFloat("alpha"), b = k.attrFloat("beta");
        return [a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); };
      }));
  reg.add(floatUnary("Sigmoid", 6, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
  reg.add(floatUnary("Tanh", 6, [](double x) { return std::tanh(x); }));
  reg.add(floatUnary("Softplus", 1, [](double x) { return x > 30 ? x : std::log1p(std::exp(x)); }));
  reg.add(floatUnary("Exp", 6, [](double x) { return std::exp(x); }));
  reg.add(floatUnary("Log", 6, [](double x) { return std::log(x); }));
  reg.add(floatUnary("Sqrt", 6, [](double x) { return std::sqrt(x); }));
  reg.add(floatUnary("Reciprocal", 6, [](double x) { return 1.0 / x; }));
  reg.add(floatUnary("Sin", 7, [](double x) { return std::sin(x); }));
  reg.add(floatUnary("Cos", 7, [](double x) { return std::cos(x); }));
  reg.add(floatUnary("Tan", 7, [](double x) { return std::tan(x); }));
  reg.add(floatUnary("Asin", 7, [](double x) { return std::asin(x); }));
  reg.add(floatUnary("Acos", 7, [](double x) { return std::acos(x); }));
  reg.add(floatUnary("Atan", 7, [](double x) { return std::atan(x); }));
  reg.add(floatUnary("Floor", 6, [](double x) { return std::floor(x); }));
  reg.add(floatUnary("Ceil", 6, [](double x) { return std::ceil(x); }));
  reg.add(floatUnary("Round", 11, [](double x) { return std::nearbyint(x); }));  // half to even
  reg.add(typedUnary("Erf", 9, numericTypes(), [](auto x) {
    using A = decltype(x);
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(std::erf(static_cast<double>(x)));
    else
      return static_cast<A>(std::erf(static_cast<double>(x)));
  }));
  reg.add(typedUnary<true>("Not", 1, boolTypes(), [](bool x) { return !x; }));
}

}  // namespace nncheck::ops
