#include "ops/stability.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/kernels.h"

namespace nncheck::ops {
namespace {

Shape broadcastOf(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace

void awayFromSteps(StabilityCall& s, double offset) {
  const Tensor& x = s.in(0);
  if (!isFloatDType(x.dtype())) return;
  constexpr double kLargest = 1e3;
  for (int64_t i = 0; i < x.size(); ++i) {
    const double v = x.toDouble(i);
    if (!std::isfinite(v)) continue;
    if (std::fabs(v) > kLargest) {
      s.tooClose(0, i, v > 0 ? -1 : 1);
      continue;
    }
    const double d = (v - offset) - std::nearbyint(v - offset);
    if (std::fabs(d) < stableMargin(std::fabs(v))) s.tooClose(0, i, d >= 0 ? 1 : -1);
  }
}

void awayFromZero(StabilityCall& s) {
  const Tensor& x = s.in(0);
  if (!isFloatDType(x.dtype())) return;
  for (int64_t i = 0; i < x.size(); ++i) {
    const double v = x.toDouble(i);
    if (std::fabs(v) < stableMargin(0)) s.tooClose(0, i, v >= 0 ? 1 : -1);
  }
}

void awayFromPoints(StabilityCall& s, const std::vector<double>& points) {
  const Tensor& x = s.in(0);
  if (!isFloatDType(x.dtype())) return;
  for (int64_t i = 0; i < x.size(); ++i) {
    const double v = x.toDouble(i);
    for (double p : points)
      if (std::fabs(v - p) < stableMargin(std::fabs(p))) s.tooClose(0, i, v >= p ? 1 : -1);
  }
}

void apartFromEachOther(StabilityCall& s) {
  const KernelCall& k = s.kernel();
  const Tensor& a = s.in(0);
  const Tensor& b = s.in(1);
  if (!isFloatDType(a.dtype()) || k.node().inputs[0] == k.node().inputs[1]) return;
  forEachBroadcast(broadcastOf(a.shape(), b.shape()), {&a.shape(), &b.shape()},
                   [&](int64_t, const std::vector<int64_t>& off) {
                     const double x = a.toDouble(off[0]), y = b.toDouble(off[1]);
                     if (!std::isfinite(x) || !std::isfinite(y)) return;
                     if (std::fabs(x - y) >= stableMargin(std::max(std::fabs(x), std::fabs(y))))
                       return;
                     const double dir = x >= y ? 1 : -1;
                     s.tooClose(0, off[0], dir);
                     s.tooClose(1, off[1], -dir);
                   });
}

void awayFromMultiples(StabilityCall& s) {
  const Tensor& a = s.in(0);
  const Tensor& b = s.in(1);
  const Node& n = s.kernel().node();
  if (!isFloatDType(a.dtype()) || n.inputs[0] == n.inputs[1]) return;  // x mod x is exactly 0
  constexpr double kLargest = 1e3;
  forEachBroadcast(broadcastOf(a.shape(), b.shape()), {&a.shape(), &b.shape()},
                   [&](int64_t, const std::vector<int64_t>& off) {
                     const double x = a.toDouble(off[0]), y = b.toDouble(off[1]);
                     if (!std::isfinite(x) || !std::isfinite(y) || y == 0) return;
                     const double q = x / y;
                     // Moving x by dir * sign(y) moves q by dir.
                     const double toward = y > 0 ? 1 : -1;
                     if (std::fabs(q) > kLargest) {
                       s.tooClose(0, off[0], q > 0 ? -toward : toward);
                       return;
                     }
                     const double d = q - std::nearbyint(q);
                     if (std::fabs(d) < stableMargin(std::fabs(q)))
                       s.tooClose(0, off[0], d >= 0 ? toward : -toward);
                   });
}

void powerAwayFromSteps(StabilityCall& s) {
  const Tensor& x = s.in(0);
  const Tensor& y = s.in(1);
  if (isFloatDType(x.dtype())) {
    // A negative base to a fractional power is NaN; an integer power (LayerNormalization's
    // square) takes any base. Kept off 0 too, where a fractional power's slope is unbounded.
    forEachBroadcast(broadcastOf(x.shape(), y.shape()), {&x.shape(), &y.shape()},
                     [&](int64_t, const std::vector<int64_t>& off) {
                       const double base = x.toDouble(off[0]), e = y.toDouble(off[1]);
                       if (std::isfinite(e) && e != std::nearbyint(e) && base < 0.01)
                         s.tooClose(0, off[0], 1);
                     });
    return;
  }
  if (!isIntegerDType(x.dtype())) return;
  // An integer power must be a finite value of its type: 0 to a negative power is infinite and
  // a negative base to a fractional power NaN, which the spec leaves undefined (engines wrap,
  // saturate or trap), and a large power overflows.
  constexpr double kLargest = 1e3;
  const bool floatExponent = isFloatDType(y.dtype());
  forEachBroadcast(broadcastOf(x.shape(), y.shape()), {&x.shape(), &y.shape()},
                   [&](int64_t, const std::vector<int64_t>& off) {
                     const double base = x.toDouble(off[0]), e = y.toDouble(off[1]);
                     if (!std::isfinite(e)) return;
                     if (base == 0) {
                       if (e < 0)
                         s.tooClose(1, off[1], 1);
                       else if (floatExponent && std::fabs(e) < stableMargin(0))
                         s.tooClose(1, off[1], e >= 0 ? 1 : -1);
                       return;
                     }
                     if (base < 0 && e != std::nearbyint(e)) {
                       s.tooClose(1, off[1], std::nearbyint(e) > e ? 1 : -1);
                       return;
                     }
                     if (std::fabs(base) <= 1) return;               // +-1 to any power is +-1
                     const double p = std::pow(std::fabs(base), e);  // grows with e
                     if (p > kLargest) {
                       s.tooClose(1, off[1], -1);
                       return;
                     }
                     if (!floatExponent || base < 0) return;  // exact
                     const double d = p - std::nearbyint(p);
                     if (std::fabs(d) < stableMargin(p)) s.tooClose(1, off[1], d >= 0 ? 1 : -1);
                   });
}

void quotientRepresentable(StabilityCall& s) {
  const Tensor& a = s.in(0);
  const Tensor& b = s.in(1);
  if (!isIntegerDType(a.dtype())) return;
  visitCompute(a.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      auto x = a.span<T>();
      auto y = b.span<T>();
      forEachBroadcast(broadcastOf(a.shape(), b.shape()), {&a.shape(), &b.shape()},
                       [&](int64_t, const std::vector<int64_t>& off) {
                         if (x[static_cast<size_t>(off[0])] == std::numeric_limits<T>::min() &&
                             y[static_cast<size_t>(off[1])] == -1)
                           s.tooClose(0, off[0], 1);
                       });
    }
  });
}

void noTiesAlongAxis(StabilityCall& s, bool isMax) {
  const Tensor& x = s.in(0);
  if (!isFloatDType(x.dtype())) return;
  const AxisSplit sp(x.shape(), s.kernel().attrInt("axis"));
  const double sign = isMax ? 1 : -1;  // compare sign * x: the best is the largest
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      int64_t best = -1, second = -1;
      for (int64_t j = 0; j < sp.size; ++j) {
        const int64_t e = (o * sp.size + j) * sp.inner + i;
        const double v = sign * x.toDouble(e);
        if (best < 0 || v > sign * x.toDouble(best)) {
          second = best;
          best = e;
        } else if (second < 0 || v > sign * x.toDouble(second)) {
          second = e;
        }
      }
      if (second < 0) continue;
      const double top = x.toDouble(best), next = x.toDouble(second);
      if (!std::isfinite(top) || !std::isfinite(next)) continue;
      if (std::fabs(top - next) >= stableMargin(std::max(std::fabs(top), std::fabs(next))))
        continue;
      s.tooClose(0, best, sign);
      s.tooClose(0, second, -sign);
    }
}

void distinctAlongAxis(StabilityCall& s) {
  const Tensor& x = s.in(0);
  if (!isFloatDType(x.dtype())) return;
  const AxisSplit sp(x.shape(), s.kernel().attrInt("axis"));
  std::vector<std::pair<double, int64_t>> line;
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      line.clear();
      for (int64_t j = 0; j < sp.size; ++j) {
        const int64_t e = (o * sp.size + j) * sp.inner + i;
        if (std::isfinite(x.toDouble(e))) line.emplace_back(x.toDouble(e), e);
      }
      std::sort(line.begin(), line.end());
      for (size_t j = 1; j < line.size(); ++j) {
        const auto [lo, a] = line[j - 1];
        const auto [hi, b] = line[j];
        if (hi - lo >= stableMargin(std::max(std::fabs(lo), std::fabs(hi)))) continue;
        s.tooClose(0, a, -1);
        s.tooClose(0, b, 1);
      }
    }
}

}  // namespace nncheck::ops
