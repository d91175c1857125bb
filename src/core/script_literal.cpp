#include "core/script_literal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>

#include "core/utf8.h"
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

namespace {

// A code point as an escape of a language whose strings are Unicode: "\x.." (Python) or
// "\u...." below U+10000; above it Python's "\U........" or JavaScript's surrogate pair.
std::string unicodeEscape(uint32_t c, bool python) {
  char buf[24];
  if (c < 0x100 && python)
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
  else if (c < 0x10000)
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
  else if (python)
    std::snprintf(buf, sizeof buf, "\\U%08x", c);
  else
    std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
                  0xdc00 + ((c - 0x10000) & 0x3ff));
  return buf;
}

// The escape every language shares for a character, or "" for none.
const char* commonEscape(unsigned char c) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      return "";
  }
}

std::string unicodeLiteral(std::string_view s, bool python) {
  if (const std::optional<size_t> bad = firstInvalidUtf8(s))
    throw Error("text is not UTF-8 (byte " + std::to_string(*bad) + " of " +
                std::to_string(s.size()) + "), which a " + (python ? "Python" : "JavaScript") +
                " string cannot hold: " + escapeInvisible(s));
  std::string out = "\"";
  for (size_t at = 0; at < s.size();) {
    const CodePoint c = decodeUtf8(s, at);
    at += c.length;
    if (const char* e = commonEscape(static_cast<unsigned char>(c.value)); c.value < 0x80 && *e)
      out += e;
    else if (c.value >= 0x20 && c.value < 0x7f)
      out += static_cast<char>(c.value);
    else
      out += unicodeEscape(c.value, python);
  }
  return out + "\"";
}

template <class Literal>
std::string listLiteral(const std::vector<std::string>& items, Literal literal) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s.append(i ? ", " : "").append(literal(items[i]));
  return s + "]";
}

// The lines of `text` (split at LF) as one literal a line, each but the last keeping its LF.
template <class Literal>
std::string textLiteral(std::string_view text, const std::string& indent, Literal literal) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size() - 1) + 1;
    out += indent + literal(text.substr(at, end - at)) + "\n";
    at = end;
  }
  return out.empty() ? indent + literal("") + "\n" : out;
}

std::string comment(std::string_view text, const std::string& prefix, bool cpp) {
  std::string out;
  // Lines as getline splits them: a last LF ends the last line, and starts none.
  for (size_t at = 0; at < text.size() || out.empty();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string line = prefix + escapeInvisible(text.substr(at, end - at));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (cpp) {
      // "??/" reads as a backslash where trigraphs are read; a backslash last splices lines.
      for (size_t q = line.find("??"); q != std::string::npos; q = line.find("??", q + 3))
        line.replace(q, 2, "?\\?");
      if (line.back() == '\\') line.replace(line.size() - 1, 1, "\\x5c");
    }
    out += line + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace

std::string pythonStringLiteral(std::string_view s) { return unicodeLiteral(s, true); }
std::string javascriptStringLiteral(std::string_view s) { return unicodeLiteral(s, false); }

std::string cppStringLiteral(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == 0)
      throw Error("text holds a NUL, which would end a C++ string: " + escapeInvisible(s));
    if (const char* e = commonEscape(c); *e) {
      out += e;
    } else if (c == '?') {
      out += "\\?";  // no trigraph
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];  // octal: at most three digits, so the next character is never taken in
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

std::string pythonListLiteral(const std::vector<std::string>& items) {
  return listLiteral(items, pythonStringLiteral);
}
std::string javascriptListLiteral(const std::vector<std::string>& items) {
  return listLiteral(items, javascriptStringLiteral);
}

std::string pythonTextLiteral(std::string_view text, const std::string& indent) {
  return "(\n" + textLiteral(text, indent, pythonStringLiteral) + ")";
}
std::string cppTextLiteral(std::string_view text, const std::string& indent) {
  std::string lines = textLiteral(text, indent, cppStringLiteral);
  lines.pop_back();  // the statement's end is the caller's
  return lines;
}

std::string pythonComment(std::string_view text, const std::string& indent) {
  return comment(text, indent + "# ", false);
}
std::string javascriptComment(std::string_view text, const std::string& indent) {
  return comment(text, indent + "// ", false);
}
std::string cppComment(std::string_view text, const std::string& indent) {
  return comment(text, indent + "// ", true);
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
           elements(t.size(), indent,
                    [&](int64_t i) { return pythonStringLiteral(t.strings()[i]); }) +
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
             elements(t.size(), indent,
                      [&](int64_t i) { return javascriptStringLiteral(t.strings()[i]); }) +
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
