// Conversions between float and 8-bit integer tensors: QuantizeLinear, DequantizeLinear (per
// tensor or per axis) and DynamicQuantizeLinear. The quantized MatMul and Conv ops live with
// their float families (matmul_gemm.cpp, conv_pool.cpp).
#include <algorithm>

#include "ops/gradients.h"
#include "ops/quantize.h"

namespace nncheck::ops {
namespace {

// A scale: per tensor usually, sometimes one per element of input 0's `axis`.
Shape scaleShape(SampleContext& c) {
  if (c.rng.chance(0.7) || c.shape(0).empty()) return {};
  const Attribute* a = c.node.attribute("axis");
  return {c.dim(0, a ? a->i : 1)};
}

// Scale (input `scale`) and zero point (input `zeroPoint`, optional): scalars, or vectors with one
// element per element of input 0's `axis`.
template <class I>
void requireScaleAndZeroPoint(Rule<I>& r, size_t scale, size_t zeroPoint) {
  r.check(r.rank(scale) <= 1, "the scale is a scalar, or a vector for per-axis quantization");
  if (r.rank(scale) == 1) {
    const int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
    r.require(r.dim(scale, 0) == r.dim(0, axis), "one scale per element of the axis");
  }
  if (!r.has(zeroPoint)) return;
  r.check(r.rank(zeroPoint) == r.rank(scale), "the zero point is shaped like the scale");
  if (r.rank(scale) == 1)
    r.require(r.dim(zeroPoint, 0) == r.dim(scale, 0), "the zero point is shaped like the scale");
}

// The channel (index into a per-axis scale) of each element of input 0.
std::vector<int64_t> channels(const KernelCall& k, size_t scale) {
  if (k.in(scale).rank() == 0) return std::vector<int64_t>(static_cast<size_t>(k.in(0).size()), 0);
  return channelsAlong(k.in(0).shape(), k.attrInt("axis"));
}

// QuantizeLinear's x / scale, before rounding.
std::vector<double> quotients(const KernelCall& k) {
  const std::vector<int64_t> c = channels(k, 1);
  std::vector<double> v(c.size());
  for (size_t e = 0; e < c.size(); ++e)
    v[e] = static_cast<float>(k.in(0).toDouble(static_cast<int64_t>(e)) / perChannel(k, 1, c[e]));
  return v;
}

// DynamicQuantizeLinear's scale and zero point, computed in float32 as ONNX's function does.
struct DynamicParams {
  float scale = 0;
  float zeroPointBeforeRounding = 0;
};
DynamicParams dynamicParams(const Tensor& x) {
  float lo = 0, hi = 0;
  for (float v : x.span<const float>()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  DynamicParams p;
  p.scale = (hi - lo) / 255.0f;
  p.zeroPointBeforeRounding = 0.0f - lo / p.scale;
  return p;
}

}  // namespace

void registerQuantization(Registry& reg) {
  reg.add(std::move(
      OpSpec("QuantizeLinear", 10)
          .types("T1", {DType::Float32, DType::Int32})
          .types("tensor(float)", {DType::Float32})
          .types("T2", {DType::UInt8, DType::Int8})
          .input("x", "T1")
          .with(scaleAndZeroPoint("y", "T2", true, scaleShape))
          .output("y")
          .attr(axisAttr("axis", 1))
          .shapeRule([](auto& r) {
            requireScaleAndZeroPoint(r, 1, 2);
            r.output(0, r.dims(0), r.has(2) ? r.dtype(2) : DType::UInt8);
          })
          .kernel([](KernelCall& k) {
            const std::vector<int64_t> c = channels(k, 1);
            requantize(
                quotients(k),
                [&](int64_t e) { return perChannel(k, 2, c[static_cast<size_t>(e)]); }, k.out(0));
          })
          // Where x / scale is near a half, x moves away from it.
          .stability([](StabilityCall& s) {
            const std::vector<double> v = quotients(s.kernel());
            const auto [lo, hi] =
                saturationRange(s.kernel().has(2) ? s.in(2).dtype() : DType::UInt8);
            const std::vector<int64_t> c = channels(s.kernel(), 1);
            for (size_t e = 0; e < v.size(); ++e) {
              const double q = v[e], zeroPoint = perChannel(s.kernel(), 2, c[e]);
              if (nearHalf(q, lo - zeroPoint, hi - zeroPoint))
                s.tooClose(0, static_cast<int64_t>(e), q - std::floor(q) < 0.5 ? -1 : 1);
            }
          })));

  reg.add(std::move(OpSpec("DequantizeLinear", 10)
                        .types("T", {DType::UInt8, DType::Int8, DType::Int32})
                        .types("tensor(float)", {DType::Float32})
                        .input("x", "T")
                        .with(scaleAndZeroPoint("x", "T", true, scaleShape))
                        .output("y")
                        .attr(axisAttr("axis", 1))
                        .shapeRule([](auto& r) {
                          requireScaleAndZeroPoint(r, 1, 2);
                          // DequantizeLinear-13: "In the case of dequantizing int32, there's no
                          // zero point (zero point is supposed to be 0)."
                          r.check(r.dtype(0) != DType::Int32 || !r.has(2),
                                  "an int32 x has no zero point (ONNX: it is 0)");
                          r.output(0, r.dims(0), DType::Float32);
                        })
                        .kernel([](KernelCall& k) {
                          const std::vector<int64_t> c = channels(k, 1);
                          auto y = k.out(0).span<float>();
                          for (size_t e = 0; e < c.size(); ++e)
                            y[e] = static_cast<float>((k.in(0).toDouble(static_cast<int64_t>(e)) -
                                                       perChannel(k, 2, c[e])) *
                                                      perChannel(k, 1, c[e]));
                        })
                        // dy/dscale = x - zero point; x and the zero point are integers.
                        .gradient([](GradCall& g) {
                          std::vector<double>* ds = g.dIn(1);
                          const std::vector<double>* dy = g.dOut(0);
                          if (!ds || !dy) return;
                          const std::vector<int64_t> c = channels(g.kernel(), 1);
                          for (size_t e = 0; e < c.size(); ++e)
                            (*ds)[static_cast<size_t>(c[e])] +=
                                (*dy)[e] * (g.in(0).toDouble(static_cast<int64_t>(e)) -
                                            perChannel(g.kernel(), 2, c[e]));
                        })));

  reg.add(
      std::move(OpSpec("DynamicQuantizeLinear", 11)
                    .types("T1", {DType::Float32})
                    .input("x", "T1")
                    .output("y")
                    .output("y_scale")
                    .output("y_zero_point")
                    .shapeRule([](auto& r) {
                      r.output(0, r.dims(0), DType::UInt8);
                      r.output(1, {}, DType::Float32);
                      r.output(2, {}, DType::UInt8);
                    })
                    .kernel([](KernelCall& k) {
                      const DynamicParams p = dynamicParams(k.in(0));
                      const uint8_t zeroPoint = saturateRound<uint8_t>(p.zeroPointBeforeRounding);
                      const auto x = k.in(0).span<const float>();
                      std::vector<double> v(x.size());
                      for (size_t e = 0; e < x.size(); ++e) v[e] = x[e] / p.scale;  // in float32
                      requantize(
                          v, [&](int64_t) { return double(zeroPoint); }, k.out(0));
                      k.out(1).span<float>()[0] = p.scale;
                      k.out(2).span<uint8_t>()[0] = zeroPoint;
                    })
                    // Away from halves: each x / scale (x moves), and the zero point before
                    // rounding (the smallest element moves, which sets it).
                    .stability([](StabilityCall& s) {
                      const DynamicParams p = dynamicParams(s.in(0));
                      const auto x = s.in(0).span<const float>();
                      if (nearHalf(p.zeroPointBeforeRounding, 0, 255)) {
                        const auto lowest = std::min_element(x.begin(), x.end()) - x.begin();
                        s.tooClose(0, lowest, -1);
                      }
                      const double zeroPoint = saturateRound<uint8_t>(p.zeroPointBeforeRounding);
                      for (size_t e = 0; e < x.size(); ++e) {
                        const double q = x[e] / p.scale;
                        if (nearHalf(q, -zeroPoint, 255 - zeroPoint))
                          s.tooClose(0, static_cast<int64_t>(e), q - std::floor(q) < 0.5 ? -1 : 1);
                      }
                    })));
}

}  // namespace nncheck::ops
