// Ops that move data without arithmetic: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Concat, Split, Pad, Expand, Tile, DepthToSpace and SpaceToDepth. Kernels copy elements as bytes,
// so every dtype works.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "ops/gradients.h"
#include "ops/infer.h"

namespace nncheck::ops {
namespace {

inline int64_t safeDiv(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }
inline z3::expr safeDiv(const z3::expr& a, const z3::expr& b) { return a / b; }

void copyAll(KernelCall& k) { k.out(0).bytes() = k.in(0).bytes(); }

std::vector<DType> allTypes() { return allComputeTypes(); }

// Normalized, sorted, distinct axes for a tensor of rank `rank`.
template <class I>
std::vector<int64_t> normalizedAxes(Rule<I>& r, std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) a = r.normAxis(a, rank, "axes");
  std::sort(axes.begin(), axes.end());
  r.check(std::adjacent_find(axes.begin(), axes.end()) == axes.end(), "axes are distinct");
  return axes;
}

template <class I>
std::vector<int64_t> squeezeAxes(Rule<I>& r) {
  if (r.has(1)) return normalizedAxes(r, r.axes(1), r.rank(0));
  std::vector<int64_t> axes;
  if constexpr (std::is_same_v<I, int64_t>) {
    for (int64_t a = 0; a < r.rank(0); ++a)
      if (r.dims(0)[static_cast<size_t>(a)] == 1) axes.push_back(a);
  } else {
    r.check(false, "Squeeze without axes depends on dim values; give axes when generating");
  }
  return axes;
}

template <class I>
std::vector<int64_t> transposePerm(Rule<I>& r) {
  r.check(r.rank(0) >= 1, "the input is not a scalar (ONNX infers no shape for that)");
  std::vector<int64_t> perm;
  if (r.hasAttr("perm")) {
    perm = r.attrInts("perm");
  } else {
    for (int64_t a = r.rank(0); a-- > 0;) perm.push_back(a);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(static_cast<size_t>(r.rank(0)));
  std::iota(iota.begin(), iota.end(), 0);
  r.check(sorted == iota, "perm is a permutation of the input's axes");
  return perm;
}

// Split sizes along the axis: the split input, or equal parts.
template <class I>
std::vector<I> splitSizes(Rule<I>& r, int64_t axis) {
  const size_t n = r.node().outputs.size();
  const I& d = r.dims(0)[static_cast<size_t>(axis)];
  std::vector<I> sizes;
  if (r.has(1)) {
    sizes = r.values(1);
    r.check(sizes.size() == n, "split has one value per output");
    I sum = r.lit(0);
    for (const I& s : sizes) {
      r.require(s >= 0, "split sizes >= 0");
      // Each size within what is left of the axis, before it is added: sizes from a file
      // must not overflow the sum (found by fuzz/model_loader_fuzz).
      r.require(s <= d - sum, "split sizes add up to the split axis");
      sum = sum + s;
    }
    r.require(sum == d, "split sizes add up to the split axis");
  } else {
    r.require(imod(d, r.lit(static_cast<int64_t>(n))) == 0,
              "the split axis divides into equal parts");
    for (size_t i = 0; i < n; ++i) sizes.push_back(d / r.lit(static_cast<int64_t>(n)));
  }
  return sizes;
}

// Reads one axis of a Pad or Tile source index: constant mode returns -1 outside.
int64_t padSource(int64_t x, int64_t d, const std::string& mode) {
  if (x >= 0 && x < d) return x;
  if (mode == "constant" || d == 0) return -1;
  if (mode == "edge") return std::clamp<int64_t>(x, 0, d - 1);
  if (d == 1) return 0;  // reflect
  const int64_t period = 2 * (d - 1);
  x %= period;
  if (x < 0) x += period;
  return x < d ? x : period - x;
}

// --- generation hints ---

// A new shape with the same element count: a random factorization, at times with -1 or 0.
Tensor sampleReshape(SampleContext& c) {
  const Shape& in = c.shape(0);
  int64_t rest = elementCount(in);
  const int64_t rank = c.rng.uniform(1, c.maxRank);
  std::vector<int64_t> out;
  for (int64_t i = 0; i + 1 < rank; ++i) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= rest && d <= c.maxDim * 4; ++d)
      if (rest % d == 0) divisors.push_back(d);
    out.push_back(c.rng.pick(divisors));
    rest /= out.back();
  }
  out.push_back(rest);
  c.rng.shuffle(out);
  if (c.rng.chance(0.3))
    out[c.rng.index(out.size())] = -1;
  else if (c.rng.chance(0.2) && out[0] == (in.empty() ? -2 : in[0]))
    out[0] = 0;
  return int64Vector(out);
}

