// Classification losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which is the
// former applied to a log-softmax over the class axis, 1).
#include <cmath>

#include "ops/gradients.h"

namespace nncheck::ops {
namespace {

// Input (N, C, d1..dk) seen as (N, C, inner), the target as (N, inner).
struct LossGeometry {
  int64_t N = 0, C = 0, inner = 1;
  explicit LossGeometry(const Shape& s) : N(s[0]), C(s[1]) {
    for (size_t a = 2; a < s.size(); ++a) inner *= s[a];
  }
  int64_t at(int64_t n, int64_t c, int64_t i) const { return (n * C + c) * inner + i; }
};

// Per target element: its class and weight (0 when ignored), as ONNX's loss ops define them.
struct LossTerms {
  std::vector<int64_t> cls;
  std::vector<double> weight;
  double weightSum = 0;
};

LossTerms lossTerms(const KernelCall& k, size_t weightInput, const LossGeometry& g) {
  const Tensor& target = k.in(1);
  const bool ignores = k.hasAttr("ignore_index");
  const int64_t ignore = ignores ? k.attrInt("ignore_index") : 0;
  LossTerms t;
  for (int64_t e = 0; e < target.size(); ++e) {
    const int64_t c = target.toInt64(e);
    if (ignores && c == ignore) {
      t.cls.push_back(-1);
      t.weight.push_back(0);
      continue;
    }
    if (c < 0 || c >= g.C)
      throw Error(k.spec().type + ": target " + std::to_string(c) + " is outside [0, " +
                  std::to_string(g.C) + ") classes");
    const double w = k.has(weightInput) ? k.in(weightInput).toDouble(c) : 1.0;
    t.cls.push_back(c);
    t.weight.push_back(w);
    t.weightSum += w;
  }
  return t;
}

// loss[n, i] = -logp[n, cls, i] * weight, then reduced; written to `out`.
void writeLoss(const KernelCall& k, const std::vector<double>& logp, const LossGeometry& g,
               const LossTerms& t, Tensor& out) {
  const std::string reduction = k.attrString("reduction");
  std::vector<double> loss(t.cls.size(), 0.0);
  double sum = 0;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t i = 0; i < g.inner; ++i) {
      const size_t e = static_cast<size_t>(n * g.inner + i);
      if (t.cls[e] < 0) continue;
      loss[e] = -logp[static_cast<size_t>(g.at(n, t.cls[e], i))] * t.weight[e];
      sum += loss[e];
    }
  visitCompute(out.dtype(), [&]<class T>() {
    auto y = out.span<T>();
    if (reduction == "none")
      for (size_t e = 0; e < loss.size(); ++e) y[e] = fromDouble<T>(loss[e]);
    else
      y[0] = fromDouble<T>(reduction == "sum" ? sum : sum / t.weightSum);
  });
}

// From dL/dloss, dL/dlogp added to `dlogp` and dL/dweight to `dweight` (each when given).
void lossGradient(const KernelCall& k, const std::vector<double>& logp,
                  const std::vector<double>& dLoss, const LossGeometry& g, const LossTerms& t,
                  std::vector<double>* dlogp, std::vector<double>* dweight) {
  const std::string reduction = k.attrString("reduction");
  // mean: L = S / W, S = sum of -logp w, W = sum of w; dL/dw = (-logp - L) / W per term.
  double mean = 0;
  if (reduction == "mean")
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t i = 0; i < g.inner; ++i) {
        const size_t e = static_cast<size_t>(n * g.inner + i);
        if (t.cls[e] >= 0)
          mean -= logp[static_cast<size_t>(g.at(n, t.cls[e], i))] * t.weight[e] / t.weightSum;
      }
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t i = 0; i < g.inner; ++i) {
      const size_t e = static_cast<size_t>(n * g.inner + i);
      if (t.cls[e] < 0) continue;
      const size_t at = static_cast<size_t>(g.at(n, t.cls[e], i));
      const double up = reduction == "none"  ? dLoss[e]
                        : reduction == "sum" ? dLoss[0]
                                             : dLoss[0] / t.weightSum;
      if (dlogp) (*dlogp)[at] -= up * t.weight[e];
      if (dweight)
        (*dweight)[static_cast<size_t>(t.cls[e])] +=
            up * (reduction == "mean" ? -logp[at] - mean : -logp[at]);
    }
}

// log-softmax over axis 1 of a (N, C, inner) tensor.
std::vector<double> logSoftmaxOverClasses(const Tensor& x, const LossGeometry& g) {
  std::vector<double> y = toDoubles(x);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t i = 0; i < g.inner; ++i) {
      double mx = -INFINITY;
      for (int64_t c = 0; c < g.C; ++c) mx = std::max(mx, y[static_cast<size_t>(g.at(n, c, i))]);
      double sum = 0;
      for (int64_t c = 0; c < g.C; ++c) sum += std::exp(y[static_cast<size_t>(g.at(n, c, i))] - mx);
      for (int64_t c = 0; c < g.C; ++c) {
        double& v = y[static_cast<size_t>(g.at(n, c, i))];
        v = v - mx - std::log(sum);
      }
    }
  return y;
}

