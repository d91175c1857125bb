// Gather and Slice: ops that select elements by index.
#include <cstring>

#include "ops/gradients.h"
#include "ops/infer.h"

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
}

}  // namespace nncheck::ops
