// Building blocks of reference kernels: typed element maps, numpy broadcasting, and integer
// arithmetic that wraps like numpy instead of overflowing into undefined behaviour.
//
//   mapUnaryFloat(k, [](double x) { return std::exp(x); });   // float16/32/64, computed in double
//   mapBinary(k, [](auto a, auto b) { return a + b; });       // broadcasting, per dtype
#pragma once

#include <cmath>
#include <cstring>
#include <type_traits>

#include "ops/op_spec.h"

namespace nncheck::ops {

template <class T>
inline constexpr bool isFloatLike = std::is_floating_point_v<T> || std::is_same_v<T, Half>;

// The type arithmetic is done in: float for Half, else T itself.
template <class T>
using Arith = std::conditional_t<std::is_same_v<T, Half>, float, T>;

template <class T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, Half>)
    return static_cast<float>(v);
  else
    return static_cast<double>(v);
}

// Converts like numpy's astype: floats to ints truncate toward zero (out-of-range values,
// undefined in C++, saturate here), everything to bool is != 0.
template <class T>
T fromDouble(double v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::min()))
      return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else
    return static_cast<T>(v);
}

template <class T>
T fromArith(Arith<T> v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half(v);
  else
    return v;
}

// A tensor's elements as doubles, and doubles written back into a shaped tensor (as fromDouble
// converts), for kernels that compute in double.
std::vector<double> toDoubles(const Tensor& x);
void assignDoubles(Tensor& out, const std::vector<double>& values);

// Integer arithmetic modulo 2^bits, as numpy does.
template <class T>
T wrapAdd(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a != b;  // never reached: no op allows it
  else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
}
template <class T>
T wrapSub(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a != b;  // never reached: no op allows it
  else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  }
}
template <class T>
T wrapMul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  }
}

// Row-major strides of a shape.
Shape stridesOf(const Shape& shape);

// For each element of a tensor of shape `in`, the linear index of the element it reduces into
// when `axes` (normalized) are reduced with keepdims: its group (Reduce*, normalizations).
std::vector<int64_t> reductionMap(const Shape& in, const std::vector<int64_t>& axes);

// Strides of `in` seen from an output of shape `out` under numpy broadcasting (0 where the
// input is broadcast).
Shape broadcastStrides(const Shape& in, const Shape& out);

// Calls f(outIndex, offsets) for every element of `out`, where offsets[j] is the linear
// offset into input j (of shape ins[j], broadcast to out).
template <class F>
void forEachBroadcast(const Shape& out, const std::vector<const Shape*>& ins, F&& f) {
  const size_t n = ins.size();
  const int64_t total = elementCount(out);
  std::vector<int64_t> off(n, 0);
  bool same = true;
  for (const Shape* s : ins) same = same && *s == out;
  if (same) {
    for (int64_t i = 0; i < total; ++i) {
      std::fill(off.begin(), off.end(), i);
      f(i, off);
    }
    return;
  }
  std::vector<Shape> strides;
  for (const Shape* s : ins) strides.push_back(broadcastStrides(*s, out));
  const size_t rank = out.size();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (size_t a = rank; a-- > 0;) {
      ++idx[a];
      for (size_t j = 0; j < n; ++j) off[j] += strides[j][a];
      if (idx[a] < out[a]) break;
      for (size_t j = 0; j < n; ++j) off[j] -= strides[j][a] * idx[a];
      idx[a] = 0;
    }
  }
}

// Only ops whose spec allows bool instantiate their arithmetic for it (numeric lambdas on
// bool are meaningless and warn); the spec's dtype check keeps bool away from the rest.
template <bool AllowBool, class T>
constexpr bool skipType() {
  return std::is_same_v<T, bool> && !AllowBool;
}

[[noreturn]] inline void unreachableDType(const KernelCall& k) {
  throw std::logic_error(k.spec().type + ": kernel reached with dtype " +
                         std::string(dtypeName(k.in(0).dtype())) + " its spec excludes");
}

