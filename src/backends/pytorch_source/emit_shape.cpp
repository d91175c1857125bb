// Reshaping, slicing, indexing, padding, Resize and the reductions. Every shape is static, so
// output shapes come from the model's inferred types; negative axes and indices are normalized
// here, as ONNX defines them.
#include <algorithm>

#include "ops/resize.h"
#include "pytorch_source/emit.h"

namespace nncheck::pytorch {
namespace {

void emitReshape(NodeEmit& e) {
  e.assign(0, "torch.reshape(" + e.in(0) + ", " + pyInts(e.outShape(0)) + ")");
}

void emitSqueeze(NodeEmit& e) {
  if (!e.has(1)) {
    e.assign(0, "torch.squeeze(" + e.in(0) + ")");
    return;
  }
  std::string x = e.in(0);
  const std::vector<int64_t> axes = normAxes(e.constInts(1), e.rank(0));
  for (size_t i = axes.size(); i-- > 0;)
    x = "torch.squeeze(" + x + ", " + std::to_string(axes[i]) + ")";
  e.assign(0, axes.empty() ? x + ".clone()" : x);
}

void emitUnsqueeze(NodeEmit& e) {
  std::string x = e.in(0);
  const int64_t outRank = static_cast<int64_t>(e.outShape(0).size());
  // Unsqueeze-11's axes are an attribute; 13's are input 1.
  const std::vector<int64_t> axes = e.has(1) ? e.constInts(1) : e.attrInts("axes");
  for (int64_t a : normAxes(axes, outRank))
    x = "torch.unsqueeze(" + x + ", " + std::to_string(a) + ")";
  e.assign(0, x);
}

void emitTranspose(NodeEmit& e) {
  const std::vector<int64_t> perm = e.transposePerm();
  e.assign(0, "torch.permute(" + e.in(0) + ", " + pyInts(perm) + ")");
}

void emitConcat(NodeEmit& e) {
  std::string list;
  for (size_t i = 0; i < e.inputCount(); ++i) list += (i ? ", " : "") + e.in(i);
  e.assign(0, "torch.cat([" + list + "], " +
                  std::to_string(normAxis(e.attrInt("axis", 0), e.rank(0))) + ")");
}

void emitSplit(NodeEmit& e) {
  const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
  std::vector<int64_t> sizes;
  for (size_t k = 0; k < e.outputCount(); ++k)
    sizes.push_back(e.outShape(k).at(static_cast<size_t>(axis)));
  const std::string parts =
      e.let("torch.split(" + e.in(0) + ", " + pyInts(sizes) + ", " + std::to_string(axis) + ")");
  for (size_t k = 0; k < e.outputCount(); ++k) e.assign(k, parts + "[" + std::to_string(k) + "]");
}

// Pad: constant mode by constant_pad_nd (negative pads crop); edge and reflect gather each padded
// axis with a constant index list, which ATen's reflection and replication pads cannot do on every
// axis.
void emitPad(NodeEmit& e) {
  const std::string mode = e.attrString("mode", "constant");
  const std::vector<int64_t> pads = e.constInts(1);
  const size_t r = static_cast<size_t>(e.rank(0));
  if (pads.size() != 2 * r) e.unsupported("pads has " + std::to_string(pads.size()) + " values");
  if (mode == "constant") {
    double value = 0;
    if (e.has(2)) {
      const Tensor* v = e.constant(2);
      if (!v) e.unsupported("constant_value is computed, not an initializer");
      value = v->toDouble(0);
    }
    std::vector<int64_t> list;
    for (size_t a = r; a-- > 0;) {
      list.push_back(pads[a]);
      list.push_back(pads[a + r]);
    }
    e.assign(
        0, "torch.constant_pad_nd(" + e.in(0) + ", " + pyInts(list) + ", " + pyFloat(value) + ")");
    return;
  }
  if (mode != "edge" && mode != "reflect") e.unsupported("mode " + mode);
  std::string x = e.in(0);
  for (size_t a = 0; a < r; ++a) {
    const int64_t b = pads[a], end = pads[a + r], n = e.shape(0)[a];
    if (b < 0 || end < 0) e.unsupported("negative pads in " + mode + " mode");
    if (b == 0 && end == 0) continue;
    // Position i of the padded axis reads clamp(i) (edge) or i reflected back and forth over
    // [0, n) as numpy's pad does when pads exceed n - 1 (reflect).
    std::vector<int64_t> idx;
    const int64_t period = 2 * (n - 1);
    for (int64_t i = -b; i < n + end; ++i) {
      if (mode == "edge" || period == 0) {
        idx.push_back(std::clamp<int64_t>(i, 0, n - 1));
        continue;
      }
      int64_t m = ((i % period) + period) % period;
      idx.push_back(m >= n ? period - m : m);
    }
    x = "torch.index_select(" + x + ", " + std::to_string(a) + ", torch.tensor(" + pyInts(idx) +
        "))";
  }
  e.assign(0, x + (x == e.in(0) ? ".clone()" : ""));
}

void emitGather(NodeEmit& e) {
  const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
  const std::string n = std::to_string(e.shape(0)[static_cast<size_t>(axis)]);
  const std::string i = e.in(1);
  e.assign(0, "torch.reshape(torch.index_select(" + e.in(0) + ", " + std::to_string(axis) +
                  ", torch.reshape(torch.where(" + i + " < 0, " + i + " + " + n + ", " + i +
                  "), [-1])), " + pyInts(e.outShape(0)) + ")");
}

// Slice with ONNX's clamping; a negative step reads the flipped axis forward.
void emitSlice(NodeEmit& e) {
  const std::vector<int64_t> starts = e.constInts(1), ends = e.constInts(2);
  std::vector<int64_t> axes =
      e.has(3) ? e.constInts(3) : allAxes(static_cast<int64_t>(starts.size()));
  const std::vector<int64_t> steps =
      e.has(4) ? e.constInts(4) : std::vector<int64_t>(starts.size(), 1);
  std::vector<std::string> ranges(static_cast<size_t>(e.rank(0)), ":");
  std::vector<int64_t> flipped;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normAxis(axes[k], e.rank(0)), n = e.shape(0)[static_cast<size_t>(a)];
    int64_t s = starts[k] < 0 ? starts[k] + n : starts[k];
    int64_t t = ends[k] < 0 ? ends[k] + n : ends[k];
    const int64_t step = steps[k];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      t = std::clamp<int64_t>(t, 0, n);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      t = std::clamp<int64_t>(t, -1, n - 1);
      flipped.push_back(a);
      s = n - 1 - s;  // positions in the flipped axis
      t = n - 1 - t;
    }
    ranges[static_cast<size_t>(a)] = std::to_string(s) + ":" + std::to_string(std::max(s, t)) +
                                     ":" + std::to_string(step > 0 ? step : -step);
  }
  std::string x = e.in(0);
  if (!flipped.empty()) x = "torch.flip(" + x + ", " + pyInts(flipped) + ")";
  std::string index;
  for (size_t a = 0; a < ranges.size(); ++a) index += (a ? ", " : "") + ranges[a];
  e.assign(0, ranges.empty() ? x + ".clone()" : x + "[" + index + "]");
}

