// Cast, CastLike, Clip, Where, Identity and Dropout (inference): elementwise ops whose extra
// operands are not plain broadcast peers.
#include <cmath>

#include "ops/gradients.h"
#include "ops/stability.h"

namespace nncheck::ops {
namespace {

std::vector<int64_t> computeDTypeCodes() {
  std::vector<int64_t> codes;
  for (DType t : computeDTypes()) codes.push_back(static_cast<int64_t>(t));
  return codes;
}

template <class From, class To>
To convert(From v) {
  if constexpr (std::is_same_v<From, To>)
    return v;
  else if constexpr (std::is_same_v<To, bool>)
    return toDouble(v) != 0;
  else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>)
    return static_cast<To>(v);  // modular, as numpy's astype
  else
    return fromDouble<To>(toDouble(v));
}

// Cast's kernel: output 0 takes input 0's values in its own dtype.
void castKernel(KernelCall& k) {
  visitCompute(k.in(0).dtype(), [&]<class From>() {
    visitCompute(k.out(0).dtype(), [&]<class To>() {
      auto x = k.in(0).span<From>();
      auto y = k.out(0).span<To>();
      for (size_t i = 0; i < x.size(); ++i) y[i] = convert<From, To>(x[i]);
    });
  });
}

// A float cast to an integer truncates, to bool tests for 0: steps where an engine's last-ulp
// difference upstream flips the result.
void castStability(StabilityCall& s) {
  const DType to = s.kernel().hasAttr("to") ? static_cast<DType>(s.kernel().attrInt("to"))
                                            : s.in(1).dtype();  // CastLike
  if (to == DType::Bool)
    awayFromZero(s);
  else if (isIntegerDType(to))
    awayFromSteps(s, 0.0);
}

}  // namespace

