// Checks for StabilityCall (op_spec.h), declared in the ops' entries:
//   .stability([](StabilityCall& s) { awayFromSteps(s, 0.0); })    // Floor, Ceil
// The margin is relative: 1e-4 of the magnitude, at least 1e-4, ten times the error a float32
// engine's differently ordered sums usually make.
#pragma once

#include <cmath>

#include "ops/op_spec.h"

namespace nncheck::ops {

inline double stableMargin(double magnitude) { return 1e-4 * std::max(1.0, magnitude); }

// Input 0 away from offset + k for every integer k (Floor and Ceil: 0; Round: 0.5), and within
// +-1e3, where float32 still resolves such a margin.
void awayFromSteps(StabilityCall& s, double offset);

// Input 0 away from 0 (Cast to bool, where any nonzero is true).
void awayFromZero(StabilityCall& s);

// Input 0 away from each of `points`, where the op jumps (Shrink at +-lambd, ThresholdedRelu at
// alpha).
void awayFromPoints(StabilityCall& s, const std::vector<double>& points);

// Inputs 0 and 1 (broadcast) apart from each other (Less, Greater, Equal), unless they are the
// same value.
void apartFromEachOther(StabilityCall& s);

// Input 0 (broadcast against input 1) away from the multiples of input 1, where a - trunc(a / b) b
// jumps by b (float Mod), and the quotient within +-1e3.
void awayFromMultiples(StabilityCall& s);

// Pow with an integer base (the result truncated to the base's type): every power a finite value
// of the type, within +-1e3 (no 0 to a negative power, no negative base to a fractional one);
// with a float exponent, the exponent away from 0 where the base is 0 (0^y jumps there) and away
// from where a positive base's power crosses an integer. With a float base: the base at least
// 0.01 where the exponent is fractional (a negative base only to an integer power).
void powerAwayFromSteps(StabilityCall& s);

// Integer inputs 0 and 1 (broadcast) never the type's lowest value over -1 (integer Div), whose
// quotient the type cannot hold: ONNX leaves the result undefined, and CPUs trap on it.
void quotientRepresentable(StabilityCall& s);

// Along the `axis` attribute of input 0, the largest (isMax) or smallest element apart from the
// runner-up (ArgMax, ArgMin).
void noTiesAlongAxis(StabilityCall& s, bool isMax);

// Along the `axis` attribute of input 0, every element apart from every other (TopK, whose
// order and selection follow every comparison).
void distinctAlongAxis(StabilityCall& s);

// Input 0 where y = f(x) is well conditioned: a relative error of 1e-6 in x (a float32 engine's
// few ulps) moves y by at most a tenth of float32's tolerance (atol 1e-5, rtol 1e-3). Sin, Cos
// and Tan of large arguments, and Tan near its poles, amplify such an error past any tolerance;
// elements there are pushed toward 0. df is f's derivative.
template <class F, class D>
void wellConditioned(StabilityCall& s, F f, D df) {
  const Tensor& x = s.in(0);
  if (!isFloatDType(x.dtype())) return;
  for (int64_t i = 0; i < x.size(); ++i) {
    const double v = x.toDouble(i);
    if (!std::isfinite(v)) continue;
    if (std::fabs(df(v)) * std::fabs(v) * 1e-6 > 1e-6 + 1e-4 * std::fabs(f(v)))
      s.tooClose(0, i, v > 0 ? -1 : 1);
  }
}

}  // namespace nncheck::ops
