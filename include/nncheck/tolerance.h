// The oracle's policies: how close is close enough, and what a non-finite value means.
//
// Tolerance (|got - want| <= atol + rtol * |want|, per element):
//   float16  rtol 1e-2, atol 1e-3
//   float32  rtol 1e-3, atol 1e-5  (ONNX's backend tests use 1e-3 and 1e-7 against outputs
//                                   computed in float32; ours are computed in double, and
//                                   cancellation near zero needs a little absolute slack)
//   float64  rtol 1e-6, atol 1e-9
//   integers and bool: exact
// A model gets the loosest of its float outputs' dtypes; for float32, an op whose entry in the
// op library declares a wider tolerance (long accumulations: MatMul, Conv, sums...) widens the
// model's.
//
// Float error along a chain: the tolerance bounds one op's rounding, but a chain can amplify
// it (InstanceNormalization then Tan then Sin: a correct float32 engine ends 1.8e-3 away). When
// outputs differ beyond the tolerance, the properties estimate how far a correct engine may be
// on each element (roundingAllowance: the spread of reference runs whose every op reads inputs
// perturbed by a few ulps, as a backward-stable float implementation's op may, and where an op
// is not backward stable in any real engine, its output off by its declared absolute error:
// LogSoftmax, normalizations computed as x a + b) and count a difference as a failure only
// beyond both. An integer or bool element that a perturbed run
// changes (a comparison, Floor or ArgMax near a tie) may differ at all. A failure's report shows
// its error and the estimate.
//
// NaN/Inf: a case whose reference computes NaN or Inf anywhere, in any intermediate value, is
// not a test of the engine (engines may legitimately differ there: Max with NaN, fused Exp
// overflow), so the properties skip it (Outcome::NonFinite) instead of comparing. Where
// both sides give finite outputs, NaN compares equal to NaN and infinities must match.
//
//   nncheck::Tolerance tol = nncheck::toleranceFor(tc.model);
//   if (auto where = nncheck::firstNonFinite(tc.model, nncheck::runReferenceAllValues(m, in)))
//     std::cerr << *where << "\n";   // "node 'n2' (Log): output 'v3' has NaN"
#pragma once

#include <optional>
#include <string>

#include "nncheck/compare.h"
#include "nncheck/graph.h"
#include "nncheck/reference.h"

namespace nncheck {

Tolerance toleranceFor(DType dtype);
Tolerance toleranceFor(const Model& model);

// The first graph input or node output (in graph order) holding NaN or Inf, described; values
// are the reference's, from runReferenceAllValues.
std::optional<std::string> firstNonFinite(const Model& model, const TensorMap& values);

// Per graph output in `want` (the reference's outputs for `inputs`): float64 tensors of its
// shape, each element the error a correct engine may make there beyond the tolerance; infinite
// where a perturbed run gives a non-finite value or another integer.
TensorMap roundingAllowance(const Model& model, const TensorMap& inputs, const TensorMap& want);

}  // namespace nncheck
