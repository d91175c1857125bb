// Conv (and the quantized ConvInteger and QLinearConv), ConvTranspose, MaxPool, AveragePool,
// GlobalAveragePool and GlobalMaxPool over any number of
// spatial dims. The window geometry (kernel, strides, dilations, pads under auto_pad, output dims)
// is written once, generically: shape rules constrain it and kernels read its concrete values.
#include <cmath>

#include "ops/gradients.h"
#include "ops/infer.h"
#include "ops/quantize.h"
#include "ops/window.h"

namespace nncheck::ops {
namespace {

template <class I>
struct Window {
  std::vector<I> kernel, strides, dilations, padsBegin, padsEnd, out;
};

template <class I>
std::vector<I> intsOr(Rule<I>& r, std::string_view name, size_t n, int64_t fallback) {
  if (!r.hasAttr(name)) return std::vector<I>(n, r.lit(fallback));
  auto v = r.symInts(name);
  r.check(v.size() == n, std::string(name) + " has " + std::to_string(v.size()) +
                             " values, expected " + std::to_string(n));
  return v;
}

// The sliding window of Conv and the pools over spatial dims `in`. `kernel` is the window
// size; ceilMode rounds the output up.
template <class I>
Window<I> slidingWindow(Rule<I>& r, const std::vector<I>& in, std::vector<I> kernel,
                        bool withDilations, bool ceilMode) {
  const size_t s = in.size();
  Window<I> w;
  w.kernel = std::move(kernel);
  w.strides = intsOr(r, "strides", s, 1);
  w.dilations = withDilations ? intsOr(r, "dilations", s, 1) : std::vector<I>(s, r.lit(1));
  std::vector<I> pads = intsOr(r, "pads", 2 * s, 0);
  const std::string autoPad = r.attrString("auto_pad");
  // ONNX 1.12's inference silently prefers pads over auto_pad; the spec forbids both.
  r.check(!r.hasAttr("pads") || autoPad == "NOTSET", "pads is not set together with auto_pad");
  for (size_t i = 0; i < s; ++i) {
    r.require(w.kernel[i] >= 1, "kernel size >= 1 at spatial axis " + std::to_string(i));
    r.require(w.strides[i] >= 1, "stride >= 1 at spatial axis " + std::to_string(i));
    r.require(w.dilations[i] >= 1, "dilation >= 1 at spatial axis " + std::to_string(i));
    I eff = imul(w.kernel[i] - 1, w.dilations[i]) + 1;
    I pb = r.lit(0), pe = r.lit(0);
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      // The total padding that makes ceil(in / stride) windows, split as ONNX splits it. A
      // negative total (a stride past the window) is read two ways: ONNX's formula crops (ORT,
      // ONNX's Python reference), its shape inference and TensorFlow's SAME clamp to 0 (here).
      const I unclamped = imul(ceilDiv(in[i], w.strides[i]) - 1, w.strides[i]) + eff - in[i];
      r.requireDefined(unclamped >= 0, "SAME padding's total >= 0 at spatial axis " +
                                           std::to_string(i) +
                                           " (a negative one is read two ways)");
      I total = imax(unclamped, r.lit(0));
      I half = total / 2;
      pb = autoPad == "SAME_UPPER" ? half : total - half;
      pe = autoPad == "SAME_UPPER" ? total - half : half;
    } else if (autoPad == "NOTSET") {
      pb = pads[i];
      pe = pads[i + s];
    }
    r.require(pb >= 0 && pe >= 0, "pads >= 0 at spatial axis " + std::to_string(i));
    I span = in[i] + pb + pe - eff;
    r.require(span >= 0,
              "the (dilated) window fits the padded input at spatial axis " + std::to_string(i));
    w.padsBegin.push_back(pb);
    w.padsEnd.push_back(pe);
    w.out.push_back((ceilMode ? ceilDiv(span, w.strides[i]) : span / w.strides[i]) + 1);
  }
  return w;
}

template <class I>
std::vector<I> spatial(const std::vector<I>& dims) {
  return std::vector<I>(dims.begin() + 2, dims.end());
}

// Conv and ConvTranspose: kernel_shape, when set, must equal W's spatial dims.
template <class I>
void requireKernelShapeOfW(Rule<I>& r, const std::vector<I>& kernel) {
  if (!r.hasAttr("kernel_shape")) return;
  auto ks = r.symInts("kernel_shape");
  r.check(ks.size() == kernel.size(), "kernel_shape has one value per spatial dim");
  for (size_t i = 0; i < ks.size(); ++i)
    r.require(ks[i] == kernel[i], "kernel_shape equals W's spatial dims");
}

// Conv's geometry: the window over X with W's spatial dims as kernel.
template <class I>
Window<I> convWindow(Rule<I>& r, size_t wIn = 1) {
  r.check(r.rank(0) >= 3, "X has rank >= 3 (N, C, spatial...)");
  r.check(r.rank(wIn) == r.rank(0), "W has the rank of X");
  auto kernel = spatial(r.dims(wIn));
  requireKernelShapeOfW(r, kernel);
  return slidingWindow(r, spatial(r.dims(0)), kernel, true, false);
}

template <class I>
Window<I> poolWindow(Rule<I>& r, bool withDilations) {
  r.check(r.rank(0) >= 3, "X has rank >= 3 (N, C, spatial...)");
  auto ks = r.symInts("kernel_shape");
  r.check(static_cast<int64_t>(ks.size()) == r.rank(0) - 2,
          "kernel_shape has one value per spatial dim");
  return slidingWindow(r, spatial(r.dims(0)), ks, withDilations, r.attrInt("ceil_mode") != 0);
}

// ConvTranspose's geometry: output dims and the pads that produce them.
template <class I>
Window<I> convTransposeWindow(Rule<I>& r) {
  r.check(r.rank(0) >= 3, "X has rank >= 3 (N, C, spatial...)");
  r.check(r.rank(1) == r.rank(0), "W has the rank of X");
  auto in = spatial(r.dims(0));
  const size_t s = in.size();
  Window<I> w;
  w.kernel = spatial(r.dims(1));
  requireKernelShapeOfW(r, w.kernel);
  w.strides = intsOr(r, "strides", s, 1);
  w.dilations = intsOr(r, "dilations", s, 1);
  auto outPad = intsOr(r, "output_padding", s, 0);
  auto pads = intsOr(r, "pads", 2 * s, 0);
  const std::string autoPad = r.attrString("auto_pad");
  r.check(!r.hasAttr("pads") || autoPad == "NOTSET", "pads is not set together with auto_pad");
  std::vector<I> outShape;
  if (r.hasAttr("output_shape")) {
    for (int64_t v : r.attrInts("output_shape")) outShape.push_back(r.lit(v));
    r.check(outShape.size() == s, "output_shape has one value per spatial dim");
  }
  for (size_t i = 0; i < s; ++i) {
    r.require(w.strides[i] >= 1 && w.dilations[i] >= 1 && w.kernel[i] >= 1,
              "kernel, stride and dilation >= 1 at spatial axis " + std::to_string(i));
    r.require(outPad[i] >= 0 && (outPad[i] < w.strides[i] || outPad[i] < w.dilations[i]),
              "output_padding below stride or dilation at spatial axis " + std::to_string(i));
    const I eff = imul(w.kernel[i] - 1, w.dilations[i]) + 1;
    I full = imul(w.strides[i], in[i] - 1) + outPad[i] + eff;
    if (outShape.empty() && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER"))
      // The operator text makes SAME's output in x stride whatever output_padding says; ONNX's
      // shape inference (followed here) adds output_padding, ORT 1.30 follows the text.
      r.requireDefined(outPad[i] == 0, "output_padding 0 with SAME at spatial axis " +
                                           std::to_string(i) + " (otherwise read two ways)");
    if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      // With output_shape, the pads that reach it; a negative total (an output_shape past the
      // full size) appends outputs that only the bias reaches. With SAME, ONNX 1.12 pads
      // max(0, eff - stride) in all, whatever the input size.
      I out = outShape.empty() ? full - imax(eff - w.strides[i], r.lit(0)) : outShape[i];
      r.require(out >= 1, "output size >= 1 at spatial axis " + std::to_string(i));
      I total = imax(full - out, r.lit(0));
      I half = total / 2;
      bool upper = autoPad == "SAME_UPPER";
      w.padsBegin.push_back(upper ? half : total - half);
      w.padsEnd.push_back(upper ? total - half : half);
      w.out.push_back(out);
    } else {
      I pb = autoPad == "VALID" ? r.lit(0) : pads[i];
      I pe = autoPad == "VALID" ? r.lit(0) : pads[i + s];
      r.require(pb >= 0 && pe >= 0, "pads >= 0 at spatial axis " + std::to_string(i));
      r.require(full - pb - pe >= 1, "output size >= 1 at spatial axis " + std::to_string(i));
      w.padsBegin.push_back(pb);
      w.padsEnd.push_back(pe);
      w.out.push_back(full - pb - pe);
    }
  }
  return w;
}

template <class I>
void requireGroups(Rule<I>& r, const I& channels, const I& wChannels, const I& outChannels) {
  I group = r.symInt("group");
  r.require(group >= 1, "group >= 1");
  r.require(channels == imul(wChannels, group), "input channels equal W's channels times group");
  r.require(imod(outChannels, group) == 0, "output channels divisible by group");
}

// Conv's output dims, X at input 0 and W at input wIn.
template <class I>
std::vector<I> convOutputDims(Rule<I>& r, size_t wIn) {
  Window<I> w = convWindow(r, wIn);
  requireGroups(r, r.dim(0, 1), r.dim(wIn, 1), r.dim(wIn, 0));
  std::vector out{r.dim(0, 0), r.dim(wIn, 0)};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return out;
}

// A per-output-channel parameter (Conv's B, QLinearConv's w_scale): a vector with one element per
// output channel, or (`orOne`) a scalar or one-element vector.
template <class I>
void requirePerOutputChannel(Rule<I>& r, size_t param, size_t wIn, bool orOne,
                             const std::string& name) {
  if (!r.has(param)) return;
  if (orOne && r.rank(param) == 0) return;
  r.check(r.rank(param) == 1, name + " is a vector");
  if (orOne)
    r.require(r.dim(param, 0) == 1 || r.dim(param, 0) == r.dim(wIn, 0),
              name + " has one element, or one per output channel");
  else
    r.require(r.dim(param, 0) == r.dim(wIn, 0), name + " has one value per output channel");
}

int64_t attrOr(const Node& n, std::string_view name, int64_t def) {
  const Attribute* a = n.attribute(name);
  return a ? a->i : def;
}

// A kernel size per spatial axis: kernel_shape when the node has it, else small sizes.
Shape sampledKernel(SampleContext& c, size_t spatial) {  // spatial: rank - 2, rank >= 3
  if (const Attribute* k = c.node.attribute("kernel_shape")) return k->ints;
  Shape k;
  for (size_t i = 0; i < spatial; ++i) k.push_back(c.rng.uniform(1, 3));
  return k;
}

// Conv's W: [M, C / group, kernel...] with M a multiple of group.
Shape convWeightShape(SampleContext& c) {
  const Shape& x = c.shape(0);
  if (x.size() < 3) return x;  // the rule rejects it
  const int64_t g = attrOr(c.node, "group", 1);
  Shape w{g * c.rng.uniform(1, std::max<int64_t>(1, c.maxDim / g)), std::max<int64_t>(1, x[1] / g)};
  Shape k = sampledKernel(c, x.size() - 2);
  w.insert(w.end(), k.begin(), k.end());
  return w;
}

// ConvTranspose's W: [C, M / group, kernel...].
Shape convTransposeWeightShape(SampleContext& c) {
  const Shape& x = c.shape(0);
  if (x.size() < 3) return x;
  Shape w{x[1], c.rng.uniform(1, 4)};
  Shape k = sampledKernel(c, x.size() - 2);
  w.insert(w.end(), k.begin(), k.end());
  return w;
}

AttrSpec autoPadAttr() {
  return stringAttr("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"});
}

