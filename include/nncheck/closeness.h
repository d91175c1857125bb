// How close a computed float must be to the expected one: |got - want| <= atol + rtol * |want|.
// A value type of the lowest layer, since ops declare the tolerance their accumulation needs
// (nncheck/tolerance.h holds the policy, nncheck/compare.h the comparison of whole tensors).
//
//   nncheck::Tolerance tol{.rtol = 1e-3, .atol = 1e-7};
//   bool ok = nncheck::withinTolerance(got, want, tol);
#pragma once

#include <cmath>

namespace nncheck {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

inline bool withinTolerance(double got, double want, const Tolerance& tol) {
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

}  // namespace nncheck
