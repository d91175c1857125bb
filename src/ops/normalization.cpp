// BatchNormalization (inference), InstanceNormalization, LayerNormalization,
// MeanVarianceNormalization, LpNormalization, LRN, Softmax, LogSoftmax and Hardmax.
#include <algorithm>
#include <cmath>

#include "ops/gradients.h"
#include "ops/stability.h"

namespace nncheck::ops {
namespace {

template <bool Log>
OpSpec softmax(std::string type) {
  return std::move(
      OpSpec(std::move(type), 13)
          .types("T", floatTypes())
          .input("input", "T")
          .output("output")
          .attr(axisAttr("axis", -1))
          .shapeRule([](auto& r) {
            r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            r.output(0, r.dims(0));
          })
          // Softmax: dx_j = y_j (dy_j - sum_k dy_k y_k);
          // LogSoftmax: dx_j = dy_j - softmax_j sum_k dy_k.
          .gradient([](GradCall& g) {
            std::vector<double>* dx = g.dIn(0);
            const std::vector<double>* dy = g.dOut(0);
            if (!dx || !dy) return;
            const AxisSplit sp(g.in(0).shape(), g.kernel().attrInt("axis"));
            const Tensor& y = g.out(0);
            for (int64_t o = 0; o < sp.outer; ++o)
              for (int64_t i = 0; i < sp.inner; ++i) {
                auto at = [&](int64_t j) { return (o * sp.size + j) * sp.inner + i; };
                double dot = 0;
                for (int64_t j = 0; j < sp.size; ++j)
                  dot += (*dy)[static_cast<size_t>(at(j))] * (Log ? 1.0 : y.toDouble(at(j)));
                for (int64_t j = 0; j < sp.size; ++j) {
                  const size_t e = static_cast<size_t>(at(j));
                  const double yj = y.toDouble(at(j));
                  (*dx)[e] += Log ? (*dy)[e] - std::exp(yj) * dot : yj * ((*dy)[e] - dot);
                }
              }
          })
          .kernel([](KernelCall& k) {
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              const AxisSplit sp(k.in(0).shape(), k.attrInt("axis"));
              auto x = k.in(0).span<T>();
              auto y = k.out(0).span<T>();
              for (int64_t o = 0; o < sp.outer; ++o)
                for (int64_t i = 0; i < sp.inner; ++i) {
                  auto at = [&](int64_t j) {
                    return static_cast<size_t>((o * sp.size + j) * sp.inner + i);
                  };
                  double mx = -INFINITY;
                  for (int64_t j = 0; j < sp.size; ++j) mx = std::max(mx, toDouble(x[at(j)]));
                  double sum = 0;
                  for (int64_t j = 0; j < sp.size; ++j) sum += std::exp(toDouble(x[at(j)]) - mx);
                  for (int64_t j = 0; j < sp.size; ++j) {
                    double d = toDouble(x[at(j)]) - mx;
                    y[at(j)] = fromDouble<T>(Log ? d - std::log(sum) : std::exp(d) / sum);
                  }
                }
            });
          }));
}

// Y = (X - mean) / sqrt(var + eps) * scale + bias with per-channel parameters (axis 1), as
// X a + b: f(element, x, a, b) for each element.
template <class F>
void forEachAffine(const KernelCall& k, const std::vector<double>& mean,
                   const std::vector<double>& var, const Tensor& scale, const Tensor& bias,
                   double eps, F f) {
  const Tensor& x = k.in(0);
  const Shape& s = x.shape();
  const int64_t N = s[0], C = s[1], inner = elementCount(s) / std::max<int64_t>(N * C, 1);
  const bool perInstance = static_cast<int64_t>(mean.size()) == N * C;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      size_t stat = static_cast<size_t>(perInstance ? n * C + c : c);
      double mul = scale.toDouble(c) / std::sqrt(var[stat] + eps);
      double add = bias.toDouble(c) - mean[stat] * mul;
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (n * C + c) * inner + i;
        f(static_cast<size_t>(at), x.toDouble(at), mul, add);
      }
    }
}

