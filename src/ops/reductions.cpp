// Reductions (ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare), ArgMax/ArgMin and
// CumSum. Float sums accumulate
// in double; integer sums wrap in int64 like numpy.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/gradients.h"
#include "ops/infer.h"
#include "ops/stability.h"

namespace nncheck::ops {
namespace {

// The reduced axes, normalized and sorted; empty with noop means "reduce nothing".
template <class I>
std::vector<int64_t> reducedAxes(Rule<I>& r, bool axesAsInput, bool& noop) {
  std::vector<int64_t> axes;
  if (axesAsInput) {
    if (r.has(1)) axes = r.axes(1);
  } else if (r.hasAttr("axes")) {
    axes = r.attrInts("axes");
  }
  noop = axes.empty() && axesAsInput && r.attrInt("noop_with_empty_axes") == 1;
  if (axes.empty() && !noop)
    for (int64_t a = 0; a < r.rank(0); ++a) axes.push_back(a);
  for (int64_t& a : axes) a = r.normAxis(a, r.rank(0), "axes");
  std::sort(axes.begin(), axes.end());
  r.check(std::adjacent_find(axes.begin(), axes.end()) == axes.end(), "axes are distinct");
  return axes;
}

template <class I>
std::vector<I> reducedDims(Rule<I>& r, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<I> out;
  for (int64_t a = 0; a < r.rank(0); ++a) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), a);
    if (!reduced)
      out.push_back(r.dims(0)[static_cast<size_t>(a)]);
    else if (keepdims)
      out.push_back(r.lit(1));
  }
  return out;
}

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// Distinct axes of input 0, some of them negative, at least one.
Tensor sampleAxesSubset(SampleContext& c) {
  return int64Vector(drawAxesSubset(c.rng, static_cast<int64_t>(c.shape(0).size())));
}

template <class T>
void reduceKernel(KernelCall& k, const std::vector<int64_t>& axes, Reduce kind) {
  using Acc = std::conditional_t<isFloatLike<T>, double, int64_t>;
  auto x = k.in(0).span<T>();
  auto y = k.out(0).span<T>();
  const size_t n = y.size();
  Acc init = 0;
  if (kind == Reduce::Prod) init = 1;
  if (kind == Reduce::Max) init = std::numeric_limits<Acc>::lowest();
  if (kind == Reduce::Max && isFloatLike<T>) init = static_cast<Acc>(-INFINITY);
  if (kind == Reduce::Min) init = std::numeric_limits<Acc>::max();
  if (kind == Reduce::Min && isFloatLike<T>) init = static_cast<Acc>(INFINITY);
  std::vector<Acc> acc(n, init);
  std::vector<int64_t> count(n, 0);
  auto map = reductionMap(k.in(0).shape(), axes);
  // LogSumExp sums exp(x - the group's largest x), which cannot overflow.
  std::vector<double> shift(kind == Reduce::LogSumExp ? n : 0, -INFINITY);
  if (kind == Reduce::LogSumExp)
    for (size_t i = 0; i < x.size(); ++i)
      shift[static_cast<size_t>(map[i])] =
          std::max(shift[static_cast<size_t>(map[i])], toDouble(x[i]));
  for (double& m : shift)
    if (!std::isfinite(m)) m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    size_t o = static_cast<size_t>(map[i]);
    Acc v;
    if constexpr (isFloatLike<T>)
      v = toDouble(x[i]);
    else
      v = static_cast<int64_t>(x[i]);
    ++count[o];
    if constexpr (std::is_integral_v<Acc>) {
      if (kind == Reduce::L1 && v < 0) v = wrapSub<Acc>(0, v);
      if (kind == Reduce::L2 || kind == Reduce::SumSquare) v = wrapMul(v, v);
    } else {
      if (kind == Reduce::L1) v = std::fabs(v);
      if (kind == Reduce::L2 || kind == Reduce::SumSquare) v = v * v;
      if (kind == Reduce::LogSumExp) v = std::exp(v - shift[o]);
    }
    switch (kind) {
      case Reduce::Sum:
      case Reduce::Mean:
      case Reduce::L1:
      case Reduce::L2:
      case Reduce::LogSum:
      case Reduce::LogSumExp:
      case Reduce::SumSquare:
        if constexpr (std::is_integral_v<Acc>)
          acc[o] = wrapAdd(acc[o], v);
        else
          acc[o] += v;
        break;
      case Reduce::Prod:
        if constexpr (std::is_integral_v<Acc>)
          acc[o] = wrapMul(acc[o], v);
        else
          acc[o] *= v;
        break;
      case Reduce::Max:
        if constexpr (std::is_floating_point_v<Acc>)
          if (std::isnan(v) || std::isnan(acc[o])) {
            acc[o] = NAN;
            break;
          }
        acc[o] = std::max(acc[o], v);
        break;
      case Reduce::Min:
        if constexpr (std::is_floating_point_v<Acc>)
          if (std::isnan(v) || std::isnan(acc[o])) {
            acc[o] = NAN;
            break;
          }
        acc[o] = std::min(acc[o], v);
        break;
    }
  }
  for (size_t o = 0; o < n; ++o) {
    if constexpr (std::is_floating_point_v<Acc>) {
      if (kind == Reduce::L2) acc[o] = std::sqrt(acc[o]);
      if (kind == Reduce::LogSum) acc[o] = std::log(acc[o]);
      if (kind == Reduce::LogSumExp) acc[o] = std::log(acc[o]) + shift[o];
    }
    if (kind == Reduce::Mean) {
      double m = count[o] ? static_cast<double>(acc[o]) / static_cast<double>(count[o]) : NAN;
      y[o] = fromDouble<T>(m);
    } else if constexpr (isFloatLike<T>) {
      y[o] = fromDouble<T>(acc[o]);
    } else {
      y[o] = static_cast<T>(acc[o]);
    }
  }
}