// The N-d index machinery of the kernels below.
struct Grid {
  Shape dims;
  Shape strides;
  explicit Grid(Shape d) : dims(std::move(d)), strides(stridesOf(dims)) {}
  int64_t size() const { return elementCount(dims); }
  Shape coords(int64_t linear) const {
    Shape c(dims.size());
    for (size_t a = 0; a < dims.size(); ++a) {
      c[a] = linear / strides[a];
      linear %= strides[a];
    }
    return c;
  }
};

// For each output position and kernel offset, the input offset or -1 when it falls in padding.
std::vector<int64_t> windowTable(const Window<int64_t>& w, const Shape& in) {
  Grid out(w.out), ker(w.kernel), inGrid(in);
  std::vector<int64_t> table(static_cast<size_t>(out.size() * ker.size()));
  for (int64_t o = 0; o < out.size(); ++o) {
    pollDeadline(ker.size());
    Shape oc = out.coords(o);
    for (int64_t k = 0; k < ker.size(); ++k) {
      Shape kc = ker.coords(k);
      int64_t off = 0;
      for (size_t a = 0; a < in.size() && off >= 0; ++a) {
        int64_t x = oc[a] * w.strides[a] + kc[a] * w.dilations[a] - w.padsBegin[a];
        off = (x < 0 || x >= in[a]) ? -1 : off + x * inGrid.strides[a];
      }
      table[static_cast<size_t>(o * ker.size() + k)] = off;
    }
  }
  return table;
}