void registerCastClipWhere(Registry& reg) {
  reg.add(std::move(
      OpSpec("Cast", 6)
          // Between float types Cast is the identity; dY of an integer output never exists.
          .gradient(passThroughGradient)
          .types("T1", allComputeTypes())
          .input("input", "T1")
          .output("output")
          .attr([] {
            AttrSpec a = requiredInt("to", 1, 11);
            a.intChoices = computeDTypeCodes();
            a.sampling = AttrSampling::DType;
            return a;
          }())
          .shapeRule([](auto& r) { r.output(0, r.dims(0), static_cast<DType>(r.attrInt("to"))); })
          .stability(castStability)
          .kernel(castKernel)));

  reg.add(std::move(OpSpec("Clip", 11)
                        // Inside [min, max] the identity; outside, a small slope (a proxy), so
                        // search can bring clipped values back.
                        .gradient(
                            [](GradCall& g) {
                              unaryGradient(g,
                                            [](double x, double y) { return x == y ? 1.0 : 0.1; });
                            },
                            GradientKind::Proxy)
                        .types("T", numericTypes())
                        .input("input", "T")
                        .optionalInput("min", "T")
                        .weight()
                        .sampleShape([](SampleContext&) { return Shape{}; })
                        .optionalInput("max", "T")
                        .weight()
                        .sampleShape([](SampleContext&) { return Shape{}; })
                        .output("output")
                        .shapeRule([](auto& r) {
                          for (size_t i = 1; i < 3; ++i)
                            if (r.has(i))
                              r.check(r.rank(i) == 0, "min and max are scalars (rank 0)");
                          r.output(0, r.dims(0));
                        })
                        .kernel([](KernelCall& k) {
                          visitCompute(k.in(0).dtype(), [&]<class T>() {
                            using A = Arith<T>;
                            A lo = k.has(1) ? static_cast<A>(k.in(1).span<T>()[0])
                                            : std::numeric_limits<A>::lowest();
                            A hi = k.has(2) ? static_cast<A>(k.in(2).span<T>()[0])
                                            : std::numeric_limits<A>::max();
                            auto x = k.in(0).span<T>();
                            auto y = k.out(0).span<T>();
                            for (size_t i = 0; i < x.size(); ++i) {
                              A v = static_cast<A>(x[i]);
                              if constexpr (std::is_floating_point_v<A>)
                                if (std::isnan(v)) {
                                  y[i] = x[i];
                                  continue;
                                }
                              // numpy.clip: max(v, lo) first, then min with hi (so hi wins when lo
                              // > hi).
                              v = v < lo ? lo : v;
                              v = v > hi ? hi : v;
                              y[i] = fromArith<T>(v);
                            }
                          });
                        })));

  reg.add(std::move(OpSpec("Where", 9)
                        .types("B", boolTypes())
                        .types("T", allComputeTypes())
                        .input("condition", "B")
                        .input("X", "T")
                        .input("Y", "T")
                        .output("output")
                        .shapeRule([](auto& r) {
                          r.output(0, broadcastDims(r, {0, 1, 2}), r.dtype(1));
                        })
                        // X and Y take dZ where the condition picks them. The condition takes
                        // a proxy: Z as the blend c X + (1 - c) Y, so dC = dZ (X - Y).
                        .gradient([](GradCall& g) {
                          const std::vector<double>* dz = g.dOut(0);
                          if (!dz) return;
                          const Tensor &c = g.in(0), &x = g.in(1), &y = g.in(2);
                          forEachBroadcast(g.out(0).shape(), {&c.shape(), &x.shape(), &y.shape()},
                                           [&](int64_t i, const std::vector<int64_t>& o) {
                                             const double up = (*dz)[static_cast<size_t>(i)];
                                             const size_t picked = c.toDouble(o[0]) != 0 ? 1 : 2;
                                             if (std::vector<double>* d = g.dIn(picked))
                                               (*d)[static_cast<size_t>(o[picked])] += up;
                                             if (std::vector<double>* d = g.dIn(0))
                                               (*d)[static_cast<size_t>(o[0])] +=
                                                   up * (x.toDouble(o[1]) - y.toDouble(o[2]));
                                           });
                        })
                        .kernel([](KernelCall& k) {
                          visitCompute(k.in(1).dtype(), [&]<class T>() {
                            auto c = k.in(0).span<bool>();
                            auto x = k.in(1).span<T>();
                            auto y = k.in(2).span<T>();
                            auto z = k.out(0).span<T>();
                            forEachBroadcast(k.out(0).shape(),
                                             {&k.in(0).shape(), &k.in(1).shape(), &k.in(2).shape()},
                                             [&](int64_t i, const std::vector<int64_t>& o) {
                                               z[static_cast<size_t>(i)] =
                                                   c[static_cast<size_t>(o[0])]
                                                       ? x[static_cast<size_t>(o[1])]
                                                       : y[static_cast<size_t>(o[2])];
                                             });
                          });
                        })));

  // CastLike: Cast to the dtype of its second input, whose values do not matter.
  reg.add(std::move(OpSpec("CastLike", 15)
                        .gradient(passThroughGradient)
                        .types("T1", allComputeTypes())
                        .types("T2", allComputeTypes())
                        .input("input", "T1")
                        .input("target_type", "T2")
                        .sampleShape([](SampleContext&) { return Shape{1}; })
                        .output("output")
                        .shapeRule([](auto& r) { r.output(0, r.dims(0), r.dtype(1)); })
                        .stability(castStability)
                        .kernel(castKernel)));

  reg.add(std::move(OpSpec("Identity", 1)
                        .gradient(passThroughGradient)
                        .types("T", allComputeTypes())
                        .input("input", "T")
                        .output("output")
                        .shapeRule(sameShapeAsInput0)
                        .kernel([](KernelCall& k) { k.out(0) = k.in(0); })));

  // Dropout in inference: the identity, with a mask of all true. Training mode drops at random,
  // which no reference can match, so only its ratio-0 form (the identity again) is computed.
  reg.add(std::move(OpSpec("Dropout", 12)
                        .gradient(passThroughGradient)
                        .types("T", floatTypes())
                        .types("T1", floatTypes())
                        .types("T2", boolTypes())
                        .input("data", "T")
                        .optionalInput("ratio", "T1")
                        .weight()
                        .safe({.lo = 0, .hi = 0.9})  // the spec's [0, 1), with a margin
                        .sampleShape([](SampleContext&) { return Shape{}; })
                        .optionalInput("training_mode", "T2")
                        .notGenerated()
                        .output("output")
                        .optionalOutput("mask")
                        .attr(withSampling(intAttr("seed", 0, 0, 0), AttrSampling::Never))
                        .shapeRule([](auto& r) {
                          for (size_t i = 1; i < 3; ++i)
                            if (r.has(i))
                              r.check(r.rank(i) == 0, "ratio and training_mode are scalars");
                          r.output(0, r.dims(0));
                          r.output(1, r.dims(0), DType::Bool);
                        })
                        .kernel([](KernelCall& k) {
                          const bool training = k.has(2) && k.in(2).toDouble(0) != 0;
                          const double ratio = k.has(1) ? k.in(1).toDouble(0) : 0.5;
                          if (training && ratio != 0)
                            throw Unsupported(
                                "value", "Dropout '" + k.node().name +
                                             "': training mode with a nonzero ratio is random");
                          k.out(0) = k.in(0);
                          if (k.outputCount() > 1)
                            std::fill_n(k.out(1).span<bool>().begin(), k.out(1).size(), true);
                        })));
}

}  // namespace nncheck::ops
