// What ONNX's operator schemas say of an op: the text a reproducer cites for the expected result
// (the operator's summary, its attributes' descriptions, the page of the spec it is on).
//
//   std::optional<nncheck::ops::OpDoc> d = nncheck::ops::onnxOpDoc("LSTM", "", 17);
//   d->summary;                 // "Computes an one-layer LSTM. ..."
//   d->attributes.at("clip");   // "Cell clip threshold. Clipping bounds ..."
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace nncheck::ops {

struct OpDoc {
  int sinceVersion = 0;                           // the op's version in force at the opset asked
  std::string summary;                            // the schema's doc up to its first blank line
  std::map<std::string, std::string> attributes;  // name -> description
  std::string url;                                // onnx.ai's page of the op at that version
};

// nullopt for an op ONNX's schemas do not hold (at that opset, in that domain).
std::optional<OpDoc> onnxOpDoc(const std::string& op, const std::string& domain, int64_t opset);

}  // namespace nncheck::ops
