#include "generators/values.h"

#include <cmath>

#include "ops/kernels.h"

namespace nncheck {

Tensor randomTensor(Rng& rng, DType dtype, const Shape& shape, ops::ValueDomain domain) {
  Tensor t(dtype, shape);
  visitCompute(dtype, [&]<class T>() {
    auto v = t.span<T>();
    for (auto& x : v) {
      if constexpr (std::is_same_v<T, bool>) {
        x = rng.chance(0.5);
      } else if constexpr (ops::isFloatLike<T>) {
        double d = domain == ops::ValueDomain::Positive ? rng.real(0.1, 2.0) : rng.real(-1.0, 1.0);
        x = ops::fromDouble<T>(d);
      } else {
        int64_t lo = std::is_signed_v<T> ? -5 : 0, hi = 5;
        if (domain == ops::ValueDomain::Positive) lo = 1;
        if (domain == ops::ValueDomain::Indices) {  // made valid by ops::makeIndicesValid
          lo = -16;
          hi = 15;
        }
        int64_t i = rng.uniform(lo, hi);
        if (domain == ops::ValueDomain::NonZeroIfInteger && i == 0) i = 1;
        x = static_cast<T>(i);
      }
    }
  });
  return t;
}

Tensor castTensor(const Tensor& t, DType to) {
  if (t.dtype() == to) return t;
  Tensor out(to, t.shape());
  visitCompute(to, [&]<class T>() {
    auto v = out.span<T>();
    for (int64_t i = 0; i < t.size(); ++i)
      v[static_cast<size_t>(i)] = ops::fromDouble<T>(t.toDouble(i));
  });
  return out;
}

int64_t brokenElements(const Tensor& t, double bound) {
  int64_t n = 0;
  forEachFloat(t, [&](int64_t, double v) { n += !std::isfinite(v) || std::fabs(v) > bound; });
  return n;
}

Shape defaultLeafShape(Rng& rng, const Shape& shape0) {
  Shape s = shape0;
  if (!s.empty() && rng.chance(0.15)) s[rng.index(s.size())] = 1;
  // Fewer axes broadcast along the leading ones, as a bias [C] added to [N, C] does: a pattern
  // many fusions match (MatMul then Add, Conv then Add).
  if (s.size() > 1 && rng.chance(0.2))
    s.erase(s.begin(), s.begin() + rng.uniform(1, static_cast<int64_t>(s.size()) - 1));
  else if (!s.empty() && rng.chance(0.05))
    s.erase(s.begin());
  return s;
}

}  // namespace nncheck
