// Reshaping, slicing, indexing, padding, Resize and the reductions, as jax.numpy writes them.
// Every shape is static, so output shapes come from the model's inferred types; negative axes are
// normalized here, as ONNX defines them.
#include <algorithm>

#include "core/script_literal.h"
#include "jax_source/emit.h"

namespace nncheck::jax {
namespace {

std::string pairs(const std::vector<int64_t>& pads, size_t rank) {  // ONNX's [b..., e...]
  std::string s = "[";
  for (size_t a = 0; a < rank; ++a)
    s += (a ? ", " : "") + std::string("(") + std::to_string(pads[a]) + ", " +
         std::to_string(pads[a + rank]) + ")";
  return s + "]";
}

void emitReshape(JaxEmit& e) {
  e.assign(0, "jnp.reshape(" + e.in(0) + ", " + pyTuple(e.outShape(0)) + ")");
}

void emitSqueeze(JaxEmit& e) {
  // Squeeze-11's axes are an attribute; 13's are input 1; none: every axis of length 1.
  std::vector<int64_t> axes = e.has(1) ? e.constInts(1) : e.attrInts("axes");
  if (axes.empty())
    for (int64_t a = 0; a < e.rank(0); ++a)
      if (e.shape(0)[static_cast<size_t>(a)] == 1) axes.push_back(a);
  e.assign(0, "jnp.squeeze(" + e.in(0) + ", axis=" + pyTuple(normAxes(axes, e.rank(0))) + ")");
}

void emitUnsqueeze(JaxEmit& e) {
  const int64_t outRank = static_cast<int64_t>(e.outShape(0).size());
  const std::vector<int64_t> axes = e.has(1) ? e.constInts(1) : e.attrInts("axes");
  e.assign(0, "jnp.expand_dims(" + e.in(0) + ", " + pyTuple(normAxes(axes, outRank)) + ")");
}

void emitTranspose(JaxEmit& e) {
  const std::vector<int64_t> perm = e.transposePerm();
  e.assign(0, "jnp.transpose(" + e.in(0) + ", " + pyTuple(perm) + ")");
}

void emitConcat(JaxEmit& e) {
  std::string list;
  for (size_t i = 0; i < e.inputCount(); ++i) list += (i ? ", " : "") + e.in(i);
  e.assign(0, "jnp.concatenate([" + list +
                  "], axis=" + std::to_string(normAxis(e.attrInt("axis", 0), e.rank(0))) + ")");
}

void emitSplit(JaxEmit& e) {
  const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
  std::vector<int64_t> cuts;
  int64_t at = 0;
  for (size_t k = 0; k + 1 < e.outputCount(); ++k)
    cuts.push_back(at += e.outShape(k).at(static_cast<size_t>(axis)));
  const std::string parts =
      e.let("jnp.split(" + e.in(0) + ", " + pyInts(cuts) + ", axis=" + std::to_string(axis) + ")");
  for (size_t k = 0; k < e.outputCount(); ++k)
    if (e.outUsed(k)) e.assign(k, parts + "[" + std::to_string(k) + "]");
}

// Pad: jnp.pad in its constant, edge and reflect modes (numpy's, which ONNX's follow), lax.pad
// for the negative pads (crops) jnp.pad refuses.
void emitPad(JaxEmit& e) {
  const std::string mode = e.attrString("mode", "constant");
  const std::vector<int64_t> pads = e.constInts(1);
  const size_t r = static_cast<size_t>(e.rank(0));
  if (e.has(3)) e.unsupported("the axes input");
  if (pads.size() != 2 * r) e.unsupported("pads has " + std::to_string(pads.size()) + " values");
  if (r == 0) {  // nothing to pad; jnp.pad takes no empty pad_width
    e.assign(0, e.in(0));
    return;
  }
  const bool negative = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; });
  if (mode == "constant") {
    std::string value = "0";
    if (e.has(2)) {  // a number as written, else the computed scalar
      const Tensor* v = e.constant(2);
      value = !v                          ? "jnp.reshape(" + e.in(2) + ", ())"
              : e.isFloat(0)              ? pyFloat(v->toDouble(0))
              : e.dtype(0) == DType::Bool ? (v->toDouble(0) != 0 ? "True" : "False")
                                          : std::to_string(v->toInt64s().at(0));
    }
    if (!negative) {
      e.assign(0,
               "jnp.pad(" + e.in(0) + ", " + pairs(pads, r) + ", constant_values=" + value + ")");
      return;
    }
    std::string config = "[";
    for (size_t a = 0; a < r; ++a)
      config += (a ? ", " : "") + std::string("(") + std::to_string(pads[a]) + ", " +
                std::to_string(pads[a + r]) + ", 0)";
    e.assign(0, "lax.pad(" + e.in(0) + ", jnp.array(" + value + ", " + e.dtypeName(e.dtype(0)) +
                    "), " + config + "])");
    return;
  }
  if (mode != "edge" && mode != "reflect") e.unsupported("mode " + mode);
  if (negative) e.unsupported("negative pads in " + mode + " mode");
  e.assign(0, "jnp.pad(" + e.in(0) + ", " + pairs(pads, r) + ", mode='" + mode + "')");
}

