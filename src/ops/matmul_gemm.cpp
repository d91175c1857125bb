// MatMul (numpy semantics, batched with broadcasting), Gemm, and the quantized MatMulInteger and
// QLinearMatMul. Float sums accumulate in double.
#include <cmath>

#include "ops/gradients.h"
#include "ops/quantize.h"

namespace nncheck::ops {
namespace {

template <class T>
using Acc = std::conditional_t<isFloatLike<T>, double, int64_t>;

template <class T>
Acc<T> widen(T v) {
  if constexpr (isFloatLike<T>)
    return toDouble(v);
  else
    return static_cast<int64_t>(v);
}

template <class T>
T narrow(Acc<T> v) {
  if constexpr (isFloatLike<T>)
    return fromDouble<T>(v);
  else
    return static_cast<T>(v);  // integer overflow wraps, as numpy
}

// C[n, m] = sum_k A[n, k] * B[k, m], reading A and B with explicit strides.
template <class T>
void gemmBlock(const T* a, int64_t aRow, int64_t aCol, const T* b, int64_t bRow, int64_t bCol,
               int64_t n, int64_t k, int64_t m, std::vector<Acc<T>>& c) {
  c.assign(static_cast<size_t>(n * m), Acc<T>(0));
  for (int64_t i = 0; i < n; ++i) {
    pollDeadline(k * m);  // an 8192x8192 product runs for minutes: the reference's time limit
    for (int64_t p = 0; p < k; ++p) {
      Acc<T> av = widen(a[i * aRow + p * aCol]);
      if constexpr (std::is_integral_v<Acc<T>>) {
        for (int64_t j = 0; j < m; ++j)
          c[static_cast<size_t>(i * m + j)] = static_cast<int64_t>(
              static_cast<uint64_t>(c[static_cast<size_t>(i * m + j)]) +
              static_cast<uint64_t>(av) * static_cast<uint64_t>(widen(b[p * bRow + j * bCol])));
      } else {
        for (int64_t j = 0; j < m; ++j)
          c[static_cast<size_t>(i * m + j)] += av * widen(b[p * bRow + j * bCol]);
      }
    }
  }
}

// MatMul's operands as batches of [n, kk] @ [kk, m] matrices (numpy's 1-D promotion), and the
// broadcast batch shape.
struct MatMulGeometry {
  int64_t n, kk, m;
  Shape aBatch, bBatch, batch;
  MatMulGeometry(const Shape& a, const Shape& b) {
    Shape as = a, bs = b;
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    n = as[as.size() - 2];
    kk = as.back();
    m = bs.back();
    aBatch.assign(as.begin(), as.end() - 2);
    bBatch.assign(bs.begin(), bs.end() - 2);
    batch = aBatch.size() >= bBatch.size() ? aBatch : bBatch;
    for (size_t i = 0; i < batch.size(); ++i) {
      int64_t ad = i + aBatch.size() >= batch.size() ? aBatch[i + aBatch.size() - batch.size()] : 1;
      int64_t bd = i + bBatch.size() >= batch.size() ? bBatch[i + bBatch.size() - batch.size()] : 1;
      batch[i] = ad == 1 ? bd : ad;
    }
  }
};

void matmulKernel(KernelCall& k) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    const Tensor& A = k.in(0);
    const Tensor& B = k.in(1);
    const MatMulGeometry geo(A.shape(), B.shape());
    const int64_t n = geo.n, kk = geo.kk, m = geo.m;
    auto out = k.out(0).span<T>();
    std::vector<Acc<T>> c;
    forEachBroadcast(
        geo.batch, {&geo.aBatch, &geo.bBatch}, [&](int64_t bi, const std::vector<int64_t>& o) {
          gemmBlock(A.span<T>().data() + o[0] * n * kk, kk, 1, B.span<T>().data() + o[1] * kk * m,
                    m, 1, n, kk, m, c);
          for (int64_t i = 0; i < n * m; ++i)
            out[static_cast<size_t>(bi * n * m + i)] = narrow<T>(c[static_cast<size_t>(i)]);
        });
  });
}

// B's shape: [..., k, n] for A = [..., m, k]: sometimes a plain matrix, sometimes a vector.
Shape matmulBShape(SampleContext& c) {
  Shape a = c.shape(0), b;
  if (a.empty()) return a;
  const int64_t k = a.back(), n = c.rng.uniform(1, c.maxDim);
  if (a.size() >= 3 && c.rng.chance(0.5)) b.assign(a.begin(), a.end() - 2);
  if (c.rng.chance(0.15)) return Shape{k};
  b.push_back(k);
  b.push_back(n);
  return b;
}

