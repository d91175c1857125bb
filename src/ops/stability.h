// Checks for StabilityCall (op_spec.h), declared in the ops' entries:
//   .stability([](StabilityCall& s) { awayFromSteps(s, 0.0); })    // Floor, Ceil
// The margin is relative: 1e-4 of the magnitude, at least 1e-4, ten times the error a float32
// engine's differently ordered sums usually make.
#pragma once

#include "ops/op_spec.h"

namespace nncheck::ops {

inline double stableMargin(double magnitude) { return 1e-4 * std::max(1.0, magnitude); }

// Input 0 away from offset + k for every integer k (Floor and Ceil: 0; Round: 0.5), and within
// +-1e3, where float32 still resolves such a margin.
void awayFromSteps(StabilityCall& s, double offset);

// Inputs 0 and 1 (broadcast) apart from each other (Less, Greater, Equal), unless they are the
// same value.
void apartFromEachOther(StabilityCall& s);

// Along the `axis` attribute of input 0, the largest (isMax) or smallest element apart from the
// runner-up (ArgMax, ArgMin).
void noTiesAlongAxis(StabilityCall& s, bool isMax);

}  // namespace nncheck::ops