// The reduced axes of a concrete call (empty when noop_with_empty_axes leaves data as is).
std::vector<int64_t> reducedAxesOf(const KernelCall& k, bool axesAsInput) {
  Rule<int64_t> r = concreteRule(k);
  bool noop = false;
  return reducedAxes(r, axesAsInput, noop);
}

// ReduceProd's value domain: per reduced group, the product of the factors above 1 in magnitude
// and that of the nonzero ones below 1 stay well inside the dtype's normal range. Every partial
// product in any order lies between the two, so no engine's order overflows or flushes to 0
// where the reference, accumulating in double, does not. Offending factors move toward 1.
// An integer product must fit its type too: the spec leaves overflow undefined, and engines
// differ (numpy wraps; ONNX Runtime 1.30 saturates int64 at its largest value).
void productsInRange(StabilityCall& s, const std::vector<int64_t>& axes) {
  const Tensor& x = s.in(0);
  if (!isFloatDType(x.dtype()) && !isIntegerDType(x.dtype())) return;
  // Floats: 0.8 of the largest and of the smallest normal binary exponent. Integers: one bit
  // below the type's largest magnitude.
  const double limit = visitCompute(x.dtype(), []<typename T>() -> double {
    if constexpr (std::is_same_v<T, Half>)
      return 11;
    else if constexpr (std::is_same_v<T, float>)
      return 100;
    else if constexpr (std::is_same_v<T, double>)
      return 800;
    else
      return std::numeric_limits<T>::digits - 1;
  });
  const std::vector<int64_t> map = reductionMap(x.shape(), axes);
  const size_t groups =
      map.empty() ? 0 : static_cast<size_t>(*std::max_element(map.begin(), map.end())) + 1;
  std::vector<double> up(groups, 0.0), down(groups, 0.0);  // sums of log2|x|
  for (size_t e = 0; e < map.size(); ++e) {
    const double a = std::fabs(x.toDouble(static_cast<int64_t>(e)));
    if (a == 0 || !std::isfinite(a)) continue;
    (a > 1 ? up : down)[static_cast<size_t>(map[e])] += std::log2(a);
  }
  for (size_t e = 0; e < map.size(); ++e) {
    const double v = x.toDouble(static_cast<int64_t>(e)), a = std::fabs(v);
    const size_t o = static_cast<size_t>(map[e]);
    if (a == 0 || !std::isfinite(a)) continue;
    if (a > 1 && up[o] > limit) s.tooClose(0, static_cast<int64_t>(e), v > 0 ? -1 : 1);
    if (a < 1 && down[o] < -limit) s.tooClose(0, static_cast<int64_t>(e), v > 0 ? 1 : -1);
  }
}