void emitGather(JaxEmit& e) {  // negative indices count from the end, as numpy's take
  e.assign(0, "jnp.take(" + e.in(0) + ", " + e.in(1) +
                  ", axis=" + std::to_string(normAxis(e.attrInt("axis", 0), e.rank(0))) + ")");
}

// Indices may be shorter than the data on the other axes: the data is cut to them first, as
// take_along_axis broadcasts instead.
void emitGatherElements(JaxEmit& e) {
  const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
  const std::string i = e.in(1);
  const std::string n = std::to_string(e.shape(0)[static_cast<size_t>(axis)]);
  std::string data = e.in(0);
  if (e.shape(0) != e.shape(1)) {
    std::string cut;
    for (int64_t a = 0; a < e.rank(0); ++a) {
      cut.append(a ? ", :" : ":");  // appended: GCC 12 warns -Wrestrict on ":" + string
      if (a != axis) cut.append(std::to_string(e.shape(1)[static_cast<size_t>(a)]));
    }
    data += "[" + cut + "]";
  }
  e.assign(0, "jnp.take_along_axis(" + data + ", jnp.where(" + i + " < 0, " + i + " + " + n + ", " +
                  i + "), axis=" + std::to_string(axis) + ")");
}

// Slice as Python's slices, with ONNX's clamping written out.
void emitSlice(JaxEmit& e) {
  const std::vector<int64_t> starts = e.constInts(1), ends = e.constInts(2);
  std::vector<int64_t> axes =
      e.has(3) ? e.constInts(3) : allAxes(static_cast<int64_t>(starts.size()));
  const std::vector<int64_t> steps =
      e.has(4) ? e.constInts(4) : std::vector<int64_t>(starts.size(), 1);
  std::vector<std::string> ranges(static_cast<size_t>(e.rank(0)), ":");
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normAxis(axes[k], e.rank(0)), n = e.shape(0)[static_cast<size_t>(a)];
    int64_t s = starts[k] < 0 ? starts[k] + n : starts[k];
    int64_t t = ends[k] < 0 ? ends[k] + n : ends[k];
    const int64_t step = steps[k];
    std::string range;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      t = std::clamp<int64_t>(t, 0, n);
      range = std::to_string(s) + ":" + std::to_string(t);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      t = std::clamp<int64_t>(t, -1, n - 1);
      range = std::to_string(s) + ":" + (t < 0 ? "" : std::to_string(t));  // -1: through 0
    }
    ranges[static_cast<size_t>(a)] = step == 1 ? range : range + ":" + std::to_string(step);
  }
  std::string index;
  for (size_t a = 0; a < ranges.size(); ++a) index += (a ? ", " : "") + ranges[a];
  e.assign(0, ranges.empty() ? e.in(0) : e.in(0) + "[" + index + "]");
}

