// The arithmetic ONNX's quantized ops share: values shifted by zero points that are per tensor or
// per channel, and requantization that rounds half to even and saturates.
//
//   Tensor a = minusZeroPoint(k.in(0), &k.in(2), -1);      // float64, exact
//   requantize(acc, scale, zeroPoint, k.out(0));            // uint8/int8, half to even
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "ops/kernels.h"
#include "ops/stability.h"

namespace nncheck::ops {

// v rounded half to even, plus an integer offset (a zero point), saturated into T's range. ONNX
// rounds before it adds the zero point, which differs at a tie when the zero point is odd.
template <class T>
T saturateRound(double v, double offset = 0) {
  const double r = std::nearbyint(v) + offset;
  if (!(r >= static_cast<double>(std::numeric_limits<T>::min())))
    return std::numeric_limits<T>::min();
  if (r > static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

// Element `channel` of a per-channel tensor, or its one element when it is per tensor; 0 for an
// absent input.
inline double perChannel(const KernelCall& k, size_t input, int64_t channel) {
  if (!k.has(input)) return 0;
  const Tensor& t = k.in(input);
  return t.toDouble(t.size() == 1 ? 0 : channel);
}

// Each element's index along `axis` of a tensor of this shape: its channel, which picks its
// per-axis scale and zero point.
inline std::vector<int64_t> channelsAlong(const Shape& shape, int64_t axis) {
  const AxisSplit sp(shape, axis);
  std::vector<int64_t> c(static_cast<size_t>(elementCount(shape)));
  for (size_t e = 0; e < c.size(); ++e) c[e] = (static_cast<int64_t>(e) / sp.inner) % sp.size;
  return c;
}

// x - zero point as float64 (exact for 8- and 32-bit integers). A zero point with more than one
// element is per channel along `axis` of x.
inline Tensor minusZeroPoint(const Tensor& x, const Tensor* zeroPoint, int64_t axis) {
  Tensor out(DType::Float64, x.shape());
  auto y = out.span<double>();
  const bool perAxis = zeroPoint && zeroPoint->size() > 1;
  const std::vector<int64_t> c =
      perAxis ? channelsAlong(x.shape(), axis) : std::vector<int64_t>(y.size(), 0);
  for (size_t e = 0; e < y.size(); ++e)
    y[e] = x.toDouble(static_cast<int64_t>(e)) - (zeroPoint ? zeroPoint->toDouble(c[e]) : 0.0);
  return out;
}

// out[e] = saturateRound(values[e], zeroPoint(e)) in out's dtype (int8, uint8 or int32).
template <class ZeroPoint>
void requantize(const std::vector<double>& values, ZeroPoint zeroPoint, Tensor& out) {
  visitCompute(out.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      auto y = out.span<T>();
      for (size_t e = 0; e < values.size(); ++e)
        y[e] = saturateRound<T>(values[e], zeroPoint(static_cast<int64_t>(e)));
    } else {
      throw Error("requantize: output dtype " + std::string(dtypeName(out.dtype())) +
                  " is not an integer type");
    }
  });
}

// The range a quantized output of this dtype saturates into.
inline std::pair<double, double> saturationRange(DType t) {
  return t == DType::Int8 ? std::pair{-128.0, 127.0} : std::pair{0.0, 255.0};
}

// Declares the next two inputs, for OpSpec::with: a quantization's scale `<of>_scale` (float32,
// positive; shaped by `scaleShape`) and zero point `<of>_zero_point` (type variable `zeroType`,
// shaped like the scale), both weights. The spec declares the type variable "tensor(float)".
//   .input("a", "T1").with(scaleAndZeroPoint("a", "T1", false))
inline auto scaleAndZeroPoint(
    std::string of, std::string zeroType, bool zeroPointOptional,
    ShapeSampler scaleShape = [](SampleContext&) { return Shape{}; }) {
  return [=](OpSpec& spec) {
    const size_t scale = spec.inputs.size();
    spec.input(of + "_scale", "tensor(float)")
        .weight()
        .domain(ValueDomain::Positive)
        .sampleShape(scaleShape);
    if (zeroPointOptional)
      spec.optionalInput(of + "_zero_point", zeroType);
    else
      spec.input(of + "_zero_point", zeroType);
    spec.weight().sampleShape([scale](SampleContext& c) { return c.shape(scale); });
  };
}

// Whether a value about to be rounded is so near a half that a correct float32 engine may round
// it the other way, inside [lo, hi] where rounding matters (the result saturates outside).
inline bool nearHalf(double v, double lo, double hi) {
  if (!(v > lo - 1 && v < hi + 1)) return false;
  return std::fabs(v - std::floor(v) - 0.5) < stableMargin(std::fabs(v));
}

// A QLinear op's stability: where a result is near a half before rounding, y_scale (input
// `yScale`) moves, which moves every result; `yZeroPoint` is the output's zero point.
inline void requantizedAwayFromHalves(StabilityCall& s, const std::vector<double>& values,
                                      size_t yScale, size_t yZeroPoint) {
  const double zeroPoint = s.in(yZeroPoint).toDouble(0);
  const auto [lo, hi] = saturationRange(s.in(yZeroPoint).dtype());
  for (double v : values)
    if (nearHalf(v, lo - zeroPoint, hi - zeroPoint)) {
      s.tooClose(yScale, 0, 1);
      return;
    }
}

}  // namespace nncheck::ops
