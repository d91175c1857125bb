// Ops that select or place elements by index: Gather, GatherElements, GatherND, ScatterElements,
// ScatterND, Slice, TopK, OneHot and ReverseSequence.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <span>

#include "ops/gradients.h"
#include "ops/infer.h"
#include "ops/stability.h"

namespace nncheck::ops {
namespace {

template <class I>
struct SliceAxis {
  I start, length;
  int64_t step = 1;
};

// Per input axis: the first index, the count and the step Slice takes (step 1, all elements
// for axes it does not name). Start and end clamp as the ONNX spec says.
template <class I>
std::vector<SliceAxis<I>> sliceGeometry(Rule<I>& r) {
  r.check(r.rank(0) >= 1, "the input is not a scalar (ONNX infers no shape for that)");
  const auto& starts = r.values(1);
  const auto& ends = r.values(2);
  const size_t n = starts.size();
  r.check(r.rank(1) == 1 && r.rank(2) == 1 && ends.size() == n,
          "starts and ends are vectors of one length");
  std::vector<int64_t> axes, steps(n, 1);
  if (r.has(3)) {
    axes = r.axes(3);
    r.check(axes.size() == n, "axes has one value per start");
  } else {
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (r.has(4)) {
    steps = r.axes(4);
    r.check(steps.size() == n, "steps has one value per start");
  }
  std::vector<SliceAxis<I>> geo;
  for (const auto& d : r.dims(0)) geo.push_back({r.lit(0), d, 1});
  std::vector<bool> seen(static_cast<size_t>(r.rank(0)), false);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = r.normAxis(axes[i], r.rank(0), "axes");
    r.check(!seen[static_cast<size_t>(a)], "axes are distinct");
    seen[static_cast<size_t>(a)] = true;
    const int64_t step = steps[i];
    r.check(step != 0, "steps are non-zero");
    const I& D = r.dims(0)[static_cast<size_t>(a)];
    const I zero = r.lit(0);
    I s = zero, len = zero;
    if (step > 0) {
      s = ite(starts[i] < 0, imax(starts[i] + D, zero), imin(starts[i], D));
      I e = ite(ends[i] < 0, imax(ends[i] + D, zero), imin(ends[i], D));
      len = ceilDiv(imax(e - s, zero), step);
    } else {
      s = ite(starts[i] < 0, imax(starts[i] + D, zero), imin(starts[i], D - 1));
      I e = ite(ends[i] < 0, imax(ends[i] + D, r.lit(-1)), imin(ends[i], D - 1));
      len = ceilDiv(imax(s - e, zero), -step);
    }
    geo[static_cast<size_t>(a)] = {s, len, step};
  }
  return geo;
}

// An index tensor's shape for data of shape `c.shape(0)`: the same rank, no dim larger.
Shape noLargerShape(SampleContext& c) {
  Shape s = c.shape(0);
  for (int64_t& d : s) d = c.rng.uniform(1, std::max<int64_t>(d, 1));
  return s;
}

// The axis attribute of a node over a tensor of rank `rank`, normalized.
int64_t axisOf(const KernelCall& k, int64_t rank) {
  const int64_t a = k.attrInt("axis");
  return a < 0 ? a + rank : a;
}

// For each element of `indices` (GatherElements, ScatterElements), the offset in a tensor of
// `data`'s shape of the element it addresses: its own coordinates, with `axis` replaced by its
// value (negative counts from the end).
std::vector<int64_t> elementTargets(const Tensor& indices, const Shape& data, int64_t axis) {
  const Shape dataStrides = stridesOf(data);
  const Shape& is = indices.shape();
  std::vector<int64_t> out(static_cast<size_t>(indices.size()));
  std::vector<int64_t> c(is.size(), 0);
  const int64_t D = data[static_cast<size_t>(axis)];
  for (int64_t e = 0; e < indices.size(); ++e) {
    int64_t v = indices.toInt64(e);
    if (v < -D || v >= D)
      throw Error("index " + std::to_string(v) + " out of range for axis " + std::to_string(axis) +
                  " of size " + std::to_string(D));
    if (v < 0) v += D;
    int64_t off = 0;
    for (size_t a = 0; a < c.size(); ++a)
      off += (static_cast<int64_t>(a) == axis ? v : c[a]) * dataStrides[a];
    out[static_cast<size_t>(e)] = off;
    for (size_t a = c.size(); a-- > 0;) {
      if (++c[a] < is[a]) break;
      c[a] = 0;
    }
  }
  return out;
}

// ScatterElements' indices: in range, and without reduction distinct along the axis within each
// line, so that no two updates race for one element (ONNX leaves that order unspecified).
void scatterIndicesFix(const Node& node, const std::vector<Shape>& shapes, Tensor& indices) {
  const int64_t bound = indexBound(node, shapes.at(0));
  wrapIndices(indices, bound);
  const Attribute* reduction = node.attribute("reduction");
  if ((reduction && reduction->s != "none") || bound <= 0 || indices.rank() == 0) return;
  const Attribute* ax = node.attribute("axis");
  const AxisSplit sp(indices.shape(), ax ? ax->i : 0);
  visitCompute(indices.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      auto v = indices.span<T>();
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t i = 0; i < sp.inner; ++i) {
          std::vector<bool> used(static_cast<size_t>(bound), false);
          for (int64_t j = 0; j < sp.size; ++j) {
            T& x = v[static_cast<size_t>((o * sp.size + j) * sp.inner + i)];
            int64_t at = x < 0 ? x + bound : x;
            for (int64_t tries = 0; used[static_cast<size_t>(at)] && tries < bound; ++tries)
              at = (at + 1) % bound;
            used[static_cast<size_t>(at)] = true;
            if (at != (x < 0 ? x + bound : x)) x = static_cast<T>(at);
          }
        }
    }
  });
}