void normalizeChannels(KernelCall& k, const std::vector<double>& mean,
                       const std::vector<double>& var, const Tensor& scale, const Tensor& bias,
                       double eps) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    auto y = k.out(0).span<T>();
    forEachAffine(k, mean, var, scale, bias, eps, [&](size_t at, double x, double a, double b) {
      y[at] = fromDouble<T>(x * a + b);
    });
  });
}

// The rounding of X a + b in float: |X a| + |b| epsilons, large where a small variance makes a
// large and the two terms cancel (an instance of one element is b exactly, however computed here).
std::vector<double> affineRounding(const KernelCall& k, const std::vector<double>& mean,
                                   const std::vector<double>& var, const Tensor& scale,
                                   const Tensor& bias, double eps) {
  std::vector<double> out(static_cast<size_t>(k.in(0).size()));
  forEachAffine(k, mean, var, scale, bias, eps, [&](size_t at, double x, double a, double b) {
    out[at] = std::fabs(x * a) + std::fabs(b);
  });
  return out;
}

// The mean and population variance of each group of elements that reducing `axes` gathers
// (InstanceNormalization: each (n, c); LayerNormalization: each row of the trailing axes).
struct GroupStats {
  std::vector<int64_t> map;  // element -> group
  std::vector<double> mean, var;
  std::vector<int64_t> count;
  GroupStats(const Tensor& x, const std::vector<int64_t>& axes)
      : map(reductionMap(x.shape(), axes)) {
    size_t groups = 0;
    for (int64_t g : map) groups = std::max(groups, static_cast<size_t>(g) + 1);
    mean.assign(groups, 0);
    var.assign(groups, 0);
    count.assign(groups, 0);
    for (size_t e = 0; e < map.size(); ++e) {
      mean[static_cast<size_t>(map[e])] += x.toDouble(static_cast<int64_t>(e));
      ++count[static_cast<size_t>(map[e])];
    }
    for (size_t g = 0; g < groups; ++g)
      mean[g] /= static_cast<double>(std::max<int64_t>(count[g], 1));
    for (size_t e = 0; e < map.size(); ++e) {
      const size_t g = static_cast<size_t>(map[e]);
      const double d = x.toDouble(static_cast<int64_t>(e)) - mean[g];
      var[g] += d * d;
    }
    for (size_t g = 0; g < groups; ++g)
      var[g] /= static_cast<double>(std::max<int64_t>(count[g], 1));
  }
  double sd(int64_t e, double eps) const { return std::sqrt(var[group(e)] + eps); }
  size_t group(int64_t e) const { return static_cast<size_t>(map[static_cast<size_t>(e)]); }
};

// Axes 2.. of input 0: InstanceNormalization's groups are the (n, c).
std::vector<int64_t> spatialAxes(const Tensor& x) {
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < x.rank(); ++a) axes.push_back(a);
  return axes;
}

// Axes `axis`.. of input 0 (LayerNormalization).
std::vector<int64_t> trailingAxes(const KernelCall& k) {
  const int64_t r = k.in(0).rank(), axis = k.attrInt("axis");
  std::vector<int64_t> axes;
  for (int64_t a = axis < 0 ? axis + r : axis; a < r; ++a) axes.push_back(a);
  return axes;
}

// The gradient of y = a_e x^_e + b_e over groups, x^ = (x - mean) / sd: with q = dy a,
// dx = (q - mean(q) - x^ mean(q x^)) / sd per group. params(e, dy, x^) takes dY's share for a
// and b.
template <class Scale, class Params>
void normalizedGroupsGradient(GradCall& g, const GroupStats& st, double eps, Scale scaleAt,
                              Params params) {
  const std::vector<double>* dy = g.dOut(0);
  if (!dy) return;
  const Tensor& x = g.in(0);
  std::vector<double> meanQ(st.mean.size(), 0), meanQX(st.mean.size(), 0);
  auto xhat = [&](int64_t e) { return (x.toDouble(e) - st.mean[st.group(e)]) / st.sd(e, eps); };
  for (int64_t e = 0; e < x.size(); ++e) {
    const double up = (*dy)[static_cast<size_t>(e)], q = up * scaleAt(e);
    const size_t grp = st.group(e);
    const double n = static_cast<double>(st.count[grp]);
    meanQ[grp] += q / n;
    meanQX[grp] += q * xhat(e) / n;
    params(e, up, xhat(e));
  }
  if (std::vector<double>* dx = g.dIn(0))
    for (int64_t e = 0; e < x.size(); ++e) {
      const size_t grp = st.group(e);
      const double q = (*dy)[static_cast<size_t>(e)] * scaleAt(e);
      (*dx)[static_cast<size_t>(e)] += (q - meanQ[grp] - xhat(e) * meanQX[grp]) / st.sd(e, eps);
    }
}

