#include "ops/op_docs.h"

#include <onnx/defs/schema.h>

namespace nncheck::ops {

std::optional<OpDoc> onnxOpDoc(const std::string& op, const std::string& domain, int64_t opset) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), domain);
  if (!schema) return std::nullopt;
  OpDoc d;
  d.sinceVersion = schema->SinceVersion();
  const std::string doc = schema->doc() ? schema->doc() : "";
  // The first paragraph, whitespace at its ends dropped.
  const size_t start = doc.find_first_not_of(" \n");
  if (start != std::string::npos) {
    const size_t end = doc.find("\n\n", start);
    d.summary = doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  for (const auto& [name, attribute] : schema->attributes())
    d.attributes[name] = attribute.description;
  // onnx.ai's pages: onnx__LSTM.html for the latest version, onnx__LSTM.html#lstm-14 for one.
  std::string anchor = op;
  for (char& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  d.url = "https://onnx.ai/onnx/operators/onnx__" + op + ".html#" + anchor + "-" +
          std::to_string(d.sinceVersion);
  return d;
}

}  // namespace nncheck::ops
