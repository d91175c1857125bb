#include "ops/upgrade.h"

#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "core/onnx_proto.h"
#include "ops/infer.h"

namespace nncheck::ops {
namespace {

// A node of this graph, or of a body inside it, whose op version predates nncheck's op.
bool holdsAnOlderVersion(const Graph& g, int64_t opset) {
  for (const Node& n : g.nodes) {
    if (!n.domain.empty() && n.domain != "ai.onnx") continue;
    const OpSpec* spec = Registry::instance().find(n.opType);
    const int64_t v = schemaVersion(n, opset);
    if (spec && v > 0 && v < spec->minVersion) return true;
    for (const Attribute& a : n.attributes)
      for (const Graph& body : a.graphs)
        if (holdsAnOlderVersion(body, opset)) return true;
  }
  return false;
}

}  // namespace

std::string upgradeOldOpset(Model& model) {
  const int64_t from = model.defaultOpset();
  if (from < 1 || from >= kUpgradeOpset || !holdsAnOlderVersion(model.graph, from)) return "";
  const std::string versions =
      " from opset " + std::to_string(from) + " to " + std::to_string(kUpgradeOpset);
  try {
    // The converter's adapters read the shapes of the values they rewrite (a Gemm-6 whose input
    // another Gemm computes): ONNX's shape inference records them first.
    onnx::ModelProto proto = modelToProto(model);
    onnx::shape_inference::InferShapes(proto);
    model = modelFromProto(
        onnx::version_conversion::ConvertVersion(proto, static_cast<int>(kUpgradeOpset)));
    return "upgraded" + versions + " by ONNX's version converter";
  } catch (const std::exception& e) {  // no adapter for an op: its version is named when it runs
    return "ONNX's version converter cannot upgrade it" + versions + ": " + e.what();
  }
}

}  // namespace nncheck::ops