OpSpec reduction(std::string type, int64_t minVersion, Reduce kind, bool axesAsInput,
                 std::vector<DType> dtypes = numericTypes()) {
  OpSpec s(std::move(type), minVersion);
  s.types("T", std::move(dtypes)).input("data", "T");
  if (kind == Reduce::LogSum) s.safe({.lo = 0.01});   // a sum of positives has a logarithm
  if (kind == Reduce::LogSumExp) s.safe({.hi = 10});  // as Exp: engines may not shift
  if (axesAsInput) {
    s.types("tensor(int64)", {DType::Int64});
    s.optionalInput("axes", "tensor(int64)", InputRole::AxesValues);
    s.sampleValues(sampleAxesSubset);
    s.attr(intChoiceAttr("noop_with_empty_axes", 0, {0, 1}));
  } else {
    s.attr(withSampling(intsAttr("axes"), AttrSampling::AxesSubset));
  }
  s.output("reduced").attr(intChoiceAttr("keepdims", 1, {0, 1}));
  auto rule = [axesAsInput](auto& r) {
    bool noop = false;
    auto axes = reducedAxes(r, axesAsInput, noop);
    r.output(0, reducedDims(r, axes, r.attrInt("keepdims") != 0));
  };
  s.shapeRule(rule);
  s.kernel([axesAsInput, kind](KernelCall& k) {
    const std::vector<int64_t> axes = reducedAxesOf(k, axesAsInput);
    visitCompute(k.in(0).dtype(), [&]<class T>() { reduceKernel<T>(k, axes, kind); });
  });
  if (kind == Reduce::Prod)
    s.stability([axesAsInput](StabilityCall& c) {
      productsInRange(c, reducedAxesOf(c.kernel(), axesAsInput));
    });
  s.gradient([axesAsInput, kind](GradCall& g) {
    std::vector<double>* dx = g.dIn(0);
    const std::vector<double>* dy = g.dOut(0);
    if (!dx || !dy) return;
    const std::vector<int64_t> map =
        reductionMap(g.in(0).shape(), reducedAxesOf(g.kernel(), axesAsInput));
    const Tensor& x = g.in(0);
    const Tensor& y = g.out(0);
    const double count =
        static_cast<double>(x.size()) / static_cast<double>(std::max<int64_t>(y.size(), 1));
    std::vector<bool> taken(static_cast<size_t>(y.size()), false);  // Max, Min: the first winner
    for (size_t e = 0; e < map.size(); ++e) {
      const size_t o = static_cast<size_t>(map[e]);
      const double up = (*dy)[o], xe = x.toDouble(static_cast<int64_t>(e));
      switch (kind) {
        case Reduce::Sum:
          (*dx)[e] += up;
          break;
        case Reduce::Mean:
          (*dx)[e] += up / count;
          break;
        case Reduce::Max:
        case Reduce::Min:
          if (!taken[o] && xe == y.toDouble(static_cast<int64_t>(o))) {
            taken[o] = true;
            (*dx)[e] += up;
          }
          break;
        case Reduce::Prod:
          if (xe != 0) (*dx)[e] += up * y.toDouble(static_cast<int64_t>(o)) / xe;
          break;
        case Reduce::L1:
          (*dx)[e] += up * (xe < 0 ? -1.0 : 1.0);
          break;
        case Reduce::L2:
          if (const double ye = y.toDouble(static_cast<int64_t>(o)); ye != 0)
            (*dx)[e] += up * xe / ye;
          break;
        case Reduce::LogSum:
          (*dx)[e] += up * std::exp(-y.toDouble(static_cast<int64_t>(o)));
          break;
        case Reduce::LogSumExp:
          (*dx)[e] += up * std::exp(xe - y.toDouble(static_cast<int64_t>(o)));
          break;
        case Reduce::SumSquare:
          (*dx)[e] += up * 2 * xe;
          break;
      }
    }
  });
  return s;
}

template <bool IsMax>
OpSpec argExtreme(std::string type) {
  return std::move(
      OpSpec(std::move(type), 12)
          .types("T", numericTypes())
          .input("data", "T")
          .output("reduced")
          .attr(axisAttr("axis", 0))
          .attr(intChoiceAttr("keepdims", 1, {0, 1}))
          .attr(intChoiceAttr("select_last_index", 0, {0, 1}))
          .shapeRule([](auto& r) {
            int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            r.require(r.dims(0)[static_cast<size_t>(axis)] >= 1, "the reduced axis is not empty");
            r.output(0, reducedDims(r, {axis}, r.attrInt("keepdims") != 0), DType::Int64);
          })
          .kernel([](KernelCall& k) {
            const AxisSplit sp(k.in(0).shape(), k.attrInt("axis"));
            const bool last = k.attrInt("select_last_index") != 0;
            const int64_t outer = sp.outer, inner = sp.inner, n = sp.size;
            auto y = k.out(0).span<int64_t>();
            // Compared in the element's own arithmetic type: int64 values near 2^63 that
            // differ collapse to one double, which would make a tie that is not there.
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              auto x = k.in(0).span<T>();
              auto at = [&](int64_t e) { return static_cast<Arith<T>>(x[static_cast<size_t>(e)]); };
              for (int64_t o = 0; o < outer; ++o)
                for (int64_t i = 0; i < inner; ++i) {
                  int64_t best = 0;
                  auto bv = at(o * n * inner + i);
                  for (int64_t j = 1; j < n; ++j) {
                    auto v = at((o * n + j) * inner + i);
                    bool better =
                        IsMax ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
                    if (better) {
                      best = j;
                      bv = v;
                    }
                  }
                  y[static_cast<size_t>(o * inner + i)] = best;
                }
            });
          }));
}

}  // namespace