// A shape input 0 broadcasts to: its 1s widened, at times with new leading axes.
Tensor sampleExpand(SampleContext& c) {
  std::vector<int64_t> out;
  const Shape& in = c.shape(0);
  const int64_t extra =
      c.rng.chance(0.3)
          ? c.rng.uniform(0, std::max<int64_t>(0, c.maxRank - static_cast<int64_t>(in.size())))
          : 0;
  for (int64_t i = 0; i < extra; ++i) out.push_back(c.rng.uniform(1, 3));
  for (int64_t d : in)
    out.push_back(d == 1 && c.rng.chance(0.6) ? c.rng.uniform(1, c.maxDim)
                                              : (c.rng.chance(0.2) ? 1 : d));
  return int64Vector(out);
}

// DepthToSpace (toSpace) and SpaceToDepth with blocksize b on [N, C, H, W]: channel blocks of
// b * b become b x b spatial tiles and back. DepthToSpace's DCR mode takes the block's position
// from the leading channel bits, CRD from the trailing ones; SpaceToDepth is DCR's inverse.
OpSpec depthSpace(std::string type, bool toSpace) {
  OpSpec s(std::move(type), toSpace ? 11 : 1);  // DepthToSpace's mode since 11
  s.gradient(routingGradient)
      .types("T", allTypes())
      .input("input", "T")
      .output("output")
      .attr(requiredInt("blocksize", 1, 3));
  if (toSpace) s.attr(stringAttr("mode", "DCR", {"DCR", "CRD"}));
  s.shapeRule([toSpace](auto& r) {
    r.check(r.rank(0) == 4, "input has rank 4 (N, C, H, W)");
    const int64_t b = r.attrInt("blocksize");
    r.check(b >= 1, "blocksize >= 1");
    auto d = r.dims(0);
    if (toSpace) {
      r.require(imod(d[1], r.lit(imul(b, b))) == 0, "C is a multiple of blocksize^2");
      r.output(0, {d[0], d[1] / r.lit(imul(b, b)), imul(d[2], r.lit(b)), imul(d[3], r.lit(b))});
    } else {
      r.require(imod(d[2], r.lit(b)) == 0 && imod(d[3], r.lit(b)) == 0,
                "H and W are multiples of blocksize");
      r.output(0, {d[0], imul(d[1], r.lit(imul(b, b))), d[2] / r.lit(b), d[3] / r.lit(b)});
    }
  });
  s.kernel([toSpace](KernelCall& k) {
    const int64_t b = k.attrInt("blocksize");
    const bool crd = toSpace && k.attrString("mode") == "CRD";
    // Index arithmetic on the [N, C, H, W] tensor with many channels, few pixels.
    const Shape& deep = toSpace ? k.in(0).shape() : k.out(0).shape();
    const int64_t C = deep[1] / (b * b), H = deep[2], W = deep[3];
    // The deep tensor's element for spatial (n, c, h * b + i, w * b + j).
    auto deepIndex = [&](int64_t n, int64_t c, int64_t h, int64_t w, int64_t i, int64_t j) {
      const int64_t ch = crd ? c * b * b + i * b + j : (i * b + j) * C + c;
      return ((n * deep[1] + ch) * H + h) * W + w;
    };
    if (toSpace) {
      gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
        return deepIndex(o[0], o[1], o[2] / b, o[3] / b, o[2] % b, o[3] % b);
      });
    } else {
      // Output channel ch = (i * b + j) * C + c reads spatial (c, h * b + i, w * b + j).
      const Shape& x = k.in(0).shape();
      gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
        const int64_t c = o[1] % C, i = o[1] / C / b, j = o[1] / C % b;
        return ((o[0] * x[1] + c) * x[2] + o[2] * b + i) * x[3] + o[3] * b + j;
      });
    }
  });
  return s;
}

}  // namespace