// MatMul's output dims for operands `ia` and `ib` (numpy semantics).
template <class I>
std::vector<I> matmulDims(Rule<I>& r, size_t ia, size_t ib) {
  r.check(r.rank(ia) >= 1 && r.rank(ib) >= 1, "MatMul operands have rank >= 1");
  auto a = r.dims(ia), b = r.dims(ib);
  r.require(a.back() == b[b.size() >= 2 ? b.size() - 2 : 0], "inner dims agree");
  std::vector<I> aBatch(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  std::vector<I> bBatch(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  auto out = broadcastShapes(r, {aBatch, bBatch});
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  return out;
}

// A quantization parameter of a quantized MatMul: one element (a scalar or a vector), or a vector
// with one per row (axis -2) of A or per column (axis -1) of B, operand `of`.
template <class I>
void requirePerRowOrColumn(Rule<I>& r, size_t param, size_t of, int64_t axis,
                           const std::string& name) {
  if (!r.has(param)) return;
  r.check(r.rank(param) <= 1, name + " is a scalar or a vector");
  if (r.rank(param) == 0) return;
  r.check(r.rank(of) >= 2, name + " is per row or column of a matrix operand");
  r.require(r.dim(param, 0) == 1 || r.dim(param, 0) == r.dim(of, axis),
            name + " has one element, or one per " + (axis == -2 ? "row" : "column"));
}

// The exact integer product (A - a_zero_point) (B - b_zero_point), in double, of a quantized
// MatMul's operands at inputs a and b with zero points at aZero and bZero (absent: 0).
std::vector<double> shiftedProduct(const KernelCall& k, size_t a, size_t aZero, size_t b,
                                   size_t bZero) {
  const Tensor& A = k.in(a);
  const Tensor& B = k.in(b);
  const Tensor sa = minusZeroPoint(A, k.has(aZero) ? &k.in(aZero) : nullptr, A.rank() - 2);
  const Tensor sb = minusZeroPoint(B, k.has(bZero) ? &k.in(bZero) : nullptr, B.rank() - 1);
  const MatMulGeometry geo(A.shape(), B.shape());
  Shape out = geo.batch;
  if (A.rank() >= 2) out.push_back(geo.n);
  if (B.rank() >= 2) out.push_back(geo.m);
  KernelCall product(k.spec(), k.node(), {&sa, &sb}, {Tensor(DType::Float64, out)});
  matmulKernel(product);
  const auto v = product.out(0).span<const double>();
  return {v.begin(), v.end()};
}

// QLinearMatMul's results before rounding: the integer product scaled by a_scale b_scale /
// y_scale (each scale per tensor, or per row of a or column of b).
std::vector<double> qlinearMatMulValues(const KernelCall& k) {
  std::vector<double> v = shiftedProduct(k, 0, 2, 3, 5);
  const Tensor& A = k.in(0);
  const Tensor& B = k.in(3);
  const int64_t rows = A.rank() >= 2 ? A.shape()[A.shape().size() - 2] : 1;
  const int64_t cols = B.rank() >= 2 ? B.shape().back() : 1;
  const double yScale = k.in(6).toDouble(0);
  for (size_t e = 0; e < v.size(); ++e) {
    const int64_t i = static_cast<int64_t>(e) / cols % rows, j = static_cast<int64_t>(e) % cols;
    v[e] = v[e] * perChannel(k, 1, i) * perChannel(k, 4, j) / yScale;
  }
  return v;
}

// dA = dC B^T and dB = A^T dC per batch, summed over broadcast batches.
void matmulGradient(GradCall& g) {
  const std::vector<double>* dc = g.dOut(0);
  if (!dc) return;
  std::vector<double>* da = g.dIn(0);
  std::vector<double>* db = g.dIn(1);
  const Tensor& A = g.in(0);
  const Tensor& B = g.in(1);
  const MatMulGeometry geo(A.shape(), B.shape());
  const int64_t n = geo.n, kk = geo.kk, m = geo.m;
  forEachBroadcast(
      geo.batch, {&geo.aBatch, &geo.bBatch}, [&](int64_t bi, const std::vector<int64_t>& o) {
        const int64_t a0 = o[0] * n * kk, b0 = o[1] * kk * m, c0 = bi * n * m;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < m; ++j) {
            const double up = (*dc)[static_cast<size_t>(c0 + i * m + j)];
            if (up == 0) continue;
            for (int64_t p = 0; p < kk; ++p) {
              if (da)
                (*da)[static_cast<size_t>(a0 + i * kk + p)] += up * B.toDouble(b0 + p * m + j);
              if (db)
                (*db)[static_cast<size_t>(b0 + p * m + j)] += up * A.toDouble(a0 + i * kk + p);
            }
          }
      });
}

}  // namespace