void emitExpand(NodeEmit& e) { e.assign(0, e.in(0) + ".expand(" + pyInts(e.outShape(0)) + ")"); }

void emitTile(NodeEmit& e) { e.assign(0, e.in(0) + ".repeat(" + pyInts(e.constInts(1)) + ")"); }

void emitCumSum(NodeEmit& e) {
  const std::vector<int64_t> axisValue = e.constInts(1);
  const int64_t axis = normAxis(axisValue.at(0), e.rank(0));
  const std::string a = std::to_string(axis),
                    n = std::to_string(e.shape(0)[static_cast<size_t>(axis)]);
  const bool reverse = e.attrInt("reverse", 0) != 0, exclusive = e.attrInt("exclusive", 0) != 0;
  std::string x = reverse ? "torch.flip(" + e.in(0) + ", [" + a + "])" : e.in(0);
  std::string y = "torch.cumsum(" + x + ", " + a + ")";
  if (exclusive) {  // zero, then the sums of all but the last
    const std::string xs = e.let(x);
    y = "torch.cat([torch.zeros_like(torch.narrow(" + xs + ", " + a +
        ", 0, 1)), torch.narrow(torch.cumsum(" + xs + ", " + a + "), " + a + ", 0, " + n +
        " - 1)], " + a + ")";
  }
  e.assign(0, reverse ? "torch.flip(" + y + ", [" + a + "])" : y);
}

