// Elementwise ops: unary math and activations, arithmetic, comparisons, logic, Cast, Clip,
// Where, PRelu. TOSA's elementwise ops broadcast dims of size 1 between equal ranks; arith and
// math ops on tensors (exact division, remainders, sqrt, roundeven, expm1) take equal shapes.
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "mlir/emit.h"

namespace nncheck::mlir {
namespace {

// x truncated toward zero, NaN as 0: what the kernels convert to an integer, before saturation.
Value truncated(NodeEmit& e, const Value& x) {
  const Value whole = e.pointwise("math.trunc", {x}, x.dtype);
  const Value notNan = e.binary("tosa.equal", whole, whole, DType::Bool);
  return e.body().op("tosa.select",
                     {notNan, whole, e.body().broadcastTo(e.splatLike(0, x), x.shape)}, x.dtype,
                     x.shape);
}

// Cast's own conversion to an integer type: tosa.cast of the truncated value (it rounds to
// nearest, which an integral value does not change, and saturates).
Value castToInteger(NodeEmit& e, const Value& x, DType t) {
  if (t == DType::Bool)  // != 0, NaN included
    return e.unary("tosa.logical_not", e.binary("tosa.equal", x, e.splatLike(0, x), DType::Bool));
  return e.body().cast(truncated(e, x), t);
}

// op(x) for float x; for an integer x, computed in float64 and converted back as the kernels do.
Emitter floatFunction(std::function<Value(NodeEmit&, const Value&)> f) {
  return [f](NodeEmit& e) {
    e.requireTypes(kNumberTypes);
    const Value x = e.in(0);
    if (isFloat(x.dtype)) return e.assign(0, f(e, x));
    e.assign(0, floatToInteger(e, f(e, e.body().cast(x, DType::Float64)), e.outDtype(0)));
  };
}

Emitter tosaUnary(const std::string& op, const std::vector<DType>& types) {
  return [op, types](NodeEmit& e) {
    e.requireTypes(types);
    e.assign(0, e.unary(op, e.in(0)));
  };
}

Emitter floatUnary(const std::string& op) {
  return floatFunction([op](NodeEmit& e, const Value& x) { return e.unary(op, x); });
}

Emitter mathUnary(const std::string& op) {
  return floatFunction([op](NodeEmit& e, const Value& x) { return e.pointwise(op, {x}, x.dtype); });
}

Emitter tosaBinary(const std::string& op, const std::vector<DType>& types) {
  return [op, types](NodeEmit& e) {
    e.requireTypes(types);
    e.assign(0, e.binary(op, e.in(0), e.in(1), e.outDtype(0)));
  };
}

// x >= 0 ? x : slope * x (LeakyRelu, PRelu; -0 and NaN come out as x and NaN either way).
Value leaky(NodeEmit& e, const Value& x, const Value& slope) {
  const Value scaled = e.binary("tosa.mul", x, slope, x.dtype);
  const Value keep = e.binary("tosa.greater_equal", x, e.splatLike(0, x), DType::Bool);
  return e.body().op("tosa.select", {keep, x, scaled}, x.dtype, x.shape);
}

// Emitted as a ternary select with all three operands of equal rank.
Value select(NodeEmit& e, const Value& c, const Value& a, const Value& b) {
  Body& body = e.body();
  const size_t r = std::max({c.rank(), a.rank(), b.rank()});
  const Shape shape = broadcastShape(broadcastShape(c.shape, a.shape), b.shape);
  return body.op("tosa.select", {body.toRank(c, r), body.toRank(a, r), body.toRank(b, r)}, a.dtype,
                 shape);
}

// x < 0 ? scale * expm1(x) : x, for Elu (scale alpha, x >= 0 kept) and Selu.
Value expm1Below0(NodeEmit& e, const Value& x, double scale, bool keepZero) {
  const Value neg =
      e.binary("tosa.mul", e.pointwise("math.expm1", {x}, x.dtype), e.splatLike(scale, x), x.dtype);
  const Value keep = keepZero ? e.binary("tosa.greater_equal", x, e.splatLike(0, x), DType::Bool)
                              : e.binary("tosa.greater", x, e.splatLike(0, x), DType::Bool);
  return e.body().op("tosa.select", {keep, x, neg}, x.dtype, x.shape);
}

// Integer division truncating toward zero, with INT_MIN / -1 wrapping (to INT_MIN) as the
// kernels do: LLVM's sdiv traps there. A zero divisor is outside Div's and Mod's domain.
Value divideIntegers(NodeEmit& e, const Value& a, const Value& b, const std::string& op) {
  Body& body = e.body();
  const Shape shape = broadcastShape(a.shape, b.shape);
  const Value fa = body.broadcastTo(a, shape), fb = body.broadcastTo(b, shape);
  const Value minusOne = e.binary("tosa.equal", fb, e.splatLike(-1, fb), DType::Bool);
  const Value safe = body.op(
      "tosa.select", {minusOne, body.broadcastTo(e.splatLike(1, fb), shape), fb}, fb.dtype, shape);
  const Value q = body.op(op, {fa, safe}, a.dtype, shape);
  if (op == "arith.remsi") return q;  // x rem 1 = 0 = x rem -1
  return body.op("tosa.select", {minusOne, e.unary("tosa.negate", fa), q}, a.dtype, shape);
}

// tosa.clamp of a float32 x to [lo, hi], an absent bound float's limit (its integer bounds,
// which a float clamp does not use, at int64's).
Value clamp(NodeEmit& e, const Value& x, std::optional<double> lo, std::optional<double> hi) {
  const double fmax = std::numeric_limits<float>::max();
  char props[200];
  std::snprintf(
      props, sizeof props,
      "max_fp = %.9e : f32, max_int = %lld : i64, min_fp = %.9e : f32, min_int = %lld : i64",
      hi ? *hi : fmax, static_cast<long long>(std::numeric_limits<int64_t>::max()),
      lo ? *lo : -fmax, static_cast<long long>(std::numeric_limits<int64_t>::min()));
  return e.body().op("tosa.clamp", {x}, x.dtype, x.shape, props);
}

}  // namespace

// Without tosa.cast: MLIR 19 lowers a float -> i64 tosa.cast with an upper bound that overflowed
// to -2^63, so every value saturates to INT64_MAX. Compositions must stay exact whatever Cast does.
Value floatToInteger(NodeEmit& e, const Value& f, DType t) {
  if (t == DType::Bool) return castToInteger(e, f, t);
  const double limit = t == DType::Int64 ? 0x1p63 : 0x1p31;
  const Value whole = truncated(e, f);
  const Value big = e.binary("tosa.greater_equal", whole, e.splatLike(limit, f), DType::Bool);
  const Value inRange =
      e.binary("tosa.maximum",
               e.binary("tosa.minimum", whole, e.splatLike(std::nextafter(limit, 0.0), f), f.dtype),
               e.splatLike(-limit, f), f.dtype);
  const Value i = e.pointwise("arith.fptosi", {inRange}, t);
  return e.body().op("tosa.select",
                     {big, e.body().broadcastTo(e.splat(t, limit, i.rank()), i.shape), i}, t,
                     i.shape);
}

void addElementwiseEmitters(EmitterTable& t) {
  t["Abs"] = tosaUnary("tosa.abs", kNumberTypes);
  t["Neg"] = tosaUnary("tosa.negate", kNumberTypes);
  t["Relu"] = [](NodeEmit& e) {  // float32: tosa.clamp from 0, as TOSA's legalizations write it
    e.requireTypes(kNumberTypes);
    if (e.dtype(0) == DType::Float32) return e.assign(0, clamp(e, e.in(0), 0, std::nullopt));
    e.assign(0, e.binary("tosa.maximum", e.in(0), e.splatLike(0, e.in(0)), e.dtype(0)));
  };
  t["Sign"] = [](NodeEmit& e) {  // 1, -1, or x * 0 (0 or NaN)
    e.requireTypes(kNumberTypes);
    const Value x = e.in(0);
    const Value zero = e.splatLike(0, x);
    const Value rest = select(e, e.binary("tosa.greater", zero, x, DType::Bool),
                              e.body().broadcastTo(e.splatLike(-1, x), x.shape),
                              e.binary("tosa.mul", x, zero, x.dtype));
    e.assign(0, select(e, e.binary("tosa.greater", x, zero, DType::Bool),
                       e.body().broadcastTo(e.splatLike(1, x), x.shape), rest));
  };
  for (auto [op, tosa] : {std::pair{"Sigmoid", "tosa.sigmoid"},
                          {"Tanh", "tosa.tanh"},
                          {"Exp", "tosa.exp"},
                          {"Log", "tosa.log"},
                          {"Sin", "tosa.sin"},
                          {"Cos", "tosa.cos"},
                          {"Erf", "tosa.erf"},
                          {"Floor", "tosa.floor"},
                          {"Ceil", "tosa.ceil"},
                          {"Reciprocal", "tosa.reciprocal"}})
    t[op] = floatUnary(tosa);
  for (auto [op, math] : {std::pair{"Sqrt", "math.sqrt"},
                          {"Tan", "math.tan"},
                          {"Asin", "math.asin"},
                          {"Acos", "math.acos"},
                          {"Atan", "math.atan"},
                          {"Round", "math.roundeven"}})
    t[op] = mathUnary(math);
  t["Not"] = tosaUnary("tosa.logical_not", {DType::Bool});
  t["LeakyRelu"] = [](NodeEmit& e) {
    e.requireTypes(kFloatTypes);
    e.assign(0, leaky(e, e.in(0), e.splatLike(e.attrFloat("alpha", 0.01f), e.in(0))));
  };
  t["PRelu"] = [](NodeEmit& e) {
    e.requireTypes(kNumberTypes);
    e.assign(0, leaky(e, e.in(0), e.in(1)));
  };
  t["Elu"] = [](NodeEmit& e) {
    e.requireTypes(kFloatTypes);
    e.assign(0, expm1Below0(e, e.in(0), e.attrFloat("alpha", 1.0f), true));
  };
  t["Selu"] = [](NodeEmit& e) {  // gamma * (x > 0 ? x : alpha * expm1(x))
    e.requireTypes(kFloatTypes);
    const Value x = e.in(0);
    const double a = e.attrFloat("alpha", 1.67326319217681884765625f);
    const double g = e.attrFloat("gamma", 1.05070102214813232421875f);
    e.assign(0, e.binary("tosa.mul", expm1Below0(e, x, a, false), e.splatLike(g, x), x.dtype));
  };
  t["HardSigmoid"] = [](NodeEmit& e) {  // max(0, min(1, alpha x + beta))
    e.requireTypes(kFloatTypes);
    const Value x = e.in(0);
    const Value z = e.binary(
        "tosa.add", e.binary("tosa.mul", x, e.splatLike(e.attrFloat("alpha", 0.2f), x), x.dtype),
        e.splatLike(e.attrFloat("beta", 0.5f), x), x.dtype);
    const Value hi = e.binary("tosa.minimum", z, e.splatLike(1, x), x.dtype);
    e.assign(0, e.binary("tosa.maximum", hi, e.splatLike(0, x), x.dtype));
  };
  t["Softplus"] = [](NodeEmit& e) {  // x > 30 ? x : log1p(exp(x)), as the kernel
    e.requireTypes(kFloatTypes);
    const Value x = e.in(0);
    const Value soft = e.pointwise("math.log1p", {e.unary("tosa.exp", x)}, x.dtype);
    e.assign(0, e.body().op("tosa.select",
                            {e.binary("tosa.greater", x, e.splatLike(30, x), DType::Bool), x, soft},
                            x.dtype, x.shape));
  };

  t["Add"] = tosaBinary("tosa.add", kNumberTypes);
  t["Sub"] = tosaBinary("tosa.sub", kNumberTypes);
  t["Mul"] = tosaBinary("tosa.mul", kNumberTypes);
  t["Div"] = [](NodeEmit& e) {
    e.requireTypes(kNumberTypes);
    if (isFloat(e.dtype(0)))  // a / b exactly: TOSA's mul(a, reciprocal(b)) rounds twice
      e.assign(0, e.pointwise("arith.divf", {e.in(0), e.in(1)}, e.dtype(0)));
    else
      e.assign(0, divideIntegers(e, e.in(0), e.in(1), "arith.divsi"));
  };
  t["Mod"] = [](NodeEmit& e) {
    e.requireTypes(kNumberTypes);
    const Value a = e.in(0), b = e.in(1);
    if (isFloat(a.dtype)) return e.assign(0, e.pointwise("arith.remf", {a, b}, a.dtype));  // fmod
    const Value r = divideIntegers(e, a, b, "arith.remsi");
    if (e.attrInt("fmod", 0) == 1) return e.assign(0, r);
    // Python's %: a nonzero remainder takes the divisor's sign.
    Body& body = e.body();
    const Value fb = body.broadcastTo(b, r.shape);
    const Value zero = e.splatLike(0, r);
    const Value nonzero = e.unary("tosa.logical_not", e.binary("tosa.equal", r, zero, DType::Bool));
    const Value differ =
        e.binary("tosa.logical_xor", e.binary("tosa.greater", zero, r, DType::Bool),
                 e.binary("tosa.greater", zero, fb, DType::Bool), DType::Bool);
    const Value fix = e.binary("tosa.logical_and", nonzero, differ, DType::Bool);
    e.assign(0, body.op("tosa.select", {fix, e.binary("tosa.add", r, fb, r.dtype), r}, r.dtype,
                        r.shape));
  };
  t["Pow"] = [](NodeEmit& e) {  // the kernel: pow in float64, converted to the base's type
    e.requireTypes(kNumberTypes);
    const Value x = e.in(0), y = e.in(1);
    if (isFloat(x.dtype) && x.dtype == y.dtype)
      return e.assign(0, e.binary("tosa.pow", x, y, x.dtype));
    Body& b = e.body();
    const Value p = e.pointwise("math.powf", {b.cast(x, DType::Float64), b.cast(y, DType::Float64)},
                                DType::Float64);
    e.assign(0, isFloat(x.dtype) ? b.cast(p, x.dtype) : floatToInteger(e, p, x.dtype));
  };
  auto fold = [](const std::string& op) {
    return [op](NodeEmit& e) {
      e.requireTypes(kNumberTypes);
      Value acc = e.in(0);
      for (size_t i = 1; i < e.inputCount(); ++i) acc = e.binary(op, acc, e.in(i), acc.dtype);
      e.assign(0, acc);
    };
  };
  t["Max"] = fold("tosa.maximum");
  t["Min"] = fold("tosa.minimum");
  t["Equal"] = tosaBinary("tosa.equal", kAllTypes);
  t["Greater"] = tosaBinary("tosa.greater", kNumberTypes);
  t["Less"] = [](NodeEmit& e) {
    e.requireTypes(kNumberTypes);
    e.assign(0, e.binary("tosa.greater", e.in(1), e.in(0), DType::Bool));
  };
  t["And"] = tosaBinary("tosa.logical_and", {DType::Bool});
  t["Or"] = tosaBinary("tosa.logical_or", {DType::Bool});
  t["Xor"] = tosaBinary("tosa.logical_xor", {DType::Bool});

  t["Cast"] = [](NodeEmit& e) {
    e.requireTypes(kAllTypes);
    const Value x = e.in(0);
    const DType to = e.outDtype(0);
    Body& b = e.body();
    if (isFloat(x.dtype) && !isFloat(to)) return e.assign(0, castToInteger(e, x, to));
    // The kernels convert an integer to float32 through float64 (rounding twice).
    if (isInteger(x.dtype) && to == DType::Float32)
      return e.assign(0, b.cast(b.cast(x, DType::Float64), to));
    e.assign(0, b.cast(x, to));  // float widening or narrowing, integers wrap, bool is 0 or 1
  };
  // numpy.clip: max with lo, then min with hi (hi wins). Constant bounds, lo <= hi, on float32:
  // tosa.clamp, as TOSA's legalizations write Clip and ReLU6; otherwise (its bounds are f32
  // attributes, exact for float32 only) maximum and minimum.
  t["Clip"] = [](NodeEmit& e) {
    e.requireTypes(kNumberTypes);
    if (e.opset() < 11) e.unsupported("Clip before opset 11 takes its bounds as attributes");
    auto bound = [&](size_t i) -> std::optional<double> {
      return e.has(i) && e.constant(i) ? std::optional(e.constant(i)->toDouble(0)) : std::nullopt;
    };
    const std::optional<double> lo = bound(1), hi = bound(2);
    if (e.dtype(0) == DType::Float32 && (!e.has(1) || lo) && (!e.has(2) || hi) &&
        (!lo || !hi || *lo <= *hi))
      return e.assign(0, clamp(e, e.in(0), lo, hi));
    Value y = e.in(0);
    if (e.has(1)) y = e.binary("tosa.maximum", y, e.in(1), y.dtype);
    if (e.has(2)) y = e.binary("tosa.minimum", y, e.in(2), y.dtype);
    if (y.ssa == e.in(0).ssa) y = e.body().op("tosa.identity", {y}, y.dtype, y.shape);
    e.assign(0, y);
  };
  t["Where"] = [](NodeEmit& e) {
    e.requireTypes(kAllTypes);
    e.assign(0, select(e, e.in(0), e.in(1), e.in(2)));
  };
}

}  // namespace nncheck::mlir
