// Elementwise binary and variadic ops with numpy broadcasting: arithmetic, comparisons,
// logic, Max/Min, Sum/Mean and PRelu.
#include <cmath>

#include "ops/gradients.h"
#include "ops/stability.h"

namespace nncheck::ops {
namespace {

constexpr auto broadcastRule = [](auto& r) {
  std::vector<size_t> all;
  for (size_t i = 0; i < r.inputCount(); ++i) all.push_back(i);
  r.output(0, broadcastDims(r, all));
};

constexpr auto compareRule = [](auto& r) { r.output(0, broadcastDims(r, {0, 1}), DType::Bool); };

template <class F>
OpSpec binary(std::string type, int64_t minVersion, std::vector<DType> dtypes, F f) {
  return std::move(OpSpec(std::move(type), minVersion)
                       .types("T", std::move(dtypes))
                       .input("A", "T")
                       .input("B", "T")
                       .output("C")
                       .shapeRule(broadcastRule)
                       .kernel([f](KernelCall& k) { mapBinary(k, f); }));
}

// A comparison or logic op, with the proxy gradient of a soft version of it: slope(a, b)
// gives {dC/dA, dC/dB} as if C were a continuous truth (Less: C rises as B - A does).
template <class F, class Slope>
OpSpec comparison(std::string type, int64_t minVersion, std::vector<DType> dtypes, F f,
                  Slope slope) {
  return std::move(OpSpec(std::move(type), minVersion)
                       .types("T", std::move(dtypes))
                       .input("A", "T")
                       .input("B", "T")
                       .output("C")
                       .shapeRule(compareRule)
                       .kernel([f](KernelCall& k) { mapCompare(k, f); })
                       .gradient(
                           [slope](GradCall& g) {
                             binaryGradient(
                                 g, [&](double a, double b, double) { return slope(a, b); });
                           },
                           GradientKind::Proxy));
}

// Max and Min: variadic, NaN-propagating like numpy's maximum/minimum.
template <class Pick>
OpSpec variadicExtreme(std::string type, Pick pick) {
  return std::move(
      OpSpec(std::move(type), 8)
          .types("T", numericTypes())
          .variadicInput("data_0", "T")
          .output("max")
          .shapeRule(broadcastRule)
          // The input holding the winning value (the first, on ties) takes the gradient.
          .gradient([](GradCall& g) {
            const std::vector<double>* dy = g.dOut(0);
            if (!dy) return;
            const KernelCall& k = g.kernel();
            std::vector<const Shape*> shapes;
            for (size_t i = 0; i < k.inputCount(); ++i) shapes.push_back(&k.in(i).shape());
            forEachBroadcast(
                g.out(0).shape(), shapes, [&](int64_t i, const std::vector<int64_t>& o) {
                  const double y = g.out(0).toDouble(i);
                  for (size_t j = 0; j < o.size(); ++j)
                    if (k.in(j).toDouble(o[j]) == y) {
                      if (std::vector<double>* dx = g.dIn(j))
                        (*dx)[static_cast<size_t>(o[j])] += (*dy)[static_cast<size_t>(i)];
                      break;
                    }
                });
          })
          .kernel([pick](KernelCall& k) {
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              using A = Arith<T>;
              std::vector<const Shape*> shapes;
              for (size_t i = 0; i < k.inputCount(); ++i) shapes.push_back(&k.in(i).shape());
              auto out = k.out(0).span<T>();
              forEachBroadcast(
                  k.out(0).shape(), shapes, [&](int64_t i, const std::vector<int64_t>& o) {
                    A acc = static_cast<A>(k.in(0).span<T>()[static_cast<size_t>(o[0])]);
                    for (size_t j = 1; j < o.size(); ++j) {
                      A v = static_cast<A>(k.in(j).span<T>()[static_cast<size_t>(o[j])]);
                      if constexpr (std::is_floating_point_v<A>)
                        if (std::isnan(v) || std::isnan(acc)) {
                          acc = std::numeric_limits<A>::quiet_NaN();
                          continue;
                        }
                      acc = pick(acc, v);
                    }
                    out[static_cast<size_t>(i)] = fromArith<T>(acc);
                  });
            });
          }));
}