void registerMatMulGemm(Registry& reg) {
  reg.add(std::move(
      OpSpec("MatMul", 1)
          .gradient(matmulGradient)
          // Long float32 accumulations (the reference sums in double).
          .tolerance({1e-3, 1e-4})
          .types("T", {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64})
          .input("A", "T")
          .input("B", "T")
          .sampleShape(matmulBShape)
          .output("Y")
          .shapeRule([](auto& r) { r.output(0, matmulDims(r, 0, 1)); })
          .kernel(matmulKernel)));

  reg.add(std::move(OpSpec("MatMulInteger", 10)
                        .types("T1", {DType::UInt8, DType::Int8})
                        .types("T2", {DType::UInt8, DType::Int8})
                        .input("A", "T1")
                        .input("B", "T2")
                        .sampleShape(matmulBShape)
                        .optionalInput("a_zero_point", "T1")
                        .weight()
                        .sampleShape([](SampleContext&) { return Shape{}; })
                        .optionalInput("b_zero_point", "T2")
                        .weight()
                        .sampleShape([](SampleContext&) { return Shape{}; })
                        .output("Y")
                        .shapeRule([](auto& r) {
                          auto out = matmulDims(r, 0, 1);
                          requirePerRowOrColumn(r, 2, 0, -2, "a_zero_point");
                          requirePerRowOrColumn(r, 3, 1, -1, "b_zero_point");
                          r.output(0, out, DType::Int32);
                        })
                        .kernel([](KernelCall& k) {
                          const std::vector<double> acc = shiftedProduct(k, 0, 2, 1, 3);
                          auto y = k.out(0).span<int32_t>();
                          for (size_t e = 0; e < acc.size(); ++e)
                            y[e] = static_cast<int32_t>(acc[e]);
                        })));

  reg.add(std::move(OpSpec("QLinearMatMul", 10)
                        .types("T1", {DType::UInt8, DType::Int8})
                        .types("T2", {DType::UInt8, DType::Int8})
                        .types("T3", {DType::UInt8, DType::Int8})
                        .types("tensor(float)", {DType::Float32})
                        .input("a", "T1")
                        .with(scaleAndZeroPoint("a", "T1", false))
                        .input("b", "T2")
                        .sampleShape(matmulBShape)
                        .with(scaleAndZeroPoint("b", "T2", false))
                        .with(scaleAndZeroPoint("y", "T3", false))
                        .output("y")
                        .shapeRule([](auto& r) {
                          auto out = matmulDims(r, 0, 3);
                          requirePerRowOrColumn(r, 1, 0, -2, "a_scale");
                          requirePerRowOrColumn(r, 2, 0, -2, "a_zero_point");
                          requirePerRowOrColumn(r, 4, 3, -1, "b_scale");
                          requirePerRowOrColumn(r, 5, 3, -1, "b_zero_point");
                          for (size_t i : {6, 7}) {
                            r.check(r.rank(i) <= 1, "y_scale and y_zero_point hold one element");
                            if (r.rank(i) == 1)
                              r.require(r.dim(i, 0) == 1,
                                        "y_scale and y_zero_point hold one element");
                          }
                          r.output(0, out, r.dtype(7));
                        })
                        .kernel([](KernelCall& k) {
                          const double zeroPoint = k.in(7).toDouble(0);
                          requantize(
                              qlinearMatMulValues(k), [&](int64_t) { return zeroPoint; }, k.out(0));
                        })
                        .stability([](StabilityCall& s) {
                          requantizedAwayFromHalves(s, qlinearMatMulValues(s.kernel()), 6, 7);
                        })));

  reg.add(std::move(
      OpSpec("Gemm", 11)
          // Y = alpha A' B' + beta C: dA' = alpha dY B'^T, dB' = alpha A'^T dY, dC = beta dY
          // summed over C's broadcast dims.
          .gradient([](GradCall& g) {
            const std::vector<double>* dy = g.dOut(0);
            if (!dy) return;
            const KernelCall& k = g.kernel();
            const bool ta = k.attrInt("transA") != 0, tb = k.attrInt("transB") != 0;
            const double alpha = k.attrFloat("alpha"), beta = k.attrFloat("beta");
            const Tensor& A = g.in(0);
            const Tensor& B = g.in(1);
            const int64_t M = g.out(0).shape()[0], N = g.out(0).shape()[1];
            const int64_t K = ta ? A.shape()[0] : A.shape()[1];
            auto a = [&](int64_t i, int64_t p) { return ta ? p * M + i : i * K + p; };
            auto b = [&](int64_t p, int64_t j) { return tb ? j * K + p : p * N + j; };
            std::vector<double>* da = g.dIn(0);
            std::vector<double>* db = g.dIn(1);
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < N; ++j) {
                const double up = alpha * (*dy)[static_cast<size_t>(i * N + j)];
                for (int64_t p = 0; p < K; ++p) {
                  if (da) (*da)[static_cast<size_t>(a(i, p))] += up * B.toDouble(b(p, j));
                  if (db) (*db)[static_cast<size_t>(b(p, j))] += up * A.toDouble(a(i, p));
                }
              }
            if (std::vector<double>* dc = g.dIn(2)) {
              const Shape cs = g.in(2).shape(), mn{M, N};
              forEachBroadcast(mn, {&cs}, [&](int64_t i, const std::vector<int64_t>& o) {
                (*dc)[static_cast<size_t>(o[0])] += beta * (*dy)[static_cast<size_t>(i)];
              });
            }
          })
          // Long float32 accumulations (the reference sums in double).
          .tolerance({1e-3, 1e-4})
          .types("T", {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64})
          .input("A", "T")
          .input("B", "T")
          .weight()
          .sampleShape([](SampleContext& c) {
            const bool ta = c.node.attribute("transA") && c.node.attribute("transA")->i;
            const int64_t k = c.dim(0, ta ? 0 : 1);
            const int64_t n = c.rng.uniform(1, c.maxDim);
            bool tb = c.node.attribute("transB") && c.node.attribute("transB")->i;
            return tb ? Shape{n, k} : Shape{k, n};
          })
          .optionalInput("C", "T")
          .weight()
          .sampleShape([](SampleContext& c) {
            bool tb = c.node.attribute("transB") && c.node.attribute("transB")->i;
            const int64_t n = c.dim(1, tb ? 0 : 1);
            return c.rng.chance(0.7) ? Shape{n} : Shape{1};
          })
          .output("Y")
          .attr(floatAttr("alpha", 1.0f, 0.5, 2.0))
          .attr(floatAttr("beta", 1.0f, 0.5, 2.0))
          .attr(intChoiceAttr("transA", 0, {0, 1}))
          .attr(intChoiceAttr("transB", 0, {0, 1}))
          .shapeRule([](auto& r) {
            r.check(r.rank(0) == 2 && r.rank(1) == 2, "A and B are matrices");
            bool ta = r.attrInt("transA") != 0, tb = r.attrInt("transB") != 0;
            auto M = r.dim(0, ta ? 1 : 0), K = r.dim(0, ta ? 0 : 1);
            auto K2 = r.dim(1, tb ? 1 : 0), N = r.dim(1, tb ? 0 : 1);
            r.require(K == K2, "inner dims of A and B agree");
            if (r.has(2)) requireUnidirectional(r, 2, {M, N}, "C");
            // The spec does not say how a fractional alpha or beta scales integers: converted to
            // T first (OpenVINO, TVM) or applied in float and truncated (ONNX's reference).
            if (isIntegerDType(r.dtype(0))) {
              const auto whole = [](float f) { return f == static_cast<float>(std::trunc(f)); };
              r.requireDefined(r.truth(whole(r.attrFloat("alpha")) && whole(r.attrFloat("beta"))),
                               "whole alpha and beta on integers");
            }
            r.output(0, {M, N});
          })
          .kernel([](KernelCall& k) {
            visitCompute(k.in(0).dtype(), [&]<class T>() {
              bool ta = k.attrInt("transA") != 0, tb = k.attrInt("transB") != 0;
              double alpha = k.attrFloat("alpha"), beta = k.attrFloat("beta");
              const Tensor& A = k.in(0);
              const Tensor& B = k.in(1);
              int64_t M = k.out(0).shape()[0], N = k.out(0).shape()[1];
              int64_t K = ta ? A.shape()[0] : A.shape()[1];
              std::vector<Acc<T>> c;
              gemmBlock(A.span<T>().data(), ta ? 1 : K, ta ? M : 1, B.span<T>().data(), tb ? 1 : N,
                        tb ? K : 1, M, K, N, c);
              auto out = k.out(0).span<T>();
              Shape cs = k.has(2) ? k.in(2).shape() : Shape{};
              const Shape mn{M, N};
              forEachBroadcast(mn, {&cs}, [&](int64_t i, const std::vector<int64_t>& o) {
                double v = alpha * static_cast<double>(c[static_cast<size_t>(i)]);
                if (k.has(2)) v += beta * toDouble(k.in(2).span<T>()[static_cast<size_t>(o[0])]);
                out[static_cast<size_t>(i)] = fromDouble<T>(v);
              });
            });
          })));
}

}  // namespace nncheck::ops