void emitCumSum(JaxEmit& e) {
  const int64_t axis = normAxis(e.constInts(1).at(0), e.rank(0));
  const std::string a = std::to_string(axis);
  const bool reverse = e.attrInt("reverse", 0) != 0, exclusive = e.attrInt("exclusive", 0) != 0;
  std::string x = reverse ? "jnp.flip(" + e.in(0) + ", " + a + ")" : e.in(0);
  // jnp.cumsum, like numpy's, would widen int32 to int64.
  std::string y = "jnp.cumsum(" + x + ", axis=" + a + ", dtype=" + e.dtypeName(e.dtype(0)) + ")";
  if (exclusive) {  // zero, then the sums of all but the last
    std::vector<int64_t> pads(2 * static_cast<size_t>(e.rank(0)), 0);
    pads[static_cast<size_t>(axis)] = 1;
    const int64_t n = e.shape(0)[static_cast<size_t>(axis)];
    y = "jnp.pad(lax.slice_in_dim(" + y + ", 0, " + std::to_string(n - 1) + ", axis=" + a + "), " +
        pairs(pads, static_cast<size_t>(e.rank(0))) + ")";
  }
  e.assign(0, reverse ? "jnp.flip(" + y + ", " + a + ")" : y);
}

// ONNX's reductions: axes from the attribute (or the input, since ReduceSum 13 and the others
// 18), none meaning all unless noop_with_empty_axes. `pre` and `post` wrap the reduction.
Emitter reduce(const std::string& fn, const std::string& pre = "", const std::string& post = "",
               bool floatsOnly = false) {
  return [=](JaxEmit& e) {
    if (floatsOnly && !e.isFloat(0)) e.unsupported("of " + e.dtypeName(e.dtype(0)));
    std::vector<int64_t> axes = e.has(1) ? e.constInts(1) : e.attrInts("axes");
    if (axes.empty() && e.attrInt("noop_with_empty_axes", 0) != 0) {
      e.assign(0, e.in(0));
      return;
    }
    axes = axes.empty() ? allAxes(e.rank(0)) : normAxes(axes, e.rank(0));
    const std::string keep = e.attrInt("keepdims", 1) ? "True" : "False";
    const std::string x = pre.empty() ? e.in(0) : pre + "(" + e.in(0) + ")";
    // Sums and products keep the dtype: jnp's, like numpy's, widen int32 to int64.
    const bool widens = fn == "jnp.sum" || fn == "jnp.prod";
    const std::string y = fn + "(" + x + ", axis=" + pyTuple(axes) + ", keepdims=" + keep +
                          (widens ? ", dtype=" + e.dtypeName(e.dtype(0)) : "") + ")";
    e.assign(0, post.empty() ? y : post + "(" + y + ")");
  };
}

Emitter argReduce(const std::string& fn) {
  return [fn](JaxEmit& e) {
    const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
    const std::string a = std::to_string(axis);
    const std::string keep = e.attrInt("keepdims", 1) ? "True" : "False";
    if (e.attrInt("select_last_index", 0) == 0) {  // numpy picks the first, as ONNX
      e.assign(0, fn + "(" + e.in(0) + ", axis=" + a + ", keepdims=" + keep + ")");
      return;
    }
    e.assign(0, std::to_string(e.shape(0)[static_cast<size_t>(axis)] - 1) + " - " + fn +
                    "(jnp.flip(" + e.in(0) + ", " + a + "), axis=" + a + ", keepdims=" + keep +
                    ")");
  };
}

// Resize as jax.image.resize where ONNX's mapping is its: linear interpolation with half-pixel
// centres, without antialiasing (ONNX's default), to the output's shape.
void emitResize(JaxEmit& e) {
  const Shape& out = e.outShape(0);
  const std::string mode = e.attrString("mode", "nearest");
  const std::string coord = e.attrString("coordinate_transformation_mode", "half_pixel");
  bool lengthOne = false;
  for (int64_t d : out) lengthOne |= d == 1;
  if (mode != "linear" || !(coord == "half_pixel" || (coord == "pytorch_half_pixel" && !lengthOne)))
    e.unsupported("mode " + mode + " with " + coord + " is not jax.image.resize's");
  if (e.attrInt("antialias", 0) != 0) e.unsupported("antialias");
  if (!e.isFloat(0)) e.unsupported("of " + e.dtypeName(e.dtype(0)));
  e.assign(0, "jax.image.resize(" + e.in(0) + ", " + pyTuple(out) +
                  ", method='linear', antialias=False)");
}

