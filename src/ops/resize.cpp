// Resize, nearest and (multi)linear, with ONNX's coordinate transformations. Cubic and
// tf_crop_and_resize are declared unsupported.
#include "ops/resize.h"

#include <cmath>

#include "ops/gradients.h"
#include "ops/infer.h"

namespace nncheck::ops {
namespace {

// floor(d * scale), with scale exact as the dyadic rational a float is (so z3 needs no reals).
inline int64_t scaleDim(int64_t d, double scale) {
  const float scaled = std::floor(static_cast<float>(d) * static_cast<float>(scale));
  // A scale from a file can be anything: a dim past int64 (or NaN) is an error, not UB.
  if (!(std::fabs(scaled) < 9.0e18f))
    throw Error("Resize: dim " + std::to_string(d) + " scaled by " + std::to_string(scale) +
                " is out of range");
  return static_cast<int64_t>(scaled);
}
inline z3::expr scaleDim(const z3::expr& d, double scale) {
  int e = 0;
  double m = std::frexp(static_cast<float>(scale), &e);  // scale = m * 2^e, m in [0.5, 1)
  const int64_t num = static_cast<int64_t>(std::ldexp(m, 24));
  const int shift = 24 - e;
  if (shift <= 0) return d * static_cast<int>(num << -shift);
  return (d * d.ctx().int_val(num)) / d.ctx().int_val(int64_t{1} << shift);
}

template <class I>
std::vector<I> resizedDims(Rule<I>& r) {
  // Opset 13 passes an empty scales tensor when sizes is used: presence is structural.
  const bool hasScales = r.has(2) && !r.floats(2).empty();
  const bool hasSizes = r.has(3);
  r.check(hasScales != hasSizes, "exactly one of scales and sizes is given");
  // A scalar's sizes would hold no element, which ONNX reads as no sizes (its checker refuses
  // the model: "Either `sizes` or `scales` must be provided").
  r.check(r.rank(0) >= 1, "X has rank >= 1");
  std::vector<I> out;
  if (hasSizes) {
    out = r.values(3);
    r.check(static_cast<int64_t>(out.size()) == r.rank(0), "sizes has one value per axis");
    for (const I& v : out) r.require(v >= 1, "sizes >= 1");
  } else {
    const auto& scales = r.floats(2);
    r.check(static_cast<int64_t>(scales.size()) == r.rank(0), "scales has one value per axis");
    for (size_t a = 0; a < scales.size(); ++a) {
      r.check(scales[a] > 0, "scales > 0");
      out.push_back(scaleDim(r.dims(0)[a], scales[a]));
      r.require(out.back() >= 1, "resized axis " + std::to_string(a) + " is not empty");
    }
  }
  return out;
}

// The source coordinate of output coordinate x along one axis; `out` is the resized length
// before rounding (in * scale when scales are given), as ONNX's reference uses it.
double sourceCoord(const std::string& mode, double x, double scale, int64_t in, double out) {
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out - 1);
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  return x / scale;  // asymmetric
}

int64_t nearestIndex(const std::string& mode, double x, int64_t in) {
  int64_t i;
  if (mode == "floor")
    i = static_cast<int64_t>(std::floor(x));
  else if (mode == "ceil")
    i = static_cast<int64_t>(std::ceil(x));
  else if (x == std::floor(x) + 0.5)
    i = static_cast<int64_t>(mode == "round_prefer_ceil" ? std::ceil(x) : std::floor(x));
  else
    i = static_cast<int64_t>(std::round(x));
  return std::clamp<int64_t>(i, 0, in - 1);
}

// Resize is linear in X: term(o, i, w) for each input element i that output element o takes
// with weight w (in the order o ascending). Shared by its kernel and its gradient.
template <class F>
void resizeTerms(const KernelCall& k, const Shape& out, F&& term) {
  const Shape& in = k.in(0).shape();
  const size_t rank = in.size();
  std::vector<double> scales(rank);
  const bool hasScales = k.has(2) && k.in(2).size() > 0;
  for (size_t a = 0; a < rank; ++a)
    scales[a] = hasScales ? k.in(2).toDouble(static_cast<int64_t>(a))
                          : static_cast<double>(out[a]) / static_cast<double>(in[a]);
  const std::string coord = k.attrString("coordinate_transformation_mode");
  const std::string mode = k.attrString("mode");
  const std::string nearest = k.attrString("nearest_mode");
  // Per axis and output coordinate: two source indices and the weight of the second.
  struct Tap {
    int64_t i0, i1;
    double w;
  };
  std::vector<std::vector<Tap>> taps(rank);
  for (size_t a = 0; a < rank; ++a)
    for (int64_t x = 0; x < out[a]; ++x) {
      double length =
          hasScales ? static_cast<double>(in[a]) * scales[a] : static_cast<double>(out[a]);
      double src = sourceCoord(coord, static_cast<double>(x), scales[a], in[a], length);
      if (mode == "nearest") {
        int64_t i = nearestIndex(nearest, src, in[a]);
        taps[a].push_back({i, i, 0.0});
      } else {
        src = std::clamp(src, 0.0, static_cast<double>(in[a] - 1));
        int64_t i0 = static_cast<int64_t>(std::floor(src));
        int64_t i1 = std::min(i0 + 1, in[a] - 1);
        taps[a].push_back({i0, i1, src - static_cast<double>(i0)});
      }
    }
  Shape strides = stridesOf(in);
  std::vector<int64_t> idx(rank, 0);
  const int64_t outSize = elementCount(out);
  for (int64_t o = 0; o < outSize; ++o) {
    for (uint32_t corner = 0; corner < (1u << rank); ++corner) {
      double w = 1;
      int64_t off = 0;
      for (size_t a = 0; a < rank && w != 0; ++a) {
        const Tap& t = taps[a][static_cast<size_t>(idx[a])];
        bool second = (corner >> a) & 1u;
        w *= second ? t.w : 1.0 - t.w;
        off += (second ? t.i1 : t.i0) * strides[a];
      }
      if (w != 0) term(o, off, w);
    }
    for (size_t a = rank; a-- > 0;) {
      if (++idx[a] < out[a]) break;
      idx[a] = 0;
    }
  }
}

void resizeKernel(KernelCall& k) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    auto xv = k.in(0).span<T>();
    auto yv = k.out(0).span<T>();
    std::vector<double> acc(yv.size(), 0.0);
    resizeTerms(k, k.out(0).shape(), [&](int64_t o, int64_t i, double w) {
      acc[static_cast<size_t>(o)] += w * toDouble(xv[static_cast<size_t>(i)]);
    });
    for (size_t o = 0; o < acc.size(); ++o)
      yv[o] = fromDouble<T>(isFloatLike<T> ? acc[o] : snapResizedInteger(acc[o]));
  });
}

