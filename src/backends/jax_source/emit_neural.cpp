// Conv, ConvTranspose, the pools, normalization, Softmax, MatMul and Gemm. Windows are lax's
// (conv_general_dilated, reduce_window) over ONNX's NCHW layout, as JAX writes them for that
// layout: explicit (low, high) pads per axis take ONNX's pads as they are, and the window geometry
// is ONNX's (ops/window.h), ceil mode included.
#include "jax_source/emit.h"
#include "ops/window.h"

namespace nncheck::jax {
namespace {

ops::WindowGeometry window(JaxEmit& e) {
  if (e.rank(0) < 3) e.unsupported("a window over rank " + std::to_string(e.rank(0)));
  return ops::windowGeometry(e.node(), e.opset(), e.inputFacts());
}

// lax's dimension numbers for ONNX's layouts: ("NCH", "OIH", "NCH") and up.
std::string dimensionNumbers(int64_t rank) {
  const std::string spatial = std::string("HWD").substr(0, static_cast<size_t>(rank - 2));
  return "('NC" + spatial + "', 'OI" + spatial + "', 'NC" + spatial + "')";
}

std::string pairs(const Shape& lo, const Shape& hi) {
  std::string s = "[";
  for (size_t a = 0; a < lo.size(); ++a)
    s += (a ? ", " : "") + std::string("(") + std::to_string(lo[a]) + ", " + std::to_string(hi[a]) +
         ")";
  return s + "]";
}

// The bias [C] added along axis 1 of a rank-r result.
std::string channelBias(JaxEmit& e, size_t i, int64_t rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[1] = -1;
  return " + jnp.reshape(" + e.in(i) + ", " + pyTuple(shape) + ")";
}

void emitConv(JaxEmit& e) {
  const ops::WindowGeometry w = window(e);
  std::string y = "lax.conv_general_dilated(" + e.in(0) + ", " + e.in(1) + ", " +
                  pyTuple(w.strides) + ", " + pairs(w.padsBegin, w.padsEnd) +
                  ", rhs_dilation=" + pyTuple(w.dilations) +
                  ", dimension_numbers=" + dimensionNumbers(e.rank(0)) +
                  ", feature_group_count=" + std::to_string(e.attrInt("group", 1)) + ")";
  if (e.has(2)) y += channelBias(e, 2, e.rank(0));
  e.assign(0, y);
}

// ConvTranspose as the gradient of a convolution, the way lax.conv_transpose computes it: the
// input dilated by the strides, padded by (dilated kernel - 1 - pad) per side, convolved with the
// kernel flipped and its in/out channels swapped per group.
void emitConvTranspose(JaxEmit& e) {
  const ops::WindowGeometry w = window(e);
  const size_t n = w.kernel.size();
  const int64_t group = e.attrInt("group", 1);
  const Shape& ws = e.shape(1);  // [C_in, C_out / group, k...]
  Shape lo(n), hi(n);
  for (size_t a = 0; a < n; ++a) {
    const int64_t span = w.dilations[a] * (w.kernel[a] - 1);
    lo[a] = span - w.padsBegin[a];
    hi[a] = w.out[a] - ((e.shape(0)[a + 2] - 1) * w.strides[a] + 1) - lo[a] + span;
  }
  // [C_in, C_out/g, k] -> [g, C_in/g, C_out/g, k] -> [g, C_out/g, C_in/g, k] -> [C_out, C_in/g, k]
  std::vector<int64_t> grouped = {group, ws[0] / group, ws[1]};
  std::vector<int64_t> perm = {0, 2, 1}, flip;
  for (size_t a = 0; a < n; ++a) {
    grouped.push_back(ws[a + 2]);
    perm.push_back(static_cast<int64_t>(a) + 3);
    flip.push_back(static_cast<int64_t>(a) + 2);
  }
  std::vector<int64_t> kernel = {ws[1] * group, ws[0] / group};
  kernel.insert(kernel.end(), ws.begin() + 2, ws.end());
  const std::string k =
      e.let("jnp.flip(jnp.reshape(jnp.transpose(jnp.reshape(" + e.in(1) + ", " + pyTuple(grouped) +
            "), " + pyTuple(perm) + "), " + pyTuple(kernel) + "), " + pyTuple(flip) + ")");
  std::string y = "lax.conv_general_dilated(" + e.in(0) + ", " + k + ", " + pyTuple(Shape(n, 1)) +
                  ", " + pairs(lo, hi) + ", lhs_dilation=" + pyTuple(w.strides) +
                  ", rhs_dilation=" + pyTuple(w.dilations) +
                  ", dimension_numbers=" + dimensionNumbers(e.rank(0)) +
                  ", feature_group_count=" + std::to_string(group) + ")";
  if (e.has(2)) y += channelBias(e, 2, e.rank(0));
  e.assign(0, y);
}

// reduce_window's arguments after the operand, init and function: the window over N and C of 1,
// ONNX's pads, and past the high pad what ceil mode's last window reaches.
std::string windowArgs(const ops::WindowGeometry& w, const Shape& in) {
  Shape dims = {1, 1}, strides = {1, 1}, dilations = {1, 1}, lo = {0, 0}, hi = {0, 0};
  for (size_t a = 0; a < w.kernel.size(); ++a) {
    dims.push_back(w.kernel[a]);
    strides.push_back(w.strides[a]);
    dilations.push_back(w.dilations[a]);
    lo.push_back(w.padsBegin[a]);
    const int64_t reach = (w.out[a] - 1) * w.strides[a] + w.dilations[a] * (w.kernel[a] - 1) + 1;
    hi.push_back(std::max(w.padsEnd[a], reach - in[a + 2] - w.padsBegin[a]));
  }
  return pyTuple(dims) + ", " + pyTuple(strides) + ", " + pairs(lo, hi) +
         ", window_dilation=" + pyTuple(dilations);
}

std::string lowest(JaxEmit& e) {
  switch (e.dtype(0)) {
    case DType::Float32:
    case DType::Float64:
      return "-jnp.inf";
    case DType::Int64:
      return "-9223372036854775807 - 1";
    case DType::Int32:
      return "-2147483648";
    default:
      e.unsupported("MaxPool of " + e.dtypeName(e.dtype(0)));
  }
}

void emitMaxPool(JaxEmit& e) {
  if (e.outUsed(1)) e.unsupported("Indices: lax's windows give no argmax");
  const ops::WindowGeometry w = window(e);
  e.assign(0, "lax.reduce_window(" + e.in(0) + ", jnp.array(" + lowest(e) + ", " +
                  e.dtypeName(e.dtype(0)) + "), lax.max, " + windowArgs(w, e.shape(0)) + ")");
}

// The window's sum over the count of what it covers: the real elements, or with
// count_include_pad the pads too, but never what ceil mode reaches past them.
void emitAveragePool(JaxEmit& e) {
  if (!e.isFloat(0)) e.unsupported("AveragePool of " + e.dtypeName(e.dtype(0)));
  const ops::WindowGeometry w = window(e);
  const std::string args = windowArgs(w, e.shape(0));
  const std::string sum = "lax.reduce_window(" + e.in(0) + ", 0.0, lax.add, " + args + ")";
  std::string ones = "jnp.ones(" + e.in(0) + ".shape, " + e.dtypeName(e.dtype(0)) + ")";
  if (e.attrInt("count_include_pad", 0) != 0) {
    Shape lo = {0, 0}, hi = {0, 0}, zeros(w.kernel.size() + 2, 0);
    lo.insert(lo.end(), w.padsBegin.begin(), w.padsBegin.end());
    hi.insert(hi.end(), w.padsEnd.begin(), w.padsEnd.end());
    ones = "jnp.pad(" + ones + ", " + pairs(lo, hi) + ", constant_values=1.0)";
    // The window runs over the padded ones with ONNX's pads already in them.
    ops::WindowGeometry inside = w;
    Shape paddedShape = e.shape(0);
    for (size_t a = 0; a < w.kernel.size(); ++a) {
      paddedShape[a + 2] += w.padsBegin[a] + w.padsEnd[a];
      inside.padsBegin[a] = inside.padsEnd[a] = 0;
    }
    e.assign(0, sum + " / lax.reduce_window(" + ones + ", 0.0, lax.add, " +
                    windowArgs(inside, paddedShape) + ")");
    return;
  }
  e.assign(0, sum + " / lax.reduce_window(" + ones + ", 0.0, lax.add, " + args + ")");
}

std::string spatialAxes(int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
  return pyTuple(axes);
}

}  // namespace

void addNeuralEmitters(EmitterTable& t) {
  t["Conv"] = emitConv;
  t["ConvTranspose"] = emitConvTranspose;
  t["MaxPool"] = emitMaxPool;
  t["AveragePool"] = emitAveragePool;
  t["GlobalAveragePool"] = [](JaxEmit& e) {
    e.assign(0, "jnp.mean(" + e.in(0) + ", axis=" + spatialAxes(e.rank(0)) + ", keepdims=True)");
  };
  t["GlobalMaxPool"] = [](JaxEmit& e) {
    e.assign(0, "jnp.max(" + e.in(0) + ", axis=" + spatialAxes(e.rank(0)) + ", keepdims=True)");
  };
  // Inference: (x - mean) * rsqrt(var + epsilon) * scale + bias over axis 1, as Flax's BatchNorm
  // computes it with running statistics.
  t["BatchNormalization"] = [](JaxEmit& e) {
    if (e.attrInt("training_mode", 0) != 0) e.unsupported("training_mode=1");
    std::vector<int64_t> shape(static_cast<size_t>(e.rank(0)), 1);
    shape[1] = -1;
    const std::string type = e.dtypeName(e.dtype(0));
    // ONNX lets the parameters' float types differ from X's; they take X's.
    auto param = [&](size_t i) {
      return "jnp.reshape(" + e.in(i) + ", " + pyTuple(shape) + ").astype(" + type + ")";
    };
    e.assign(0, "(" + e.in(0) + " - " + param(3) + ") * lax.rsqrt(" + param(4) + " + " +
                    pyFloat(e.attrFloat("epsilon", 1e-5f)) + ") * " + param(1) + " + " + param(2));
  };
  t["InstanceNormalization"] = [](JaxEmit& e) {
    const std::string axes = spatialAxes(e.rank(0));
    std::vector<int64_t> shape(static_cast<size_t>(e.rank(0)), 1);
    shape[1] = -1;
    const std::string x = e.in(0);
    const std::string mean = e.let("jnp.mean(" + x + ", axis=" + axes + ", keepdims=True)");
    const std::string var = e.let("jnp.var(" + x + ", axis=" + axes + ", keepdims=True)");
    e.assign(0, "(" + x + " - " + mean + ") * lax.rsqrt(" + var + " + " +
                    pyFloat(e.attrFloat("epsilon", 1e-5f)) + ") * jnp.reshape(" + e.in(1) + ", " +
                    pyTuple(shape) + ") + jnp.reshape(" + e.in(2) + ", " + pyTuple(shape) + ")");
  };
  // Over the axes from `axis` on, as Flax's LayerNorm (which normalizes the last).
  t["LayerNormalization"] = [](JaxEmit& e) {
    // Computed in stash_type (float32 unless it says otherwise), which is X's here.
    const int64_t stash = e.attrInt("stash_type", 1);
    if ((stash == 1) != (e.dtype(0) == DType::Float32))
      e.unsupported("stash_type " + std::to_string(stash) + " for " + e.dtypeName(e.dtype(0)));
    const int64_t axis = normAxis(e.attrInt("axis", -1), e.rank(0));
    std::vector<int64_t> axes;
    for (int64_t a = axis; a < e.rank(0); ++a) axes.push_back(a);
    const std::string x = e.in(0);
    const std::string mean =
        e.let("jnp.mean(" + x + ", axis=" + pyTuple(axes) + ", keepdims=True)");
    const std::string var = e.let("jnp.var(" + x + ", axis=" + pyTuple(axes) + ", keepdims=True)");
    const std::string inverse =
        e.let("lax.rsqrt(" + var + " + " + pyFloat(e.attrFloat("epsilon", 1e-5f)) + ")");
    e.assign(0, "(" + x + " - " + mean + ") * " + inverse + " * " + e.in(1) +
                    (e.has(2) ? " + " + e.in(2) : ""));
    if (e.outUsed(1)) e.assign(1, mean);
    if (e.outUsed(2)) e.assign(2, inverse);
  };
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const std::string fn = op == std::string("Softmax") ? "jax.nn.softmax(" : "jax.nn.log_softmax(";
    t[op] = [fn](JaxEmit& e) {
      if (e.opset() < 13) e.unsupported("opset " + std::to_string(e.opset()) + " coerces to 2-D");
      if (!e.isFloat(0)) e.unsupported("of " + e.dtypeName(e.dtype(0)));
      e.assign(0, fn + e.in(0) +
                      ", axis=" + std::to_string(normAxis(e.attrInt("axis", -1), e.rank(0))) + ")");
    };
  }
  // 1 at the first largest along the axis, as jax.nn.one_hot of the argmax.
  t["Hardmax"] = [](JaxEmit& e) {
    const int64_t axis = normAxis(e.attrInt("axis", -1), e.rank(0));
    const std::string a = std::to_string(axis);
    e.assign(0, "jax.nn.one_hot(jnp.argmax(" + e.in(0) + ", axis=" + a + "), " +
                    std::to_string(e.shape(0)[static_cast<size_t>(axis)]) + ", axis=" + a +
                    ", dtype=" + e.dtypeName(e.dtype(0)) + ")");
  };
  t["MatMul"] = [](JaxEmit& e) { e.assign(0, e.in(0) + " @ " + e.in(1)); };
  t["Gemm"] = [](JaxEmit& e) {  // alpha A' B' + beta C, C broadcast to [M, N]
    const std::string a = e.attrInt("transA", 0) ? e.in(0) + ".T" : e.in(0);
    const std::string b = e.attrInt("transB", 0) ? e.in(1) + ".T" : e.in(1);
    const float alpha = e.attrFloat("alpha", 1.0f), beta = e.attrFloat("beta", 1.0f);
    if (!e.isFloat(0)) {
      if (alpha == 1.0f && beta == 1.0f) {  // exact in the integer type, wrapping as numpy's
        e.assign(0, a + " @ " + b + (e.has(2) ? " + " + e.in(2) : ""));
        return;
      }
      // Else the product scaled in float64 and converted back, as the reference does.
      std::string y = "(" + a + " @ " + b + ").astype(jnp.float64) * " + pyFloat(alpha);
      if (e.has(2)) y += " + " + e.in(2) + ".astype(jnp.float64) * " + pyFloat(beta);
      assignAsInteger(e, 0, y, e.outDtype(0));
      return;
    }
    std::string y = a + " @ " + b;
    if (alpha != 1.0f) y = pyFloat(alpha) + " * (" + y + ")";
    if (e.has(2)) y += beta == 1.0f ? " + " + e.in(2) : " + " + pyFloat(beta) + " * " + e.in(2);
    e.assign(0, y);
  };
}

}  // namespace nncheck::jax
