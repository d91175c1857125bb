#include "ops/kernels.h"

namespace nncheck::ops {

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

}  // namespace nncheck::ops
