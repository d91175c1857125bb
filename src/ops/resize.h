// How Resize interpolates integer tensors, for the reference kernel and for engine adapters
// that must reproduce it: in double, truncated toward zero as a cast is, after snapping values
// that are an integer up to float error.
//
//   int64_t y = static_cast<int64_t>(snapResizedInteger(-1.9999999999999998));   // -2
#pragma once

#include <cmath>

namespace nncheck::ops {

// The exact interpolation of integers is a rational with a small denominator, so a result
// within this relative distance of an integer is that integer. Source coordinates computed one
// ulp apart (x / scale against x * (in / out)) must not flip the truncation.
inline constexpr double kResizeIntegerSnap = 1e-9;

inline double snapResizedInteger(double v) {
  const double r = std::nearbyint(v);
  return std::fabs(v - r) <= kResizeIntegerSnap * (1 + std::fabs(v)) ? r : v;
}

}  // namespace nncheck::ops
