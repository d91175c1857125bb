// Random tensor contents and shapes for generated models.
#pragma once

#include "core/rng.h"
#include "nncheck/tensor.h"
#include "ops/op_spec.h"

namespace nncheck {

// Random contents: floats uniform in [-1, 1] (Positive: [0.1, 2]), integers in [-5, 5]
// (NonZeroIfInteger: without 0; Indices: in [-bound, bound)), bools uniform.
Tensor randomTensor(Rng& rng, DType dtype, const Shape& shape, ops::ValueDomain domain,
                    int64_t bound);

// The same values in another compute dtype.
Tensor castTensor(const Tensor& t, DType to);

// A shape for a fresh operand next to input 0: the same, or a broadcastable variant.
Shape defaultLeafShape(Rng& rng, const Shape& shape0);

}  // namespace nncheck