// DepthToSpace (DCR or CRD) and SpaceToDepth as ONNX defines them: a reshape, a transpose, a
// reshape.
void emitDepthToSpace(JaxEmit& e) {
  const Shape& x = e.shape(0);
  const int64_t b = e.attrInt("blocksize", 1), c = x[1] / (b * b);
  const bool crd = e.attrString("mode", "DCR") == "CRD";
  const std::vector<int64_t> split = crd ? std::vector<int64_t>{x[0], c, b, b, x[2], x[3]}
                                         : std::vector<int64_t>{x[0], b, b, c, x[2], x[3]};
  const std::vector<int64_t> perm =
      crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
  e.assign(0, "jnp.reshape(jnp.transpose(jnp.reshape(" + e.in(0) + ", " + pyTuple(split) + "), " +
                  pyTuple(perm) + "), " + pyTuple(e.outShape(0)) + ")");
}

void emitSpaceToDepth(JaxEmit& e) {
  const Shape& x = e.shape(0);
  const int64_t b = e.attrInt("blocksize", 1);
  e.assign(0, "jnp.reshape(jnp.transpose(jnp.reshape(" + e.in(0) + ", " +
                  pyTuple({x[0], x[1], x[2] / b, b, x[3] / b, b}) + "), (0, 3, 5, 1, 2, 4)), " +
                  pyTuple(e.outShape(0)) + ")");
}

// The k largest (or smallest) along the axis, sorted, ties to the lower index: lax.top_k's
// order, over the axis moved last.
void emitTopK(JaxEmit& e) {
  if (e.attrInt("sorted", 1) == 0) e.unsupported("sorted=0: the order is the engine's");
  const bool largest = e.attrInt("largest", 1) != 0;
  if (!largest && !e.isFloat(0)) e.unsupported("the smallest of integers (negation overflows)");
  const int64_t axis = normAxis(e.attrInt("axis", -1), e.rank(0));
  const std::string a = std::to_string(axis);
  const std::string x = "jnp.moveaxis(" + e.in(0) + ", " + a + ", -1)";
  const std::string both = e.let("lax.top_k(" + (largest ? x : "-" + x) + ", " +
                                 std::to_string(e.constInts(1).at(0)) + ")");
  e.assign(0, std::string(largest ? "" : "-") + "jnp.moveaxis(" + both + "[0], -1, " + a + ")");
  if (e.outUsed(1)) e.assign(1, "jnp.moveaxis(" + both + "[1], -1, " + a + ").astype(jnp.int64)");
}

// data.at[...] with ONNX's reductions: the index of each update along the axis, its own position
// on the others.
std::string scatterUpdate(JaxEmit& e, const std::string& index) {
  const std::string reduction = e.attrString("reduction", "none");
  const std::string method = reduction == "none"  ? "set"
                             : reduction == "add" ? "add"
                             : reduction == "mul" ? "multiply"
                             : reduction == "max" ? "max"
                             : reduction == "min" ? "min"
                                                  : "";
  if (method.empty()) e.unsupported("reduction " + reduction);
  if (method != "set" && e.dtype(0) == DType::Bool)
    e.unsupported("reduction " + reduction + " of bool");
  return e.in(0) + ".at[" + index + "]." + method + "(" + e.in(2) + ")";
}

void emitScatterElements(JaxEmit& e) {
  const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
  const std::string i = e.in(1), n = std::to_string(e.shape(0)[static_cast<size_t>(axis)]);
  const std::string grid = e.let("jnp.indices(" + pyTuple(e.shape(1)) + ", sparse=True)");
  std::string index = "(";
  for (int64_t a = 0; a < e.rank(0); ++a)
    index += a == axis ? "jnp.where(" + i + " < 0, " + i + " + " + n + ", " + i + "), "
                       : grid + "[" + std::to_string(a) + "], ";
  e.assign(0, scatterUpdate(e, index + ")"));
}

// The index tuple of GatherND and ScatterND (batch_dims 0): the indices' last axis spread over
// the data's leading axes, negative ones counted from the end.
std::string ndIndex(JaxEmit& e) {
  const int64_t k = e.shape(1).back();
  const std::string i = e.in(1);
  std::string index = "(";
  for (int64_t a = 0; a < k; ++a) {
    const std::string at = i + "[..., " + std::to_string(a) + "]";
    index += "jnp.where(" + at + " < 0, " + at + " + " +
             std::to_string(e.shape(0)[static_cast<size_t>(a)]) + ", " + at + "), ";
  }
  return index + ")";
}

}  // namespace

