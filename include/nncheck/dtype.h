// Element types of tensors, numbered as ONNX's TensorProto::DataType.
//
// Every ONNX type can be stored (so models round-trip losslessly); the reference
// kernels compute on the "compute" types: float32, float64, float16, int8, uint8,
// int32, int64 and bool.
//
//   nncheck::DType t = nncheck::DType::Float32;
//   std::string_view n = nncheck::dtypeName(t);      // "float32"
//   nncheck::visitCompute(t, [&]<class T>() { /* T is float */ });
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nncheck {

enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

// IEEE 754 binary16, stored as bits; arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(fromFloat(f)) {}
  explicit operator float() const { return toFloat(bits); }
  static uint16_t fromFloat(float f);
  static float toFloat(uint16_t h);
  friend bool operator==(Half a, Half b) { return a.bits == b.bits; }
};

// The names used in messages and command-line flags ("float32", "int64", ...).
std::string_view dtypeName(DType t);
// Inverse of dtypeName; throws std::invalid_argument naming the unknown type.
DType dtypeFromName(std::string_view name);
// Bytes per element; 0 for String.
size_t dtypeSize(DType t);
bool isKnownDType(int32_t onnxValue);
bool isComputeDType(DType t);
bool isFloatDType(DType t);  // float16, float32, float64 (bfloat16 is storage-only)
bool isIntegerDType(DType t);
bool isSignedDType(DType t);
// The compute dtypes in a fixed order.
const std::vector<DType>& computeDTypes();

// The dtype of a C++ element type; any other type fails to compile, naming this function.
template <class T>
constexpr DType dtypeOf() {
  static_assert(sizeof(T) == 0, "nncheck::dtypeOf<T>: T is not an element type of a tensor");
  return DType::Undefined;
}
template <>
constexpr DType dtypeOf<float>() {
  return DType::Float32;
}
template <>
constexpr DType dtypeOf<double>() {
  return DType::Float64;
}
template <>
constexpr DType dtypeOf<Half>() {
  return DType::Float16;
}
template <>
constexpr DType dtypeOf<int8_t>() {
  return DType::Int8;
}
template <>
constexpr DType dtypeOf<uint8_t>() {
  return DType::UInt8;
}
template <>
constexpr DType dtypeOf<int32_t>() {
  return DType::Int32;
}
template <>
constexpr DType dtypeOf<int64_t>() {
  return DType::Int64;
}
template <>
constexpr DType dtypeOf<bool>() {
  return DType::Bool;
}

// Calls f.template operator()<T>() with the C++ type of a compute dtype.
template <class F>
decltype(auto) visitCompute(DType t, F&& f) {
  switch (t) {
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Float16:
      return f.template operator()<Half>();
    case DType::Int8:
      return f.template operator()<int8_t>();
    case DType::UInt8:
      return f.template operator()<uint8_t>();
    case DType::Int32:
      return f.template operator()<int32_t>();
    case DType::Int64:
      return f.template operator()<int64_t>();
    case DType::Bool:
      return f.template operator()<bool>();
    default:
      throw std::invalid_argument("dtype " + std::string(dtypeName(t)) +
                                  " is storage-only: the reference does not compute on it");
  }
}

}  // namespace nncheck
