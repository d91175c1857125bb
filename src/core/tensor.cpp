#include "nncheck/tensor.h"

#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/utf8.h"
#include "nncheck/error.h"

namespace nncheck {

int64_t elementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("negative dim in shape " + shapeToString(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error("element count of shape " + shapeToString(shape) + " overflows");
    n *= d;
  }
  return n;
}

std::string shapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t tensorBytes(DType dtype, const Shape& shape) {
  const int64_t count = elementCount(shape);
  const int64_t each = dtype == DType::String ? static_cast<int64_t>(sizeof(std::string))
                                              : static_cast<int64_t>(dtypeSize(dtype));
  if (each > 0 && count > std::numeric_limits<int64_t>::max() / each)
    throw Error("tensor " + shapeToString(shape) + " of " + std::string(dtypeName(dtype)) +
                ": its size overflows");
  return count * each;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  // Refuse absurd allocations with a message instead of std::bad_alloc or the OOM killer.
  const int64_t bytes = tensorBytes(dtype_, shape_);
  if (bytes > kMaxTensorBytes)
    throw Error("tensor " + shapeToString(shape_) + " of " + std::string(dtypeName(dtype_)) +
                " needs " + std::to_string(bytes) + " bytes, more than nncheck's limit of " +
                std::to_string(kMaxTensorBytes >> 20) + " MiB per tensor");
  count_ = elementCount(shape_);
  if (dtype_ == DType::String) {
    bytes_.clear();
    strings_.assign(static_cast<size_t>(count_), std::string());
  } else {
    bytes_.assign(static_cast<size_t>(bytes), 0);
  }
}

void Tensor::checkCount(const Tensor& t, size_t n) {
  if (static_cast<int64_t>(n) != t.count_)
    throw Error("tensor of shape " + shapeToString(t.shape_) + " needs " +
                std::to_string(t.count_) + " values, got " + std::to_string(n));
}

void Tensor::checkType(DType want) const {
  if (want != dtype_)
    throw Error("tensor of dtype " + std::string(dtypeName(dtype_)) + " accessed as " +
                std::string(dtypeName(want)));
}

double Tensor::toDouble(int64_t i) const {
  return visitCompute(dtype_, [&]<class T>() -> double {
    T v = span<T>()[static_cast<size_t>(i)];
    if constexpr (std::is_same_v<T, Half>)
      return static_cast<float>(v);
    else
      return static_cast<double>(v);
  });
}

int64_t Tensor::toInt64(int64_t i) const {
  return visitCompute(dtype_, [&]<class T>() -> int64_t {
    T v = span<T>()[static_cast<size_t>(i)];
    if constexpr (std::is_same_v<T, Half>)
      return static_cast<int64_t>(static_cast<float>(v));
    else
      return static_cast<int64_t>(v);
  });
}

std::vector<int64_t> Tensor::toInt64s() const {
  std::vector<int64_t> out(static_cast<size_t>(count_));
  for (int64_t i = 0; i < count_; ++i) out[static_cast<size_t>(i)] = toInt64(i);
  return out;
}

bool operator==(const Tensor& a, const Tensor& b) {
  return a.dtype_ == b.dtype_ && a.shape_ == b.shape_ && a.bytes_ == b.bytes_ &&
         a.strings_ == b.strings_;
}

std::string tensorToString(const Tensor& t, size_t limit) {
  std::ostringstream os;
  os << dtypeName(t.dtype()) << shapeToString(t.shape()) << " {";
  size_t n = static_cast<size_t>(t.size());
  for (size_t i = 0; i < n && i < limit; ++i) {
    if (i) os << ", ";
    if (t.dtype() == DType::String)
      os << '"' << escapeInvisible(t.strings()[i]) << '"';  // a model's text, for a terminal
    else if (isComputeDType(t.dtype()))
      os << t.toDouble(static_cast<int64_t>(i));
    else
      os << '?';
  }
  if (n > limit) os << ", ...";
  os << "}";
  return os.str();
}

}  // namespace nncheck