// For each element of a tensor of shape `to`, the index of the element of `from` broadcast to it.
std::vector<int64_t> broadcastIndex(const Shape& from, const Shape& to) {
  std::vector<int64_t> idx(static_cast<size_t>(elementCount(to)));
  forEachBroadcast(to, {&from}, [&](int64_t i, const std::vector<int64_t>& o) {
    idx[static_cast<size_t>(i)] = o[0];
  });
  return idx;
}

// BatchNormalization's statistics: its inputs.
struct BatchStats {
  std::vector<double> mean, var;
  explicit BatchStats(const KernelCall& k) {
    for (int64_t c = 0; c < k.in(3).size(); ++c) {
      mean.push_back(k.in(3).toDouble(c));
      var.push_back(k.in(4).toDouble(c));
    }
  }
};

// dB = sum dy, dscale = sum dy x^ per channel.
void instanceNormalizationGradient(GradCall& g) {
  const Tensor& x = g.in(0);
  const GroupStats st(x, spatialAxes(x));
  const int64_t channels = x.shape()[1];
  std::vector<double>*dScale = g.dIn(1), *dBias = g.dIn(2);
  auto channel = [&](int64_t e) { return static_cast<int64_t>(st.group(e)) % channels; };
  normalizedGroupsGradient(
      g, st, g.kernel().attrFloat("epsilon"),
      [&](int64_t e) { return g.in(1).toDouble(channel(e)); },
      [&](int64_t e, double dy, double xhat) {
        if (dBias) (*dBias)[static_cast<size_t>(channel(e))] += dy;
        if (dScale) (*dScale)[static_cast<size_t>(channel(e))] += dy * xhat;
      });
}

Shape channelVector(SampleContext& c) { return {c.dim(0, 1)}; }

template <class I>
void requireChannelVector(Rule<I>& r, size_t i, const std::string& what) {
  r.check(r.rank(i) == 1, what + " is a vector");
  r.require(r.dim(i, 0) == r.dim(0, 1), what + " has one value per channel");
}

// Scale and B of LayerNormalization: the normalized trailing shape of X, or a suffix of it.
Shape normalizedShape(SampleContext& c) {
  const Shape& x = c.shape(0);
  const Attribute* a = c.node.attribute("axis");
  int64_t axis = a ? a->i : -1;
  const int64_t r = static_cast<int64_t>(x.size());
  axis = std::clamp<int64_t>(axis < 0 ? axis + r : axis, 0, r);
  if (axis < r && c.rng.chance(0.2)) ++axis;  // a suffix, broadcast
  return Shape(x.begin() + axis, x.end());
}

// LayerNormalization's affine map y = x a + b per element, with a = scale / sd and
// b = B - mean a: f(e, x, a, b) gives the value written to Y.
template <class F>
void forEachLayerAffine(KernelCall& k, const GroupStats& st, F f) {
  const Tensor& x = k.in(0);
  const double eps = k.attrFloat("epsilon");
  const size_t trailing = trailingAxes(k).size();
  const Shape inner(x.shape().end() - static_cast<int64_t>(trailing), x.shape().end());
  const int64_t n = elementCount(inner);
  const std::vector<int64_t> si = broadcastIndex(k.in(1).shape(), inner);
  const std::vector<int64_t> bi = k.has(2) ? broadcastIndex(k.in(2).shape(), inner) : si;
  visitCompute(x.dtype(), [&]<class T>() {
    auto y = k.out(0).span<T>();
    for (int64_t e = 0; e < x.size(); ++e) {
      const size_t g = st.group(e), j = static_cast<size_t>(e % std::max<int64_t>(n, 1));
      const double a = k.in(1).toDouble(si[j]) / st.sd(e, eps);
      const double b = (k.has(2) ? k.in(2).toDouble(bi[j]) : 0.0) - st.mean[g] * a;
      y[static_cast<size_t>(e)] = fromDouble<T>(f(e, x.toDouble(e), a, b));
    }
  });
}

