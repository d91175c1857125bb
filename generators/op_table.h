// The ops a generator may use under a config, with each input's admissible dtypes: the
// intersection of the op spec's types, ONNX's type constraints at the config's opset, and (for
// data inputs) the config's dtypes.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "nncheck/generator.h"
#include "ops/op_spec.h"

namespace nncheck::gen {

struct OpEntry {
  const ops::OpSpec* spec = nullptr;
  double weight = 1;
  // Per type variable of the spec (same order as spec->typeVars): admissible dtypes.
  std::vector<std::vector<DType>> typeVarDTypes;
  // Attributes ONNX's schema knows at the opset (later versions add some, like allowzero).
  std::vector<std::string> knownAttributes;
  // Per spec input: ONNX's type parameter at the opset ("T"), which may tie inputs that the
  // spec's newest version leaves apart (BatchNormalization-14's scale is X's type, -15's not).
  std::vector<std::string> onnxTypeParams;
  const std::string& onnxTypeParam(size_t input) const {
    return onnxTypeParams[std::min(input, onnxTypeParams.size() - 1)];
  }
  bool knowsAttribute(const std::string& name) const;
  const std::vector<DType>& dtypesOfInput(size_t i) const;
  size_t typeVarIndex(size_t input) const;
};

// Whether a value of this shape fits the config: rank, dims at least 1, element count.
inline bool shapeWithinLimits(const GeneratorConfig& cfg, const Shape& s) {
  if (static_cast<int64_t>(s.size()) > cfg.maxRank) return false;
  for (int64_t d : s)
    if (d < 1) return false;
  return elementCount(s) <= cfg.maxElements;
}

// If, Loop, Scan: ops with graph attributes, which the generator grows bodies for itself.
inline bool hasSubgraphs(const ops::OpSpec& spec) {
  return std::any_of(spec.attrs.begin(), spec.attrs.end(),
                     [](const ops::AttrSpec& a) { return a.kind == Attribute::Kind::Graph; });
}

// Throws nncheck::Error for a bad config (see validateConfig).
std::vector<OpEntry> buildOpTable(const GeneratorConfig& cfg);

}  // namespace nncheck::gen
