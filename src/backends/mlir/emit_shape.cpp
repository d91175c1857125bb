// Reshaping, slicing, indexing, reductions. The numbers a node reads as parameters (Reshape's
// shape, Slice's starts, Pad's pads) must be initializers: TOSA takes them as attributes.
#include <algorithm>

#include "mlir/emit.h"

namespace nncheck::mlir {
namespace {

std::string axisAttr(int64_t axis) { return "axis = " + std::to_string(axis) + " : i32"; }

Value reverse(NodeEmit& e, const Value& v, int64_t axis) {
  return e.body().op("tosa.reverse", {v}, v.dtype, v.shape, axisAttr(axis));
}

Value concat(NodeEmit& e, const std::vector<Value>& parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  Shape shape = parts[0].shape;
  shape[static_cast<size_t>(axis)] = 0;
  for (const Value& p : parts)
    shape[static_cast<size_t>(axis)] += p.shape[static_cast<size_t>(axis)];
  return e.body().op("tosa.concat", parts, parts[0].dtype, shape, axisAttr(axis));
}

void emitReshape(NodeEmit& e) {  // also Flatten, Squeeze, Unsqueeze: the rule's output shape
  e.requireTypes(kAllTypes);
  e.assign(0, e.body().reshape(e.in(0), e.outShape(0)));
}

void emitTranspose(NodeEmit& e) {
  e.requireTypes(kAllTypes);
  const std::vector<int64_t> perm = e.transposePerm();
  e.assign(0, e.body().transpose(e.in(0), perm));
}

void emitConcat(NodeEmit& e) {
  e.requireTypes(kAllTypes);
  std::vector<Value> parts;
  for (size_t i = 0; i < e.inputCount(); ++i) parts.push_back(e.in(i));
  e.assign(0, concat(e, parts, normAxis(e.attrInt("axis", 0), e.rank(0))));
}

void emitSplit(NodeEmit& e) {
  e.requireTypes(kAllTypes);
  const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
  int64_t from = 0;
  for (size_t k = 0; k < e.outputCount(); ++k) {
    const int64_t n = e.outShape(k).at(static_cast<size_t>(axis));
    if (e.wantsOutput(k)) e.assign(k, e.body().sliceAxis(e.in(0), axis, from, n));
    from += n;
  }
}

// Slice with ONNX's clamping; a negative step reads the reversed axis forward.
void emitSlice(NodeEmit& e) {
  e.requireTypes(kAllTypes);
  const std::vector<int64_t> starts = e.constInts(1), ends = e.constInts(2);
  const std::vector<int64_t> axes = e.has(3) ? e.constInts(3) : allAxes(int64_t(starts.size()));
  const std::vector<int64_t> steps =
      e.has(4) ? e.constInts(4) : std::vector<int64_t>(starts.size(), 1);
  Value x = e.in(0);
  Shape start(x.rank(), 0), size = x.shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normAxis(axes[k], e.rank(0)), n = x.shape[static_cast<size_t>(a)];
    const int64_t step = steps[k];
    if (step != 1 && step != -1)
      e.unsupported("step " + std::to_string(step) + " (TOSA's slice takes unit steps)");
    int64_t s = starts[k] < 0 ? starts[k] + n : starts[k];
    int64_t t = ends[k] < 0 ? ends[k] + n : ends[k];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      t = std::clamp<int64_t>(t, 0, n);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      t = std::clamp<int64_t>(t, -1, n - 1);
      x = reverse(e, x, a);
      s = n - 1 - s;  // positions in the reversed axis
      t = n - 1 - t;
    }
    start[static_cast<size_t>(a)] = s;
    size[static_cast<size_t>(a)] = std::max<int64_t>(t - s, 0);
  }
  e.assign(0, e.body().slice(x, start, size));
}