void convKernel(KernelCall& k) {
  Rule<int64_t> r = concreteRule(k);
  Window<int64_t> w = convWindow(r);
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    const Shape& xs = k.in(0).shape();
    const Shape& ws = k.in(1).shape();
    const int64_t N = xs[0], C = xs[1], M = ws[0], group = k.attrInt("group");
    const int64_t Cg = C / group, Mg = M / group;
    Shape in(xs.begin() + 2, xs.end());
    const int64_t inSize = elementCount(in), outSize = elementCount(w.out),
                  kSize = elementCount(w.kernel);
    auto table = windowTable(w, in);
    auto x = k.in(0).span<T>();
    auto wt = k.in(1).span<T>();
    auto y = k.out(0).span<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t g = m / Mg;
        double bias = k.has(2) ? toDouble(k.in(2).span<T>()[static_cast<size_t>(m)]) : 0.0;
        for (int64_t o = 0; o < outSize; ++o) {
          pollDeadline(Cg * kSize);
          double acc = bias;
          for (int64_t c = 0; c < Cg; ++c) {
            const int64_t xBase = (n * C + g * Cg + c) * inSize;
            const int64_t wBase = (m * Cg + c) * kSize;
            for (int64_t kk = 0; kk < kSize; ++kk) {
              int64_t off = table[static_cast<size_t>(o * kSize + kk)];
              if (off >= 0)
                acc += toDouble(x[static_cast<size_t>(xBase + off)]) *
                       toDouble(wt[static_cast<size_t>(wBase + kk)]);
            }
          }
          y[static_cast<size_t>((n * M + m) * outSize + o)] = fromDouble<T>(acc);
        }
      }
  });
}

