// The graph IR: typed values, nodes with attributes, graph inputs, initializers (weights)
// and outputs, nodes in topological order. It mirrors ONNX's ModelProto closely enough to
// round-trip it without loss; parts the IR does not model (sequence types, model-local
// functions) are kept as serialized protobuf bytes. Control flow (If, Loop, Scan) holds its
// bodies as graph attributes, whose nodes may read values of the enclosing graphs.
//
//   nncheck::Model m;
//   m.opsets = {{"", 14}};
//   m.graph.inputs.push_back(nncheck::ValueInfo::tensor("x", nncheck::DType::Float32, {2, 3}));
//   m.graph.nodes.push_back(nncheck::Node::make("Relu", {"x"}, {"y"}));
//   m.graph.outputs.push_back(nncheck::ValueInfo::tensor("y", nncheck::DType::Float32, {2, 3}));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nncheck/tensor.h"

namespace nncheck {

struct Dim {
  std::optional<int64_t> value;  // known size
  std::string param;             // symbolic name (dim_param), when value is unknown
  std::string denotation;
  bool operator==(const Dim&) const = default;
};

// The type of a graph input, output or intermediate value.
struct ValueInfo {
  std::string name;
  DType dtype = DType::Undefined;
  std::optional<std::vector<Dim>> dims;  // nullopt: rank unknown
  std::string opaqueType;  // serialized TypeProto when not a tensor type (sequence, map, ...)
  std::string docString;

  static ValueInfo tensor(std::string name, DType dtype, const Shape& shape);
  bool isTensor() const { return opaqueType.empty(); }
  // The shape when every dim is known.
  std::optional<Shape> shape() const;
  bool operator==(const ValueInfo&) const = default;
};

struct Graph;

struct Attribute {
  enum class Kind { Int, Float, String, Tensor, Ints, Floats, Strings, Graph, Opaque };
  std::string name;
  Kind kind = Kind::Int;
  int64_t i = 0;
  float f = 0;
  std::string s;
  Tensor t;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  // Kind::Graph: the one subgraph (a vector only because Graph is incomplete here).
  std::vector<Graph> graphs;
  std::string opaque;  // serialized AttributeProto of a kind the IR does not model
  std::string docString;

  static Attribute ofInt(std::string name, int64_t v);
  static Attribute ofFloat(std::string name, float v);
  static Attribute ofString(std::string name, std::string v);
  static Attribute ofInts(std::string name, std::vector<int64_t> v);
  static Attribute ofFloats(std::string name, std::vector<float> v);
  static Attribute ofTensor(std::string name, Tensor v);
  static Attribute ofGraph(std::string name, Graph g);
  const Graph& graph() const;  // Kind::Graph only
  // Floats compare by their bits: an attribute holding NaN is the same attribute again.
  bool operator==(const Attribute& o) const;
};

std::string_view attributeKindName(Attribute::Kind k);
// "alpha=0.2", "pads=[1, 1, 0, 0]", "to=1"
std::string attributeToString(const Attribute& a);

struct Node {
  std::string opType;
  std::string name;
  std::string domain;               // "" is ai.onnx
  std::vector<std::string> inputs;  // "" marks an absent optional input
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  std::string docString;

  static Node make(std::string opType, std::vector<std::string> inputs,
                   std::vector<std::string> outputs, std::string name = "");
  const Attribute* attribute(std::string_view name) const;
  bool hasInput(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  // The subgraphs of its graph attributes (If's branches, Loop's and Scan's bodies).
  std::vector<const Graph*> subgraphs() const;
  // "Conv 'conv1'" or "Conv #3" when unnamed, for messages.
  std::string label(size_t index) const;
  bool operator==(const Node&) const = default;
};

struct Initializer {
  std::string name;
  Tensor value;
  std::string docString;
  bool operator==(const Initializer&) const = default;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;  // topological order
  std::vector<ValueInfo> inputs;
  std::vector<Initializer> initializers;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> valueInfos;  // types of intermediate values
  std::string docString;
  std::string
      opaque;  // a serialized GraphProto of the fields not modelled (sparse initializers, ...)

  const Initializer* initializer(std::string_view name) const;
  // Graph inputs that are not also initializers: the values a caller must feed.
  std::vector<const ValueInfo*> feedInputs() const;
  bool operator==(const Graph&) const = default;
};

// Every value a node reads: its inputs, then the values of enclosing graphs its subgraphs use
// (captured by name, as ONNX's scoping allows), each once. Dependencies follow these.
std::vector<std::string> valuesRead(const Node& node);

// The values a graph uses but does not define (by inputs, initializers or nodes, at any depth):
// those it captures from enclosing graphs.
std::vector<std::string> capturedValues(const Graph& g);

struct OpsetImport {
  std::string domain;  // "" or "ai.onnx" is the default domain
  int64_t version = 0;
  bool operator==(const OpsetImport&) const = default;
};

struct Model {
  int64_t irVersion = 8;
  std::vector<OpsetImport> opsets;
  std::string producerName;
  std::string producerVersion;
  std::string domain;
  int64_t modelVersion = 0;
  std::string docString;
  std::vector<std::pair<std::string, std::string>> metadata;
  Graph graph;
  std::string
      opaque;  // a serialized ModelProto of the fields not modelled (functions, training info)

  // Version of the default (ai.onnx) domain; 0 when not imported.
  int64_t defaultOpset() const;
  bool operator==(const Model&) const = default;
};

}  // namespace nncheck