// Sum and Mean of any number of float inputs, broadcast, accumulated in double.
OpSpec variadicSum(std::string type, bool mean) {
  return std::move(OpSpec(std::move(type), 8)
                       .types("T", floatTypes())
                       .variadicInput("data_0", "T")
                       .output("sum")
                       .shapeRule(broadcastRule)
                       .gradient([mean](GradCall& g) {
                         const std::vector<double>* dy = g.dOut(0);
                         if (!dy) return;
                         const KernelCall& k = g.kernel();
                         const double scale =
                             mean ? 1.0 / static_cast<double>(k.inputCount()) : 1.0;
                         std::vector<const Shape*> shapes;
                         for (size_t i = 0; i < k.inputCount(); ++i)
                           shapes.push_back(&k.in(i).shape());
                         forEachBroadcast(g.out(0).shape(), shapes,
                                          [&](int64_t i, const std::vector<int64_t>& o) {
                                            for (size_t j = 0; j < o.size(); ++j)
                                              if (std::vector<double>* dx = g.dIn(j))
                                                (*dx)[static_cast<size_t>(o[j])] +=
                                                    (*dy)[static_cast<size_t>(i)] * scale;
                                          });
                       })
                       .kernel([mean](KernelCall& k) {
                         std::vector<const Shape*> shapes;
                         for (size_t i = 0; i < k.inputCount(); ++i)
                           shapes.push_back(&k.in(i).shape());
                         visitCompute(k.in(0).dtype(), [&]<class T>() {
                           auto y = k.out(0).span<T>();
                           forEachBroadcast(k.out(0).shape(), shapes,
                                            [&](int64_t i, const std::vector<int64_t>& o) {
                                              double acc = 0;
                                              for (size_t j = 0; j < o.size(); ++j)
                                                acc += k.in(j).toDouble(o[j]);
                                              if (mean) acc /= static_cast<double>(o.size());
                                              y[static_cast<size_t>(i)] = fromDouble<T>(acc);
                                            });
                         });
                       }));
}

template <class A>
A divide(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    if (b == 0) throw Error("Div: integer division by zero");
    if constexpr (std::is_signed_v<A>)
      if (a == std::numeric_limits<A>::min() && b == -1) return a;  // wraps, as numpy does
    return static_cast<A>(a / b);
  } else {
    return a / b;
  }
}

}  // namespace

