// A dense tensor: dtype, shape and little-endian storage (strings apart).
//
//   nncheck::Tensor t(nncheck::DType::Float32, {2, 3});
//   auto v = t.span<float>();           // 6 zero-initialized floats
//   v[4] = 1.5f;
//   auto s = nncheck::Tensor::scalar<int64_t>(7);
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "nncheck/dtype.h"

namespace nncheck {

using Shape = std::vector<int64_t>;

// Number of elements of a shape; throws if a dim is negative or the count overflows.
int64_t elementCount(const Shape& shape);

// The largest tensor nncheck makes (1 GiB): a file, a model or an op asking for more gets a
// clear error before anything is allocated, not an out-of-memory kill.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 30;
// The memory a tensor of this dtype and shape takes (strings: their handles); throws like
// elementCount.
int64_t tensorBytes(DType dtype, const Shape& shape);
std::string shapeToString(const Shape& shape);  // "[2, 3]"

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled

  template <class T>
  static Tensor fromVector(Shape shape, const std::vector<T>& values) {
    Tensor t(dtypeOf<T>(), std::move(shape));
    checkCount(t, values.size());
    auto s = t.span<T>();
    for (size_t i = 0; i < values.size(); ++i) s[i] = values[i];
    return t;
  }
  template <class T>
  static Tensor scalar(T v) {
    return fromVector<T>({}, {v});
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size() const { return count_; }

  // Typed views; T must match the dtype (checked). span<const float>() is span<float>() read-only.
  template <class T>
  std::span<T> span() {
    checkType(dtypeOf<std::remove_const_t<T>>());
    return {reinterpret_cast<T*>(bytes_.data()), static_cast<size_t>(count_)};
  }
  template <class T>
  std::span<const T> span() const {
    checkType(dtypeOf<std::remove_const_t<T>>());
    return {reinterpret_cast<const T*>(bytes_.data()), static_cast<size_t>(count_)};
  }

  // Raw little-endian bytes (empty for String tensors).
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<std::string>& strings() const { return strings_; }
  std::vector<std::string>& strings() { return strings_; }

  // Element i converted to double / int64 (compute dtypes only), for shape operands and messages.
  double toDouble(int64_t i) const;
  int64_t toInt64(int64_t i) const;
  std::vector<int64_t> toInt64s() const;

  // Same dtype, shape and bytes.
  friend bool operator==(const Tensor& a, const Tensor& b);

 private:
  static void checkCount(const Tensor& t, size_t n);
  void checkType(DType want) const;

  DType dtype_ = DType::Float32;
  Shape shape_;
  int64_t count_ = 1;
  std::vector<uint8_t> bytes_ = std::vector<uint8_t>(4);
  std::vector<std::string> strings_;
};

// Tensors by value name: a model's inputs, outputs or intermediate values.
using TensorMap = std::map<std::string, Tensor>;

// A readable rendering, abbreviated past `limit` elements: "float32[2, 3] {0, 1.5, ...}".
std::string tensorToString(const Tensor& t, size_t limit = 8);

}  // namespace nncheck