// ScatterElements' reduction of an element and an update, in the element's arithmetic type.
template <class A>
A scatterReduce(const std::string& reduction, A old, A update) {
  if (reduction == "add") {
    if constexpr (std::is_integral_v<A>)
      return wrapAdd(old, update);
    else
      return old + update;
  }
  if (reduction == "mul") {
    if constexpr (std::is_integral_v<A>)
      return wrapMul(old, update);
    else
      return old * update;
  }
  return update;
}

// TopK's selection per line along the axis: for output position j of line (o, i), the input
// position along the axis. Ties go to the lower index, as ONNX says.
std::vector<int64_t> topKOrder(const KernelCall& k) {
  const Tensor& x = k.in(0);
  const AxisSplit sp(x.shape(), k.attrInt("axis"));
  const int64_t K = k.in(1).toInt64(0);
  const bool largest = k.attrInt("largest") != 0;
  std::vector<int64_t> out;
  std::vector<int64_t> line(static_cast<size_t>(sp.size));
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      auto at = [&](int64_t j) { return (o * sp.size + j) * sp.inner + i; };
      std::iota(line.begin(), line.end(), 0);
      // Compared in the element's own type: distinct int64 values may share a double.
      visitCompute(x.dtype(), [&]<class T>() {
        auto v = x.span<T>();
        auto val = [&](int64_t j) { return static_cast<Arith<T>>(v[static_cast<size_t>(at(j))]); };
        std::stable_sort(line.begin(), line.end(), [&](int64_t a, int64_t b) {
          return largest ? val(a) > val(b) : val(a) < val(b);
        });
      });
      out.insert(out.end(), line.begin(), line.begin() + K);
    }
  return out;
}

// GatherND's and ScatterND's view of indices: after `b` batch dims shared with data, tuples of
// k = indices.shape[-1] indices, each addressing a slice data[batch, i_0, ..., i_{k-1}, ...].
struct NdGeometry {
  int64_t batches = 1, tuples = 1, k = 0, slice = 1, slicesPerBatch = 1;
  Shape addressed;  // data.shape[b : b + k]
  NdGeometry(const Shape& data, const Shape& indices, int64_t b) : k(indices.back()) {
    for (int64_t a = 0; a < b; ++a) batches *= data[static_cast<size_t>(a)];
    for (size_t a = static_cast<size_t>(b); a + 1 < indices.size(); ++a) tuples *= indices[a];
    addressed.assign(data.begin() + b, data.begin() + b + k);
    slicesPerBatch = elementCount(addressed);
    for (size_t a = static_cast<size_t>(b + k); a < data.size(); ++a) slice *= data[a];
  }
  // The slice tuple t (counted over all batches) addresses, counted within its batch.
  int64_t sliceOf(std::span<const int64_t> idx, int64_t t) const {
    int64_t off = 0;
    for (int64_t c = 0; c < k; ++c) {
      const int64_t D = addressed[static_cast<size_t>(c)];
      int64_t v = idx[static_cast<size_t>(t * k + c)];
      if (v < -D || v >= D)
        throw Error("index " + std::to_string(v) + " out of range for a dim of size " +
                    std::to_string(D));
      off = off * D + (v < 0 ? v + D : v);
    }
    return off;
  }
};

