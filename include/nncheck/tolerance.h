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

}  // namespace nncheck