void registerReductions(Registry& reg) {
  reg.add(reduction("ReduceSum", 13, Reduce::Sum, true));
  reg.add(reduction("ReduceMean", 11, Reduce::Mean, false));
  reg.add(reduction("ReduceMax", 11, Reduce::Max, false));
  reg.add(reduction("ReduceMin", 11, Reduce::Min, false));
  reg.add(reduction("ReduceProd", 11, Reduce::Prod, false));
  reg.add(reduction("ReduceL1", 11, Reduce::L1, false));
  reg.add(reduction("ReduceSumSquare", 11, Reduce::SumSquare, false));
  // Integer L2 and logarithms truncate a float result: left to the float types.
  reg.add(reduction("ReduceL2", 11, Reduce::L2, false, floatTypes()));
  reg.add(reduction("ReduceLogSum", 11, Reduce::LogSum, false, floatTypes()));
  reg.add(reduction("ReduceLogSumExp", 11, Reduce::LogSumExp, false, floatTypes()));
  reg.add(std::move(
      argExtreme<true>("ArgMax").stability([](StabilityCall& s) { noTiesAlongAxis(s, true); })));
  reg.add(std::move(
      argExtreme<false>("ArgMin").stability([](StabilityCall& s) { noTiesAlongAxis(s, false); })));

  reg.add(std::move(
      OpSpec("CumSum", 11)
          // dx_j sums dy over the outputs that include x_j: a cumulative sum the other way.
          .gradient([](GradCall& g) {
            std::vector<double>* dx = g.dIn(0);
            const std::vector<double>* dy = g.dOut(0);
            if (!dx || !dy) return;
            const KernelCall& k = g.kernel();
            const AxisSplit sp(k.in(0).shape(), k.in(1).toInt64(0));
            const bool exclusive = k.attrInt("exclusive") != 0, reverse = k.attrInt("reverse") != 0;
            for (int64_t o = 0; o < sp.outer; ++o)
              for (int64_t i = 0; i < sp.inner; ++i) {
                double acc = 0;
                for (int64_t step = 0; step < sp.size; ++step) {
                  const int64_t j = reverse ? step : sp.size - 1 - step;
                  const size_t at = static_cast<size_t>((o * sp.size + j) * sp.inner + i);
                  if (!exclusive) acc += (*dy)[at];
                  (*dx)[at] += acc;
                  if (exclusive) acc += (*dy)[at];
                }
              }
          })
          // Long float32 accumulations (the reference sums in double).
          .tolerance({1e-3, 1e-4})
          .types("T", {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64})
          .types("T2", indexTypes())
          .input("x", "T")
          .input("axis", "T2", InputRole::AxesValues)
          .sampleValues([](SampleContext& c) {
            const int64_t r = static_cast<int64_t>(c.shape(0).size());
            return Tensor::scalar<int64_t>(r == 0 ? 0 : c.rng.uniform(-r, r - 1));
          })
          .output("y")
          .attr(intChoiceAttr("exclusive", 0, {0, 1}))
          .attr(intChoiceAttr("reverse", 0, {0, 1}))
          .shapeRule([](auto& r) {
            r.check(r.rank(1) <= 1 && r.axes(1).size() == 1, "axis is a single value");
            r.normAxis(r.axes(1)[0], r.rank(0), "axis");
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            const AxisSplit sp(k.in(0).shape(), k.in(1).toInt64(0));
            const bool exclusive = k.attrInt("exclusive") != 0, reverse = k.attrInt("reverse") != 0;
            const int64_t outer = sp.outer, inner = sp.inner, n = sp.size;
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              using Acc = std::conditional_t<isFloatLike<T>, double, int64_t>;
              auto x = k.in(0).span<T>();
              auto y = k.out(0).span<T>();
              for (int64_t o = 0; o < outer; ++o)
                for (int64_t i = 0; i < inner; ++i) {
                  Acc acc = 0;
                  for (int64_t step = 0; step < n; ++step) {
                    int64_t j = reverse ? n - 1 - step : step;
                    size_t at = static_cast<size_t>((o * n + j) * inner + i);
                    Acc v;
                    if constexpr (isFloatLike<T>)
                      v = toDouble(x[at]);
                    else
                      v = static_cast<int64_t>(x[at]);
                    auto add = [](Acc a, Acc b) -> Acc {
                      if constexpr (std::is_integral_v<Acc>)
                        return wrapAdd(a, b);
                      else
                        return a + b;
                    };
                    if (!exclusive) acc = add(acc, v);
                    if constexpr (isFloatLike<T>)
                      y[at] = fromDouble<T>(acc);
                    else
                      y[at] = static_cast<T>(acc);
                    if (exclusive) acc = add(acc, v);
                  }
                }
            });
          })));
}

}  // namespace nncheck::ops