// MeanVarianceNormalization's axes: the attribute, or [0, 2, 3].
template <class I>
std::vector<int64_t> mvnAxes(Rule<I>& r) {
  return r.hasAttr("axes") ? r.attrInts("axes") : std::vector<int64_t>{0, 2, 3};
}
std::vector<int64_t> mvnAxesOf(const KernelCall& k) {
  std::vector<int64_t> axes =
      k.hasAttr("axes") ? k.attrInts("axes") : std::vector<int64_t>{0, 2, 3};
  for (int64_t& a : axes)
    if (a < 0) a += k.in(0).rank();
  std::sort(axes.begin(), axes.end());
  return axes;
}

// LpNormalization's norms along its axis, per element's group.
struct LpNorms {
  int64_t p;
  std::vector<int64_t> map;
  std::vector<double> norm;
  explicit LpNorms(const KernelCall& k) : p(k.attrInt("p")) {
    const Tensor& x = k.in(0);
    const int64_t axis = k.attrInt("axis");
    map = reductionMap(x.shape(), {axis < 0 ? axis + x.rank() : axis});
    size_t groups = 0;
    for (int64_t g : map) groups = std::max(groups, static_cast<size_t>(g) + 1);
    norm.assign(groups, 0);
    for (int64_t e = 0; e < x.size(); ++e) {
      const double v = std::fabs(x.toDouble(e));
      norm[group(e)] += p == 1 ? v : v * v;
    }
    if (p == 2)
      for (double& n : norm) n = std::sqrt(n);
  }
  size_t group(int64_t e) const { return static_cast<size_t>(map[static_cast<size_t>(e)]); }
  double at(int64_t e) const { return norm[group(e)]; }
};

// LRN's windows across channels (axis 1) and each element's denominator base
// bias + alpha / size * (sum of squares over the window).
struct LrnWindows {
  double alpha, beta, bias;
  int64_t size, channels, inner;
  std::vector<double> base;
  explicit LrnWindows(const KernelCall& k)
      : alpha(k.attrFloat("alpha")),
        beta(k.attrFloat("beta")),
        bias(k.attrFloat("bias")),
        size(k.attrInt("size")),
        channels(k.in(0).shape()[1]),
        inner(k.in(0).size() / std::max<int64_t>(k.in(0).shape()[0] * channels, 1)) {
    const Tensor& x = k.in(0);
    base.assign(static_cast<size_t>(x.size()), 0);
    for (int64_t e = 0; e < x.size(); ++e) {
      pollDeadline(size);
      double sq = 0;
      forWindow(e, [&](int64_t i) { sq += x.toDouble(i) * x.toDouble(i); });
      base[static_cast<size_t>(e)] = bias + alpha / static_cast<double>(size) * sq;
    }
  }
  double denominator(int64_t e) const { return base[static_cast<size_t>(e)]; }
  // f(i) for each element i of e's window: channels c - floor((size-1)/2) .. c + ceil((size-1)/2).
  template <class F>
  void forWindow(int64_t e, F f) const {
    const int64_t c = (e / inner) % channels, start = e - c * inner;
    const int64_t lo = std::max<int64_t>(0, c - (size - 1) / 2);
    const int64_t hi = std::min<int64_t>(channels - 1, c + size / 2);
    for (int64_t i = lo; i <= hi; ++i) f(start + i * inner);
  }
};

}  // namespace

