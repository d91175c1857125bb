#include "nncheck/compare.h"

#include <cmath>
#include <sstream>

namespace nncheck {
namespace {

std::string indexToString(const Shape& shape, int64_t linear) {
  std::vector<int64_t> idx(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    idx[a] = shape[a] ? linear % shape[a] : 0;
    linear = shape[a] ? linear / shape[a] : 0;
  }
  return shapeToString(idx);
}

}  // namespace

Comparison compareTensors(const Tensor& got, const Tensor& want, const Tolerance& tol,
                          const Tensor* allowance) {
  Comparison c;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    c.ok = false;
    c.layoutDiffers = true;
    c.message = std::string(got.dtype() != want.dtype() ? "dtype" : "shape") +
                " differs: expected " + std::string(dtypeName(want.dtype())) +
                shapeToString(want.shape()) + ", got " + std::string(dtypeName(got.dtype())) +
                shapeToString(got.shape());
    return c;
  }
  if (want.dtype() == DType::String) {
    c.ok = got.strings() == want.strings();
    if (!c.ok) c.message = "string tensors differ";
    return c;
  }
  if (!isComputeDType(want.dtype())) {
    c.ok = got.bytes() == want.bytes();
    if (!c.ok) c.message = "tensors of " + std::string(dtypeName(want.dtype())) + " differ";
    return c;
  }
  const bool exact = !isFloatDType(want.dtype());
  if (allowance && allowance->size() != want.size()) allowance = nullptr;
  int64_t first = -1;
  double worstBeyond = -1;
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got.toDouble(i), w = want.toDouble(i);
    const double allowed = allowance ? allowance->toDouble(i) : 0;
    bool same;
    if (exact) {
      same = got.toInt64(i) == want.toInt64(i) || std::isinf(allowed);
      double d = std::fabs(g - w);
      c.maxAbsError = std::max(c.maxAbsError, d);
      if (w != 0) c.maxRelError = std::max(c.maxRelError, d / std::fabs(w));
    } else if (!std::isfinite(w) || !std::isfinite(g)) {
      same = (std::isnan(w) && std::isnan(g)) || g == w;
      // A NaN or an infinity where something else was expected is an unbounded error.
      if (!same) c.maxAbsError = c.maxRelError = INFINITY;
    } else {
      double d = std::fabs(g - w);
      same = withinTolerance(g, w, {tol.rtol, tol.atol + allowed});
      c.maxAbsError = std::max(c.maxAbsError, d);
      // Relative to an expected 0, any difference is infinitely large.
      if (w != 0)
        c.maxRelError = std::max(c.maxRelError, d / std::fabs(w));
      else if (d > 0)
        c.maxRelError = INFINITY;
    }
    if (!same) {
      ++c.mismatches;
      if (first < 0) first = i;
      if (const double d = std::fabs(g - w); !(d <= worstBeyond)) {
        worstBeyond = d;
        c.allowanceAtWorst = allowed;
      }
    }
  }
  if (c.mismatches) {
    c.ok = false;
    std::ostringstream os;
    os.precision(9);
    os << c.mismatches << " of " << want.size() << " elements differ";
    if (!exact) os << " beyond rtol=" << tol.rtol << " atol=" << tol.atol;
    if (allowance) os << " and the estimated float error";
    os << "; max abs error " << c.maxAbsError << ", max rel error " << c.maxRelError
       << "; first at " << indexToString(want.shape(), first) << ": got " << got.toDouble(first)
       << ", expected " << want.toDouble(first);
    c.message = os.str();
  }
  return c;
}

}  // namespace nncheck