// out(0) = f(in(0)) elementwise, with f generic over the element's arithmetic type.
template <bool AllowBool = false, class F>
void mapUnary(KernelCall& k, F&& f) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    if constexpr (skipType<AllowBool, T>())
      unreachableDType(k);
    else {
      auto x = k.in(0).span<T>();
      auto y = k.out(0).span<T>();
      for (size_t i = 0; i < x.size(); ++i)
        y[i] = fromArith<T>(static_cast<Arith<T>>(f(static_cast<Arith<T>>(x[i]))));
    }
  });
}

// out(0) = f(in(0)) for float dtypes, computed in double.
template <class F>
void mapUnaryFloat(KernelCall& k, F&& f) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    if constexpr (isFloatLike<T>) {
      auto x = k.in(0).span<T>();
      auto y = k.out(0).span<T>();
      for (size_t i = 0; i < x.size(); ++i) y[i] = fromDouble<T>(f(toDouble(x[i])));
    } else {
      throw Error(k.spec().type + ": float kernel called on " +
                  std::string(dtypeName(k.in(0).dtype())));
    }
  });
}

// out(0)[i] = f(a, b) with broadcasting; T is the inputs' type, R the output's.
template <class T, class R, class F>
void broadcastBinary(const Tensor& a, const Tensor& b, Tensor& out, F&& f) {
  auto x = a.span<T>();
  auto y = b.span<T>();
  auto z = out.span<R>();
  forEachBroadcast(
      out.shape(), {&a.shape(), &b.shape()}, [&](int64_t i, const std::vector<int64_t>& o) {
        z[static_cast<size_t>(i)] = f(x[static_cast<size_t>(o[0])], y[static_cast<size_t>(o[1])]);
      });
}

// Broadcasting binary map over every compute dtype; f(A a, A b) -> A in the arithmetic type.
template <class F>
void mapBinary(KernelCall& k, F&& f) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    if constexpr (skipType<false, T>())
      unreachableDType(k);
    else {
      using A = Arith<T>;
      broadcastBinary<T, T>(k.in(0), k.in(1), k.out(0), [&](T a, T b) {
        return fromArith<T>(static_cast<A>(f(static_cast<A>(a), static_cast<A>(b))));
      });
    }
  });
}

// Broadcasting comparison; f(Arith a, Arith b) -> bool.
template <class F>
void mapCompare(KernelCall& k, F&& f) {
  visitCompute(k.in(0).dtype(), [&]<class T>() {
    broadcastBinary<T, bool>(k.in(0), k.in(1), k.out(0), [&](T a, T b) {
      return f(static_cast<Arith<T>>(a), static_cast<Arith<T>>(b));
    });
  });
}

// A shape split around one axis into (outer, axis size, inner) extents; a negative axis
// counts from the end.
struct AxisSplit {
  int64_t axis = 0, outer = 1, size = 1, inner = 1;
  AxisSplit(const Shape& s, int64_t a) : axis(a < 0 ? a + static_cast<int64_t>(s.size()) : a) {
    for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
      if (i < axis)
        outer *= s[static_cast<size_t>(i)];
      else if (i == axis)
        size = s[static_cast<size_t>(i)];
      else
        inner *= s[static_cast<size_t>(i)];
    }
  }
};

// out[o] = in[src(index of o)] for every output element, copying raw element bytes (so it
// serves every dtype).
template <class F>
void gatherElements(const Tensor& in, Tensor& out, F src) {
  const size_t sz = dtypeSize(in.dtype());
  const uint8_t* x = in.bytes().data();
  uint8_t* y = out.bytes().data();
  const Shape& os = out.shape();
  std::vector<int64_t> idx(os.size(), 0);
  for (int64_t o = 0; o < out.size(); ++o) {
    std::memcpy(y + o * sz, x + src(idx) * sz, sz);
    for (size_t a = os.size(); a-- > 0;) {
      if (++idx[a] < os[a]) break;
      idx[a] = 0;
    }
  }
}

// The common shape rules.
inline constexpr auto sameShapeAsInput0 = [](auto& r) { r.output(0, r.dims(0)); };

}  // namespace nncheck::ops
