// BatchNormalization (inference), InstanceNormalization, Softmax and LogSoftmax.
#include <cmath>

#include "ops/gradients.h"

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

// InstanceNormalization's statistics: the mean and (population) variance of each (n, c).
struct InstanceStats {
  int64_t instances = 0, inner = 0;
  std::vector<double> mean, var;
  explicit InstanceStats(const Tensor& x) {
    const Shape& s = x.shape();
    instances = s[0] * s[1];
    inner = x.size() / std::max<int64_t>(instances, 1);
    for (int64_t i = 0; i < instances; ++i) {
      double sum = 0, sq = 0;
      for (int64_t j = 0; j < inner; ++j) sum += x.toDouble(i * inner + j);
      const double m = sum / static_cast<double>(inner);
      for (int64_t j = 0; j < inner; ++j) {
        const double d = x.toDouble(i * inner + j) - m;
        sq += d * d;
      }
      mean.push_back(m);
      var.push_back(sq / static_cast<double>(inner));
    }
  }
};

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

// With x^ = (x - mean) / sd over each instance's m elements and y = scale x^ + B:
// dB = sum dy, dscale = sum dy x^, dx = scale / sd (dy - sum dy / m - x^ sum dy x^ / m).
void instanceNormalizationGradient(GradCall& g) {
  const std::vector<double>* dy = g.dOut(0);
  if (!dy) return;
  const Tensor& x = g.in(0);
  const InstanceStats st(x);
  const int64_t channels = x.shape()[1];
  const double eps = g.kernel().attrFloat("epsilon"), m = static_cast<double>(st.inner);
  std::vector<double>*dx = g.dIn(0), *dScale = g.dIn(1), *dBias = g.dIn(2);
  for (int64_t i = 0; i < st.instances; ++i) {
    const size_t inst = static_cast<size_t>(i);
    const int64_t c = i % channels;
    const double sd = std::sqrt(st.var[inst] + eps), scale = g.in(1).toDouble(c);
    auto at = [&](int64_t j) { return static_cast<size_t>(i * st.inner + j); };
    auto normalized = [&](int64_t j) {
      return (x.toDouble(static_cast<int64_t>(at(j))) - st.mean[inst]) / sd;
    };
    double sumDy = 0, sumDyX = 0;
    for (int64_t j = 0; j < st.inner; ++j) {
      sumDy += (*dy)[at(j)];
      sumDyX += (*dy)[at(j)] * normalized(j);
    }
    if (dBias) (*dBias)[static_cast<size_t>(c)] += sumDy;
    if (dScale) (*dScale)[static_cast<size_t>(c)] += sumDyX;
    if (dx)
      for (int64_t j = 0; j < st.inner; ++j)
        (*dx)[at(j)] += scale / sd * ((*dy)[at(j)] - sumDy / m - normalized(j) * sumDyX / m);
  }
}

Shape channelVector(SampleContext& c) { return {c.dim(0, 1)}; }

template <class I>
void requireChannelVector(Rule<I>& r, size_t i, const std::string& what) {
  r.check(r.rank(i) == 1, what + " is a vector");
  r.require(r.dim(i, 0) == r.dim(0, 1), what + " has one value per channel");
}

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
            const InstanceStats st(k.in(0));
            normalizeChannels(k, st.mean, st.var, k.in(1), k.in(2), k.attrFloat("epsilon"));
          })
          .outputError([](KernelCall& k) {
            const InstanceStats st(k.in(0));
            return affineRounding(k, st.mean, st.var, k.in(1), k.in(2), k.attrFloat("epsilon"));
          })
          .gradient(instanceNormalizationGradient)));

  reg.add(softmax<false>("Softmax"));
  // x - max - log(sum): the sum's rounding is an absolute error of the result, also where the
  // result is near 0 (the largest element, when it dominates).
  reg.add(std::move(softmax<true>("LogSoftmax").outputError([](KernelCall& k) {
    return std::vector<double>(static_cast<size_t>(k.out(0).size()), 1.0);
  })));
}

}  // namespace nncheck::ops