void convTransposeKernel(KernelCall& k) {
  Rule<int64_t> r = concreteRule(k);
  Window<int64_t> w = convTransposeWindow(r);
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    const Shape& xs = k.in(0).shape();
    const Shape& ws = k.in(1).shape();
    const int64_t N = xs[0], C = xs[1], group = k.attrInt("group"), Mg = ws[1], M = Mg * group;
    const int64_t Cg = C / group;
    Shape in(xs.begin() + 2, xs.end());
    Grid inGrid(in), ker(w.kernel), out(w.out);
    // ConvTranspose scatters where Conv gathers: the same table, input and output swapped.
    Window<int64_t> scatter = w;
    scatter.out = in;
    const auto table = windowTable(scatter, w.out);
    std::vector<double> acc(static_cast<size_t>(N * M * out.size()), 0.0);
    auto x = k.in(0).span<T>();
    auto wt = k.in(1).span<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t g = c / Cg;
        for (int64_t i = 0; i < inGrid.size(); ++i) {
          pollDeadline(ker.size() * Mg);
          double xv = toDouble(x[static_cast<size_t>((n * C + c) * inGrid.size() + i)]);
          for (int64_t kk = 0; kk < ker.size(); ++kk) {
            const int64_t off = table[static_cast<size_t>(i * ker.size() + kk)];
            if (off < 0) continue;
            for (int64_t m = 0; m < Mg; ++m)
              acc[static_cast<size_t>((n * M + g * Mg + m) * out.size() + off)] +=
                  xv * toDouble(wt[static_cast<size_t>((c * Mg + m) * ker.size() + kk)]);
          }
        }
      }
    auto y = k.out(0).span<T>();
    for (size_t i = 0; i < acc.size(); ++i) {
      int64_t m = static_cast<int64_t>(i) / out.size() % M;
      double b = k.has(2) ? toDouble(k.in(2).span<T>()[static_cast<size_t>(m)]) : 0.0;
      y[i] = fromDouble<T>(acc[i] + b);
    }
  });
}

// Every product term y[yi] += x[xi] * w[wi] of Conv or ConvTranspose (bias apart), in the
// kernels' own index layout: what their gradients walk.
template <class F>
void convTerms(const KernelCall& k, bool transpose, F&& term) {
  Rule<int64_t> r = concreteRule(k);
  const Shape& xs = k.in(0).shape();
  const Shape& ws = k.in(1).shape();
  const int64_t N = xs[0], C = xs[1], group = k.attrInt("group");
  Shape in(xs.begin() + 2, xs.end());
  const int64_t inSize = elementCount(in);
  if (!transpose) {
    Window<int64_t> w = convWindow(r);
    const int64_t M = ws[0], Cg = C / group, Mg = M / group;
    const int64_t outSize = elementCount(w.out), kSize = elementCount(w.kernel);
    const auto table = windowTable(w, in);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t o = 0; o < outSize; ++o)
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kk = 0; kk < kSize; ++kk)
              if (int64_t off = table[static_cast<size_t>(o * kSize + kk)]; off >= 0)
                term((n * M + m) * outSize + o, (n * C + m / Mg * Cg + c) * inSize + off,
                     (m * Cg + c) * kSize + kk);
    return;
  }
  Window<int64_t> w = convTransposeWindow(r);
  const int64_t Mg = ws[1], M = Mg * group, Cg = C / group;
  const int64_t outSize = elementCount(w.out), kSize = elementCount(w.kernel);
  Window<int64_t> scatter = w;
  scatter.out = in;
  const auto table = windowTable(scatter, w.out);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inSize; ++i)
        for (int64_t kk = 0; kk < kSize; ++kk)
          if (int64_t off = table[static_cast<size_t>(i * kSize + kk)]; off >= 0)
            for (int64_t m = 0; m < Mg; ++m)
              term((n * M + c / Cg * Mg + m) * outSize + off, (n * C + c) * inSize + i,
                   (c * Mg + m) * kSize + kk);
}

std::function<void(GradCall&)> convGradient(bool transpose) {
  return [transpose](GradCall& g) {
    const std::vector<double>* dy = g.dOut(0);
    if (!dy) return;
    std::vector<double>* dx = g.dIn(0);
    std::vector<double>* dw = g.dIn(1);
    std::vector<double>* db = g.dIn(2);
    const Tensor& x = g.in(0);
    const Tensor& w = g.in(1);
    const int64_t M = g.out(0).shape()[1];
    const int64_t perChannel = g.out(0).size() / (g.out(0).shape()[0] * M);
    convTerms(g.kernel(), transpose, [&](int64_t yi, int64_t xi, int64_t wi) {
      const double up = (*dy)[static_cast<size_t>(yi)];
      if (dx) (*dx)[static_cast<size_t>(xi)] += up * w.toDouble(wi);
      if (dw) (*dw)[static_cast<size_t>(wi)] += up * x.toDouble(xi);
    });
    if (db)
      for (size_t yi = 0; yi < dy->size(); ++yi)
        (*db)[static_cast<size_t>(static_cast<int64_t>(yi) / perChannel % M)] += (*dy)[yi];
  };
}