// ONNX's reductions: axes from the attribute (or the input, ReduceSum since 13), none meaning
// all unless noop_with_empty_axes.
Emitter reduce(const std::string& fn) {
  return [fn](NodeEmit& e) {
    std::vector<int64_t> axes = e.has(1) ? e.constInts(1) : e.attrInts("axes");
    if (axes.empty() && e.attrInt("noop_with_empty_axes", 0) != 0) {
      e.assign(0, e.in(0) + ".clone()");
      return;
    }
    axes = axes.empty() ? allAxes(e.rank(0)) : normAxes(axes, e.rank(0));
    const std::string keep = e.attrInt("keepdims", 1) ? "True" : "False";
    if (fn == "torch.prod") {  // one axis at a time, the last first
      std::string x = e.in(0);
      for (size_t i = axes.size(); i-- > 0;)
        x = "torch.prod(" + x + ", " + std::to_string(axes[i]) + ", " + keep + ")";
      e.assign(0, axes.empty() ? x + ".clone()" : x);
      return;
    }
    if (fn == "torch.mean" && e.dtype(0) != DType::Float32 && e.dtype(0) != DType::Float64)
      e.unsupported("ATen's mean takes floats only");
    e.assign(0, fn + "(" + e.in(0) + ", " + pyInts(axes) + ", " + keep + ")");
  };
}

Emitter argReduce(const std::string& fn) {
  return [fn](NodeEmit& e) {
    const int64_t axis = normAxis(e.attrInt("axis", 0), e.rank(0));
    const std::string a = std::to_string(axis);
    const std::string keep = e.attrInt("keepdims", 1) ? "True" : "False";
    if (e.attrInt("select_last_index", 0) == 0) {  // ATen picks the first, as ONNX
      e.assign(0, fn + "(" + e.in(0) + ", " + a + ", " + keep + ")");
      return;
    }
    e.assign(0, std::to_string(e.shape(0)[static_cast<size_t>(axis)] - 1) + " - " + fn +
                    "(torch.flip(" + e.in(0) + ", [" + a + "]), " + a + ", " + keep + ")");
  };
}