void resizeGradient(GradCall& g) {
  std::vector<double>* dx = g.dIn(0);
  const std::vector<double>* dy = g.dOut(0);
  if (!dx || !dy) return;
  resizeTerms(g.kernel(), g.out(0).shape(), [&](int64_t o, int64_t i, double w) {
    (*dx)[static_cast<size_t>(i)] += w * (*dy)[static_cast<size_t>(o)];
  });
}

}  // namespace

void registerResize(Registry& reg) {
  reg.add(std::move(
      OpSpec("Resize", 13)
          .types("T1", {DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::UInt8,
                        DType::Int32, DType::Int64})
          .types("T2", floatTypes())
          .types("tensor(float)", {DType::Float32})
          .types("tensor(int64)", {DType::Int64})
          .input("X", "T1")
          .optionalInput("roi", "T2")
          .notGenerated()
          .optionalInput("scales", "tensor(float)", InputRole::FloatValues)
          .sampleValues([](SampleContext& c) {
            // Batch and channels keep their size; spatial axes scale by simple factors, and by
            // 1.25, which keeps a short axis's length with coordinates that still move.
            const Shape& in = c.shape(0);
            std::vector<float> scales;
            for (size_t a = 0; a < in.size(); ++a)
              scales.push_back(a < 2 && in.size() > 2 ? 1.0f
                                                      : c.rng.pick(std::vector<float>{
                                                            0.5f, 1.0f, 1.25f, 1.5f, 2.0f, 3.0f}));
            return Tensor::fromVector<float>({static_cast<int64_t>(scales.size())}, scales);
          })
          .optionalInput("sizes", "tensor(int64)", InputRole::ShapeValues)
          .sampleValues([](SampleContext& c) {
            const Shape& in = c.shape(0);
            std::vector<int64_t> sizes;
            for (size_t a = 0; a < in.size(); ++a)
              sizes.push_back(a < 2 && in.size() > 2 ? in[a] : c.rng.uniform(1, 2 * in[a]));
            return Tensor::fromVector<int64_t>({static_cast<int64_t>(sizes.size())}, sizes);
          })
          .output("Y")
          // tf_half_pixel_for_nn is Resize-11's only (Resize-13 dropped it): read, not generated.
          .attr(stringAttr("coordinate_transformation_mode", "half_pixel",
                           {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}))
          .attr(floatAttr("cubic_coeff_a", -0.75f, -0.75, -0.5))
          .attr(intChoiceAttr("exclude_outside", 0, {0}))
          .attr(floatAttr("extrapolation_value", 0.0f, 0.0, 0.0))
          .attr(stringAttr("mode", "nearest", {"nearest", "linear"}))
          .attr(stringAttr("nearest_mode", "round_prefer_floor",
                           {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
          .shapeRule([](auto& r) { r.output(0, resizedDims(r)); })
          .kernel(resizeKernel)
          .gradient(resizeGradient)));
}

}  // namespace nncheck::ops
