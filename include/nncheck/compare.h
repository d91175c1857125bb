// Comparing tensors the way ONNX's backend tests do: |got - want| <= atol + rtol * |want| for
// floats (NaN equals NaN, infinities must match), exact equality for integers and bool. With an
// allowance (float64, one per element: the float error a correct engine may make there, from
// nncheck::roundingAllowance), a float element may differ by that much more, and an integer or
// bool element with an infinite allowance may differ at all.
//
//   nncheck::Comparison c = nncheck::compareTensors(got, want, {.rtol = 1e-3, .atol = 1e-7});
//   if (!c.ok) std::cerr << c.message << "\n";
#pragma once

#include <string>

#include "nncheck/closeness.h"
#include "nncheck/tensor.h"

namespace nncheck {

struct Comparison {
  bool ok = true;
  double maxAbsError = 0;  // infinite when a NaN or infinity stands where it should not
  double maxRelError = 0;  // |got - want| / |want|; infinite likewise, or for want 0
  int64_t mismatches = 0;
  bool layoutDiffers = false;  // dtype or shape differ: no value was compared
  // The allowance at the element of the largest error beyond tolerance and allowance (0 without
  // an allowance): the report's second figure, what a correct engine may err by there.
  double allowanceAtWorst = 0;
  std::string message;  // empty when ok: what differs, with the first mismatching element
};

Comparison compareTensors(const Tensor& got, const Tensor& want, const Tolerance& tol = {},
                          const Tensor* allowance = nullptr);

}  // namespace nncheck