// Pad: constant mode by tosa.pad (negative pads crop afterwards); edge and reflect concatenate
// single slices of the padded positions, axis by axis, as numpy reflects when pads exceed n - 1.
void emitPad(NodeEmit& e) {
  e.requireTypes(kNumberTypes);
  const std::string mode = e.attrString("mode", "constant");
  const std::vector<int64_t> pads = e.constInts(1);
  const size_t r = static_cast<size_t>(e.rank(0));
  if (pads.size() != 2 * r) e.unsupported("pads has " + std::to_string(pads.size()) + " values");
  Value x = e.in(0);
  if (mode == "constant") {
    std::vector<int64_t> grow(2 * r);
    for (size_t i = 0; i < 2 * r; ++i) grow[i] = std::max<int64_t>(pads[i], 0);
    Value fill;
    if (e.has(2)) fill = e.body().reshape(e.in(2), {});
    x = e.body().pad(x, grow, e.has(2) ? &fill : nullptr);
    Shape start(r, 0), size = x.shape;
    for (size_t a = 0; a < r; ++a) {
      start[a] = std::max<int64_t>(-pads[a], 0);
      size[a] -= start[a] + std::max<int64_t>(-pads[a + r], 0);
    }
    return e.assign(0, e.body().slice(x, start, size));
  }
  if (mode != "edge" && mode != "reflect") e.unsupported("mode " + mode);
  for (size_t a = 0; a < r; ++a) {
    const int64_t b = pads[a], end = pads[a + r], n = e.shape(0)[a];
    if (b < 0 || end < 0) e.unsupported("negative pads in " + mode + " mode");
    if (b == 0 && end == 0) continue;
    const int64_t period = 2 * (n - 1);
    auto source = [&](int64_t i) {
      if (mode == "edge" || period == 0) return std::clamp<int64_t>(i, 0, n - 1);
      const int64_t m = ((i % period) + period) % period;
      return m >= n ? period - m : m;
    };
    std::vector<Value> parts;
    for (int64_t i = -b; i < 0; ++i)
      parts.push_back(e.body().sliceAxis(x, int64_t(a), source(i), 1));
    parts.push_back(x);
    for (int64_t i = n; i < n + end; ++i)
      parts.push_back(e.body().sliceAxis(x, int64_t(a), source(i), 1));
    x = concat(e, parts, int64_t(a));
  }
  e.assign(0, x);
}

void emitExpand(NodeEmit& e) {
  e.requireTypes(kAllTypes);
  e.assign(0, e.body().broadcastTo(e.in(0), e.outShape(0)));
}

void emitTile(NodeEmit& e) {
  e.requireTypes(kAllTypes);
  e.assign(0, e.body().op("tosa.tile", {e.in(0)}, e.dtype(0), e.outShape(0),
                          "multiples = " + i64Array(e.constInts(1))));
}

