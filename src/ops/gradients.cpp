#include "ops/gradients.h"

#include <cmath>

namespace nncheck::ops {

void routingGradient(GradCall& g) {
  const KernelCall& k = g.kernel();
  // Element e of input i holds kBase * (i + 1) + e: exact in double for any input count and
  // size a generated model can have.
  constexpr double kBase = 16777216.0;  // 2^24 > maxElements
  std::vector<Tensor> labels(k.inputCount());
  std::vector<const Tensor*> ins(k.inputCount(), nullptr);
  for (size_t i = 0; i < k.inputCount(); ++i) {
    if (!k.has(i)) continue;
    if (!g.dIn(i)) {
      ins[i] = &k.in(i);  // shape operands, indices: as they are
      continue;
    }
    labels[i] = Tensor(DType::Float64, k.in(i).shape());
    auto v = labels[i].span<double>();
    for (size_t e = 0; e < v.size(); ++e) v[e] = kBase * static_cast<double>(i + 1) + e;
    ins[i] = &labels[i];
  }
  std::vector<Tensor> outs;
  for (size_t j = 0; j < k.node().outputs.size(); ++j)
    outs.emplace_back(DType::Float64, g.out(j).shape());
  KernelCall routed(k.spec(), k.node(), ins, std::move(outs));
  k.spec().kernelFn(routed);
  for (size_t j = 0; j < routed.outputCount(); ++j) {
    const std::vector<double>* dy = g.dOut(j);
    if (!dy) continue;
    auto from = routed.out(j).span<double>();
    for (size_t o = 0; o < from.size(); ++o) {
      const double input = std::floor(from[o] / kBase) - 1;
      // Not a label (a bool output such as Dropout's mask holds no routed value; NaN too).
      if (!(input >= 0 && input < static_cast<double>(k.inputCount()))) continue;
      std::vector<double>* dx = g.dIn(static_cast<size_t>(input));
      const double e = from[o] - kBase * (input + 1);
      if (dx && e >= 0 && e < static_cast<double>(dx->size()))
        (*dx)[static_cast<size_t>(e)] += (*dy)[o];
    }
  }
}

}  // namespace nncheck::ops