void registerShapeOps(Registry& reg) {
  reg.add(std::move(OpSpec("Reshape", 5)
                        .gradient(passThroughGradient)
                        .types("T", allTypes())
                        .types("tensor(int64)", {DType::Int64})
                        .input("data", "T")
                        .input("shape", "tensor(int64)", InputRole::ShapeValues)
                        .sampleValues(sampleReshape)
                        .output("reshaped")
                        .attr(intChoiceAttr("allowzero", 0, {0, 1}))
                        .shapeRule([](auto& r) {
                          r.check(r.rank(1) == 1, "shape is a vector");
                          const auto& v = r.values(1);
                          const bool allowZero = r.attrInt("allowzero") != 0;
                          using I = std::decay_t<decltype(r.lit(0))>;
                          I total = product(r, r.dims(0)), known = r.lit(1), inferred = r.lit(0);
                          std::vector<I> given;
                          for (size_t j = 0; j < v.size(); ++j) {
                            r.require(v[j] >= -1, "shape values >= -1");
                            I d = v[j];
                            if (!allowZero) {
                              if (static_cast<int64_t>(j) < r.rank(0))
                                d = ite(v[j] == 0, r.dims(0)[j], v[j]);
                              else
                                r.require(v[j] != 0, "a 0 in shape copies an existing input dim");
                            }
                            given.push_back(d);
                            known = imul(known, ite(v[j] == -1, r.lit(1), d));
                            inferred = inferred + ite(v[j] == -1, r.lit(1), r.lit(0));
                          }
                          r.require(inferred <= 1, "at most one -1 in shape");
                          std::vector<I> out;
                          for (size_t j = 0; j < v.size(); ++j)
                            out.push_back(ite(v[j] == -1, safeDiv(total, known), given[j]));
                          r.require(product(r, out) == total, "the element count is unchanged");
                          r.output(0, out);
                        })
                        .kernel(copyAll)));

  reg.add(std::move(OpSpec("Flatten", 1)
                        .gradient(passThroughGradient)
                        .types("T", allTypes())
                        .input("input", "T")
                        .output("output")
                        .attr(withSampling(intAttr("axis", 1, 0, 4), AttrSampling::AxisInclusive))
                        .shapeRule([](auto& r) {
                          int64_t axis = r.attrInt("axis");
                          r.check(axis >= -r.rank(0) && axis <= r.rank(0),
                                  "axis within [-rank, rank]");
                          if (axis < 0) axis += r.rank(0);
                          r.output(0, {product(r, r.dims(0), 0, static_cast<size_t>(axis)),
                                       product(r, r.dims(0), static_cast<size_t>(axis))});
                        })
                        .kernel(copyAll)));

  reg.add(
      std::move(OpSpec("Squeeze", 13)
                    .gradient(passThroughGradient)
                    .types("T", allTypes())
                    .types("tensor(int64)", {DType::Int64})
                    .input("data", "T")
                    .optionalInput("axes", "tensor(int64)", InputRole::AxesValues)
                    .sampleValues([](SampleContext& c) {
                      // Some of the axes of size 1 (an axis of another size when there is none).
                      std::vector<int64_t> axes;
                      const Shape& in = c.shape(0);
                      for (size_t a = 0; a < in.size(); ++a)
                        if (in[a] == 1 && c.rng.chance(0.7))
                          axes.push_back(static_cast<int64_t>(a));
                      if (axes.empty())
                        axes.push_back(
                            in.empty() ? 0 : c.rng.uniform(0, static_cast<int64_t>(in.size()) - 1));
                      return int64Vector(axes);
                    })
                    .output("squeezed")
                    .shapeRule([](auto& r) {
                      auto axes = squeezeAxes(r);
                      std::vector<std::decay_t<decltype(r.lit(0))>> out;
                      for (int64_t a = 0; a < r.rank(0); ++a) {
                        const auto& d = r.dims(0)[static_cast<size_t>(a)];
                        if (std::binary_search(axes.begin(), axes.end(), a))
                          r.require(d == 1, "squeezed axis " + std::to_string(a) + " has size 1");
                        else
                          out.push_back(d);
                      }
                      r.output(0, out);
                    })
                    .kernel(copyAll)));

  reg.add(std::move(
      // Unsqueeze-11 took the axes as an attribute; 13 takes them as an input.
      OpSpec("Unsqueeze", 11)
          .gradient(passThroughGradient)
          .types("T", allTypes())
          .types("tensor(int64)", {DType::Int64})
          .input("data", "T")
          .optionalInput("axes", "tensor(int64)", InputRole::AxesValues)
          .generatedAlways()
          .sampleValues([](SampleContext& c) {
            const int64_t r = static_cast<int64_t>(c.shape(0).size());
            const int64_t n =
                std::max<int64_t>(1, std::min<int64_t>(c.rng.uniform(1, 2), c.maxRank - r));
            std::vector<int64_t> axes;
            for (int64_t a = 0; a < r + n; ++a) axes.push_back(a);
            c.rng.shuffle(axes);
            axes.resize(static_cast<size_t>(n));
            for (int64_t& a : axes)
              if (c.rng.chance(0.3)) a -= r + n;
            return int64Vector(axes);
          })
          .output("expanded")
          .attr(withSampling(intsAttr("axes"), AttrSampling::Never))
          .shapeRule([](auto& r) {
            r.check(r.has(1) != r.hasAttr("axes"),
                    "the axes come as input 1 (opset 13) or as an attribute (opset 11), once");
            const std::vector<int64_t> given = r.has(1) ? r.axes(1) : r.attrInts("axes");
            const int64_t outRank = r.rank(0) + static_cast<int64_t>(given.size());
            auto axes = normalizedAxes(r, given, outRank);
            std::vector<std::decay_t<decltype(r.lit(0))>> out;
            size_t next = 0;
            for (int64_t a = 0; a < outRank; ++a)
              out.push_back(std::binary_search(axes.begin(), axes.end(), a) ? r.lit(1)
                                                                            : r.dims(0)[next++]);
            r.output(0, out);
          })
          .kernel(copyAll)));

  reg.add(std::move(OpSpec("Transpose", 1)
                        .gradient(routingGradient)
                        .types("T", allTypes())
                        .input("data", "T")
                        .output("transposed")
                        .attr(withSampling(intsAttr("perm"), AttrSampling::Permutation))
                        .shapeRule([](auto& r) {
                          auto perm = transposePerm(r);
                          std::vector<std::decay_t<decltype(r.lit(0))>> out;
                          for (int64_t p : perm) out.push_back(r.dims(0)[static_cast<size_t>(p)]);
                          r.output(0, out);
                        })
                        .kernel([](KernelCall& k) {
                          Rule<int64_t> r = concreteRule(k);
                          auto perm = transposePerm(r);
                          Shape inStrides = stridesOf(k.in(0).shape());
                          gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
                            int64_t off = 0;
                            for (size_t a = 0; a < o.size(); ++a)
                              off += o[a] * inStrides[static_cast<size_t>(perm[a])];
                            return off;
                          });
                        })));

  reg.add(std::move(
      OpSpec("Concat", 4)
          .gradient(routingGradient)
          .types("T", allTypes())
          .variadicInput("inputs", "T")
          .sampleShape([](SampleContext& c) {
            // Input 0's shape with another size along the axis.
            Shape s = c.shape(0);
            const int64_t r = static_cast<int64_t>(s.size());
            int64_t axis = c.node.attribute("axis") ? c.node.attribute("axis")->i : 0;
            if (axis < 0) axis += r;
            if (axis >= 0 && axis < r) s[static_cast<size_t>(axis)] = c.rng.uniform(1, c.maxDim);
            return s;
          })
          .output("concat_result")
          .attr(withSampling(requiredInt("axis", -4, 3), AttrSampling::Axis))
          .shapeRule([](auto& r) {
            int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            auto out = r.dims(0);
            for (size_t i = 1; i < r.inputCount(); ++i) {
              r.check(r.rank(i) == r.rank(0), "all inputs have the same rank");
              for (int64_t a = 0; a < r.rank(0); ++a) {
                const auto& d = r.dims(i)[static_cast<size_t>(a)];
                if (a == axis)
                  out[static_cast<size_t>(a)] = out[static_cast<size_t>(a)] + d;
                else
                  r.require(d == out[static_cast<size_t>(a)],
                            "input " + std::to_string(i) + " matches at axis " + std::to_string(a));
              }
            }
            r.output(0, out);
          })
          .kernel([](KernelCall& k) {
            const AxisSplit out(k.out(0).shape(), k.attrInt("axis"));
            const size_t sz = dtypeSize(k.out(0).dtype());
            uint8_t* y = k.out(0).bytes().data();
            const int64_t outBlock = out.size * out.inner;
            int64_t done = 0;
            for (size_t i = 0; i < k.inputCount(); ++i) {
              const int64_t block = k.in(i).shape()[static_cast<size_t>(out.axis)] * out.inner;
              if (block == 0) continue;  // an empty tensor's bytes may be a null pointer
              for (int64_t o = 0; o < out.outer; ++o)
                std::memcpy(y + (o * outBlock + done) * sz, k.in(i).bytes().data() + o * block * sz,
                            static_cast<size_t>(block) * sz);
              done += block;
            }
          })));

  reg.add(std::move(OpSpec("Split", 13)
                        .gradient(routingGradient)
                        .types("T", allTypes())
                        .types("tensor(int64)", {DType::Int64})
                        .input("input", "T")
                        .optionalInput("split", "tensor(int64)", InputRole::ShapeValues)
                        .sampleValues([](SampleContext& c) {
                          // A random composition of the axis into one part per output.
                          const Shape& in = c.shape(0);
                          int64_t axis = c.node.attribute("axis") ? c.node.attribute("axis")->i : 0;
                          if (axis < 0) axis += static_cast<int64_t>(in.size());
                          const int64_t n = static_cast<int64_t>(c.node.outputs.size());
                          int64_t rest = axis >= 0 && axis < static_cast<int64_t>(in.size())
                                             ? in[static_cast<size_t>(axis)]
                                             : n;
                          std::vector<int64_t> parts;
                          for (int64_t i = 0; i + 1 < n; ++i) {
                            int64_t p = c.rng.uniform(1, std::max<int64_t>(1, rest - (n - 1 - i)));
                            parts.push_back(p);
                            rest -= p;
                          }
                          parts.push_back(rest);
                          return int64Vector(parts);
                        })
                        .variadicOutput("outputs", 3)
                        .attr(axisAttr("axis", 0))
                        .shapeRule([](auto& r) {
                          int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
                          r.check(!r.node().outputs.empty(), "Split has at least one output");
                          auto sizes = splitSizes(r, axis);
                          for (size_t i = 0; i < sizes.size(); ++i) {
                            auto out = r.dims(0);
                            out[static_cast<size_t>(axis)] = sizes[i];
                            r.output(i, out);
                          }
                        })
                        .kernel([](KernelCall& k) {
                          const AxisSplit in(k.in(0).shape(), k.attrInt("axis"));
                          const size_t sz = dtypeSize(k.in(0).dtype());
                          const int64_t inBlock = in.size * in.inner;
                          int64_t done = 0;
                          for (size_t i = 0; i < k.outputCount(); ++i) {
                            Tensor& out = k.out(i);
                            const int64_t block =
                                out.shape()[static_cast<size_t>(in.axis)] * in.inner;
                            if (block == 0) continue;  // an empty tensor's bytes may be null
                            for (int64_t o = 0; o < in.outer; ++o)
                              std::memcpy(out.bytes().data() + o * block * sz,
                                          k.in(0).bytes().data() + (o * inBlock + done) * sz,
                                          static_cast<size_t>(block) * sz);
                            done += block;
                          }
                        })));

  reg.add(std::move(
      OpSpec("Pad", 11)
          .gradient(routingGradient)
          .types("T", allTypes())
          .types("tensor(int64)", {DType::Int64})
          .input("data", "T")
          .input("pads", "tensor(int64)", InputRole::ShapeValues)
          .sampleValues([](SampleContext& c) {
            std::vector<int64_t> pads;
            for (size_t i = 0; i < 2 * c.shape(0).size(); ++i)
              pads.push_back(c.rng.chance(0.5) ? 0 : c.rng.uniform(1, 2));
            return int64Vector(pads);
          })
          .optionalInput("constant_value", "T")
          .weight()
          .sampleShape([](SampleContext&) { return Shape{}; })
          .output("output")
          .attr(stringAttr("mode", "constant", {"constant", "reflect", "edge"}))
          .shapeRule([](auto& r) {
            const auto& pads = r.values(1);
            const int64_t rank = r.rank(0);
            r.check(static_cast<int64_t>(pads.size()) == 2 * rank, "pads has 2 * rank values");
            if (r.has(2)) r.check(r.rank(2) == 0, "constant_value is a scalar");
            const std::string mode = r.attrString("mode");
            auto out = r.dims(0);
            for (int64_t a = 0; a < rank; ++a) {
              const auto& d = r.dims(0)[static_cast<size_t>(a)];
              const auto& pb = pads[static_cast<size_t>(a)];
              const auto& pe = pads[static_cast<size_t>(a + rank)];
              // Pads from a file may be anything: their sum must not overflow (found by
              // fuzz/model_loader_fuzz).
              const auto padded = iadd(iadd(d, pb), pe);
              r.require(padded >= 0, "padded size >= 0 at axis " + std::to_string(a));
              if (mode != "constant") {
                r.require((pb <= 0 && pe <= 0) || d >= 1,
                          mode + " padding of an empty axis " + std::to_string(a));
                // Pad's text says negative pads remove elements, and the modes are numpy.pad's,
                // which refuses negative pads: whether cropping comes before edge or reflect
                // padding is not said, and ORT (crop first) and nncheck's reference (pad first)
                // differ where an axis is cropped and padded at once.
                r.requireDefined(
                    pb >= 0 && pe >= 0,
                    mode + " padding with a negative pad at axis " + std::to_string(a));
                // Reflect pads stay below the axis's length (onnx/onnx#7700 clarified it; engines
                // read outside the input past it: ORT refuses, TVM returns garbage).
                if (mode == "reflect")
                  r.requireDefined(
                      pb < d && pe < d,
                      "reflect padding by the axis's length or more at axis " + std::to_string(a));
              }
              out[static_cast<size_t>(a)] = padded;
            }
            r.output(0, out);
          })
          .kernel([](KernelCall& k) {
            const Shape& in = k.in(0).shape();
            std::vector<int64_t> pads = k.in(1).toInt64s();
            const std::string mode = k.attrString("mode");
            Shape strides = stridesOf(in);
            Tensor fill(k.in(0).dtype(), {1});
            if (k.has(2)) fill.bytes() = k.in(2).bytes();
            const size_t sz = dtypeSize(k.in(0).dtype());
            uint8_t* y = k.out(0).bytes().data();
            const Shape& os = k.out(0).shape();
            std::vector<int64_t> idx(os.size(), 0);
            for (int64_t o = 0; o < k.out(0).size(); ++o) {
              int64_t off = 0;
              for (size_t a = 0; a < os.size() && off >= 0; ++a) {
                int64_t x = padSource(idx[a] - pads[a], in[a], mode);
                off = x < 0 ? -1 : off + x * strides[a];
              }
              std::memcpy(y + o * sz,
                          off < 0 ? fill.bytes().data() : k.in(0).bytes().data() + off * sz, sz);
              for (size_t a = os.size(); a-- > 0;) {
                if (++idx[a] < os[a]) break;
                idx[a] = 0;
              }
            }
          })));

  reg.add(std::move(OpSpec("Expand", 8)
                        .gradient(routingGradient)
                        .types("T", allTypes())
                        .types("tensor(int64)", {DType::Int64})
                        .input("input", "T")
                        .input("shape", "tensor(int64)", InputRole::ShapeValues)
                        .sampleValues(sampleExpand)
                        .output("output")
                        .shapeRule([](auto& r) {
                          r.check(r.rank(1) == 1, "shape is a vector");
                          for (const auto& v : r.values(1)) r.require(v >= 1, "shape values >= 1");
                          r.output(0, broadcastShapes(r, {r.dims(0), r.values(1)}));
                        })
                        .kernel([](KernelCall& k) {
                          Shape bs = broadcastStrides(k.in(0).shape(), k.out(0).shape());
                          gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
                            int64_t off = 0;
                            for (size_t a = 0; a < o.size(); ++a) off += o[a] * bs[a];
                            return off;
                          });
                        })));

  reg.add(depthSpace("DepthToSpace", true));
  reg.add(depthSpace("SpaceToDepth", false));

  reg.add(std::move(OpSpec("Tile", 6)
                        .gradient(routingGradient)
                        .types("T", allTypes())
                        .types("tensor(int64)", {DType::Int64})
                        .input("input", "T")
                        .input("repeats", "tensor(int64)", InputRole::ShapeValues)
                        .sampleValues([](SampleContext& c) {
                          std::vector<int64_t> reps;
                          for (size_t i = 0; i < c.shape(0).size(); ++i)
                            reps.push_back(c.rng.chance(0.6) ? 1 : c.rng.uniform(2, 3));
                          return int64Vector(reps);
                        })
                        .output("output")
                        .shapeRule([](auto& r) {
                          const auto& rep = r.values(1);
                          r.check(static_cast<int64_t>(rep.size()) == r.rank(0),
                                  "repeats has one value per axis");
                          auto out = r.dims(0);
                          for (size_t a = 0; a < out.size(); ++a) {
                            r.require(rep[a] >= 0, "repeats >= 0");
                            out[a] = imul(out[a], rep[a]);
                          }
                          r.output(0, out);
                        })
                        .kernel([](KernelCall& k) {
                          const Shape& in = k.in(0).shape();
                          Shape strides = stridesOf(in);
                          gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
                            int64_t off = 0;
                            for (size_t a = 0; a < o.size(); ++a)
                              off += (o[a] % in[a]) * strides[a];
                            return off;
                          });
                        })));
}

}  // namespace nncheck::ops