// Shared by the pools: calls reduce(window values) per output element.
template <class F>
void poolOver(const KernelCall& k, const Window<int64_t>& w, F&& reduce) {
  const Shape& xs = k.in(0).shape();
  const int64_t NC = xs[0] * xs[1];
  Shape in(xs.begin() + 2, xs.end());
  const int64_t inSize = elementCount(in), outSize = elementCount(w.out),
                kSize = elementCount(w.kernel);
  auto table = windowTable(w, in);
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t o = 0; o < outSize; ++o) {
      pollDeadline(kSize);
      reduce(nc * outSize + o, nc * inSize, &table[static_cast<size_t>(o * kSize)], kSize, o);
    }
}

// MaxPool's choice, shared by its kernel and its gradient: visit(outIdx, base, best) per output
// element, best the spatial offset of the window's first largest element (-1: only padding).
template <class T, class F>
void maxPoolWinners(const KernelCall& k, F&& visit) {
  Rule<int64_t> r = concreteRule(k);
  auto x = k.in(0).span<T>();
  poolOver(k, poolWindow(r, true),
           [&](int64_t outIdx, int64_t base, const int64_t* offs, int64_t n, int64_t) {
             int64_t best = -1;
             for (int64_t i = 0; i < n; ++i) {
               if (offs[i] < 0) continue;
               if (best < 0 || toDouble(x[static_cast<size_t>(base + offs[i])]) >
                                   toDouble(x[static_cast<size_t>(base + best)]))
                 best = offs[i];
             }
             visit(outIdx, base, best);
           });
}

void maxPoolKernel(KernelCall& k) {
  const bool columnMajor = k.attrInt("storage_order") == 1;
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    auto x = k.in(0).span<T>();
    auto y = k.out(0).span<T>();
    const bool withIndices = k.outputCount() > 1 && k.out(1).dtype() == DType::Int64;
    const Shape& xs = k.in(0).shape();
    Shape in(xs.begin() + 2, xs.end());
    Grid inGrid(in);
    maxPoolWinners<T>(k, [&](int64_t outIdx, int64_t base, int64_t best) {
      y[static_cast<size_t>(outIdx)] =
          best < 0 ? fromDouble<T>(-INFINITY) : x[static_cast<size_t>(base + best)];
      if (withIndices) {
        int64_t idx = base + std::max<int64_t>(best, 0);
        if (columnMajor) {  // spatial coords enumerated with the first spatial axis fastest
          Shape c = inGrid.coords(std::max<int64_t>(best, 0));
          int64_t off = 0, mul = 1;
          for (size_t a = 0; a < c.size(); ++a) {
            off += c[a] * mul;
            mul *= in[a];
          }
          idx = base + off;
        }
        k.out(1).span<int64_t>()[static_cast<size_t>(outIdx)] = idx;
      }
    });
  });
}

// The winner of each window takes its output's dY.
void maxPoolGradient(GradCall& g) {
  std::vector<double>* dx = g.dIn(0);
  const std::vector<double>* dy = g.dOut(0);
  if (!dx || !dy) return;
  visitCompute(g.in(0).dtype(), [&]<class T>() {
    maxPoolWinners<T>(g.kernel(), [&](int64_t outIdx, int64_t base, int64_t best) {
      if (best >= 0) (*dx)[static_cast<size_t>(base + best)] += (*dy)[static_cast<size_t>(outIdx)];
    });
  });
}

// AveragePool's windows, shared by its kernel and its gradient: visit(outIdx, base, offs, n,
// count) per output element, with the count its sum is divided by (0: only padding).
template <class F>
void averagePoolWindows(const KernelCall& k, F&& visit) {
  Rule<int64_t> r = concreteRule(k);
  Window<int64_t> w = poolWindow(r, false);
  const bool includePad = k.attrInt("count_include_pad") != 0;
  const Shape& xs = k.in(0).shape();
  Shape in(xs.begin() + 2, xs.end());
  Grid out(w.out), ker(w.kernel);
  poolOver(k, w, [&](int64_t outIdx, int64_t base, const int64_t* offs, int64_t n, int64_t o) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += offs[i] >= 0;
    if (includePad) {  // positions inside the explicit padding count, those past it do not
      count = 0;
      Shape oc = out.coords(o);
      for (int64_t i = 0; i < n; ++i) {
        Shape kc = ker.coords(i);
        bool inside = true;
        for (size_t a = 0; a < in.size(); ++a) {
          int64_t p = oc[a] * w.strides[a] + kc[a] - w.padsBegin[a];
          inside = inside && p >= -w.padsBegin[a] && p < in[a] + w.padsEnd[a];
        }
        count += inside;
      }
    }
    visit(outIdx, base, offs, n, count);
  });
}

