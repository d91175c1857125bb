#include "nncheck/dtype.h"

#include <array>
#include <bit>
#include <cmath>

#include "nncheck/error.h"

namespace nncheck {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, 16> kInfo{{
    {DType::Float32, "float32", 4},
    {DType::UInt8, "uint8", 1},
    {DType::Int8, "int8", 1},
    {DType::UInt16, "uint16", 2},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},
    {DType::String, "string", 0},
    {DType::Bool, "bool", 1},
    {DType::Float16, "float16", 2},
    {DType::Float64, "float64", 8},
    {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},
    {DType::Complex64, "complex64", 8},
    {DType::Complex128, "complex128", 16},
    {DType::BFloat16, "bfloat16", 2},
}};

const DTypeInfo* find(DType t) {
  for (const auto& i : kInfo)
    if (i.type == t) return &i;
  return nullptr;
}

}  // namespace

// Round-to-nearest-even conversion, including subnormals, infinities and NaN.
uint16_t Half::fromFloat(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // Inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u)  // rounds to >= 65520: overflow to Inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    // Scale so that the half subnormal unit (2^-24) becomes 1, then round to nearest even.
    float scaled = std::bit_cast<float>(absx) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return static_cast<uint16_t>(sign | h);
}

float Half::toFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

std::string_view dtypeName(DType t) {
  if (const auto* i = find(t)) return i->name;
  return "undefined";
}

DType dtypeFromName(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  if (name == "float") return DType::Float32;
  if (name == "double") return DType::Float64;
  throw Error("unknown dtype '" + std::string(name) +
              "' (expected e.g. float32, float64, float16, int8, uint8, int32, "
              "int64, bool)");
}

size_t dtypeSize(DType t) {
  if (const auto* i = find(t)) return i->size;
  throw Error("dtype " + std::to_string(static_cast<int>(t)) + " is not an ONNX type");
}

bool isKnownDType(int32_t v) { return find(static_cast<DType>(v)) != nullptr; }

bool isComputeDType(DType t) {
  switch (t) {
    case DType::Float32:
    case DType::Float64:
    case DType::Float16:
    case DType::Int8:
    case DType::UInt8:
    case DType::Int32:
    case DType::Int64:
    case DType::Bool:
      return true;
    default:
      return false;
  }
}

bool isFloatDType(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16;
}

bool isIntegerDType(DType t) {
  switch (t) {
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:
    case DType::Int32:
    case DType::UInt32:
    case DType::Int64:
    case DType::UInt64:
      return true;
    default:
      return false;
  }
}

bool isSignedDType(DType t) {
  return isFloatDType(t) || t == DType::Int8 || t == DType::Int16 || t == DType::Int32 ||
         t == DType::Int64 || t == DType::BFloat16;
}

const std::vector<DType>& computeDTypes() {
  static const std::vector<DType> all{DType::Float32, DType::Float64, DType::Float16, DType::Int8,
                                      DType::UInt8,   DType::Int32,   DType::Int64,   DType::Bool};
  return all;
}

}  // namespace nncheck
