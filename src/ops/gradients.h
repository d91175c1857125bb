// Building blocks of reverse-mode gradients (value search): an op's entry declares
//   .gradient([](GradCall& g) { unaryGradient(g, [](double x, double y) { return 1 - y * y; }); })
// and the interpreter's backward pass (src/interp/gradients.h) calls it node by node.
#pragma once

#include <utility>

#include "ops/kernels.h"

namespace nncheck::ops {

// dX += dY * d(x, y), elementwise.
template <class D>
void unaryGradient(GradCall& g, D d) {
  std::vector<double>* dx = g.dIn(0);
  const std::vector<double>* dy = g.dOut(0);
  if (!dx || !dy) return;
  const Tensor& x = g.in(0);
  const Tensor& y = g.out(0);
  for (int64_t i = 0; i < x.size(); ++i)
    (*dx)[static_cast<size_t>(i)] +=
        (*dy)[static_cast<size_t>(i)] * d(x.toDouble(i), y.toDouble(i));
}

// dA += dY * da, dB += dY * db where d(a, b, y) returns {da, db}; summed over broadcast dims.
template <class D>
void binaryGradient(GradCall& g, D d) {
  const std::vector<double>* dy = g.dOut(0);
  if (!dy) return;
  std::vector<double>* da = g.dIn(0);
  std::vector<double>* db = g.dIn(1);
  const Tensor& a = g.in(0);
  const Tensor& b = g.in(1);
  const Tensor& y = g.out(0);
  forEachBroadcast(y.shape(), {&a.shape(), &b.shape()},
                   [&](int64_t i, const std::vector<int64_t>& off) {
                     auto [ga, gb] = d(a.toDouble(off[0]), b.toDouble(off[1]), y.toDouble(i));
                     const double up = (*dy)[static_cast<size_t>(i)];
                     if (da) (*da)[static_cast<size_t>(off[0])] += up * ga;
                     if (db) (*db)[static_cast<size_t>(off[1])] += up * gb;
                   });
}

// Ops that only relabel the elements of input 0 (Reshape, Flatten, Squeeze, Unsqueeze).
inline void passThroughGradient(GradCall& g) {
  std::vector<double>* dx = g.dIn(0);
  const std::vector<double>* dy = g.dOut(0);
  if (!dx || !dy) return;
  for (size_t i = 0; i < dx->size(); ++i) (*dx)[i] += (*dy)[i];
}

}  // namespace nncheck::ops

namespace nncheck::ops {

// The gradient of an op that only moves elements (Transpose, Slice, Gather, Concat, Split,
// Tile, Expand, Pad): the op's own kernel runs on tensors holding each element's input number
// and index, so every output element says where it came from, and dY flows back there. Output
// elements that come from nowhere (Pad's constant) take no gradient.
void routingGradient(GradCall& g);

}  // namespace nncheck::ops