void averagePoolKernel(KernelCall& k) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    auto x = k.in(0).span<T>();
    auto y = k.out(0).span<T>();
    averagePoolWindows(
        k, [&](int64_t outIdx, int64_t base, const int64_t* offs, int64_t n, int64_t count) {
          double sum = 0;
          for (int64_t i = 0; i < n; ++i)
            if (offs[i] >= 0) sum += toDouble(x[static_cast<size_t>(base + offs[i])]);
          y[static_cast<size_t>(outIdx)] =
              fromDouble<T>(count ? sum / static_cast<double>(count) : NAN);
        });
  });
}

// Each element of a window takes dY / count.
void averagePoolGradient(GradCall& g) {
  std::vector<double>* dx = g.dIn(0);
  const std::vector<double>* dy = g.dOut(0);
  if (!dx || !dy) return;
  averagePoolWindows(
      g.kernel(), [&](int64_t outIdx, int64_t base, const int64_t* offs, int64_t n, int64_t count) {
        if (count == 0) return;
        const double share = (*dy)[static_cast<size_t>(outIdx)] / static_cast<double>(count);
        for (int64_t i = 0; i < n; ++i)
          if (offs[i] >= 0) (*dx)[static_cast<size_t>(base + offs[i])] += share;
      });
}

// GlobalAveragePool and GlobalMaxPool: one value per (n, c) over all spatial elements.
OpSpec globalPool(std::string type, bool isMax) {
  // Each (n, c) block of X, as (count, elements per block).
  auto blocks = [](const Shape& xs) {
    const int64_t nc = xs[0] * xs[1];
    return std::pair{nc, elementCount(xs) / std::max<int64_t>(nc, 1)};
  };
  return std::move(
      OpSpec(std::move(type), 1)
          // Average: each element takes 1/size of its block's dY; max: the first largest takes it.
          .gradient([isMax, blocks](GradCall& g) {
            std::vector<double>* dx = g.dIn(0);
            const std::vector<double>* dy = g.dOut(0);
            if (!dx || !dy || dy->empty()) return;
            const auto [nc, inner] = blocks(g.in(0).shape());
            for (int64_t i = 0; i < nc; ++i) {
              const double up = (*dy)[static_cast<size_t>(i)];
              for (int64_t j = 0; j < inner; ++j) {
                const int64_t e = i * inner + j;
                if (!isMax) {
                  (*dx)[static_cast<size_t>(e)] += up / static_cast<double>(inner);
                } else if (g.in(0).toDouble(e) == g.out(0).toDouble(i)) {
                  (*dx)[static_cast<size_t>(e)] += up;
                  break;
                }
              }
            }
          })
          .types("T", floatTypes())
          .input("X", "T")
          .output("Y")
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 3, "X has rank >= 3 (N, C, spatial...)");
            auto out = r.dims(0);
            for (size_t a = 2; a < out.size(); ++a) out[a] = r.lit(1);
            r.output(0, out);
          })
          .kernel([isMax, blocks](KernelCall& k) {
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              const auto [nc, inner] = blocks(k.in(0).shape());
              auto x = k.in(0).span<T>();
              auto y = k.out(0).span<T>();
              for (int64_t i = 0; i < nc; ++i) {
                double acc = isMax ? -INFINITY : 0;
                for (int64_t j = 0; j < inner; ++j) {
                  const double v = toDouble(x[static_cast<size_t>(i * inner + j)]);
                  acc = !isMax                             ? acc + v
                        : std::isnan(v) || std::isnan(acc) ? NAN
                                                           : std::max(acc, v);
                }
                if (!isMax) acc = inner ? acc / static_cast<double>(inner) : NAN;
                y[static_cast<size_t>(i)] = fromDouble<T>(acc);
              }
            });
          }));
}

// Conv's attributes, which ConvInteger and QLinearConv share.
OpSpec withConvAttrs(OpSpec spec) {
  return std::move(spec.attr(autoPadAttr())
                       .attr(spatialInts("dilations", 1, 1, 2))
                       .attr(symbolicInt("group", 1, 1, 4))
                       .attr(spatialInts("kernel_shape", 1, 1, 5))
                       .attr(spatialInts("pads", 2, 0, 2))
                       .attr(spatialInts("strides", 1, 1, 3)));
}

// The exact integer convolution (x - x_zero_point) * (w - w_zero_point), in double, of X at input
// 0 and W at input wIn, zero points at xZero and wZero (absent: 0; w's per output channel).
std::vector<double> shiftedConv(const KernelCall& k, size_t wIn, size_t xZero, size_t wZero) {
  const Tensor sx = minusZeroPoint(k.in(0), k.has(xZero) ? &k.in(xZero) : nullptr, 1);
  const Tensor sw = minusZeroPoint(k.in(wIn), k.has(wZero) ? &k.in(wZero) : nullptr, 0);
  Rule<int64_t> r = concreteRule(k);
  KernelCall conv(k.spec(), k.node(), {&sx, &sw}, {Tensor(DType::Float64, convOutputDims(r, wIn))});
  convKernel(conv);
  const auto v = conv.out(0).span<const double>();
  return {v.begin(), v.end()};
}

