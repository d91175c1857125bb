// Shape and Size (a tensor's dims as data), EyeLike and Trilu (a matrix's diagonals).
#include <algorithm>

#include "ops/gradients.h"
#include "ops/infer.h"

namespace nncheck::ops {
namespace {

// Shape's [start, end) of the input's axes, each clamped into [0, rank] as ONNX 15 says.
std::pair<int64_t, int64_t> shapeRange(const Node& node, int64_t rank) {
  auto clampAxis = [rank](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank); };
  const Attribute* start = node.attribute("start");
  const Attribute* end = node.attribute("end");
  const int64_t s = clampAxis(start ? start->i : 0);
  return {s, std::max(s, clampAxis(end ? end->i : rank))};
}

// Whether Trilu keeps element (i, j) of each matrix: on or above the k-th diagonal (upper) or on
// or below it.
bool triluKeeps(int64_t i, int64_t j, int64_t k, bool upper) {
  return upper ? j - i >= k : j - i <= k;
}

}  // namespace

void registerShapeQueriesAndMasks(Registry& reg) {
  reg.add(std::move(OpSpec("Shape", 1)
                        .types("T", allComputeTypes())
                        .input("data", "T")
                        .output("shape")
                        .attr(intAttr("start", 0, -3, 3))
                        .attr(optionalInt("end", -3, 3))  // unset: the rank
                        .shapeRule([](auto& r) {
                          const auto [start, end] = shapeRange(r.node(), r.rank(0));
                          r.output(0, {r.lit(end - start)}, DType::Int64);
                        })
                        .valueFromShapes([](const Node& node, const std::vector<Shape>& in) {
                          const auto [start, end] =
                              shapeRange(node, static_cast<int64_t>(in[0].size()));
                          return int64Vector(Shape(in[0].begin() + start, in[0].begin() + end));
                        })));

  reg.add(std::move(OpSpec("Size", 1)
                        .types("T", allComputeTypes())
                        .input("data", "T")
                        .output("size")
                        .shapeRule([](auto& r) { r.output(0, {}, DType::Int64); })
                        .valueFromShapes([](const Node&, const std::vector<Shape>& in) {
                          return Tensor::scalar<int64_t>(elementCount(in[0]));
                        })));

  reg.add(std::move(OpSpec("EyeLike", 9)
                        .types("T1", allComputeTypes())
                        .input("input", "T1")
                        .output("output")
                        .attr(withSampling(optionalInt("dtype", 1, 11), AttrSampling::DType))
                        .attr(intAttr("k", 0, -3, 3))
                        .shapeRule([](auto& r) {
                          r.check(r.rank(0) == 2, "input is a matrix (rank 2)");
                          const DType t = r.hasAttr("dtype")
                                              ? static_cast<DType>(r.attrInt("dtype"))
                                              : r.dtype(0);
                          r.check(isComputeDType(t), "dtype is one the reference computes on");
                          r.output(0, r.dims(0), t);
                        })
                        .kernel([](KernelCall& k) {
                          const int64_t rows = k.out(0).shape()[0], cols = k.out(0).shape()[1];
                          const int64_t d = k.attrInt("k");
                          visitCompute(k.out(0).dtype(), [&]<class T>() {
                            auto y = k.out(0).span<T>();
                            for (int64_t i = 0; i < rows; ++i)
                              if (i + d >= 0 && i + d < cols)
                                y[static_cast<size_t>(i * cols + i + d)] = fromDouble<T>(1);
                          });
                        })));

  reg.add(std::move(OpSpec("Trilu", 14)
                        .gradient(routingGradient)
                        .types("T", allComputeTypes())
                        .types("tensor(int64)", {DType::Int64})
                        .input("input", "T")
                        .optionalInput("k", "tensor(int64)", InputRole::AxesValues)
                        .sampleValues([](SampleContext& c) {
                          return Tensor::scalar<int64_t>(c.rng.uniform(-3, 3));
                        })
                        .output("output")
                        .attr(intChoiceAttr("upper", 1, {0, 1}))
                        .shapeRule([](auto& r) {
                          r.check(r.rank(0) >= 2, "input has rank >= 2");
                          if (r.has(1))
                            r.check(r.rank(1) == 0 && r.axes(1).size() == 1, "k is a scalar");
                          r.output(0, r.dims(0));
                        })
                        .kernel([](KernelCall& k) {
                          const Shape& s = k.in(0).shape();
                          const int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
                          const int64_t d = k.has(1) ? k.in(1).toInt64(0) : 0;
                          const bool upper = k.attrInt("upper") != 0;
                          const size_t sz = dtypeSize(k.in(0).dtype());
                          const uint8_t* x = k.in(0).bytes().data();
                          uint8_t* y = k.out(0).bytes().data();  // zero-filled
                          for (int64_t e = 0; e < k.in(0).size(); ++e) {
                            const int64_t i = e / cols % rows, j = e % cols;
                            if (triluKeeps(i, j, d, upper))
                              std::copy_n(x + e * static_cast<int64_t>(sz), sz,
                                          y + e * static_cast<int64_t>(sz));
                          }
                        })));
}

}  // namespace nncheck::ops