void registerElementwiseBinary(Registry& reg) {
  reg.add(std::move(OpSpec("BitShift", 11)
                        .types("T", {DType::UInt8})  // uint16, 32 and 64: not compute dtypes
                        .input("X", "T")
                        .input("Y", "T")
                        .output("Z")
                        .attr([] {
                          AttrSpec a = stringAttr("direction", "LEFT", {"LEFT", "RIGHT"});
                          a.defaultValue.reset();
                          a.required = true;
                          return a;
                        }())
                        .shapeRule(broadcastRule)
                        .kernel([](KernelCall& k) {
                          const bool left = k.attrString("direction") == "LEFT";
                          // Shifting 8 bits or more leaves nothing (numpy's uint8 shifts).
                          broadcastBinary<uint8_t, uint8_t>(
                              k.in(0), k.in(1), k.out(0), [left](uint8_t x, uint8_t y) {
                                if (y >= 8) return uint8_t{0};
                                return static_cast<uint8_t>(left ? x << y : x >> y);
                              });
                        })));

  reg.add(std::move(binary("Add", 7, numericTypes(), [](auto a, auto b) {
                      if constexpr (std::is_integral_v<decltype(a)>)
                        return wrapAdd(a, b);
                      else
                        return a + b;
                    }).gradient([](GradCall& g) {
    binaryGradient(g, [](double, double, double) { return std::pair{1.0, 1.0}; });
  })));
  reg.add(std::move(binary("Sub", 7, numericTypes(), [](auto a, auto b) {
                      if constexpr (std::is_integral_v<decltype(a)>)
                        return wrapSub(a, b);
                      else
                        return a - b;
                    }).gradient([](GradCall& g) {
    binaryGradient(g, [](double, double, double) { return std::pair{1.0, -1.0}; });
  })));
  reg.add(std::move(binary("Mul", 7, numericTypes(), [](auto a, auto b) {
                      if constexpr (std::is_integral_v<decltype(a)>)
                        return wrapMul(a, b);
                      else
                        return a * b;
                    }).gradient([](GradCall& g) {
    binaryGradient(g, [](double a, double b, double) { return std::pair{b, a}; });
  })));
  reg.add(std::move(binary("Div", 7, numericTypes(), [](auto a, auto b) { return divide(a, b); })
                        .safe({.awayFromZero = 0.01})
                        .domain(ValueDomain::NonZeroIfInteger)
                        .stability(quotientRepresentable)
                        .gradient([](GradCall& g) {
                          binaryGradient(g, [](double a, double b, double) {
                            return std::pair{1.0 / b, -a / (b * b)};
                          });
                        })));

  reg.add(std::move(OpSpec("Mod", 10)
                        // fmod: a - trunc(a / b) b, so d/da = 1, d/db = -trunc(a / b) (away
                        // from the jumps).
                        .gradient([](GradCall& g) {
                          binaryGradient(g, [](double a, double b, double) {
                            return std::pair{1.0, -std::trunc(a / b)};
                          });
                        })
                        .types("T", numericTypes())
                        .input("A", "T")
                        .input("B", "T")
                        .domain(ValueDomain::NonZeroIfInteger)
                        .safe({.awayFromZero = 0.01})
                        .output("C")
                        .attr(intChoiceAttr("fmod", 0, {0, 1}))
                        .shapeRule([](auto& r) {
                          r.check(r.attrInt("fmod") == 1 || !isFloatDType(r.dtype(0)),
                                  "floating-point Mod needs fmod=1");
                          r.output(0, broadcastDims(r, {0, 1}));
                        })
                        .stability(awayFromMultiples)
                        .kernel([](KernelCall& k) {
                          bool cStyle = k.attrInt("fmod") == 1;
                          mapBinary(k, [cStyle](auto a, auto b) {
                            using A = decltype(a);
                            if constexpr (std::is_floating_point_v<A>) {
                              return static_cast<A>(std::fmod(a, b));
                            } else {
                              if (b == 0) throw Error("Mod: integer modulo by zero");
                              if constexpr (std::is_signed_v<A>)
                                if (b == -1) return A(0);
                              A m = static_cast<A>(a % b);
                              // Python's %: the result takes the divisor's sign.
                              if (!cStyle && m != 0 && ((m < 0) != (b < 0)))
                                m = static_cast<A>(m + b);
                              return m;
                            }
                          });
                        })));

  reg.add(std::move(
      OpSpec("Pow", 7)
          .boundedOutput(1e4)
          .gradient([](GradCall& g) {
            binaryGradient(g, [](double a, double b, double y) {
              return std::pair{b * std::pow(a, b - 1), a > 0 ? y * std::log(a) : 0.0};
            });
          })
          .types("T", {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64})
          .types("T1", numericTypes())
          .input("X", "T")  // a negative base only to an integer power: see powerAwayFromSteps
          .input("Y", "T1")
          .output("Z")
          .shapeRule([](auto& r) {
            r.output(0, broadcastDims(r, {0, 1}));
          })
          .stability(powerAwayFromSteps)
          .kernel([](KernelCall& k) {
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              visitCompute(k.in(1).dtype(), [&]<class U>() {
                auto x = k.in(0).span<T>();
                auto y = k.in(1).span<U>();
                auto z = k.out(0).span<T>();
                forEachBroadcast(k.out(0).shape(), {&k.in(0).shape(), &k.in(1).shape()},
                                 [&](int64_t i, const std::vector<int64_t>& o) {
                                   double v = std::pow(toDouble(x[static_cast<size_t>(o[0])]),
                                                       toDouble(y[static_cast<size_t>(o[1])]));
                                   z[static_cast<size_t>(i)] = fromDouble<T>(v);
                                 });
              });
            });
          })));

  reg.add(variadicSum("Sum", false));
  reg.add(variadicSum("Mean", true));
  reg.add(variadicExtreme("Max", [](auto a, auto b) { return a >= b ? a : b; }));
  reg.add(variadicExtreme("Min", [](auto a, auto b) { return a <= b ? a : b; }));

  reg.add(std::move(comparison(
                        "Equal", 11, allComputeTypes(), [](auto a, auto b) { return a == b; },
                        [](double a, double b) {  // truer as they come closer
                          const double s = a > b ? 1.0 : a < b ? -1.0 : 0.0;
                          return std::pair{-s, s};
                        })
                        .stability(apartFromEachOther)));
  reg.add(std::move(comparison(
                        "Greater", 9, numericTypes(), [](auto a, auto b) { return a > b; },
                        [](double, double) {
                          return std::pair{1.0, -1.0};
                        })
                        .stability(apartFromEachOther)));
  reg.add(std::move(comparison(
                        "Less", 9, numericTypes(), [](auto a, auto b) { return a < b; },
                        [](double, double) {
                          return std::pair{-1.0, 1.0};
                        })
                        .stability(apartFromEachOther)));
  reg.add(std::move(comparison(
                        "GreaterOrEqual", 12, numericTypes(), [](auto a, auto b) { return a >= b; },
                        [](double, double) {
                          return std::pair{1.0, -1.0};
                        })
                        .stability(apartFromEachOther)));
  reg.add(std::move(comparison(
                        "LessOrEqual", 12, numericTypes(), [](auto a, auto b) { return a <= b; },
                        [](double, double) {
                          return std::pair{-1.0, 1.0};
                        })
                        .stability(apartFromEachOther)));
  // Either operand turning true makes And and Or truer; Xor flips with either.
  reg.add(comparison(
      "And", 7, boolTypes(), [](auto a, auto b) { return a && b; },
      [](double, double) {
        return std::pair{1.0, 1.0};
      }));
  reg.add(comparison(
      "Or", 7, boolTypes(), [](auto a, auto b) { return a || b; },
      [](double, double) {
        return std::pair{1.0, 1.0};
      }));
  reg.add(comparison(
      "Xor", 7, boolTypes(), [](auto a, auto b) { return a != b; },
      [](double a, double b) {
        return std::pair{b != 0 ? -1.0 : 1.0, a != 0 ? -1.0 : 1.0};
      }));

  reg.add(std::move(
      OpSpec("PRelu", 9)
          .gradient([](GradCall& g) {
            binaryGradient(g, [](double a, double b, double) {
              return std::pair{a > 0 ? 1.0 : b, a > 0 ? 0.0 : a};
            });
          })
          .types("T", {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64})
          .input("X", "T")
          .input("slope", "T")
          .weight()
          .sampleShape([](SampleContext& c) {
            // One slope per channel, one for all, or one per element.
            const Shape& x = c.shape(0);
            switch (c.rng.uniform(0, 2)) {
              case 0:
                if (x.size() >= 2) {
                  Shape s(x.size() - 1, 1);
                  s[0] = x[1];
                  return s;
                }
                [[fallthrough]];
              case 1:
                return Shape{1};
              default:
                return x;
            }
          })
          .output("Y")
          .shapeRule([](auto& r) {
            requireUnidirectional(r, 1, r.dims(0), "slope");
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            mapBinary(k, [](auto x, auto s) {
              using A = decltype(x);
              if constexpr (std::is_integral_v<A>)
                return x < 0 ? wrapMul(x, s) : x;
              else
                return x < 0 ? x * s : x;
            });
          })));
}

}  // namespace nncheck::ops
