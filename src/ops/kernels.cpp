#include "ops/kernels.h"

namespace nncheck::ops {

std::vector<double> toDoubles(const Tensor& x) {
  std::vector<double> v(static_cast<size_t>(x.size()));
  for (int64_t e = 0; e < x.size(); ++e) v[static_cast<size_t>(e)] = x.toDouble(e);
  return v;
}

void assignDoubles(Tensor& out, const std::vector<double>& values) {
  visitCompute(out.dtype(), [&]<class T>() {
    auto y = out.span<T>();
    for (size_t e = 0; e < values.size(); ++e) y[e] = fromDouble<T>(values[e]);
  });
}

Shape stridesOf(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;) s[a - 1] = s[a] * shape[a];
  return s;
}

Shape broadcastStrides(const Shape& in, const Shape& out) {
  Shape inStrides = stridesOf(in);
  Shape s(out.size(), 0);
  size_t off = out.size() - in.size();
  for (size_t a = 0; a < in.size(); ++a) s[a + off] = in[a] == 1 ? 0 : inStrides[a];
  return s;
}

std::vector<int64_t> reductionMap(const Shape& in, const std::vector<int64_t>& axes) {
  Shape kept = in;
  for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
  Shape keptStrides = stridesOf(kept);
  for (int64_t a : axes) keptStrides[static_cast<size_t>(a)] = 0;
  std::vector<int64_t> map(static_cast<size_t>(elementCount(in)));
  Shape idx(in.size(), 0);
  int64_t off = 0;
  for (size_t i = 0; i < map.size(); ++i) {
    map[i] = off;
    for (size_t a = in.size(); a-- > 0;) {
      ++idx[a];
      off += keptStrides[a];
      if (idx[a] < in[a]) break;
      off -= keptStrides[a] * idx[a];
      idx[a] = 0;
    }
  }
  return map;
}

}  // namespace nncheck::ops