int64_t batchDims(const Node& node) {
  const Attribute* a = node.attribute("batch_dims");
  return a ? a->i : 0;
}

// Index tuples made valid for data (shapes[0]): each index wrapped into the dim it addresses;
// `distinct` (ScatterND without reduction) also moves repeated tuples to unused slices.
void fixTuples(const Node& node, const std::vector<Shape>& shapes, Tensor& indices, bool distinct) {
  const Shape& data = shapes.at(0);
  const int64_t b = batchDims(node);
  if (indices.rank() < 1 || indices.shape().back() < 1 ||
      b + indices.shape().back() > static_cast<int64_t>(data.size()))
    return;  // the rule rejects these shapes
  const NdGeometry g(data, indices.shape(), b);
  auto idx = indices.span<int64_t>();
  std::vector<bool> used(static_cast<size_t>(g.batches * g.slicesPerBatch), false);
  for (int64_t t = 0; t < g.batches * g.tuples; ++t) {
    for (int64_t c = 0; c < g.k; ++c) {
      int64_t& v = idx[static_cast<size_t>(t * g.k + c)];
      const int64_t D = g.addressed[static_cast<size_t>(c)];
      if (v < -D || v >= D) v = ((v % D) + D) % D;
    }
    if (!distinct) continue;
    const int64_t base = (t / std::max<int64_t>(g.tuples, 1)) * g.slicesPerBatch;
    int64_t slot = g.sliceOf(idx, t);
    for (int64_t step = 0; step < g.slicesPerBatch && used[static_cast<size_t>(base + slot)];
         ++step)
      slot = (slot + 1) % g.slicesPerBatch;
    used[static_cast<size_t>(base + slot)] = true;
    for (int64_t c = g.k; c-- > 0;) {
      const int64_t D = g.addressed[static_cast<size_t>(c)];
      idx[static_cast<size_t>(t * g.k + c)] = slot % D;
      slot /= D;
    }
  }
}

// An indices shape for data of input 0: `batch` dims of data, a few more, then k in [1, r - b].
Shape tupleIndicesShape(SampleContext& c, int64_t batch) {
  const Shape& data = c.shape(0);
  const int64_t r = static_cast<int64_t>(data.size());
  if (r - batch < 1) return {1};
  Shape s(data.begin(), data.begin() + batch);
  for (int64_t extra = c.rng.uniform(0, 2); extra > 0; --extra) s.push_back(c.rng.uniform(1, 3));
  s.push_back(c.rng.uniform(1, r - batch));
  return s;
}

}  // namespace