// QLinearConv's results before rounding: the integer convolution plus B, scaled by
// x_scale w_scale / y_scale (w_scale per tensor or per output channel).
std::vector<double> qlinearConvValues(const KernelCall& k) {
  std::vector<double> v = shiftedConv(k, 3, 2, 5);
  const int64_t M = k.in(3).shape()[0], N = k.in(0).shape()[0];
  const int64_t inner = static_cast<int64_t>(v.size()) / std::max<int64_t>(1, N * M);
  const double scale = k.in(1).toDouble(0) / k.in(6).toDouble(0);
  for (size_t e = 0; e < v.size(); ++e) {
    const int64_t m = static_cast<int64_t>(e) / inner % M;
    v[e] = (v[e] + perChannel(k, 8, m)) * scale * perChannel(k, 4, m);
  }
  return v;
}

}  // namespace

void registerConvPool(Registry& reg) {
  reg.add(withConvAttrs(OpSpec("Conv", 11)
                            // Long float32 accumulations (the reference sums in double).
                            .tolerance({1e-3, 1e-4})
                            .types("T", floatTypes())
                            .input("X", "T")
                            .input("W", "T")
                            .weight()
                            .sampleShape(convWeightShape)
                            .optionalInput("B", "T")
                            .weight()
                            .sampleShape([](SampleContext& c) { return Shape{c.dim(1, 0)}; })
                            .output("Y")
                            .shapeRule([](auto& r) {
                              requirePerOutputChannel(r, 2, 1, false, "B");
                              r.output(0, convOutputDims(r, 1));
                            })
                            .kernel(convKernel)
                            .gradient(convGradient(false))));

  reg.add(withConvAttrs(OpSpec("ConvInteger", 10)
                            .types("T1", {DType::UInt8, DType::Int8})
                            .types("T2", {DType::UInt8, DType::Int8})
                            .input("x", "T1")
                            .input("w", "T2")
                            .weight()
                            .sampleShape(convWeightShape)
                            .optionalInput("x_zero_point", "T1")
                            .weight()
                            .sampleShape([](SampleContext&) { return Shape{}; })
                            .optionalInput("w_zero_point", "T2")
                            .weight()
                            .sampleShape([](SampleContext& c) {
                              return c.rng.chance(0.5) ? Shape{} : Shape{c.dim(1, 0)};
                            })
                            .output("y")
                            .shapeRule([](auto& r) {
                              if (r.has(2)) r.check(r.rank(2) == 0, "x_zero_point is a scalar");
                              requirePerOutputChannel(r, 3, 1, true, "w_zero_point");
                              r.output(0, convOutputDims(r, 1), DType::Int32);
                            })
                            .kernel([](KernelCall& k) {
                              const std::vector<double> acc = shiftedConv(k, 1, 2, 3);
                              auto y = k.out(0).span<int32_t>();
                              for (size_t e = 0; e < acc.size(); ++e)
                                y[e] = static_cast<int32_t>(acc[e]);
                            })));

  reg.add(withConvAttrs(
      OpSpec("QLinearConv", 10)
          .types("T1", {DType::UInt8, DType::Int8})
          .types("T2", {DType::UInt8, DType::Int8})
          .types("T3", {DType::UInt8, DType::Int8})
          .types("T4", {DType::Int32})
          .types("tensor(float)", {DType::Float32})
          .input("x", "T1")
          .with(scaleAndZeroPoint("x", "T1", false))
          .input("w", "T2")
          .weight()
          .sampleShape(convWeightShape)
          .with(scaleAndZeroPoint(
              "w", "T2", false,
              [](SampleContext& c) { return c.rng.chance(0.5) ? Shape{} : Shape{c.dim(3, 0)}; }))
          .with(scaleAndZeroPoint("y", "T3", false))
          .optionalInput("B", "T4")
          .weight()
          .sampleShape([](SampleContext& c) { return Shape{c.dim(3, 0)}; })
          .output("y")
          .shapeRule([](auto& r) {
            for (size_t i : {1, 2, 6, 7}) {
              r.check(r.rank(i) <= 1, "x's and y's scales and zero points hold one element");
              if (r.rank(i) == 1)
                r.require(r.dim(i, 0) == 1, "x's and y's scales and zero points hold one element");
            }
            requirePerOutputChannel(r, 4, 3, true, "w_scale");
            requirePerOutputChannel(r, 5, 3, true, "w_zero_point");
            requirePerOutputChannel(r, 8, 3, false, "B");
            r.output(0, convOutputDims(r, 3), r.dtype(7));
          })
          .kernel([](KernelCall& k) {
            const double zeroPoint = k.in(7).toDouble(0);
            requantize(
                qlinearConvValues(k), [&](int64_t) { return zeroPoint; }, k.out(0));
          })
          .stability([](StabilityCall& s) {
            requantizedAwayFromHalves(s, qlinearConvValues(s.kernel()), 6, 7);
          })));

  reg.add(std::move(
      OpSpec("ConvTranspose", 1)
          // Long float32 accumulations (the reference sums in double).
          .tolerance({1e-3, 1e-4})
          .types("T", floatTypes())
          .input("X", "T")
          .input("W", "T")
          .weight()
          .sampleShape(convTransposeWeightShape)
          .optionalInput("B", "T")
          .weight()
          .sampleShape(
              [](SampleContext& c) { return Shape{c.dim(1, 1) * attrOr(c.node, "group", 1)}; })
          .output("Y")
          .attr(autoPadAttr())
          .attr(spatialInts("dilations", 1, 1, 2))
          .attr(symbolicInt("group", 1, 1, 4))
          .attr(spatialInts("kernel_shape", 1, 1, 5))
          .attr(withSampling(intsAttr("output_shape"), AttrSampling::Never))
          .attr(spatialInts("output_padding", 1, 0, 1))
          .attr(spatialInts("pads", 2, 0, 2))
          .attr(spatialInts("strides", 1, 1, 3))
          .shapeRule([](auto& r) {
            Window w = convTransposeWindow(r);
            auto group = r.symInt("group");
            r.require(group >= 1, "group >= 1");
            r.require(imod(r.dim(0, 1), group) == 0, "input channels divisible by group");
            r.require(r.dim(1, 0) == r.dim(0, 1), "W's first dim equals the input channels");
            auto M = imul(r.dim(1, 1), group);
            if (r.has(2)) {
              r.check(r.rank(2) == 1, "B is a vector");
              r.require(r.dim(2, 0) == M, "B has one value per output channel");
            }
            std::vector out{r.dim(0, 0), M};
            out.insert(out.end(), w.out.begin(), w.out.end());
            r.output(0, out);
          })
          .kernel(convTransposeKernel)
          .gradient(convGradient(true))));

  reg.add(std::move(
      OpSpec("MaxPool", 12)
          .types("T", {DType::Float32, DType::Float64, DType::Float16, DType::Int8, DType::UInt8})
          .input("X", "T")
          .output("Y")
          .optionalOutput("Indices")
          .attr(autoPadAttr())
          .attr(intChoiceAttr("ceil_mode", 0, {0, 1}))
          .attr(spatialInts("dilations", 1, 1, 2))
          .attr([] {
            AttrSpec a = spatialInts("kernel_shape", 1, 1, 4);
            a.required = true;
            return a;
          }())
          .attr(spatialInts("pads", 2, 0, 2))
          .attr(intChoiceAttr("storage_order", 0, {0, 1}))
          .attr(spatialInts("strides", 1, 1, 3))
          .shapeRule([](auto& r) {
            Window w = poolWindow(r, true);
            for (size_t i = 0; i < w.kernel.size(); ++i)
              r.require(w.padsBegin[i] < (w.kernel[i] - 1) * w.dilations[i] + 1 &&
                            w.padsEnd[i] < (w.kernel[i] - 1) * w.dilations[i] + 1,
                        "pads smaller than the window at spatial axis " + std::to_string(i));
            std::vector out{r.dim(0, 0), r.dim(0, 1)};
            out.insert(out.end(), w.out.begin(), w.out.end());
            r.output(0, out);
            r.output(1, out, DType::Int64);
          })
          .kernel(maxPoolKernel)
          .gradient(maxPoolGradient)));

  reg.add(std::move(OpSpec("AveragePool", 11)
                        .types("T", floatTypes())
                        .input("X", "T")
                        .output("Y")
                        .attr(autoPadAttr())
                        .attr(intChoiceAttr("ceil_mode", 0, {0, 1}))
                        .attr(intChoiceAttr("count_include_pad", 0, {0, 1}))
                        .attr([] {
                          AttrSpec a = spatialInts("kernel_shape", 1, 1, 4);
                          a.required = true;
                          return a;
                        }())
                        .attr(spatialInts("pads", 2, 0, 2))
                        .attr(spatialInts("strides", 1, 1, 3))
                        .shapeRule([](auto& r) {
                          Window w = poolWindow(r, false);
                          for (size_t i = 0; i < w.kernel.size(); ++i)
                            r.require(w.padsBegin[i] < w.kernel[i] && w.padsEnd[i] < w.kernel[i],
                                      "pads smaller than the window at spatial axis " +
                                          std::to_string(i));
                          std::vector out{r.dim(0, 0), r.dim(0, 1)};
                          out.insert(out.end(), w.out.begin(), w.out.end());
                          r.output(0, out);
                        })
                        .kernel(averagePoolKernel)
                        .gradient(averagePoolGradient)));

  reg.add(globalPool("GlobalAveragePool", false));
  reg.add(globalPool("GlobalMaxPool", true));
}

WindowGeometry windowGeometry(const Node& node, int64_t opset,
                              const std::vector<InputFacts>& inputs) {
  const OpSpec& spec = specFor(node, opset);
  Rule<int64_t> r = concreteRule(spec, node, inputs);
  Window<int64_t> w;
  if (node.opType == "Conv")
    w = convWindow(r);
  else if (node.opType == "ConvTranspose")
    w = convTransposeWindow(r);
  else if (node.opType == "MaxPool" || node.opType == "AveragePool")
    w = poolWindow(r, node.opType == "MaxPool");
  else
    throw Unsupported("op", "windowGeometry: " + node.opType + " has no sliding window");
  return {w.kernel, w.strides, w.dilations, w.padsBegin, w.padsEnd, w.out};
}

}  // namespace nncheck::ops
