// Printing a test case and cutting out the part that computes one node.
#include "nncheck/test_case.h"

#include <cstdio>
#include <set>
#include <sstream>

#include "core/utf8.h"

namespace nncheck {

std::string printable(std::string_view text) { return escapeInvisible(text); }

namespace {

// One graph's lines at `indent`; a node's subgraphs follow it, indented further.
void graphToText(std::ostringstream& os, const Graph& g, const std::string& indent) {
  auto type = [](DType t, const std::optional<Shape>& s) {
    return std::string(dtypeName(t)) + (s ? shapeToString(*s) : std::string("[?]"));
  };
  for (const ValueInfo* in : g.feedInputs())
    os << indent << "input  " << printable(in->name) << ": " << type(in->dtype, in->shape())
       << "\n";
  for (const Initializer& i : g.initializers)
    os << indent << "init   " << printable(i.name) << ": " << tensorToString(i.value, 6) << "\n";
  for (const Node& n : g.nodes) {
    os << indent;
    for (size_t o = 0; o < n.outputs.size(); ++o) os << (o ? ", " : "") << printable(n.outputs[o]);
    os << " = " << printable(n.opType) << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      os << (i ? ", " : "") << (n.inputs[i].empty() ? "-" : printable(n.inputs[i]));
    os << ")";
    if (!n.attributes.empty()) {
      os << " {";
      for (size_t a = 0; a < n.attributes.size(); ++a)
        os << (a ? ", " : "") << printable(attributeToString(n.attributes[a]));
      os << "}";
    }
    os << "\n";
    for (const Attribute& a : n.attributes)
      for (const Graph& sub : a.graphs) {
        os << indent << "  " << printable(a.name) << ":\n";
        graphToText(os, sub, indent + "    ");
      }
  }
  for (const ValueInfo& o : g.outputs)
    os << indent << "output " << printable(o.name) << ": " << type(o.dtype, o.shape()) << "\n";
}

}  // namespace

std::string modelToText(const Model& model) {
  std::ostringstream os;
  const Graph& g = model.graph;
  os << "graph " << (g.name.empty() ? "(unnamed)" : printable(g.name)) << " (opset "
     << model.defaultOpset() << ", " << g.nodes.size() << " nodes)\n";
  graphToText(os, g, "  ");
  return os.str();
}

TestCase subModelFor(const TestCase& tc, size_t node, const TensorMap& values) {
  const Graph& g = tc.model.graph;
  const std::vector<std::string> reads = valuesRead(g.nodes[node]);
  std::set<std::string> needed(reads.begin(), reads.end());
  std::vector<bool> keep(g.nodes.size(), false);
  keep[node] = true;
  for (size_t i = node; i-- > 0;) {
    bool produces = false;
    for (const std::string& out : g.nodes[i].outputs) produces |= needed.count(out) > 0;
    if (!produces) continue;
    keep[i] = true;
    for (const std::string& in : valuesRead(g.nodes[i])) needed.insert(in);
  }
  TestCase sub = tc;
  Graph& s = sub.model.graph;
  s.nodes.clear();
  for (size_t i = 0; i <= node; ++i)
    if (keep[i]) s.nodes.push_back(g.nodes[i]);
  std::erase_if(s.inputs, [&](const ValueInfo& v) { return !needed.count(v.name); });
  std::erase_if(s.initializers, [&](const Initializer& v) { return !needed.count(v.name); });
  std::erase_if(s.valueInfos, [&](const ValueInfo& v) { return !needed.count(v.name); });
  std::erase_if(sub.inputs, [&](const auto& kv) { return !needed.count(kv.first); });
  s.outputs.clear();
  for (const std::string& out : g.nodes[node].outputs)
    if (auto it = values.find(out); !out.empty() && it != values.end())
      s.outputs.push_back(ValueInfo::tensor(out, it->second.dtype(), it->second.shape()));
  return sub;
}

}  // namespace nncheck