void registerIndexing(Registry& reg) {
  reg.add(std::move(
      OpSpec("Gather", 11)
          .gradient(routingGradient)
          .types("T", allComputeTypes())
          .types("Tind", indexTypes())
          .input("data", "T")
          .input("indices", "Tind")
          .indices()
          .sampleShape([](SampleContext& c) {
            Shape s;
            for (int64_t r = c.rng.uniform(0, 2); r > 0; --r) s.push_back(c.rng.uniform(1, 4));
            return s;
          })
          .output("output")
          .attr(axisAttr("axis", 0))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 1, "data has rank >= 1");
            const int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            r.require(r.dims(0)[static_cast<size_t>(axis)] >= 1, "the gathered axis is not empty");
            auto out = std::vector(r.dims(0).begin(), r.dims(0).begin() + axis);
            out.insert(out.end(), r.dims(1).begin(), r.dims(1).end());
            out.insert(out.end(), r.dims(0).begin() + axis + 1, r.dims(0).end());
            r.output(0, out);
          })
          .kernel([](KernelCall& k) {
            const AxisSplit sp(k.in(0).shape(), k.attrInt("axis"));
            const int64_t outer = sp.outer, inner = sp.inner, D = sp.size, axis = sp.axis;
            std::vector<int64_t> idx = k.in(1).toInt64s();
            for (int64_t& i : idx) {
              if (i < -D || i >= D)
                throw Error("Gather: index " + std::to_string(i) + " out of range for axis " +
                            std::to_string(axis) + " of size " + std::to_string(D));
              if (i < 0) i += D;
            }
            const size_t sz = dtypeSize(k.in(0).dtype());
            const int64_t n = static_cast<int64_t>(idx.size());
            uint8_t* y = k.out(0).bytes().data();
            const uint8_t* x = k.in(0).bytes().data();
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t j = 0; j < n; ++j)
                std::memcpy(y + ((o * n + j) * inner) * sz,
                            x + ((o * D + idx[static_cast<size_t>(j)]) * inner) * sz,
                            static_cast<size_t>(inner) * sz);
          })));

  reg.add(std::move(OpSpec("Slice", 10)
                        .gradient(routingGradient)
                        .types("T", allComputeTypes())
                        .types("Tind", indexTypes())
                        .input("data", "T")
                        .input("starts", "Tind", InputRole::ShapeValues)
                        .sampleValues([](SampleContext& c) {
                          std::vector<int64_t> starts;
                          for (int64_t d : c.shape(0))
                            starts.push_back(c.rng.chance(0.5) ? 0 : c.rng.uniform(-d, d - 1));
                          return int64Vector(starts);
                        })
                        .input("ends", "Tind", InputRole::ShapeValues)
                        .sampleValues([](SampleContext& c) {
                          // A non-empty slice of each axis (for positive steps).
                          const Shape& in = c.shape(0);
                          auto starts = c.inputValues.at(1)->toInt64s();
                          std::vector<int64_t> ends;
                          for (size_t a = 0; a < in.size(); ++a) {
                            int64_t s = starts[a] < 0 ? starts[a] + in[a] : starts[a];
                            int64_t e = c.rng.uniform(s + 1, in[a]);
                            ends.push_back(c.rng.chance(0.2) && e < in[a]
                                               ? e - in[a]
                                               : e);  // at times from the end
                          }
                          return int64Vector(ends);
                        })
                        .optionalInput("axes", "Tind", InputRole::AxesValues)
                        .sampleValues([](SampleContext& c) {
                          std::vector<int64_t> axes;
                          const int64_t r = static_cast<int64_t>(c.shape(0).size());
                          for (int64_t a = 0; a < r; ++a)
                            axes.push_back(c.rng.chance(0.3) ? a - r : a);
                          return int64Vector(axes);
                        })
                        .optionalInput("steps", "Tind", InputRole::AxesValues)
                        .sampleValues([](SampleContext& c) {
                          std::vector<int64_t> steps;
                          for (size_t a = 0; a < c.shape(0).size(); ++a)
                            steps.push_back(c.rng.chance(0.75) ? 1 : 2);
                          return int64Vector(steps);
                        })
                        .output("output")
                        .shapeRule([](auto& r) {
                          std::vector<std::decay_t<decltype(r.lit(0))>> out;
                          for (const auto& g : sliceGeometry(r)) out.push_back(g.length);
                          r.output(0, out);
                        })
                        .kernel([](KernelCall& k) {
                          Rule<int64_t> r = concreteRule(k);
                          auto geo = sliceGeometry(r);
                          Shape strides = stridesOf(k.in(0).shape());
                          gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
                            int64_t off = 0;
                            for (size_t a = 0; a < o.size(); ++a)
                              off += (geo[a].start + o[a] * geo[a].step) * strides[a];
                            return off;
                          });
                        })));
  reg.add(std::move(
      OpSpec("GatherElements", 11)
          .gradient(routingGradient)
          .types("T", allComputeTypes())
          .types("Tind", indexTypes())
          .input("data", "T")
          .input("indices", "Tind")
          .indices()
          .sampleShape(noLargerShape)
          .output("output")
          .attr(axisAttr("axis", 0))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 1 && r.rank(1) == r.rank(0), "indices have data's rank (>= 1)");
            const int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            for (int64_t a = 0; a < r.rank(0); ++a)
              if (a != axis) {
                r.require(r.dim(1, a) <= r.dim(0, a), "indices fit in data off the axis");
                // The spec neither allows nor forbids smaller indices off the axis: ONNX's
                // reference and OpenVINO refuse them, ORT and PyTorch take them.
                r.requireDefined(r.dim(1, a) == r.dim(0, a),
                                 "indices as large as data off the axis");
              }
            r.require(r.dim(0, axis) >= 1, "the indexed axis is not empty");
            r.output(0, r.dims(1), r.dtype(0));
          })
          .kernel([](KernelCall& k) {
            const std::vector<int64_t> src =
                elementTargets(k.in(1), k.in(0).shape(), axisOf(k, k.in(0).rank()));
            const Shape outStrides = stridesOf(k.out(0).shape());
            gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
              int64_t e = 0;
              for (size_t a = 0; a < o.size(); ++a) e += o[a] * outStrides[a];
              return src[static_cast<size_t>(e)];
            });
          })));

  reg.add(std::move(
      OpSpec("ScatterElements", 11)
          .types("T", numericTypes())
          .types("Tind", indexTypes())
          .input("data", "T")
          .input("indices", "Tind")
          .indices(scatterIndicesFix)
          .sampleShape(noLargerShape)
          .input("updates", "T")
          .sampleShape([](SampleContext& c) { return c.shape(1); })
          .output("output")
          .attr(axisAttr("axis", 0))
          .attr(stringAttr("reduction", "none", {"none", "add", "mul"}))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 1 && r.rank(1) == r.rank(0) && r.rank(2) == r.rank(0),
                    "indices and updates have data's rank (>= 1)");
            const int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            const bool racing = r.attrString("reduction") == "none";
            for (int64_t a = 0; a < r.rank(0); ++a) {
              r.require(r.dim(2, a) == r.dim(1, a), "updates have the indices' shape");
              if (a != axis || racing)
                r.require(r.dim(1, a) <= r.dim(0, a),
                          "indices fit in data (along the axis too, without reduction)");
            }
            r.require(r.dim(0, axis) >= 1, "the indexed axis is not empty");
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            const std::vector<int64_t> target =
                elementTargets(k.in(1), k.in(0).shape(), axisOf(k, k.in(0).rank()));
            const std::string reduction = k.attrString("reduction");
            k.out(0) = k.in(0);
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              if constexpr (!std::is_same_v<T, bool>) {
                auto y = k.out(0).span<T>();
                auto u = k.in(2).span<T>();
                for (size_t e = 0; e < target.size(); ++e) {
                  T& t = y[static_cast<size_t>(target[e])];
                  t = fromArith<T>(scatterReduce<Arith<T>>(reduction, static_cast<Arith<T>>(t),
                                                           static_cast<Arith<T>>(u[e])));
                }
              }
            });
          })
          // none: an overwritten element passes dY to its update, the others to data; add: both
          // take it; mul: y = x prod(u), so each factor takes dY times the others.
          .gradient([](GradCall& g) {
            const std::vector<double>* dy = g.dOut(0);
            if (!dy) return;
            const KernelCall& k = g.kernel();
            const std::vector<int64_t> target =
                elementTargets(k.in(1), k.in(0).shape(), axisOf(k, k.in(0).rank()));
            const std::string reduction = k.attrString("reduction");
            std::vector<double> product(dy->size(), 1.0);
            std::vector<bool> hit(dy->size(), false);
            for (size_t e = 0; e < target.size(); ++e) {
              product[static_cast<size_t>(target[e])] *= k.in(2).toDouble(static_cast<int64_t>(e));
              hit[static_cast<size_t>(target[e])] = true;
            }
            if (std::vector<double>* dx = g.dIn(0))
              for (size_t t = 0; t < dx->size(); ++t)
                if (reduction != "none" || !hit[t])
                  (*dx)[t] += (*dy)[t] * (reduction == "mul" ? product[t] : 1.0);
            if (std::vector<double>* du = g.dIn(2))
              for (size_t e = 0; e < target.size(); ++e) {
                const size_t t = static_cast<size_t>(target[e]);
                double factor = 1.0;
                if (reduction == "mul") {
                  factor = k.in(0).toDouble(static_cast<int64_t>(t));
                  for (size_t f = 0; f < target.size(); ++f)
                    if (f != e && target[f] == target[e])
                      factor *= k.in(2).toDouble(static_cast<int64_t>(f));
                }
                (*du)[e] += (*dy)[t] * factor;
              }
          })));

  reg.add(std::move(
      OpSpec("TopK", 11)
          .types("T", numericTypes())
          .types("tensor(int64)", {DType::Int64})
          .input("X", "T")
          .input("K", "tensor(int64)", InputRole::ShapeValues)
          .sampleValues([](SampleContext& c) {
            const Attribute* a = c.node.attribute("axis");
            return int64Vector({c.rng.uniform(1, std::max<int64_t>(1, c.dim(0, a ? a->i : -1)))});
          })
          .output("Values")
          .output("Indices")
          .attr(axisAttr("axis", -1))
          .attr(intChoiceAttr("largest", 1, {0, 1}))
          .attr(intChoiceAttr("sorted", 1, {1}))  // unsorted: any order is right
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 1, "X has rank >= 1");
            r.check(r.rank(1) == 1 && r.values(1).size() == 1, "K is a vector of one value");
            const int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            const auto& K = r.values(1)[0];
            r.require(K >= 0 && K <= r.dim(0, axis), "0 <= K <= the axis' size");
            auto out = r.dims(0);
            out[static_cast<size_t>(axis)] = K;
            r.output(0, out);
            r.output(1, out, DType::Int64);
          })
          .stability(distinctAlongAxis)
          .kernel([](KernelCall& k) {
            const AxisSplit sp(k.in(0).shape(), k.attrInt("axis"));
            const int64_t K = k.in(1).toInt64(0);
            const std::vector<int64_t> order = topKOrder(k);
            const size_t sz = dtypeSize(k.in(0).dtype());
            const uint8_t* x = k.in(0).bytes().data();
            uint8_t* y = k.out(0).bytes().data();
            auto idx = k.out(1).span<int64_t>();
            for (int64_t o = 0; o < sp.outer; ++o)
              for (int64_t i = 0; i < sp.inner; ++i)
                for (int64_t j = 0; j < K; ++j) {
                  const int64_t src = order[static_cast<size_t>((o * sp.inner + i) * K + j)];
                  const int64_t to = (o * K + j) * sp.inner + i;
                  std::memcpy(y + to * static_cast<int64_t>(sz),
                              x + ((o * sp.size + src) * sp.inner + i) * static_cast<int64_t>(sz),
                              sz);
                  idx[static_cast<size_t>(to)] = src;
                }
          })
          // Each selected value's dY goes to where it came from.
          .gradient([](GradCall& g) {
            std::vector<double>* dx = g.dIn(0);
            const std::vector<double>* dy = g.dOut(0);
            if (!dx || !dy) return;
            const AxisSplit sp(g.in(0).shape(), g.kernel().attrInt("axis"));
            const Tensor& idx = g.out(1);
            const int64_t K =
                g.out(0).shape().empty() ? 0 : g.out(0).shape()[static_cast<size_t>(sp.axis)];
            for (int64_t o = 0; o < sp.outer; ++o)
              for (int64_t i = 0; i < sp.inner; ++i)
                for (int64_t j = 0; j < K; ++j) {
                  const int64_t at = (o * K + j) * sp.inner + i;
                  (*dx)[static_cast<size_t>((o * sp.size + idx.toInt64(at)) * sp.inner + i)] +=
                      (*dy)[static_cast<size_t>(at)];
                }
          })));

  reg.add(std::move(
      OpSpec("OneHot", 11)
          .types("T1", numericTypes())
          .types("T2", {DType::Float32, DType::Float64, DType::Int32, DType::Int64})
          .types("T3", allComputeTypes())
          .input("indices", "T1")
          .input("depth", "T2", InputRole::ShapeValues)
          .sampleValues(
              [](SampleContext& c) { return Tensor::scalar<int64_t>(c.rng.uniform(1, 8)); })
          .input("values", "T3")
          .weight()
          .sampleShape([](SampleContext&) { return Shape{2}; })
          .output("output")
          .attr(withSampling(axisAttr("axis", -1), AttrSampling::AxisInclusive))
          .shapeRule([](auto& r) {
            r.check(r.rank(1) <= 1 && r.values(1).size() == 1, "depth is a single value");
            r.check(r.rank(2) == 1, "values is a vector [off, on]");
            r.require(r.dim(2, 0) == 2, "values is a vector [off, on]");
            const auto& depth = r.values(1)[0];
            r.require(depth >= 1, "depth >= 1");
            const int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0) + 1, "axis");
            auto out = r.dims(0);
            out.insert(out.begin() + axis, depth);
            r.output(0, out, r.dtype(2));
          })
          // Float indices truncate: keep them off the integers.
          .stability([](StabilityCall& s) { awayFromSteps(s, 0.0); })
          .kernel([](KernelCall& k) {
            const Shape& os = k.out(0).shape();
            const int64_t axis = axisOf(k, static_cast<int64_t>(os.size()));
            const AxisSplit sp(os, axis);
            const int64_t depth = sp.size;
            const size_t sz = dtypeSize(k.in(2).dtype());
            const uint8_t* v = k.in(2).bytes().data();
            uint8_t* y = k.out(0).bytes().data();
            for (int64_t o = 0; o < sp.outer; ++o)
              for (int64_t i = 0; i < sp.inner; ++i) {
                int64_t hot = static_cast<int64_t>(std::trunc(k.in(0).toDouble(o * sp.inner + i)));
                if (hot < 0) hot += depth;
                for (int64_t j = 0; j < depth; ++j)
                  std::memcpy(y + ((o * depth + j) * sp.inner + i) * static_cast<int64_t>(sz),
                              v + (j == hot ? 1 : 0) * static_cast<int64_t>(sz), sz);
              }
          })
          // ONNX 1.12 infers OneHot's rank but not its depth dim, even from an initializer.
          .neverGenerated("ONNX's strict shape inference leaves its depth dim unknown")));

  reg.add(std::move(
      OpSpec("ReverseSequence", 10)
          .gradient(routingGradient)
          .types("T", allComputeTypes())
          .types("tensor(int64)", {DType::Int64})
          .input("input", "T")
          .input("sequence_lens", "tensor(int64)", InputRole::AxesValues)
          .sampleValues([](SampleContext& c) {
            const Attribute* b = c.node.attribute("batch_axis");
            const Attribute* t = c.node.attribute("time_axis");
            const int64_t batch = c.dim(0, b ? b->i : 1), time = c.dim(0, t ? t->i : 0);
            std::vector<int64_t> lens;
            for (int64_t i = 0; i < batch; ++i) lens.push_back(c.rng.uniform(1, time));
            return int64Vector(lens);
          })
          .output("Y")
          .attr(intChoiceAttr("batch_axis", 1, {0, 1}))
          .attr(intChoiceAttr("time_axis", 0, {0, 1}))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 2, "input has rank >= 2");
            const int64_t batch = r.attrInt("batch_axis"), time = r.attrInt("time_axis");
            r.check(batch != time, "batch_axis and time_axis differ");
            r.check(r.rank(1) == 1, "sequence_lens is a vector");
            const auto& lens = r.axes(1);
            r.require(r.dim(0, batch) == r.lit(static_cast<int64_t>(lens.size())),
                      "sequence_lens has one length per batch entry");
            for (int64_t len : lens) {
              r.check(len >= 0, "sequence lengths >= 0");
              r.require(r.dim(0, time) >= r.lit(len), "sequence lengths fit in the time axis");
            }
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            const int64_t batch = k.attrInt("batch_axis"), time = k.attrInt("time_axis");
            const std::vector<int64_t> lens = k.in(1).toInt64s();
            const Shape strides = stridesOf(k.in(0).shape());
            gatherElements(k.in(0), k.out(0), [&](const std::vector<int64_t>& o) {
              const int64_t len = lens[static_cast<size_t>(o[static_cast<size_t>(batch)])];
              int64_t off = 0;
              for (size_t a = 0; a < o.size(); ++a) {
                int64_t c = o[a];
                if (static_cast<int64_t>(a) == time && c < len) c = len - 1 - c;
                off += c * strides[a];
              }
              return off;
            });
          })));
  reg.add(std::move(
      OpSpec("GatherND", 12)
          .gradient(routingGradient)
          .types("T", allComputeTypes())
          .types("tensor(int64)", {DType::Int64})
          .input("data", "T")
          .input("indices", "tensor(int64)")
          .indices([](const Node& n, const std::vector<Shape>& s, Tensor& t) {
            fixTuples(n, s, t, false);
          })
          .sampleShape([](SampleContext& c) { return tupleIndicesShape(c, batchDims(c.node)); })
          .output("output")
          .attr(intAttr("batch_dims", 0, 0, 1))
          .shapeRule([](auto& r) {
            const int64_t b = r.attrInt("batch_dims");
            r.check(r.rank(0) >= 1 && r.rank(1) >= 1, "data and indices have rank >= 1");
            r.check(b >= 0 && b < std::min(r.rank(0), r.rank(1)), "batch_dims is below both ranks");
            const int64_t k = r.structuralDim(1, -1);
            r.check(k >= 1 && k <= r.rank(0) - b,
                    "indices' last dim is within [1, rank of data - batch_dims]");
            for (int64_t a = 0; a < b; ++a)
              r.require(r.dim(1, a) == r.dim(0, a), "batch dim " + std::to_string(a) + " agrees");
            auto out = r.dims(1);
            out.pop_back();
            out.insert(out.end(), r.dims(0).begin() + b + k, r.dims(0).end());
            r.check(!out.empty(),
                    "the output is not a scalar (ONNX 1.12 infers no shape for that)");
            r.output(0, out);
          })
          .kernel([](KernelCall& k) {
            const Tensor& data = k.in(0);
            const NdGeometry g(data.shape(), k.in(1).shape(), k.attrInt("batch_dims"));
            const auto idx = k.in(1).span<const int64_t>();
            const size_t width = dtypeSize(data.dtype()) * static_cast<size_t>(g.slice);
            if (width == 0) return;  // empty slices: an empty tensor's bytes may be null
            for (int64_t t = 0; t < g.batches * g.tuples; ++t) {
              const int64_t from = (t / g.tuples) * g.slicesPerBatch + g.sliceOf(idx, t);
              std::memcpy(k.out(0).bytes().data() + static_cast<size_t>(t) * width,
                          data.bytes().data() + static_cast<size_t>(from) * width, width);
            }
          })));

  reg.add(std::move(
      OpSpec("ScatterND", 13)
          .types("T", allComputeTypes())
          .types("tensor(int64)", {DType::Int64})
          .input("data", "T")
          .input("indices", "tensor(int64)")
          .indices([](const Node& n, const std::vector<Shape>& s, Tensor& t) {
            const Attribute* red = n.attribute("reduction");
            fixTuples(n, s, t, !red || red->s == "none");
          })
          .sampleShape([](SampleContext& c) { return tupleIndicesShape(c, 0); })
          .input("updates", "T")
          .sampleShape([](SampleContext& c) {
            Shape s = c.shape(1);
            const Shape& data = c.shape(0);
            const auto k = static_cast<size_t>(s.empty() ? 0 : s.back());
            if (!s.empty()) s.pop_back();
            if (k <= data.size())
              s.insert(s.end(), data.begin() + static_cast<int64_t>(k), data.end());
            return s;
          })
          .output("output")
          .attr(stringAttr("reduction", "none", {"none", "add", "mul"}))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 1 && r.rank(1) >= 1, "data and indices have rank >= 1");
            const int64_t k = r.structuralDim(1, -1);
            r.check(k >= 1 && k <= r.rank(0), "indices' last dim is within [1, rank of data]");
            auto want = r.dims(1);
            want.pop_back();
            const auto tuples = product(r, want);
            want.insert(want.end(), r.dims(0).begin() + k, r.dims(0).end());
            r.check(r.rank(2) == static_cast<int64_t>(want.size()),
                    "updates have indices' dims but the last, then data's after the k-th");
            for (size_t a = 0; a < want.size(); ++a)
              r.require(r.dims(2)[a] == want[a], "updates' dim " + std::to_string(a) + " fits");
            if (r.attrString("reduction") == "none")
              r.require(tuples <= product(r, r.dims(0), 0, static_cast<size_t>(k)),
                        "no more index tuples than slices, so that they can be distinct");
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            const std::string reduction = k.attrString("reduction");
            const NdGeometry g(k.in(0).shape(), k.in(1).shape(), 0);
            const auto idx = k.in(1).span<const int64_t>();
            k.out(0) = k.in(0);
            visitCompute(k.out(0).dtype(), [&]<class T>() {
              auto y = k.out(0).span<T>();
              const auto u = k.in(2).span<const T>();
              for (int64_t t = 0; t < g.tuples; ++t) {
                const int64_t to = g.sliceOf(idx, t) * g.slice;
                for (int64_t e = 0; e < g.slice; ++e) {
                  T& dst = y[static_cast<size_t>(to + e)];
                  const T v = u[static_cast<size_t>(t * g.slice + e)];
                  if (reduction == "add")
                    dst = fromDouble<T>(toDouble(dst) + toDouble(v));
                  else if (reduction == "mul")
                    dst = fromDouble<T>(toDouble(dst) * toDouble(v));
                  else
                    dst = v;
                }
              }
            });
          })));
}

}  // namespace nncheck::ops
