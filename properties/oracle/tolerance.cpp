#include "nncheck/tolerance.h"

#include <cmath>

#include "nncheck/error.h"
#include "ops/op_spec.h"

namespace nncheck {
namespace {

Tolerance looser(const Tolerance& a, const Tolerance& b) {
  return {std::max(a.rtol, b.rtol), std::max(a.atol, b.atol)};
}

// Perturbed runs, their perturbation, and the margin over their spread: a correct engine's op
// may err by more than a few ulps (reassociated sums), and a few runs see only part of the spread.
constexpr int kPerturbedRuns = 4;
constexpr double kPerturbationUlps = 4;
constexpr double kMargin = 4;

}  // namespace

Tolerance toleranceFor(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return {1e-2, 1e-3};
    case DType::Float64:
      return {1e-6, 1e-9};
    default:
      return {1e-3, 1e-5};
  }
}

Tolerance toleranceFor(const Model& model) {
  std::optional<Tolerance> tol;
  bool float32 = false;
  for (const ValueInfo& o : model.graph.outputs) {
    if (!isFloatDType(o.dtype)) continue;
    float32 |= o.dtype == DType::Float32;
    tol = tol ? looser(*tol, toleranceFor(o.dtype)) : toleranceFor(o.dtype);
  }
  if (!tol) return toleranceFor(DType::Float32);  // integer outputs compare exactly anyway
  if (float32) {
    for (const Node& n : model.graph.nodes) {
      const ops::OpSpec* spec = ops::Registry::instance().find(n.opType);
      if (spec && spec->float32Tolerance) tol = looser(*tol, *spec->float32Tolerance);
    }
  }
  return *tol;
}

TensorMap roundingAllowance(const Model& model, const TensorMap& inputs, const TensorMap& want) {
  TensorMap allowance;
  for (const auto& [name, w] : want) allowance.emplace(name, Tensor(DType::Float64, w.shape()));
  auto everywhere = [&](double v) {
    for (auto& [name, a] : allowance)
      for (double& x : a.span<double>()) x = v;
  };
  for (int run = 1; run <= kPerturbedRuns; ++run) {
    TensorMap p;
    try {
      p = runReferencePerturbed(model, inputs, static_cast<uint64_t>(run), kPerturbationUlps);
    } catch (const Error&) {
      everywhere(INFINITY);  // perturbed values steer a computed index out of range: anything goes
      break;
    }
    for (auto& [name, a] : allowance) {
      const Tensor& w = want.at(name);
      auto it = p.find(name);
      if (it == p.end() || it->second.shape() != w.shape()) continue;
      const Tensor& q = it->second;
      auto out = a.span<double>();
      const bool exact = !isFloatDType(w.dtype());
      for (int64_t i = 0; i < w.size(); ++i) {
        double spread;
        if (exact)
          spread = q.toInt64(i) == w.toInt64(i) ? 0 : INFINITY;
        else
          spread =
              std::isfinite(q.toDouble(i)) ? std::fabs(q.toDouble(i) - w.toDouble(i)) : INFINITY;
        out[static_cast<size_t>(i)] = std::max(out[static_cast<size_t>(i)], kMargin * spread);
      }
    }
  }
  return allowance;
}

std::optional<std::string> firstNonFinite(const Model& model, const TensorMap& values) {
  auto check = [&](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end() || !isFloatDType(it->second.dtype())) return std::nullopt;
    const Tensor& t = it->second;
    for (int64_t i = 0; i < t.size(); ++i) {
      const double v = t.toDouble(i);
      if (!std::isfinite(v)) return std::string(std::isnan(v) ? "NaN" : "Inf");
    }
    return std::nullopt;
  };
  for (const ValueInfo& in : model.graph.inputs)
    if (auto what = check(in.name)) return "graph input '" + in.name + "' has " + *what;
  for (const Node& n : model.graph.nodes)
    for (const std::string& out : n.outputs)
      if (auto what = check(out))
        return "node '" + n.name + "' (" + n.opType + "): output '" + out + "' has " + *what;
  return std::nullopt;
}

}  // namespace nncheck