void registerNormalization(Registry& reg) {
  reg.add(std::move(
      OpSpec("BatchNormalization", 9)
          .types("T", floatTypes())
          .types("T1", floatTypes())
          .types("T2", floatTypes())
          .input("X", "T")
          .input("scale", "T1")
          .weight()
          .sampleShape(channelVector)
          .input("B", "T1")
          .weight()
          .sampleShape(channelVector)
          .input("input_mean", "T2")
          .weight()
          .sampleShape(channelVector)
          .input("input_var", "T2")
          .weight()
          .domain(ValueDomain::Positive)
          .safe({.lo = 0.01})
          .sampleShape(channelVector)
          .output("Y")
          .attr(floatAttr("epsilon", 1e-5f, 1e-6, 1e-2))
          .attr(floatAttr("momentum", 0.9f, 0.5, 0.99))
          .attr(intChoiceAttr("training_mode", 0, {0}))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 2, "X has rank >= 2 (N, C, ...)");
            requireChannelVector(r, 1, "scale");
            requireChannelVector(r, 2, "B");
            requireChannelVector(r, 3, "input_mean");
            requireChannelVector(r, 4, "input_var");
            r.output(0, r.dims(0));
          })
          // y = scale (x - mean) / sqrt(var + eps) + B, per channel (axis 1).
          .gradient([](GradCall& g) {
            const std::vector<double>* dy = g.dOut(0);
            if (!dy) return;
            const Tensor& x = g.in(0);
            const Shape& s = x.shape();
            const int64_t channels = s.size() > 1 ? s[1] : 1;
            int64_t inner = 1;
            for (size_t a = 2; a < s.size(); ++a) inner *= s[a];
            const double eps = g.kernel().attrFloat("epsilon");
            for (int64_t e = 0; e < x.size(); ++e) {
              const int64_t c = (e / inner) % channels;
              const double up = (*dy)[static_cast<size_t>(e)];
              const double scale = g.in(1).toDouble(c), mean = g.in(3).toDouble(c);
              const double var = g.in(4).toDouble(c) + eps;
              const double sd = std::sqrt(var), centred = x.toDouble(e) - mean;
              auto add = [&](size_t input, int64_t at, double v) {
                if (std::vector<double>* d = g.dIn(input)) (*d)[static_cast<size_t>(at)] += up * v;
              };
              add(0, e, scale / sd);
              add(1, c, centred / sd);
              add(2, c, 1.0);
              add(3, c, -scale / sd);
              add(4, c, -0.5 * scale * centred / (var * sd));
            }
          })
          .kernel([](KernelCall& k) {
            const BatchStats st(k);
            normalizeChannels(k, st.mean, st.var, k.in(1), k.in(2), k.attrFloat("epsilon"));
          })
          .outputError([](KernelCall& k) {
            const BatchStats st(k);
            return affineRounding(k, st.mean, st.var, k.in(1), k.in(2), k.attrFloat("epsilon"));
          })));

  reg.add(std::move(
      OpSpec("InstanceNormalization", 6)
          .types("T", floatTypes())
          .input("input", "T")
          .input("scale", "T")
          .weight()
          .sampleShape(channelVector)
          .input("B", "T")
          .weight()
          .sampleShape(channelVector)
          .output("output")
          .attr(floatAttr("epsilon", 1e-5f, 1e-6, 1e-2))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 3, "input has rank >= 3 (N, C, spatial...)");
            requireChannelVector(r, 1, "scale");
            requireChannelVector(r, 2, "B");
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            const GroupStats st(k.in(0), spatialAxes(k.in(0)));
            normalizeChannels(k, st.mean, st.var, k.in(1), k.in(2), k.attrFloat("epsilon"));
          })
          .outputError([](KernelCall& k) {
            const GroupStats st(k.in(0), spatialAxes(k.in(0)));
            return affineRounding(k, st.mean, st.var, k.in(1), k.in(2), k.attrFloat("epsilon"));
          })
          .gradient(instanceNormalizationGradient)));

  reg.add(std::move(
      OpSpec("LayerNormalization", 17)
          .types("T", floatTypes())
          .input("X", "T")
          .input("Scale", "T")
          .weight()
          .sampleShape(normalizedShape)
          .optionalInput("B", "T")
          .weight()
          .sampleShape(normalizedShape)
          .output("Y")
          .optionalOutput("Mean")
          .optionalOutput("InvStdDev")
          .attr(axisAttr("axis", -1))
          .attr(floatAttr("epsilon", 1e-5f, 1e-6, 1e-2))
          .attr(intChoiceAttr("stash_type", 1, {1}))  // statistics in float32
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 1, "X has rank >= 1");
            const int64_t axis = r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            const auto x = r.dims(0);
            const std::vector normalized(x.begin() + axis, x.end());
            requireUnidirectional(r, 1, normalized, "Scale");
            if (r.has(2)) requireUnidirectional(r, 2, normalized, "B");
            auto stats = x;
            for (size_t a = static_cast<size_t>(axis); a < stats.size(); ++a) stats[a] = r.lit(1);
            r.output(0, x);
            r.output(1, stats, DType::Float32);
            r.output(2, stats, DType::Float32);
          })
          .kernel([](KernelCall& k) {
            const GroupStats st(k.in(0), trailingAxes(k));
            const double eps = k.attrFloat("epsilon");
            forEachLayerAffine(k, st,
                               [](int64_t, double x, double a, double b) { return x * a + b; });
            for (size_t o = 1; o < k.outputCount(); ++o)
              for (size_t g = 0; g < st.mean.size(); ++g)
                k.out(o).span<float>()[g] =
                    static_cast<float>(o == 1 ? st.mean[g] : 1 / std::sqrt(st.var[g] + eps));
          })
          .outputError([](KernelCall& k) {
            const GroupStats st(k.in(0), trailingAxes(k));
            std::vector<double> out(static_cast<size_t>(k.in(0).size()));
            forEachLayerAffine(k, st, [&](int64_t e, double x, double a, double b) {
              out[static_cast<size_t>(e)] = std::fabs(x * a) + std::fabs(b);
              return x * a + b;
            });
            return out;
          })
          // Y as for InstanceNormalization; Mean's dx is 1/n, InvStdDev's -x^ / (n sd^2).
          .gradient([](GradCall& g) {
            const KernelCall& k = g.kernel();
            const Tensor& x = g.in(0);
            const GroupStats st(x, trailingAxes(k));
            const double eps = k.attrFloat("epsilon");
            const int64_t inner = x.size() / std::max<size_t>(st.mean.size(), 1);
            const Shape innerShape(x.shape().end() - static_cast<int64_t>(trailingAxes(k).size()),
                                   x.shape().end());
            const std::vector<int64_t> si = broadcastIndex(k.in(1).shape(), innerShape);
            const std::vector<int64_t> bi =
                k.has(2) ? broadcastIndex(k.in(2).shape(), innerShape) : std::vector<int64_t>{};
            normalizedGroupsGradient(
                g, st, eps,
                [&](int64_t e) { return k.in(1).toDouble(si[static_cast<size_t>(e % inner)]); },
                [&](int64_t e, double dy, double xhat) {
                  if (std::vector<double>* d = g.dIn(1))
                    (*d)[static_cast<size_t>(si[static_cast<size_t>(e % inner)])] += dy * xhat;
                  if (std::vector<double>* d = g.dIn(2))
                    (*d)[static_cast<size_t>(bi[static_cast<size_t>(e % inner)])] += dy;
                });
            std::vector<double>* dx = g.dIn(0);
            if (!dx) return;
            for (int64_t e = 0; e < x.size(); ++e) {
              const size_t grp = st.group(e);
              const double n = static_cast<double>(st.count[grp]), sd = st.sd(e, eps);
              if (const std::vector<double>* dm = g.dOut(1))
                (*dx)[static_cast<size_t>(e)] += (*dm)[grp] / n;
              if (const std::vector<double>* ds = g.dOut(2))
                (*dx)[static_cast<size_t>(e)] -=
                    (*ds)[grp] * (x.toDouble(e) - st.mean[grp]) / (n * sd * sd * sd);
            }
          })));

  // (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9) over `axes`, as ONNX's function computes it.
  reg.add(std::move(
      OpSpec("MeanVarianceNormalization", 13)
          // ONNX 1.12's function body adds a float32 epsilon: other dtypes fail its inference.
          .types("T", {DType::Float32})
          .input("X", "T")
          .output("Y")
          .attr(withSampling(intsAttr("axes"), AttrSampling::AxesSubset))  // unset: [0, 2, 3]
          .shapeRule([](auto& r) {
            for (int64_t a : mvnAxes(r)) r.normAxis(a, r.rank(0), "axes");
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            const GroupStats st(k.in(0), mvnAxesOf(k));
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              auto y = k.out(0).span<T>();
              for (int64_t e = 0; e < k.in(0).size(); ++e)
                y[static_cast<size_t>(e)] = fromDouble<T>(
                    (k.in(0).toDouble(e) - st.mean[st.group(e)]) / (st.sd(e, 0) + 1e-9));
            });
          })
          // A group's variance, as E[X^2] - mean^2, cancels where the mean dominates: keep the
          // variance at least a hundredth of E[X^2] by spreading the elements.
          .stability([](StabilityCall& s) {
            const Tensor& x = s.in(0);
            if (!isFloatDType(x.dtype())) return;
            const GroupStats st(x, mvnAxesOf(s.kernel()));
            for (int64_t e = 0; e < x.size(); ++e) {
              const size_t g = st.group(e);
              const double m = st.mean[g];
              if (st.var[g] >= 0.01 * (st.var[g] + m * m) + 1e-6) continue;
              const double d = x.toDouble(e) - m;
              s.tooClose(0, e, d > 0 || (d == 0 && e % 2) ? 1 : -1);
            }
          })
          .gradient([](GradCall& g) {
            const GroupStats st(g.in(0), mvnAxesOf(g.kernel()));
            normalizedGroupsGradient(
                g, st, 0, [](int64_t) { return 1.0; }, [](int64_t, double, double) {});
          })));

  reg.add(std::move(
      OpSpec("LpNormalization", 1)
          .types("T", floatTypes())
          .input("input", "T")
          .output("output")
          .attr(axisAttr("axis", -1))
          .attr(intChoiceAttr("p", 2, {1, 2}))
          .shapeRule([](auto& r) {
            r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
            r.output(0, r.dims(0));
          })
          .kernel([](KernelCall& k) {
            const LpNorms n(k);
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              auto y = k.out(0).span<T>();
              for (int64_t e = 0; e < k.in(0).size(); ++e)
                y[static_cast<size_t>(e)] = fromDouble<T>(k.in(0).toDouble(e) / n.at(e));
            });
          })
          // A norm near 0 makes the result a ratio of roundings: keep each norm off it.
          .stability([](StabilityCall& s) {
            if (!isFloatDType(s.in(0).dtype())) return;
            const LpNorms n(s.kernel());
            for (int64_t e = 0; e < s.in(0).size(); ++e)
              if (n.at(e) < 1e-3) s.tooClose(0, e, s.in(0).toDouble(e) >= 0 ? 1 : -1);
          })
          // p = 2: dx = (dy - y sum(dy y)) / n; p = 1: dx = dy / n - sign(x) sum(dy x) / n^2.
          .gradient([](GradCall& g) {
            std::vector<double>* dx = g.dIn(0);
            const std::vector<double>* dy = g.dOut(0);
            if (!dx || !dy) return;
            const LpNorms n(g.kernel());
            const Tensor& x = g.in(0);
            std::vector<double> dot(n.norm.size(), 0);
            for (int64_t e = 0; e < x.size(); ++e)
              dot[n.group(e)] += (*dy)[static_cast<size_t>(e)] * x.toDouble(e);
            for (int64_t e = 0; e < x.size(); ++e) {
              const double ne = n.at(e), xe = x.toDouble(e), d = dot[n.group(e)];
              (*dx)[static_cast<size_t>(e)] +=
                  n.p == 2 ? ((*dy)[static_cast<size_t>(e)] - xe * d / (ne * ne)) / ne
                           : (*dy)[static_cast<size_t>(e)] / ne - (xe < 0 ? -1 : 1) * d / (ne * ne);
            }
          })));

  reg.add(std::move(OpSpec("LRN", 1)
                        .types("T", floatTypes())
                        .input("X", "T")
                        .output("Y")
                        .attr(floatAttr("alpha", 1e-4f, 1e-4, 1.0))
                        .attr(floatAttr("beta", 0.75f, 0.5, 1.0))
                        .attr(floatAttr("bias", 1.0f, 0.5, 2.0))
                        .attr(requiredInt("size", 1, 5))
                        .shapeRule([](auto& r) {
                          r.check(r.rank(0) >= 3, "X has rank >= 3 (N, C, spatial...)");
                          r.check(r.attrInt("size") >= 1, "size >= 1");
                          r.output(0, r.dims(0));
                        })
                        .kernel([](KernelCall& k) {
                          const LrnWindows w(k);
                          visitCompute(k.in(0).dtype(), [&]<class T>() {
                            auto y = k.out(0).span<T>();
                            for (int64_t e = 0; e < k.in(0).size(); ++e)
                              y[static_cast<size_t>(e)] = fromDouble<T>(
                                  k.in(0).toDouble(e) * std::pow(w.denominator(e), -w.beta));
                          });
                        })
                        // y_c = x_c D_c^-beta, D_c = bias + alpha / size sum over c's window of
                        // x_i^2: dx_i = dy_i D_i^-beta - 2 alpha beta / size x_i sum over windows c
                        // holding i of dy_c x_c D_c^(-beta-1).
                        .gradient([](GradCall& g) {
                          std::vector<double>* dx = g.dIn(0);
                          const std::vector<double>* dy = g.dOut(0);
                          if (!dx || !dy) return;
                          const LrnWindows w(g.kernel());
                          const Tensor& x = g.in(0);
                          for (int64_t e = 0; e < x.size(); ++e) {
                            const double d = w.denominator(e), up = (*dy)[static_cast<size_t>(e)];
                            (*dx)[static_cast<size_t>(e)] += up * std::pow(d, -w.beta);
                            const double through = -2 * w.alpha * w.beta /
                                                   static_cast<double>(w.size) * up *
                                                   x.toDouble(e) * std::pow(d, -w.beta - 1);
                            w.forWindow(e, [&](int64_t i) {
                              (*dx)[static_cast<size_t>(i)] += through * x.toDouble(i);
                            });
                          }
                        })));

  reg.add(std::move(OpSpec("Hardmax", 13)
                        .types("T", floatTypes())
                        .input("input", "T")
                        .output("output")
                        .attr(axisAttr("axis", -1))
                        .shapeRule([](auto& r) {
                          r.normAxis(r.attrInt("axis"), r.rank(0), "axis");
                          r.output(0, r.dims(0));
                        })
                        .stability([](StabilityCall& s) { noTiesAlongAxis(s, true); })
                        .kernel([](KernelCall& k) {
                          const AxisSplit sp(k.in(0).shape(), k.attrInt("axis"));
                          visitCompute(k.in(0).dtype(), [&]<class T>() {
                            auto y = k.out(0).span<T>();
                            for (int64_t o = 0; o < sp.outer; ++o)
                              for (int64_t i = 0; i < sp.inner; ++i) {
                                auto at = [&](int64_t j) {
                                  return (o * sp.size + j) * sp.inner + i;
                                };
                                int64_t best = 0;
                                for (int64_t j = 1; j < sp.size; ++j)
                                  if (k.in(0).toDouble(at(j)) > k.in(0).toDouble(at(best)))
                                    best = j;
                                for (int64_t j = 0; j < sp.size; ++j)
                                  y[static_cast<size_t>(at(j))] = fromDouble<T>(j == best ? 1 : 0);
                              }
                          });
                        })));

  reg.add(softmax<false>("Softmax"));
  // x - max - log(sum): the sum's rounding is an absolute error of the result, also where the
  // result is near 0 (the largest element, when it dominates).
  reg.add(std::move(softmax<true>("LogSoftmax").outputError([](KernelCall& k) {
    return std::vector<double>(static_cast<size_t>(k.out(0).size()), 1.0);
  })));
}

}  // namespace nncheck::ops
