#include "core/script_literal.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "nncheck/error.h"

namespace nncheck {

namespace {

// The elements, twelve to a line, each line after the first indented by `indent`.
template <class Element>
std::string elements(int64_t n, const std::string& indent, Element element) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) {
    if (i) out += i % 12 == 0 ? ",\n" + indent : ", ";
    out += element(i);
  }
  return out;
}

std::string pythonElement(const Tensor& t, int64_t i) {
  const DType d = t.dtype();
  if (isFloatDType(d)) {
    const double v = t.toDouble(i);
    if (std::isnan(v)) return "np.nan";
    if (std::isinf(v)) return v > 0 ? "np.inf" : "-np.inf";
    return floatLiteral(v, d);
  }
  if (d == DType::Bool) return t.toInt64(i) ? "True" : "False";
  return std::to_string(t.toInt64(i));
}

}  // namespace

std::string floatLiteral(double v, DType d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, d == DType::Float64 ? "%.17g" : "%.9g", v);
  return buf;
}

std::string quotedLiteral(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string quotedListLiteral(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s.append(i ? "," : "").append(quotedLiteral(items[i]));
  return s + "]";
}

std::string dimsLiteral(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string pythonArrayLiteral(const Tensor& t, const std::string& indent) {
  const DType d = t.dtype();
  if (d == DType::String)
    return "np.array([" +
           elements(t.size(), indent, [&](int64_t i) { return quotedLiteral(t.strings()[i]); }) +
           "], dtype=object).reshape(" + dimsLiteral(t.shape()) + ")";
  if (d == DType::BFloat16) throw Error("numpy has no bfloat16: no Python reproducer for it");
  const std::string type = d == DType::Bool ? "np.bool_" : "np." + std::string(dtypeName(d));
  return "np.array([" + elements(t.size(), indent, [&](int64_t i) { return pythonElement(t, i); }) +
         "], dtype=" + type + ").reshape(" + dimsLiteral(t.shape()) + ")";
}

std::string javascriptTensorLiteral(const Tensor& t, const std::string& indent) {
  const DType d = t.dtype();
  std::string array, type = std::string(dtypeName(d));
  std::function<std::string(int64_t)> element = [&](int64_t i) {
    return std::to_string(t.toInt64(i));
  };
  switch (d) {
    case DType::Float32:
    case DType::Float64:
      array = d == DType::Float32 ? "Float32Array" : "Float64Array";
      element = [&](int64_t i) {
        const double v = t.toDouble(i);
        return std::isnan(v)   ? std::string("NaN")
               : std::isinf(v) ? std::string(v > 0 ? "Infinity" : "-Infinity")
                               : floatLiteral(v, d);
      };
      break;
    case DType::Float16:  // ORT takes float16 as its bits
      array = "Uint16Array";
      element = [&](int64_t i) {
        uint16_t bits;
        std::memcpy(&bits, t.bytes().data() + 2 * i, 2);
        return std::to_string(bits);
      };
      break;
    case DType::Int64:
    case DType::UInt64:
      array = d == DType::Int64 ? "BigInt64Array" : "BigUint64Array";
      element = [&](int64_t i) { return std::to_string(t.toInt64(i)) + "n"; };
      break;
    case DType::Int32:
      array = "Int32Array";
      break;
    case DType::Int16:
      array = "Int16Array";
      break;
    case DType::Int8:
      array = "Int8Array";
      break;
    case DType::UInt32:
      array = "Uint32Array";
      break;
    case DType::UInt16:
      array = "Uint16Array";
      break;
    case DType::UInt8:
    case DType::Bool:
      array = "Uint8Array";
      break;
    case DType::String:
      return "{type: 'string', dims: " + dimsLiteral(t.shape()) + ", data: [" +
             elements(t.size(), indent, [&](int64_t i) { return quotedLiteral(t.strings()[i]); }) +
             "]}";
    default:
      throw Error("no JavaScript tensor of " + type + " in a reproducer");
  }
  return "{type: '" + type + "', dims: " + dimsLiteral(t.shape()) + ", data: " + array + ".from([" +
         elements(t.size(), indent, element) + "])}";
}

std::string cppTensorLiteral(const Tensor& t, const std::string& indent) {
  if (t.dtype() == DType::String) throw Error("no C++ tensor of strings in a reproducer");
  if (!isFloatDType(t.dtype()))  // the script's values are doubles: integers that are one exactly
    for (int64_t i = 0; i < t.size(); ++i) {
      const int64_t v = t.toInt64(i);
      const double d = static_cast<double>(v);
      if (d >= 9223372036854775808.0 || static_cast<int64_t>(d) != v)  // 2^63: past int64
        throw Error("the C++ reproducer holds values as doubles, and " + std::to_string(v) +
                    " is not one");
    }
  std::string dims = dimsLiteral(t.shape());
  dims.front() = '{';
  dims.back() = '}';
  return "{\"" + std::string(dtypeName(t.dtype())) + "\", " + dims + ", {" +
         elements(t.size(), indent,
                  [&](int64_t i) {
                    const double v = t.toDouble(i);
                    return std::isnan(v)   ? std::string("NAN")
                           : std::isinf(v) ? std::string(v > 0 ? "INFINITY" : "-INFINITY")
                                           : floatLiteral(v, DType::Float64);
                  }) +
         "}}";
}

}  // namespace nncheck
