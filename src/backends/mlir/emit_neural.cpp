// Conv, pools, normalization, Softmax, MatMul, Gemm. TOSA's convolutions and pools are NHWC
// (weights OHWI, depthwise [KH, KW, C, M]); the emission transposes from ONNX's NCHW and back,
// and reads window geometry from the op library (ops/window.h).
#include "mlir/emit.h"
#include "ops/window.h"

namespace nncheck::mlir {
namespace {

// NC... -> N...C and back.
std::vector<int64_t> toChannelsLast(size_t rank) {
  std::vector<int64_t> p{0};
  for (size_t a = 2; a < rank; ++a) p.push_back(int64_t(a));
  p.push_back(1);
  return p;
}
std::vector<int64_t> toChannelsFirst(size_t rank) {
  std::vector<int64_t> p{0, int64_t(rank) - 1};
  for (size_t a = 1; a + 1 < rank; ++a) p.push_back(int64_t(a));
  return p;
}

// The window, with a 1-D window made 2-D (H = 1) and the end pads trimmed to what the output
// reads: TOSA wants (in + pads - extent) to divide by the stride, and rows no window reads do not
// change the result. A negative end pad becomes a crop of the input (`crop` per spatial axis).
// `cropsAll`: along some axis no window reaches the input past its leading padding, so the crop
// would leave nothing.
struct Window {
  Shape kernel, strides, dilations, padsBegin, padsEnd, out, crop;
  bool cropsAll = false;
};

// `in` is the input's shape; with `beginPadded`, it holds the leading padding already.
Window windowOf(NodeEmit& e, const Shape& in, bool beginPadded = false) {
  const ops::WindowGeometry g = ops::windowGeometry(e.node(), e.opset(), e.inputFacts());
  Window w{g.kernel, g.strides, g.dilations, g.padsBegin, g.padsEnd, g.out, {}};
  const size_t n = w.kernel.size();
  w.crop.assign(n, 0);
  for (size_t a = 0; a < n; ++a) {
    if (beginPadded) w.padsBegin[a] = 0;
    const int64_t extent = (w.kernel[a] - 1) * w.dilations[a] + 1;
    const int64_t end = (w.out[a] - 1) * w.strides[a] + extent - in[a + 2] - w.padsBegin[a];
    w.padsEnd[a] = std::max<int64_t>(end, 0);
    w.crop[a] = std::max<int64_t>(-end, 0);
    w.cropsAll = w.cropsAll || w.crop[a] >= in[a + 2];
  }
  if (n == 1) {  // as 2-D with H = 1
    for (Shape* s : {&w.kernel, &w.strides, &w.dilations, &w.out}) s->insert(s->begin(), 1);
    for (Shape* s : {&w.padsBegin, &w.padsEnd, &w.crop}) s->insert(s->begin(), 0);
  }
  return w;
}

// x (NC + spatial) as channels-last with 2 or 3 spatial dims, cropped as the window says.
Value channelsLast(NodeEmit& e, const Value& x, const Window& w) {
  Body& b = e.body();
  Value v = x;
  if (x.rank() == 3) v = b.reshape(x, {x.shape[0], x.shape[1], 1, x.shape[2]});
  Shape start(v.rank(), 0), size = v.shape;
  for (size_t a = 0; a < w.crop.size(); ++a) size[a + 2] -= w.crop[a];
  v = b.slice(v, start, size);
  return b.transpose(v, toChannelsLast(v.rank()));
}

// A channels-last result back to the node's output layout.
Value channelsFirst(NodeEmit& e, const Value& y) {
  Body& b = e.body();
  return b.reshape(b.transpose(y, toChannelsFirst(y.rank())), e.outShape(0));
}

std::vector<int64_t> tosaPads(const Window& w) {
  std::vector<int64_t> p;
  for (size_t a = 0; a < w.kernel.size(); ++a) {
    p.push_back(w.padsBegin[a]);
    p.push_back(w.padsEnd[a]);
  }
  return p;
}

Value convolve(NodeEmit& e, const Value& x, const Value& weight, const Value& bias, const Window& w,
               bool depthwise) {
  Shape out{x.shape[0]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  out.push_back(bias.shape[0]);
  const bool threeD = w.kernel.size() == 3;
  const std::string op = depthwise ? "tosa.depthwise_conv2d"
                         : threeD  ? "tosa.conv3d"
                                   : "tosa.conv2d";
  return e.body().op(op, {x, weight, bias}, x.dtype, out,
                     "dilation = " + i64Array(w.dilations) + ", pad = " + i64Array(tosaPads(w)) +
                         ", stride = " + i64Array(w.strides));
}

void emitConv(NodeEmit& e) {
  e.requireTypes(kFloatTypes);
  if (e.rank(0) < 3 || e.rank(0) > 5) e.unsupported("rank " + std::to_string(e.rank(0)));
  Body& b = e.body();
  Value x = e.in(0);
  Value weight = e.in(1);
  Window w = windowOf(e, x.shape);
  if (w.cropsAll) {  // the leading zeros a window reads become part of the input
    const ops::WindowGeometry g = ops::windowGeometry(e.node(), e.opset(), e.inputFacts());
    std::vector<int64_t> pads(2 * x.rank(), 0);
    for (size_t a = 0; a < g.padsBegin.size(); ++a) pads[a + 2] = g.padsBegin[a];
    x = b.pad(x, pads);
    w = windowOf(e, x.shape, true);
  }
  const int64_t group = e.attrInt("group", 1);
  const int64_t c = x.shape[1], m = weight.shape[0], cg = c / group, mg = m / group;
  const Value bias = e.has(2) ? e.in(2) : b.splat(x.dtype, 0, {m});
  const Value in = channelsLast(e, x, w);
  if (weight.rank() == 3) weight = b.reshape(weight, {m, cg, 1, weight.shape[2]});
  if (group == c && cg == 1 && group > 1 && weight.rank() == 4) {
    // [M, 1, KH, KW] as [KH, KW, C, M / C]: output channel c * (M / C) + j is ONNX's too.
    const Value dw =
        b.transpose(b.reshape(weight, {c, mg, weight.shape[2], weight.shape[3]}), {2, 3, 0, 1});
    return e.assign(0, channelsFirst(e, convolve(e, in, dw, bias, w, true)));
  }
  const Value ohwi = b.transpose(weight, toChannelsLast(weight.rank()));
  std::vector<Value> parts;
  for (int64_t g = 0; g < group; ++g) {
    const Value xg = group == 1 ? in : b.sliceAxis(in, int64_t(in.rank()) - 1, g * cg, cg);
    const Value wg = group == 1 ? ohwi : b.sliceAxis(ohwi, 0, g * mg, mg);
    const Value bg = group == 1 ? bias : b.sliceAxis(bias, 0, g * mg, mg);
    parts.push_back(convolve(e, xg, wg, bg, w, false));
  }
  Value y = parts[0];
  if (group > 1) {
    Shape s = y.shape;
    s.back() = m;
    y = b.op("tosa.concat", parts, y.dtype, s, "axis = " + std::to_string(s.size() - 1) + " : i32");
  }
  e.assign(0, channelsFirst(e, y));
}

// MaxPool and AveragePool (2-D, or 1-D as 2-D). TOSA's avg_pool2d leaves padding out of the
// divisor (count_include_pad = 0); count_include_pad = 1 pads with zeros first.
Emitter pool(bool max) {
  return [max](NodeEmit& e) {
    e.requireTypes({DType::Float32});
    if (e.rank(0) != 3 && e.rank(0) != 4) e.unsupported("rank " + std::to_string(e.rank(0)));
    if (e.outputCount() > 1 && e.wantsOutput(1)) e.unsupported("the Indices output");
    Window w = windowOf(e, e.shape(0));
    if (w.cropsAll) e.unsupported("a window reads only padding");
    for (int64_t d : w.dilations)
      if (d != 1) e.unsupported("dilations (TOSA's pools have none)");
    Body& b = e.body();
    Value in = channelsLast(e, e.in(0), w);
    if (!max && e.attrInt("count_include_pad", 0) != 0) {
      const ops::WindowGeometry g = ops::windowGeometry(e.node(), e.opset(), e.inputFacts());
      Shape explicitEnd = g.padsEnd;
      if (explicitEnd.size() == 1) explicitEnd.insert(explicitEnd.begin(), 0);
      std::vector<int64_t> pads(8, 0);  // NHWC: begins, then ends
      for (size_t a = 0; a < 2; ++a) {
        const int64_t end = std::min(explicitEnd[a], w.padsEnd[a]);
        pads[a + 1] = w.padsBegin[a];
        pads[a + 5] = end;
        w.padsEnd[a] -= end;
        w.padsBegin[a] = 0;
      }
      in = b.pad(in, pads);
    }
    Shape out{in.shape[0], w.out[0], w.out[1], in.shape[3]};
    std::string props = "kernel = " + i64Array(w.kernel) + ", pad = " + i64Array(tosaPads(w)) +
                        ", stride = " + i64Array(w.strides);
    if (!max) props = "acc_type = f32, " + props;
    e.assign(0, channelsFirst(e, b.op(max ? "tosa.max_pool2d" : "tosa.avg_pool2d", {in}, in.dtype,
                                      out, props)));
  };
}

std::vector<int64_t> spatialAxes(size_t rank) {
  std::vector<int64_t> a;
  for (size_t i = 2; i < rank; ++i) a.push_back(int64_t(i));
  return a;
}

// The float mean over the spatial axes, each kept as size 1: the sum divided by the count.
Value spatialMean(NodeEmit& e, const Value& x) {
  double count = 1;
  for (size_t a = 2; a < x.rank(); ++a) count *= double(x.shape[a]);
  const Value sum = e.body().reduce("tosa.reduce_sum", x, spatialAxes(x.rank()));
  return e.pointwise("arith.divf", {sum, e.splatLike(count, sum)}, x.dtype);
}

void emitGlobalAveragePool(NodeEmit& e) {
  e.requireTypes(kFloatTypes);
  e.assign(0, spatialMean(e, e.in(0)));
}

// y = x a + b, a = scale / sqrt(var + eps), b = bias - mean a, with the parameters shaped to
// broadcast against x per channel: the form ATen and fused convolutions compute, whose rounding
// the ops' outputError describes.
Value affine(NodeEmit& e, const Value& x, const Value& scale, const Value& bias, const Value& mean,
             const Value& var, double eps) {
  const Value root =
      e.pointwise("math.sqrt", {e.binary("tosa.add", var, e.splatLike(eps, x), x.dtype)}, x.dtype);
  const Value a = e.pointwise("arith.divf", {scale, root}, x.dtype);
  const Value shift = e.binary("tosa.sub", bias, e.binary("tosa.mul", mean, a, x.dtype), x.dtype);
  return e.binary("tosa.add", e.binary("tosa.mul", x, a, x.dtype), shift, x.dtype);
}

// A [C] parameter as [1, C, 1, ...], to broadcast against x.
Value perChannel(NodeEmit& e, const Value& p, const Value& x) {
  Shape channel(x.rank(), 1);
  channel[1] = x.shape[1];
  return e.body().reshape(p, channel);
}

void emitBatchNormalization(NodeEmit& e) {
  e.requireTypes(kFloatTypes);
  if (e.attrInt("training_mode", 0) != 0) e.unsupported("training_mode");
  for (size_t i = 1; i < 5; ++i)
    if (e.dtype(i) != e.dtype(0)) e.unsupported("parameters of another float type than X");
  const Value x = e.in(0);
  e.assign(0, affine(e, x, perChannel(e, e.in(1), x), perChannel(e, e.in(2), x),
                     perChannel(e, e.in(3), x), perChannel(e, e.in(4), x),
                     e.attrFloat("epsilon", 1e-5f)));
}

// Mean and variance over each instance's spatial axes ([N, C, 1, ...]), then the same affine.
void emitInstanceNormalization(NodeEmit& e) {
  e.requireTypes(kFloatTypes);
  const Value x = e.in(0);
  const Value mu = spatialMean(e, x);
  const Value d = e.binary("tosa.sub", x, mu, x.dtype);
  const Value var = spatialMean(e, e.binary("tosa.mul", d, d, x.dtype));
  e.assign(0, affine(e, x, perChannel(e, e.in(1), x), perChannel(e, e.in(2), x), mu, var,
                     e.attrFloat("epsilon", 1e-5f)));
}

// Softmax and LogSoftmax along one axis (opset 13): x - max, then exp / sum or - log(sum).
Emitter softmax(bool log) {
  return [log](NodeEmit& e) {
    e.requireTypes(kFloatTypes);
    if (e.opset() < 13) e.unsupported("Softmax before opset 13 flattens at the axis");
    const Value x = e.in(0);
    const int64_t axis = normAxis(e.attrInt("axis", -1), e.rank(0));
    const Value d = e.binary("tosa.sub", x, e.body().reduce("tosa.reduce_max", x, {axis}), x.dtype);
    const Value ex = e.unary("tosa.exp", d);
    const Value sum = e.body().reduce("tosa.reduce_sum", ex, {axis});
    e.assign(0, log ? e.binary("tosa.sub", d, e.unary("tosa.log", sum), x.dtype)
                    : e.pointwise("arith.divf", {ex, sum}, x.dtype));
  };
}

// [..., M, K] x [..., K, N] with ONNX's broadcasting of the batch dims and 1-D operands, as
// TOSA's 3-D matmul of equal batches.
Value matmul(NodeEmit& e, Value a, Value b) {
  Body& body = e.body();
  if (a.rank() == 1) a = body.reshape(a, {1, a.shape[0]});
  if (b.rank() == 1) b = body.reshape(b, {b.shape[0], 1});
  const Shape batchA(a.shape.begin(), a.shape.end() - 2),
      batchB(b.shape.begin(), b.shape.end() - 2);
  const Shape batch = broadcastShape(batchA, batchB);
  int64_t n = 1;
  for (int64_t d : batch) n *= d;
  const int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1], cols = b.shape[b.rank() - 1];
  auto flat = [&](const Value& v, int64_t rows, int64_t columns) {
    Shape full = batch;
    full.push_back(rows);
    full.push_back(columns);
    return body.reshape(body.broadcastTo(v, full), {n, rows, columns});
  };
  return body.op("tosa.matmul", {flat(a, m, k), flat(b, k, cols)}, a.dtype, {n, m, cols});
}

void emitMatMul(NodeEmit& e) {  // integers wrap, as the kernel's modular sums
  e.requireTypes({DType::Float32, DType::Float64, DType::Int32, DType::Int64});
  e.assign(0, e.body().reshape(matmul(e, e.in(0), e.in(1)), e.outShape(0)));
}

// alpha A' B' + beta C, C broadcast to [M, N].
void emitGemm(NodeEmit& e) {
  e.requireTypes(kFloatTypes);
  Body& b = e.body();
  Value a = e.in(0), w = e.in(1);
  if (e.attrInt("transA", 0)) a = b.transpose(a, {1, 0});
  if (e.attrInt("transB", 0)) w = b.transpose(w, {1, 0});
  Value y = b.reshape(matmul(e, a, w), e.outShape(0));
  const double alpha = e.attrFloat("alpha", 1.0f), beta = e.attrFloat("beta", 1.0f);
  if (alpha != 1) y = e.binary("tosa.mul", y, e.splatLike(alpha, y), y.dtype);
  if (e.has(2)) {
    Value c = e.in(2);
    if (beta != 1) c = e.binary("tosa.mul", c, e.splatLike(beta, c), c.dtype);
    y = e.binary("tosa.add", y, c, y.dtype);
  }
  e.assign(0, y);
}

}  // namespace

void addNeuralEmitters(EmitterTable& t) {
  t["Conv"] = emitConv;
  t["MaxPool"] = pool(true);
  t["AveragePool"] = pool(false);
  t["GlobalAveragePool"] = emitGlobalAveragePool;
  t["BatchNormalization"] = emitBatchNormalization;
  t["InstanceNormalization"] = emitInstanceNormalization;
  t["Softmax"] = softmax(false);
  t["LogSoftmax"] = softmax(true);
  t["MatMul"] = emitMatMul;
  t["Gemm"] = emitGemm;
}

}  // namespace nncheck::mlir
