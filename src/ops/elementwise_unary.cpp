// Elementwise unary ops: one entry each; the output has the input's shape (and dtype, but for the
// predicates IsNaN and IsInf).
#include <cmath>

#include "ops/gradients.h"
#include "ops/stability.h"

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

// A float predicate (IsNaN, IsInf): a bool of the input's shape; make(k) gives the test.
template <class Make>
OpSpec floatPredicate(std::string type, int64_t minVersion, std::vector<AttrSpec> attrs,
                      Make make) {
  OpSpec s(std::move(type), minVersion);
  s.types("T1", floatTypes()).input("X", "T1").output("Y");
  for (auto& a : attrs) s.attr(std::move(a));
  s.shapeRule([](auto& r) { r.output(0, r.dims(0), DType::Bool); });
  s.kernel([make](KernelCall& k) {
    auto test = make(k);
    auto y = k.out(0).span<bool>();
    for (int64_t i = 0; i < k.in(0).size(); ++i)
      y[static_cast<size_t>(i)] = test(k.in(0).toDouble(i));
  });
  return s;
}

OpSpec float32Only(OpSpec s) {
  s.typeVars.at(0).allowed = {DType::Float32};
  return s;
}

// The gradient of a unary op from its derivative d(x, y).
template <class D>
std::function<void(GradCall&)> derivative(D d) {
  return [d](GradCall& g) { unaryGradient(g, d); };
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
  reg.add(std::move(typedUnary("Abs", 6, numericTypes(), [](auto x) {
                      if constexpr (std::is_unsigned_v<decltype(x)>)
                        return x;
                      else
                        return x < 0 ? negate(x) : x;
                    }).gradient(derivative([](double x, double) { return x < 0 ? -1.0 : 1.0; }))));
  reg.add(std::move(typedUnary("Neg", 6, signedNumericTypes(), [](auto x) {
                      return negate(x);
                    }).gradient(derivative([](double, double) { return -1.0; }))));
  reg.add(std::move(
      typedUnary("Relu", 6, signedNumericTypes(), [](auto x) { return x > 0 ? x : decltype(x)(0); })
          .gradient(derivative([](double x, double) { return x > 0 ? 1.0 : 0.1; }),
                    GradientKind::Proxy)));
  reg.add(
      std::move(typedUnary("Sign", 9, numericTypes(),
                           [](auto x) {
                             using A = decltype(x);
                             if constexpr (std::is_floating_point_v<A>)
                               if (std::isnan(x)) return x;
                             return x > 0 ? A(1) : (x < 0 ? A(-1) : A(0));
                           })
                    .gradient(derivative([](double, double) { return 1.0; }), GradientKind::Proxy)
                    .safe({.awayFromZero = 1e-4})));  // a step at 0: keep off it
  reg.add(std::move(floatUnaryWithAttrs("LeakyRelu", 6, {floatAttr("alpha", 0.01f, 0.0, 1.0)},
                                        [](const KernelCall& k) {
                                          double a = k.attrFloat("alpha");
                                          return [a](double x) { return x >= 0 ? x : a * x; };
                                        })
                        .gradient([](GradCall& g) {
                          double a = g.kernel().attrFloat("alpha");
                          unaryGradient(g, [a](double x, double) { return x >= 0 ? 1.0 : a; });
                        })));
  reg.add(std::move(
      floatUnaryWithAttrs("Elu", 6, {floatAttr("alpha", 1.0f, 0.0, 2.0)}, [](const KernelCall& k) {
        double a = k.attrFloat("alpha");
        return [a](double x) { return x >= 0 ? x : a * std::expm1(x); };
      }).gradient([](GradCall& g) {
        double a = g.kernel().attrFloat("alpha");
        unaryGradient(g, [a](double x, double) { return x >= 0 ? 1.0 : a * std::exp(x); });
      })));
  reg.add(std::move(
      floatUnaryWithAttrs("Selu", 6,
                          {floatAttr("alpha", 1.67326319217681884765625f, 0.5, 2.0),
                           floatAttr("gamma", 1.05070102214813232421875f, 0.5, 2.0)},
                          [](const KernelCall& k) {
                            double a = k.attrFloat("alpha"), g = k.attrFloat("gamma");
                            return
                                [a, g](double x) { return x > 0 ? g * x : g * a * std::expm1(x); };
                          })
          .gradient([](GradCall& g) {
            double a = g.kernel().attrFloat("alpha"), c = g.kernel().attrFloat("gamma");
            unaryGradient(g, [a, c](double x, double) { return x > 0 ? c : c * a * std::exp(x); });
          })));
  reg.add(std::move(
      floatUnaryWithAttrs(
          "HardSigmoid", 6, {floatAttr("alpha", 0.2f, 0.0, 1.0), floatAttr("beta", 0.5f, 0.0, 1.0)},
          [](const KernelCall& k) {
            double a = k.attrFloat("alpha"), b = k.attrFloat("beta");
            return [a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); };
          })
          .gradient(
              [](GradCall& g) {
                // The flat parts get a small slope, so search can move off them.
                double a = g.kernel().attrFloat("alpha"), b = g.kernel().attrFloat("beta");
                unaryGradient(g, [a, b](double x, double) {
                  double z = a * x + b;
                  return z > 0 && z < 1 ? a : 0.01 * a;
                });
              },
              GradientKind::Proxy)));
  reg.add(std::move(floatUnary("Sigmoid", 6, [](double x) {
                      return 1.0 / (1.0 + std::exp(-x));
                    }).gradient(derivative([](double, double y) { return y * (1 - y); }))));
  reg.add(std::move(floatUnary("Tanh", 6, [](double x) {
                      return std::tanh(x);
                    }).gradient(derivative([](double, double y) { return 1 - y * y; }))));
  reg.add(std::move(
      floatUnary("Softplus", 1, [](double x) {
        return x > 30 ? x : std::log1p(std::exp(x));
      }).gradient(derivative([](double x, double) { return 1.0 / (1.0 + std::exp(-x)); }))));
  reg.add(std::move(floatUnary("Exp", 6, [](double x) { return std::exp(x); })
                        .safe({.hi = 10})
                        .gradient(derivative([](double, double y) { return y; }))));
  reg.add(std::move(floatUnary("Log", 6, [](double x) { return std::log(x); })
                        .safe({.lo = 0.01})
                        .gradient(derivative([](double x, double) { return 1.0 / x; }))));
  reg.add(std::move(floatUnary("Sqrt", 6, [](double x) { return std::sqrt(x); })
                        .safe({.lo = 0.001})
                        .gradient(derivative([](double, double y) { return 0.5 / y; }))));
  reg.add(std::move(floatUnary("Reciprocal", 6, [](double x) { return 1.0 / x; })
                        .safe({.awayFromZero = 0.01})
                        .gradient(derivative([](double, double y) { return -y * y; }))));
  reg.add(std::move(floatUnary("Sin", 7, [](double x) { return std::sin(x); })
                        .gradient(derivative([](double x, double) { return std::cos(x); }))
                        .stability([](StabilityCall& s) {
                          wellConditioned(
                              s, [](double x) { return std::sin(x); },
                              [](double x) { return std::cos(x); });
                        })));
  reg.add(std::move(floatUnary("Cos", 7, [](double x) { return std::cos(x); })
                        .gradient(derivative([](double x, double) { return -std::sin(x); }))
                        .stability([](StabilityCall& s) {
                          wellConditioned(
                              s, [](double x) { return std::cos(x); },
                              [](double x) { return -std::sin(x); });
                        })));
  reg.add(std::move(floatUnary("Tan", 7, [](double x) { return std::tan(x); })
                        .gradient(derivative([](double, double y) { return 1 + y * y; }))
                        .stability([](StabilityCall& s) {
                          wellConditioned(
                              s, [](double x) { return std::tan(x); },
                              [](double x) { return 1 + std::tan(x) * std::tan(x); });
                        })));
  reg.add(std::move(
      floatUnary("Asin", 7, [](double x) { return std::asin(x); })
          .safe({.lo = -0.999, .hi = 0.999})
          .gradient(derivative([](double x, double) { return 1.0 / std::sqrt(1 - x * x); }))));
  reg.add(std::move(
      floatUnary("Acos", 7, [](double x) { return std::acos(x); })
          .safe({.lo = -0.999, .hi = 0.999})
          .gradient(derivative([](double x, double) { return -1.0 / std::sqrt(1 - x * x); }))));
  reg.add(std::move(floatUnary("Atan", 7, [](double x) {
                      return std::atan(x);
                    }).gradient(derivative([](double x, double) { return 1.0 / (1 + x * x); }))));
  reg.add(
      std::move(floatUnary("Floor", 6, [](double x) { return std::floor(x); })
                    .gradient(derivative([](double, double) { return 1.0; }), GradientKind::Proxy)
                    .stability([](StabilityCall& s) { awayFromSteps(s, 0.0); })));
  reg.add(
      std::move(floatUnary("Ceil", 6, [](double x) { return std::ceil(x); })
                    .gradient(derivative([](double, double) { return 1.0; }), GradientKind::Proxy)
                    .stability([](StabilityCall& s) { awayFromSteps(s, 0.0); })));
  reg.add(std::move(floatUnary("Round", 11, [](double x) { return std::nearbyint(x); })
                        .gradient(derivative([](double, double) { return 1.0; }),
                                  GradientKind::Proxy)  // half to even
                        .stability([](StabilityCall& s) { awayFromSteps(s, 0.5); })));
  // Floats only: Erf-13's schema lists integer types too, which ONNX has since called a mistake
  // and removed (onnx/onnx#7175, #7398): no engine runs them.
  reg.add(std::move(floatUnary("Erf", 9, [](double x) {
                      return std::erf(x);
                    }).gradient(derivative([](double x, double) {
    return 1.1283791670955126 * std::exp(-x * x);
  }))));
  // Hyperbolic functions and their inverses; Cosh and Sinh overflow float16 past 10.
  reg.add(std::move(floatUnary("Sinh", 9, [](double x) { return std::sinh(x); })
                        .safe({.lo = -10, .hi = 10})
                        .gradient(derivative([](double x, double) { return std::cosh(x); }))));
  reg.add(std::move(floatUnary("Cosh", 9, [](double x) { return std::cosh(x); })
                        .safe({.lo = -10, .hi = 10})
                        .gradient(derivative([](double x, double) { return std::sinh(x); }))));
  reg.add(std::move(
      floatUnary("Asinh", 9, [](double x) {
        return std::asinh(x);
      }).gradient(derivative([](double x, double) { return 1.0 / std::sqrt(x * x + 1); }))));
  reg.add(std::move(
      floatUnary("Acosh", 9, [](double x) { return std::acosh(x); })
          .safe({.lo = 1.001})
          .gradient(derivative([](double x, double) { return 1.0 / std::sqrt(x * x - 1); }))));
  reg.add(std::move(floatUnary("Atanh", 9, [](double x) { return std::atanh(x); })
                        .safe({.lo = -0.999, .hi = 0.999})
                        .gradient(derivative([](double x, double) { return 1.0 / (1 - x * x); }))));
  reg.add(std::move(floatUnary("Softsign", 1, [](double x) {
                      return x / (1 + std::fabs(x));
                    }).gradient(derivative([](double x, double) {
    return 1.0 / ((1 + std::fabs(x)) * (1 + std::fabs(x)));
  }))));
  // HardSwish: x hardsigmoid(x) with alpha 1/6, beta 1/2; flat at 0 below -3 (a proxy slope).
  reg.add(
      std::move(floatUnary("HardSwish", 14,
                           [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); })
                    .gradient(derivative([](double x, double) {
                                return x < -3 ? 0.01 : x > 3 ? 1.0 : x / 3 + 0.5;
                              }),
                              GradientKind::Proxy)));
  // Celu is declared for float32 alone (tensor(float) in ONNX).
  reg.add(float32Only(
      floatUnaryWithAttrs("Celu", 12, {floatAttr("alpha", 1.0f, 0.5, 2.0)},
                          [](const KernelCall& k) {
                            double a = k.attrFloat("alpha");
                            return [a](double x) {
                              return std::max(0.0, x) + std::min(0.0, a * std::expm1(x / a));
                            };
                          })
          .gradient([](GradCall& g) {
            double a = g.kernel().attrFloat("alpha");
            unaryGradient(g, [a](double x, double) { return x > 0 ? 1.0 : std::exp(x / a); });
          })));
  // Shrink and ThresholdedRelu jump at their thresholds: values keep off them, and the flat
  // parts get a small proxy slope.
  reg.add(std::move(
      floatUnaryWithAttrs(
          "Shrink", 9, {floatAttr("bias", 0.0f, 0.0, 1.0), floatAttr("lambd", 0.5f, 0.0, 1.0)},
          [](const KernelCall& k) {
            double b = k.attrFloat("bias"), l = k.attrFloat("lambd");
            return [b, l](double x) { return x < -l ? x + b : x > l ? x - b : 0.0; };
          })
          .stability([](StabilityCall& s) {
            const double l = s.kernel().attrFloat("lambd");
            awayFromPoints(s, {-l, l});
          })
          .gradient(
              [](GradCall& g) {
                double l = g.kernel().attrFloat("lambd");
                unaryGradient(g, [l](double x, double) { return std::fabs(x) > l ? 1.0 : 0.1; });
              },
              GradientKind::Proxy)));
  reg.add(std::move(
      floatUnaryWithAttrs("ThresholdedRelu", 10, {floatAttr("alpha", 1.0f, 0.0, 2.0)},
                          [](const KernelCall& k) {
                            double a = k.attrFloat("alpha");
                            return [a](double x) { return x > a ? x : 0.0; };
                          })
          .stability([](StabilityCall& s) { awayFromPoints(s, {s.kernel().attrFloat("alpha")}); })
          .gradient(
              [](GradCall& g) {
                double a = g.kernel().attrFloat("alpha");
                unaryGradient(g, [a](double x, double) { return x > a ? 1.0 : 0.1; });
              },
              GradientKind::Proxy)));
  reg.add(floatPredicate("IsNaN", 9, {},
                         [](const KernelCall&) { return [](double x) { return std::isnan(x); }; }));
  reg.add(floatPredicate(
      "IsInf", 10,
      {intChoiceAttr("detect_negative", 1, {0, 1}), intChoiceAttr("detect_positive", 1, {0, 1})},
      [](const KernelCall& k) {
        bool neg = k.attrInt("detect_negative") != 0, pos = k.attrInt("detect_positive") != 0;
        return [neg, pos](double x) { return std::isinf(x) && (x > 0 ? pos : neg); };
      }));
  reg.add(
      std::move(typedUnary<true>("Not", 1, boolTypes(), [](bool x) {
                  return !x;
                }).gradient(derivative([](double, double) { return -1.0; }), GradientKind::Proxy)));
}

}  // namespace nncheck::ops