// Resize as ATen's upsample ops where ONNX's coordinate mapping is one of theirs: only spatial axes
// scaled, and (mode, coordinate transformation, rounding) among the pairs below.
void emitResize(NodeEmit& e) {
  const int64_t r = e.rank(0);
  if (r < 3 || r > 5)
    e.unsupported("ATen upsamples 1 to 3 spatial axes, not rank " + std::to_string(r));
  const Shape& in = e.shape(0);
  const Shape& out = e.outShape(0);
  if (in[0] != out[0] || in[1] != out[1]) e.unsupported("N or C is resized");
  const std::string mode = e.attrString("mode", "nearest");
  const std::string coord = e.attrString("coordinate_transformation_mode", "half_pixel");
  const std::string nearest = e.attrString("nearest_mode", "round_prefer_floor");
  bool lengthOne = false;
  for (int64_t a = 2; a < r; ++a) lengthOne |= out[static_cast<size_t>(a)] == 1;
  const std::string d = std::to_string(r - 2) + "d";
  // ATen's op and functional.interpolate's mode; align_corners only for linear modes.
  std::string fn, interpolateMode, align;
  const std::string linear = r == 3   ? "upsample_linear1d"
                             : r == 4 ? "upsample_bilinear2d"
                                      : "upsample_trilinear3d";
  const std::string linearMode = r == 3 ? "linear" : r == 4 ? "bilinear" : "trilinear";
  if (mode == "linear" &&
      (coord == "half_pixel" || (coord == "pytorch_half_pixel" && !lengthOne))) {
    fn = linear, interpolateMode = linearMode, align = "False";
  } else if (mode == "linear" && coord == "align_corners") {
    fn = linear, interpolateMode = linearMode, align = "True";
  } else if (mode == "nearest" && coord == "asymmetric" && nearest == "floor") {
    fn = "upsample_nearest" + d, interpolateMode = "nearest";
  } else if (mode == "nearest" &&
             (((coord == "half_pixel" || (coord == "pytorch_half_pixel" && !lengthOne)) &&
               nearest == "round_prefer_ceil") ||
              (coord == "tf_half_pixel_for_nn" && nearest == "floor"))) {
    fn = "_upsample_nearest_exact" + d, interpolateMode = "nearest-exact";
  } else {
    e.unsupported("mode " + mode + " with " + coord + " and " + nearest +
                  " has no ATen equivalent");
  }
  std::string size = "None", scale = "None";
  if (e.has(3)) {
    size = pyInts(Shape(out.begin() + 2, out.end()));
  } else {
    const Tensor* s = e.constant(2);
    if (!s) e.unsupported("scales are computed, not an initializer");
    if (s->toDouble(0) != 1 || s->toDouble(1) != 1) e.unsupported("N or C is scaled");
    scale = "[";
    for (int64_t a = 2; a < r; ++a) scale += (a > 2 ? ", " : "") + pyFloat(s->toDouble(a));
    scale += "]";
  }
  // The ATen op in TorchScript; in Python, interpolate, which users call and which calls it with
  // the same size or scales.
  const auto upsample = [&](const std::string& x) {
    if (e.dialect() == Dialect::TorchScript)
      return "torch." + fn + "(" + x + ", " + size + ", " + (align.empty() ? "" : align + ", ") +
             scale + ")";
    return "torch.nn.functional.interpolate(" + x + ", size=" + size + ", scale_factor=" + scale +
           ", mode='" + interpolateMode + "'" + (align.empty() ? "" : ", align_corners=" + align) +
           ")";
  };
  if (e.dtype(0) == DType::Float32 || e.dtype(0) == DType::Float64) {
    e.assign(0, upsample(e.in(0)));
    return;
  }
  // ATen upsamples floats only; the reference interpolates integers in double too, snapping
  // near-integers before the truncation.
  const std::string y = e.let(upsample(e.in(0) + ".to(" + e.torchType(DType::Float64) + ")"));
  const std::string nearestInt = e.let("torch.round(" + y + ")");
  assignAsInteger(e, 0,
                  "torch.where(torch.abs(" + y + " - " + nearestInt +
                      ") <= " + pyFloat(ops::kResizeIntegerSnap) + " * (1.0 + torch.abs(" + y +
                      ")), " + nearestInt + ", " + y + ")",
                  e.outDtype(0));
}

}  // namespace

void addShapeEmitters(EmitterTable& t) {
  t["Reshape"] = emitReshape;
  t["Flatten"] = emitReshape;  // to the 2-D shape the rule gives
  t["Squeeze"] = emitSqueeze;
  t["Unsqueeze"] = emitUnsqueeze;
  t["Transpose"] = emitTranspose;
  t["Concat"] = emitConcat;
  t["Split"] = emitSplit;
  t["Pad"] = emitPad;
  t["Gather"] = emitGather;
  t["Slice"] = emitSlice;
  t["Expand"] = emitExpand;
  t["Tile"] = emitTile;
  t["CumSum"] = emitCumSum;
  t["Resize"] = emitResize;
  t["ReduceSum"] = reduce("torch.sum");
  t["ReduceMean"] = reduce("torch.mean");
  t["ReduceMax"] = reduce("torch.amax");
  t["ReduceMin"] = reduce("torch.amin");
  t["ReduceProd"] = reduce("torch.prod");
  t["ArgMax"] = argReduce("torch.argmax");
  t["ArgMin"] = argReduce("torch.argmin");
}

}  // namespace nncheck::pytorch
