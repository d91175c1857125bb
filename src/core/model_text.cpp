#include <sstream>

#include "nncheck/test_case.h"
#include "ops/infer.h"

namespace nncheck {

std::string modelToText(const Model& model) {
  std::ostringstream os;
  const Graph& g = model.graph;
  auto type = [](DType t, const std::optional<Shape>& s) {
    return std::string(dtypeName(t)) + (s ? shapeToString(*s) : std::string("[?]"));
  };
  os << "graph " << (g.name.empty() ? "(unnamed)" : g.name) << " (opset " << model.defaultOpset()
     << ", " << g.nodes.size() << " nodes)\n";
  for (const ValueInfo* in : g.feedInputs())
    os << "  input  " << in->name << ": " << type(in->dtype, in->shape()) << "\n";
  for (const Initializer& i : g.initializers)
    os << "  init   " << i.name << ": " << tensorToString(i.value, 6) << "\n";
  for (const Node& n : g.nodes) {
    os << "  ";
    for (size_t o = 0; o < n.outputs.size(); ++o) os << (o ? ", " : "") << n.outputs[o];
    os << " = " << n.opType << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      os << (i ? ", " : "") << (n.inputs[i].empty() ? "-" : n.inputs[i]);
    os << ")";
    if (!n.attributes.empty()) {
      os << " {";
      for (size_t a = 0; a < n.attributes.size(); ++a)
        os << (a ? ", " : "") << attributeToString(n.attributes[a]);
      os << "}";
    }
    os << "\n";
  }
  for (const ValueInfo& o : g.outputs)
    os << "  output " << o.name << ": " << type(o.dtype, o.shape()) << "\n";
  return os.str();
}

}  // namespace nncheck
