// Conv, ConvTranspose, the pools, normalization, Softmax, MatMul and Gemm. ONNX's windows take
// any pads per side; ATen's take one pad per axis, so uneven pads are applied first
// (constant_pad_nd) or cut after, with the window geometry ONNX's kernels use (ops/window.h).
#include <optional>

#include "ops/window.h"
#include "pytorch_source/emit.h"

namespace nncheck::pytorch {
namespace {

ops::WindowGeometry window(NodeEmit& e) {
  const int64_t r = e.rank(0);
  if (r < 3 || r > 5)
    e.unsupported("ATen has 1-, 2- and 3-d windows, not rank " + std::to_string(r));
  return ops::windowGeometry(e.node(), e.opset(), e.inputFacts());
}

std::string nd(NodeEmit& e) { return std::to_string(e.rank(0) - 2) + "d"; }

// constant_pad_nd's list: the last axis first, (begin, end) each.
std::string padList(const Shape& begin, const Shape& end) {
  std::vector<int64_t> p;
  for (size_t a = begin.size(); a-- > 0;) {
    p.push_back(begin[a]);
    p.push_back(end[a]);
  }
  return pyInts(p);
}

// The output size ATen's pools give for this geometry with symmetric pad p (ceil mode drops a
// last window that would start past the input and its left pad).
int64_t atenPoolSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

// The pads ATen's pool takes as is (even per axis, at most half the kernel, the same output
// size), or nothing: then the input is padded first. ATen's 3-d pools also reject an input
// smaller than the kernel whatever the pads.
std::optional<Shape> atenPoolPads(NodeEmit& e, const ops::WindowGeometry& w, bool ceil) {
  const Shape& x = e.shape(0);
  for (size_t a = 0; a < w.kernel.size(); ++a) {
    const int64_t p = w.padsBegin[a];
    if (p != w.padsEnd[a] || 2 * p > w.kernel[a] || (x.size() == 5 && x[a + 2] < w.kernel[a]) ||
        atenPoolSize(x[a + 2], w.kernel[a], w.strides[a], p, w.dilations[a], ceil) != w.out[a])
      return std::nullopt;
  }
  return w.padsBegin;
}

// Pools over an input padded first, with pads 0: ONNX's output size must be ATen's.
void requireSizesWithoutPads(NodeEmit& e, const ops::WindowGeometry& w, bool ceil) {
  for (size_t a = 0; a < w.kernel.size(); ++a) {
    const int64_t in = e.shape(0)[a + 2] + w.padsBegin[a] + w.padsEnd[a];
    if (atenPoolSize(in, w.kernel[a], w.strides[a], 0, w.dilations[a], ceil) != w.out[a])
      e.unsupported("ceil_mode keeps a last window that starts in the padding; ATen drops it");
  }
}

void emitConv(NodeEmit& e) {
  const ops::WindowGeometry w = window(e);
  std::string x = e.in(0);
  Shape pads = w.padsBegin;
  if (w.padsBegin != w.padsEnd) {
    x = e.let("torch.constant_pad_nd(" + x + ", " + padList(w.padsBegin, w.padsEnd) + ", 0.0)");
    pads.assign(pads.size(), 0);
  }
  e.assign(0, "torch.conv" + nd(e) + "(" + x + ", " + e.in(1) + ", " +
                  (e.has(2) ? e.in(2) : "None") + ", " + pyInts(w.strides) + ", " + pyInts(pads) +
                  ", " + pyInts(w.dilations) + ", " + std::to_string(e.attrInt("group", 1)) + ")");
}

void emitConvTranspose(NodeEmit& e) {
  const ops::WindowGeometry w = window(e);
  const size_t n = w.kernel.size();
  const Shape outPad = e.attrInts("output_padding", Shape(n, 0));
  // Past ATen's full size (an output_shape beyond it), positions only the bias reaches.
  Shape extend(n, 0);
  bool extended = false;
  for (size_t a = 0; a < n; ++a) {
    const int64_t full =
        (e.shape(0)[a + 2] - 1) * w.strides[a] + outPad[a] + (w.kernel[a] - 1) * w.dilations[a] + 1;
    extend[a] = std::max<int64_t>(w.padsBegin[a] + w.out[a] - full, 0);
    extended = extended || extend[a] > 0;
  }
  const std::string bias = e.has(2) ? e.in(2) : "None";
  const std::string head = "torch.conv_transpose" + nd(e) + "(" + e.in(0) + ", " + e.in(1) + ", ";
  const std::string tail =
      ", " + std::to_string(e.attrInt("group", 1)) + ", " + pyInts(w.dilations) + ")";
  if (w.padsBegin == w.padsEnd && !extended) {
    e.assign(0, head + bias + ", " + pyInts(w.strides) + ", " + pyInts(w.padsBegin) + ", " +
                    pyInts(outPad) + tail);
    return;
  }
  // Uneven pads: the full output without the bias, zeros where it is extended, cut, then the
  // bias.
  std::string full = e.let(head + "None, " + pyInts(w.strides) + ", " + pyInts(Shape(n, 0)) + ", " +
                           pyInts(outPad) + tail);
  if (extended)
    full = e.let("torch.constant_pad_nd(" + full + ", " + padList(Shape(n, 0), extend) + ", 0.0)");
  std::string cut = full + "[:, :";
  for (size_t a = 0; a < n; ++a)
    cut += ", " + std::to_string(w.padsBegin[a]) + ":" + std::to_string(w.padsBegin[a] + w.out[a]);
  cut += "]";
  if (e.has(2)) {
    std::vector<int64_t> channel(static_cast<size_t>(e.rank(0)), 1);
    channel[1] = -1;
    cut += " + torch.reshape(" + e.in(2) + ", " + pyInts(channel) + ")";
  }
  e.assign(0, cut);
}

void emitMaxPool(NodeEmit& e) {
  const ops::WindowGeometry w = window(e);
  const bool ceil = e.attrInt("ceil_mode", 0) != 0;
  const bool indices = e.outUsed(1);
  std::optional<Shape> pads = atenPoolPads(e, w, ceil);
  std::string x = e.in(0);
  if (!pads) {
    if (indices) e.unsupported("Indices of a pool over uneven pads");
    requireSizesWithoutPads(e, w, ceil);
    x = e.let("torch.constant_pad_nd(" + x + ", " + padList(w.padsBegin, w.padsEnd) +
              ", float('-inf'))");
    pads = Shape(w.kernel.size(), 0);
  }
  const std::string args = "(" + x + ", " + pyInts(w.kernel) + ", " + pyInts(w.strides) + ", " +
                           pyInts(*pads) + ", " + pyInts(w.dilations) + ", " +
                           (ceil ? "True" : "False");
  if (!indices) {
    e.assign(0, "torch.max_pool" + nd(e) + args + ")");
    return;
  }
  if (e.attrInt("storage_order", 0) != 0) e.unsupported("column-major Indices");
  // ATen's indices count within each (n, c) plane; ONNX's within the whole tensor.
  const std::string both = e.let(e.functional("max_pool" + nd(e) + "_with_indices") + args + ")");
  e.assign(0, both + "[0]");
  const Shape& s = e.shape(0);
  int64_t plane = 1;
  for (size_t a = 2; a < s.size(); ++a) plane *= s[a];
  Shape planes = {s[0], s[1]};
  planes.resize(s.size(), 1);
  e.assign(1, both + "[1] + torch.arange(" + std::to_string(s[0] * s[1]) + ").reshape(" +
                  pyInts(planes) + ") * " + std::to_string(plane));
}

void emitAveragePool(NodeEmit& e) {
  const ops::WindowGeometry w = window(e);
  const bool ceil = e.attrInt("ceil_mode", 0) != 0;
  const bool includePad = e.attrInt("count_include_pad", 0) != 0;
  const std::string fn = e.functional("avg_pool" + nd(e)) + "(";
  const std::string rest = ", " + pyInts(w.kernel) + ", " + pyInts(w.strides) + ", ";
  const std::string flags = std::string(ceil ? "True" : "False") + ", ";
  if (std::optional<Shape> pads = atenPoolPads(e, w, ceil)) {
    e.assign(0, fn + e.in(0) + rest + pyInts(*pads) + ", " + flags +
                    (includePad ? "True" : "False") + ")");
    return;
  }
  requireSizesWithoutPads(e, w, ceil);
  const std::string zeros = pyInts(Shape(w.kernel.size(), 0));
  const std::string padded =
      e.let("torch.constant_pad_nd(" + e.in(0) + ", " + padList(w.padsBegin, w.padsEnd) + ", 0.0)");
  const std::string sum = fn + padded + rest + zeros + ", " + flags + "True)";
  if (includePad) {
    e.assign(0, sum);
    return;
  }
  // Padding excluded: the mean over the padded input divided by the share of real elements.
  const std::string mask = e.let("torch.constant_pad_nd(torch.ones_like(" + e.in(0) + "), " +
                                 padList(w.padsBegin, w.padsEnd) + ", 0.0)");
  e.assign(0, sum + " / " + fn + mask + rest + zeros + ", " + flags + "True)");
}

}  // namespace

void addNeuralEmitters(EmitterTable& t) {
  t["Conv"] = emitConv;
  t["ConvTranspose"] = emitConvTranspose;
  t["MaxPool"] = emitMaxPool;
  t["AveragePool"] = emitAveragePool;
  t["GlobalAveragePool"] = [](NodeEmit& e) {
    std::vector<int64_t> dims;
    for (int64_t a = 2; a < e.rank(0); ++a) dims.push_back(a);
    e.assign(0, "torch.mean(" + e.in(0) + ", " + pyInts(dims) + ", True)");
  };
  t["BatchNormalization"] = [](NodeEmit& e) {
    if (e.attrInt("training_mode", 0) != 0) e.unsupported("training_mode=1");
    // ONNX lets the parameters' float types differ from X's; ATen wants one, so they take X's.
    auto param = [&e](size_t i) {
      return e.dtype(i) == e.dtype(0) ? e.in(i) : e.in(i) + ".to(" + e.torchType(e.dtype(0)) + ")";
    };
    e.assign(0, "torch.batch_norm(" + e.in(0) + ", " + param(1) + ", " + param(2) + ", " +
                    param(3) + ", " + param(4) + ", False, " +
                    pyFloat(e.attrFloat("momentum", 0.9f)) + ", " +
                    pyFloat(e.attrFloat("epsilon", 1e-5f)) + ", False)");
  };
  t["InstanceNormalization"] = [](NodeEmit& e) {
    e.assign(0, "torch.instance_norm(" + e.in(0) + ", " + e.in(1) + ", " + e.in(2) +
                    ", None, None, True, 0.1, " + pyFloat(e.attrFloat("epsilon", 1e-5f)) +
                    ", False)");
  };
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const std::string fn = op == std::string("Softmax") ? "torch.softmax(" : "torch.log_softmax(";
    t[op] = [fn](NodeEmit& e) {
      if (e.opset() < 13) e.unsupported("opset " + std::to_string(e.opset()) + " coerces to 2-D");
      e.assign(0, fn + e.in(0) + ", " + std::to_string(normAxis(e.attrInt("axis", -1), e.rank(0))) +
                      ")");
    };
  }
  t["MatMul"] = [](NodeEmit& e) { e.assign(0, "torch.matmul(" + e.in(0) + ", " + e.in(1) + ")"); };
  t["Gemm"] = [](NodeEmit& e) {  // alpha A' B' + beta C, C broadcast to [M, N]
    const std::string a = e.attrInt("transA", 0) ? e.in(0) + ".t()" : e.in(0);
    const std::string b = e.attrInt("transB", 0) ? e.in(1) + ".t()" : e.in(1);
    const std::string alpha = pyFloat(e.attrFloat("alpha", 1.0f));
    if (e.dtype(0) != DType::Float32 && e.dtype(0) != DType::Float64) {
      // Integers: the product in the integer type (wrapping, as numpy's), scaled in float64,
      // converted back as the reference does.
      const std::string f64 = ".to(" + e.torchType(DType::Float64) + ")";
      std::string y = "torch.mm(" + a + ", " + b + ")" + f64 + " * " + alpha;
      if (e.has(2)) y += " + " + e.in(2) + f64 + " * " + pyFloat(e.attrFloat("beta", 1.0f));
      assignAsInteger(e, 0, y, e.outDtype(0));
      return;
    }
    // nn.Linear as PyTorch exports it (transB, C of one row or none): linear, which freeze and
    // optimize_for_inference fold and fuse.
    const bool linear = !e.attrInt("transA", 0) && e.attrInt("transB", 0) &&
                        e.attrFloat("alpha", 1.0f) == 1.0f && e.attrFloat("beta", 1.0f) == 1.0f &&
                        (!e.has(2) || (e.rank(2) == 1 && e.shape(2)[0] == e.outShape(0)[1]));
    if (linear) {
      e.assign(0, e.functional("linear") + "(" + e.in(0) + ", " + e.in(1) + ", " +
                      (e.has(2) ? e.in(2) : "None") + ")");
      return;
    }
    if (e.has(2))
      e.assign(0, "torch.addmm(" + e.in(2) + ", " + a + ", " + b +
                      ", beta=" + pyFloat(e.attrFloat("beta", 1.0f)) + ", alpha=" + alpha + ")");
    else
      e.assign(0, "torch.mm(" + a + ", " + b + ") * " + alpha);
  };
}

}  // namespace nncheck::pytorch