// Gather(axis) as TOSA's gather of [outer, K, inner] values by [outer, W] i32 indices, negative
// indices counted from the end.
void emitGather(NodeEmit& e) {
  e.requireTypes(kAllTypes);
  const Value data = e.in(0);
  Value idx = e.in(1);
  const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
  const int64_t k = data.shape[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1, w = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= data.shape[static_cast<size_t>(a)];
  for (size_t a = static_cast<size_t>(axis) + 1; a < data.rank(); ++a) inner *= data.shape[a];
  for (int64_t d : idx.shape) w *= d;
  Body& b = e.body();
  const Value negative = e.binary("tosa.greater", e.splatLike(0, idx), idx, DType::Bool);
  idx = b.op("tosa.select",
             {negative, e.binary("tosa.add", idx, e.splatLike(double(k), idx), idx.dtype), idx},
             idx.dtype, idx.shape);
  idx = b.broadcastTo(b.reshape(b.cast(idx, DType::Int32), {1, w}), {outer, w});
  const Value values = b.reshape(data, {outer, k, inner});
  const Value g = b.op("tosa.gather", {values, idx}, data.dtype, {outer, w, inner});
  e.assign(0, b.reshape(g, e.outShape(0)));
}

// Inclusive sums along the axis by doubling shifts (Hillis and Steele): log2(n) adds of a copy
// moved by 1, 2, 4, ... with zeros shifted in.
void emitCumSum(NodeEmit& e) {
  e.requireTypes(kNumberTypes);
  const int64_t axis = normAxis(e.constInts(1).at(0), e.rank(0));
  const int64_t n = e.shape(0)[static_cast<size_t>(axis)];
  const bool rev = e.attrInt("reverse", 0) != 0, exclusive = e.attrInt("exclusive", 0) != 0;
  const size_t r = static_cast<size_t>(e.rank(0));
  auto shiftIn = [&](const Value& v, int64_t s) {  // v moved s places along the axis
    std::vector<int64_t> pads(2 * r, 0);
    pads[static_cast<size_t>(axis)] = s;
    return e.body().pad(e.body().sliceAxis(v, axis, 0, n - s), pads);
  };
  Value y = rev ? reverse(e, e.in(0), axis) : e.in(0);
  for (int64_t s = 1; s < n; s *= 2) y = e.binary("tosa.add", y, shiftIn(y, s), y.dtype);
  if (exclusive) y = n > 1 ? shiftIn(y, 1) : e.binary("tosa.mul", y, e.splatLike(0, y), y.dtype);
  if (rev) y = reverse(e, y, axis);
  e.assign(0, y);
}

// ONNX's reductions: axes from the attribute (or the input, ReduceSum since 13), none meaning
// all unless noop_with_empty_axes. TOSA reduces one axis at a time and keeps it as size 1.
Emitter reduce(const std::string& op) {
  return [op](NodeEmit& e) {
    e.requireTypes(kNumberTypes);
    std::vector<int64_t> axes = e.has(1) ? e.constInts(1) : e.attrInts("axes");
    Value y = e.in(0);
    if (axes.empty() && e.attrInt("noop_with_empty_axes", 0) != 0)
      return e.assign(0, e.body().op("tosa.identity", {y}, y.dtype, y.shape));
    if (axes.empty()) axes = allAxes(e.rank(0));
    // The kernel sums integers in int64 (wrapping) before it divides for the mean.
    if (op == "mean" && !isFloat(y.dtype)) y = e.body().cast(y, DType::Int64);
    int64_t count = 1;
    for (int64_t& a : axes) a = normAxis(a, e.rank(0));
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    for (int64_t a : axes) count *= y.shape[static_cast<size_t>(a)];
    y = e.body().reduce(op == "mean" ? "tosa.reduce_sum" : op, y, axes);
    if (op == "mean") {  // the kernel divides in float64 and converts back
      const Value sum = isFloat(y.dtype) ? y : e.body().cast(y, DType::Float64);
      const Value mean =
          e.pointwise("arith.divf", {sum, e.splatLike(double(count), sum)}, sum.dtype);
      y = isFloat(y.dtype) ? mean : floatToInteger(e, mean, e.dtype(0));
    }
    e.assign(0, e.body().reshape(y, e.outShape(0)));
  };
}

// ArgMax as tosa.argmax (the first of equal values, as ONNX's default); ArgMin as the argmax of
// an order-reversing map (negation for floats, bitwise not for integers, which never overflows);
// select_last_index through the reversed axis.
Emitter argReduce(bool max) {
  return [max](NodeEmit& e) {
    e.requireTypes({DType::Float32, DType::Float64, DType::Int32, DType::Int64});
    const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
    const int64_t n = e.shape(0)[static_cast<size_t>(axis)];
    const bool last = e.attrInt("select_last_index", 0) != 0;
    Value x = e.in(0);
    if (!max) x = e.unary(isFloat(x.dtype) ? "tosa.negate" : "tosa.bitwise_not", x);
    if (last) x = reverse(e, x, axis);
    Shape s = x.shape;
    s.erase(s.begin() + axis);
    // TOSA's argmax makes i32 (MLIR's folder crashes on an i64 result over an axis of size 1).
    Value idx = e.body().cast(e.body().op("tosa.argmax", {x}, DType::Int32, s, axisAttr(axis)),
                              DType::Int64);
    if (last) idx = e.binary("tosa.sub", e.splatLike(double(n - 1), idx), idx, DType::Int64);
    e.assign(0, e.body().reshape(idx, e.outShape(0)));
  };
}

}  // namespace

void addShapeEmitters(EmitterTable& t) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) t[op] = emitReshape;
  t["Transpose"] = emitTranspose;
  t["Concat"] = emitConcat;
  t["Split"] = emitSplit;
  t["Slice"] = emitSlice;
  t["Pad"] = emitPad;
  t["Expand"] = emitExpand;
  t["Tile"] = emitTile;
  t["Gather"] = emitGather;
  t["CumSum"] = emitCumSum;
  t["ReduceSum"] = reduce("tosa.reduce_sum");
  t["ReduceMean"] = reduce("mean");
  t["ReduceMax"] = reduce("tosa.reduce_max");
  t["ReduceMin"] = reduce("tosa.reduce_min");
  t["ReduceProd"] = reduce("tosa.reduce_prod");
  t["ArgMax"] = argReduce(true);
  t["ArgMin"] = argReduce(false);
}

}  // namespace nncheck::mlir
