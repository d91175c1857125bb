#include "nncheck/graph.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "nncheck/error.h"

namespace nncheck {

ValueInfo ValueInfo::tensor(std::string name, DType dtype, const Shape& shape) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.dims.emplace();
  for (int64_t d : shape) v.dims->push_back(Dim{d, {}, {}});
  return v;
}

std::optional<Shape> ValueInfo::shape() const {
  if (!dims) return std::nullopt;
  Shape s;
  for (const Dim& d : *dims) {
    if (!d.value) return std::nullopt;
    s.push_back(*d.value);
  }
  return s;
}

namespace {
bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
}  // namespace

bool Attribute::operator==(const Attribute& o) const {
  return name == o.name && kind == o.kind && i == o.i && sameBits(f, o.f) && s == o.s && t == o.t &&
         ints == o.ints &&
         std::equal(floats.begin(), floats.end(), o.floats.begin(), o.floats.end(), sameBits) &&
         strings == o.strings && graphs == o.graphs && opaque == o.opaque &&
         docString == o.docString;
}

Attribute Attribute::ofGraph(std::string name, Graph g) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::Graph;
  a.graphs.push_back(std::move(g));
  return a;
}

const Graph& Attribute::graph() const {
  if (kind != Kind::Graph || graphs.size() != 1)
    throw Error("attribute '" + name + "' is " + std::string(attributeKindName(kind)) +
                ", not a graph");
  return graphs[0];
}

Attribute Attribute::ofInt(std::string name, int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::Int;
  a.i = v;
  return a;
}

Attribute Attribute::ofFloat(std::string name, float v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::Float;
  a.f = v;
  return a;
}

Attribute Attribute::ofString(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::String;
  a.s = std::move(v);
  return a;
}

Attribute Attribute::ofInts(std::string name, std::vector<int64_t> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::Ints;
  a.ints = std::move(v);
  return a;
}

Attribute Attribute::ofFloats(std::string name, std::vector<float> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::Floats;
  a.floats = std::move(v);
  return a;
}

Attribute Attribute::ofTensor(std::string name, Tensor v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Kind::Tensor;
  a.t = std::move(v);
  return a;
}

std::string_view attributeKindName(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::Int:
      return "int";
    case Attribute::Kind::Float:
      return "float";
    case Attribute::Kind::String:
      return "string";
    case Attribute::Kind::Tensor:
      return "tensor";
    case Attribute::Kind::Ints:
      return "ints";
    case Attribute::Kind::Floats:
      return "floats";
    case Attribute::Kind::Strings:
      return "strings";
    case Attribute::Kind::Graph:
      return "graph";
    case Attribute::Kind::Opaque:
      return "opaque";
  }
  return "?";
}

std::string attributeToString(const Attribute& a) {
  std::ostringstream os;
  os << a.name << '=';
  auto list = [&os](const auto& xs, auto&& put) {
    os << '[';
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i) os << ", ";
      put(xs[i]);
    }
    os << ']';
  };
  switch (a.kind) {
    case Attribute::Kind::Int:
      os << a.i;
      break;
    case Attribute::Kind::Float:
      os << a.f;
      break;
    case Attribute::Kind::String:
      os << '"' << a.s << '"';
      break;
    case Attribute::Kind::Tensor:
      os << tensorToString(a.t);
      break;
    case Attribute::Kind::Ints:
      list(a.ints, [&](int64_t v) { os << v; });
      break;
    case Attribute::Kind::Floats:
      list(a.floats, [&](float v) { os << v; });
      break;
    case Attribute::Kind::Strings:
      list(a.strings, [&](const std::string& v) { os << '"' << v << '"'; });
      break;
    case Attribute::Kind::Graph:
      os << "<graph";
      if (a.graphs.size() == 1)
        os << (a.graphs[0].name.empty() ? "" : " '" + a.graphs[0].name + "'") << ", "
           << a.graphs[0].nodes.size() << " nodes";
      os << ">";
      break;
    case Attribute::Kind::Opaque:
      os << "<opaque>";
      break;
  }
  return os.str();
}

Node Node::make(std::string opType, std::vector<std::string> inputs,
                std::vector<std::string> outputs, std::string name) {
  Node n;
  n.opType = std::move(opType);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.name = std::move(name);
  return n;
}

const Attribute* Node::attribute(std::string_view name) const {
  for (const Attribute& a : attributes)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<const Graph*> Node::subgraphs() const {
  std::vector<const Graph*> out;
  for (const Attribute& a : attributes)
    for (const Graph& g : a.graphs) out.push_back(&g);
  return out;
}

std::vector<std::string> capturedValues(const Graph& g) {
  std::set<std::string> defined;
  for (const ValueInfo& v : g.inputs) defined.insert(v.name);
  for (const Initializer& i : g.initializers) defined.insert(i.name);
  std::vector<std::string> out;
  std::set<std::string> listed;
  for (const Node& n : g.nodes) {
    for (const std::string& name : valuesRead(n))
      if (!defined.count(name) && listed.insert(name).second) out.push_back(name);
    defined.insert(n.outputs.begin(), n.outputs.end());
  }
  for (const ValueInfo& v : g.outputs)  // an output may pass an outer value through
    if (!defined.count(v.name) && listed.insert(v.name).second) out.push_back(v.name);
  return out;
}

std::vector<std::string> valuesRead(const Node& node) {
  std::vector<std::string> out;
  std::set<std::string> listed;
  for (const std::string& name : node.inputs)
    if (!name.empty() && listed.insert(name).second) out.push_back(name);
  for (const Graph* g : node.subgraphs())
    for (const std::string& name : capturedValues(*g))
      if (listed.insert(name).second) out.push_back(name);
  return out;
}

std::string Node::label(size_t index) const {
  if (!name.empty()) return opType + " '" + name + "'";
  return opType + " #" + std::to_string(index);
}

const Initializer* Graph::initializer(std::string_view name) const {
  for (const Initializer& i : initializers)
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<const ValueInfo*> Graph::feedInputs() const {
  std::vector<const ValueInfo*> out;
  for (const ValueInfo& v : inputs)
    if (!initializer(v.name)) out.push_back(&v);
  return out;
}

int64_t Model::defaultOpset() const {
  for (const OpsetImport& o : opsets)
    if (o.domain.empty() || o.domain == "ai.onnx") return o.version;
  return 0;
}

}  // namespace nncheck
