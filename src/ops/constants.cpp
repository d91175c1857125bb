// Ops that make a tensor from attributes and scalars alone: Constant, ConstantOfShape and Range.
#include <cmath>

#include "ops/infer.h"
#include "ops/kernels.h"

namespace nncheck::ops {
namespace {

AttrSpec optionalAttr(std::string name, Attribute::Kind kind) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = kind;
  a.sampling = AttrSampling::Never;
  return a;
}

}  // namespace

Tensor constantValue(const Node& node) {
  const Attribute* found = nullptr;
  for (const Attribute& a : node.attributes) {
    if (found)
      throw ShapeError("Constant '" + node.name + "': sets both '" + found->name + "' and '" +
                       a.name + "'; exactly one value attribute is allowed");
    found = &a;
  }
  if (!found)
    throw ShapeError("Constant '" + node.name +
                     "': has no value attribute (value, value_float, "
                     "value_floats, value_int or value_ints)");
  const Attribute& a = *found;
  if (a.name == "value") return a.t;
  if (a.name == "value_float") return Tensor::scalar<float>(a.f);
  if (a.name == "value_int") return Tensor::scalar<int64_t>(a.i);
  if (a.name == "value_floats")
    return Tensor::fromVector<float>({static_cast<int64_t>(a.floats.size())}, a.floats);
  if (a.name == "value_ints")
    return Tensor::fromVector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints);
  throw std::logic_error("Constant: attribute '" + a.name + "' passed the spec check");
}

namespace {

// Range's element count, max(ceil((limit - start) / delta), 0), as ONNX defines it.
int64_t rangeCount(double start, double limit, double delta, const std::string& context) {
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    throw ShapeError(context + ": requires a finite start and limit and a non-zero delta");
  const double n = std::ceil((limit - start) / delta);
  if (n > static_cast<double>(kMaxTensorBytes))
    throw ShapeError(context + ": would make " + std::to_string(n) + " elements");
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

}  // namespace

void registerConstants(Registry& reg) {
  reg.add(std::move(
      OpSpec("Constant", 1)
          .attr(optionalAttr("value", Attribute::Kind::Tensor))
          .attr(optionalAttr("value_float", Attribute::Kind::Float))
          .attr(optionalAttr("value_floats", Attribute::Kind::Floats))
          .attr(optionalAttr("value_int", Attribute::Kind::Int))
          .attr(optionalAttr("value_ints", Attribute::Kind::Ints))
          .output("output")
          .neverGenerated("a generator's constants are initializers, which value search can tune")
          .shapeRule([](auto& r) {
            const Tensor v = constantValue(r.node());
            r.check(isComputeDType(v.dtype()), "the value has a dtype the reference computes on");
            std::vector<std::decay_t<decltype(r.lit(0))>> dims;
            for (int64_t d : v.shape()) dims.push_back(r.lit(d));
            r.output(0, dims, v.dtype());
          })
          .kernel([](KernelCall& k) { k.out(0) = constantValue(k.node()); })));

  reg.add(std::move(
      OpSpec("ConstantOfShape", 9)
          .types("T1", {DType::Int64})
          .input("input", "T1", InputRole::ShapeValues)
          .output("output")
          .attr(optionalAttr("value", Attribute::Kind::Tensor))
          .neverGenerated("its input is a shape operand, and generators grow graphs from data")
          .shapeRule([](auto& r) {
            r.check(r.rank(0) == 1, "input is a vector of dims");
            DType t = DType::Float32;
            if (const Attribute* a = r.node().attribute("value")) {
              r.check(a->t.size() == 1, "value holds one element");
              t = a->t.dtype();
            }
            r.check(isComputeDType(t), "value has a dtype the reference computes on");
            for (const auto& d : r.values(0)) r.require(d >= 0, "dims are non-negative");
            r.output(0, r.values(0), t);
          })
          .kernel([](KernelCall& k) {
            const Attribute* a = k.node().attribute("value");
            const double v = a ? a->t.toDouble(0) : 0.0;
            visitCompute(k.out(0).dtype(), [&]<class T>() {
              for (T& y : k.out(0).span<T>()) y = fromDouble<T>(v);
            });
          })));

  reg.add(
      std::move(OpSpec("Range", 11)
                    .types("T", {DType::Float32, DType::Float64, DType::Int32, DType::Int64})
                    .input("start", "T", InputRole::FloatValues)
                    .input("limit", "T", InputRole::FloatValues)
                    .input("delta", "T", InputRole::FloatValues)
                    .output("output")
                    .neverGenerated("its inputs are scalars that set the output's length, not data")
                    .shapeRule([](auto& r) {
                      for (size_t i = 0; i < 3; ++i) r.check(r.rank(i) == 0, "inputs are scalars");
                      r.output(0, {r.lit(rangeCount(r.floats(0)[0], r.floats(1)[0], r.floats(2)[0],
                                                    r.context()))});
                    })
                    .kernel([](KernelCall& k) {
                      visitCompute(k.out(0).dtype(), [&]<class T>() {
                        // ONNX defines Range by a loop that adds delta in T, one step at a time.
                        T v = k.in(0).span<T>()[0];
                        const T delta = k.in(2).span<T>()[0];
                        for (T& y : k.out(0).span<T>()) {
                          y = v;
                          v = fromArith<T>(static_cast<Arith<T>>(static_cast<Arith<T>>(v) +
                                                                 static_cast<Arith<T>>(delta)));
                        }
                      });
                    })));
}

}  // namespace nncheck::ops