void addShapeEmitters(EmitterTable& t) {
  t["DepthToSpace"] = emitDepthToSpace;
  t["SpaceToDepth"] = emitSpaceToDepth;
  t["TopK"] = emitTopK;
  t["ScatterElements"] = emitScatterElements;
  t["GatherND"] = [](JaxEmit& e) {
    if (e.attrInt("batch_dims", 0) != 0) e.unsupported("batch_dims");
    e.assign(0, e.in(0) + "[" + ndIndex(e) + "]");
  };
  t["ScatterND"] = [](JaxEmit& e) { e.assign(0, scatterUpdate(e, ndIndex(e))); };
  t["Shape"] = [](JaxEmit& e) {  // static: the dims as written
    const int64_t r = e.rank(0);
    int64_t start = normAxis(e.attrInt("start", 0), r), end = normAxis(e.attrInt("end", r), r);
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    e.assign(0, "jnp.array(" + pyInts(Shape(e.shape(0).begin() + start, e.shape(0).begin() + end)) +
                    ", jnp.int64)");
  };
  t["Size"] = [](JaxEmit& e) {
    int64_t n = 1;
    for (int64_t d : e.shape(0)) n *= d;
    e.assign(0, "jnp.array(" + std::to_string(n) + ", jnp.int64)");
  };
  t["EyeLike"] = [](JaxEmit& e) {
    e.assign(0, "jnp.eye(" + std::to_string(e.shape(0)[0]) + ", " + std::to_string(e.shape(0)[1]) +
                    ", " + std::to_string(e.attrInt("k", 0)) +
                    ", dtype=" + e.dtypeName(e.outDtype(0)) + ")");
  };
  t["Reshape"] = emitReshape;
  t["Flatten"] = emitReshape;  // to the 2-D shape the rule gives
  t["Squeeze"] = emitSqueeze;
  t["Unsqueeze"] = emitUnsqueeze;
  t["Transpose"] = emitTranspose;
  t["Concat"] = emitConcat;
  t["Split"] = emitSplit;
  t["Pad"] = emitPad;
  t["Gather"] = emitGather;
  t["GatherElements"] = emitGatherElements;
  t["Slice"] = emitSlice;
  t["Expand"] = [](JaxEmit& e) {
    e.assign(0, "jnp.broadcast_to(" + e.in(0) + ", " + pyTuple(e.outShape(0)) + ")");
  };
  t["Tile"] = [](JaxEmit& e) {
    e.assign(0, "jnp.tile(" + e.in(0) + ", " + pyTuple(e.constInts(1)) + ")");
  };
  t["Trilu"] = [](JaxEmit& e) {
    const std::string k = e.has(1) ? std::to_string(e.constInts(1).at(0)) : "0";
    e.assign(0, std::string(e.attrInt("upper", 1) ? "jnp.triu(" : "jnp.tril(") + e.in(0) + ", " +
                    k + ")");
  };
  t["Einsum"] = [](JaxEmit& e) {
    std::string args;
    for (size_t i = 0; i < e.inputCount(); ++i) args += ", " + e.in(i);
    e.assign(0, "jnp.einsum(" + pythonStringLiteral(e.attrString("equation", "")) + args + ")");
  };
  t["CumSum"] = emitCumSum;
  t["Resize"] = emitResize;
  t["ReduceSum"] = reduce("jnp.sum");
  t["ReduceMean"] = reduce("jnp.mean", "", "", true);
  t["ReduceMax"] = reduce("jnp.max");
  t["ReduceMin"] = reduce("jnp.min");
  t["ReduceProd"] = reduce("jnp.prod");
  t["ReduceSumSquare"] = reduce("jnp.sum", "jnp.square");
  t["ReduceL1"] = reduce("jnp.sum", "jnp.abs");
  t["ReduceL2"] = reduce("jnp.sum", "jnp.square", "jnp.sqrt", true);
  t["ReduceLogSum"] = reduce("jnp.sum", "", "jnp.log", true);
  t["ReduceLogSumExp"] = reduce("jax.nn.logsumexp", "", "", true);
  t["ArgMax"] = argReduce("jnp.argmax");
  t["ArgMin"] = argReduce("jnp.argmin");
}

}  // namespace nncheck::jax