// Targets are classes of input 0's axis 1, or the ignore_index.
void fixTargets(const Node& node, const std::vector<Shape>& shapes, Tensor& target) {
  const int64_t C = shapes.at(0).size() > 1 ? shapes[0][1] : 1;
  const Attribute* ignore = node.attribute("ignore_index");
  visitCompute(target.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      for (T& v : target.span<T>())
        if (!(ignore && v == ignore->i)) v = static_cast<T>(((v % C) + C) % C);
    }
  });
}

// The signature and shape rule the two ops share: input 0 (N, C, d1..dk), the target
// (N, d1..dk) of classes, optional per-class weights; loss shaped (N, d1..dk) or a scalar.
OpSpec lossOp(std::string type, std::string input, std::string target, std::string weight) {
  return std::move(
      OpSpec(std::move(type), 13)
          .types("T", floatTypes())
          .types("Tind", indexTypes())
          .input(std::move(input), "T")
          .input(std::move(target), "Tind")
          .indices(fixTargets)
          .sampleShape([](SampleContext& c) {
            Shape s = c.shape(0);
            if (s.size() > 1) s.erase(s.begin() + 1);
            return s;
          })
          .optionalInput(std::move(weight), "T")
          .weight()
          .domain(ValueDomain::Positive)
          .sampleShape([](SampleContext& c) { return Shape{c.dim(0, 1)}; })
          .output("output")
          .attr(optionalInt("ignore_index", -1, 2))
          .attr(stringAttr("reduction", "mean", {"none", "sum", "mean"}))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) >= 2, "input 0 has a batch and a class axis (rank >= 2)");
            r.check(r.rank(1) == r.rank(0) - 1, "the target has input 0's rank less one");
            r.require(r.dim(1, 0) == r.dim(0, 0), "the target's batch matches input 0's");
            for (int64_t a = 1; a < r.rank(1); ++a)
              r.require(r.dim(1, a) == r.dim(0, a + 1),
                        "the target's axis " + std::to_string(a) + " matches input 0's");
            if (r.has(2)) {
              r.check(r.rank(2) == 1, "the weights are a vector");
              r.require(r.dim(2, 0) == r.dim(0, 1), "one weight per class");
            }
            const bool none = r.attrString("reduction") == "none";
            r.output(0, none ? r.dims(1) : std::vector<std::decay_t<decltype(r.dim(0, 0))>>{});
            if (r.spec().outputs.size() > 1) r.output(1, r.dims(0));
          }));
}

}  // namespace

void registerLosses(Registry& reg) {
  reg.add(std::move(lossOp("NegativeLogLikelihoodLoss", "input", "target", "weight")
                        .kernel([](KernelCall& k) {
                          const LossGeometry g(k.in(0).shape());
                          writeLoss(k, toDoubles(k.in(0)), g, lossTerms(k, 2, g), k.out(0));
                        })
                        .gradient([](GradCall& g) {
                          if (!g.dOut(0)) return;
                          const LossGeometry geo(g.in(0).shape());
                          lossGradient(g.kernel(), toDoubles(g.in(0)), *g.dOut(0), geo,
                                       lossTerms(g.kernel(), 2, geo), g.dIn(0), g.dIn(2));
                        })));

  reg.add(std::move(lossOp("SoftmaxCrossEntropyLoss", "scores", "labels", "weights")
                        .optionalOutput("log_prob")
                        .kernel([](KernelCall& k) {
                          const LossGeometry g(k.in(0).shape());
                          const std::vector<double> logp = logSoftmaxOverClasses(k.in(0), g);
                          writeLoss(k, logp, g, lossTerms(k, 2, g), k.out(0));
                          if (k.outputCount() > 1) assignDoubles(k.out(1), logp);
                        })
                        // Through the log-softmax: dx_c = g_c - softmax_c sum_j g_j, g = dL/dlogp.
                        .gradient([](GradCall& g) {
                          const LossGeometry geo(g.in(0).shape());
                          const std::vector<double> logp = logSoftmaxOverClasses(g.in(0), geo);
                          std::vector<double> dlogp(logp.size(), 0.0);
                          if (g.dOut(0))
                            lossGradient(g.kernel(), logp, *g.dOut(0), geo,
                                         lossTerms(g.kernel(), 2, geo), &dlogp, g.dIn(2));
                          std::vector<double>* dx = g.dIn(0);
                          if (!dx) return;
                          if (g.dOut(1))
                            for (size_t e = 0; e < dlogp.size(); ++e) dlogp[e] += (*g.dOut(1))[e];
                          for (int64_t n = 0; n < geo.N; ++n)
                            for (int64_t i = 0; i < geo.inner; ++i) {
                              double sum = 0;
                              for (int64_t c = 0; c < geo.C; ++c)
                                sum += dlogp[static_cast<size_t>(geo.at(n, c, i))];
                              for (int64_t c = 0; c < geo.C; ++c) {
                                const size_t e = static_cast<size_t>(geo.at(n, c, i));
                                (*dx)[e] += dlogp[e] - std::exp(logp[e]) * sum;
                              }
                            }
                        })));
}

}  // namespace nncheck::ops
