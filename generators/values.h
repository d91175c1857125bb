// Random tensor contents and shapes for generated models.
#pragma once

#include "core/rng.h"
#include "nncheck/tensor.h"
#include "ops/kernels.h"
#include "ops/op_spec.h"

namespace nncheck {

// Random contents: floats uniform in [-1, 1] (Positive: [0.1, 2]), integers in [-5, 5]
// (NonZeroIfInteger: without 0; Indices: in [-16, 15], for ops::makeIndicesValid to move into
// range), bools uniform.
Tensor randomTensor(Rng& rng, DType dtype, const Shape& shape, ops::ValueDomain domain);

// The same values in another compute dtype.
Tensor castTensor(const Tensor& t, DType to);

// f(index, value as double) for every element of a float tensor, dispatching on the dtype once
// (value search reads every value of a model at every step).
template <class F>
void forEachFloat(const Tensor& t, F f) {
  visitCompute(t.dtype(), [&]<class T>() {
    if constexpr (ops::isFloatLike<T>) {
      auto v = t.span<T>();
      for (size_t i = 0; i < v.size(); ++i) {
        if constexpr (std::is_same_v<T, Half>)
          f(static_cast<int64_t>(i), static_cast<double>(static_cast<float>(v[i])));
        else
          f(static_cast<int64_t>(i), static_cast<double>(v[i]));
      }
    }
  });
}

// How many float elements of `t` are NaN, infinite or beyond +-bound: what value search fixes.
int64_t brokenElements(const Tensor& t, double bound);

// A shape for a fresh operand next to input 0: the same, or a broadcastable variant (a dim set
// to 1, leading axes left out).
Shape defaultLeafShape(Rng& rng, const Shape& shape0);

}  // namespace nncheck
