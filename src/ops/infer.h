// Concrete per-node checking: resolves a node's spec and schema version, checks dtypes and
// attribute values against the spec, and runs the shape rule with int64 dims.
//
//   const OpSpec& spec = specFor(node, model.defaultOpset());   // throws Unsupported
//   auto outs = inferNode(spec, node, facts);                    // throws ShapeError
#pragma once

#include <map>
#include <memory>

#include "ops/op_spec.h"

namespace nncheck::ops {

struct TensorType {
  DType dtype = DType::Undefined;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};

// What is known about one input of a node.
struct InputFacts {
  bool present = false;
  DType dtype = DType::Undefined;
  Shape shape;
  const Tensor* value = nullptr;  // known contents (initializer, constant or runtime value)
  std::shared_ptr<const Tensor> folded = nullptr;  // holds `value` when inference computed it
};

// The ONNX schema version (since_version) that `opset` selects for the node's op, or 0
// when ONNX has no such op.
int64_t schemaVersion(const Node& node, int64_t opset);

// The spec of the node's op at this opset; throws Unsupported when the op is not registered
// or the selected schema version predates the spec's semantics.
const OpSpec& specFor(const Node& node, int64_t opset);

// The concrete rule of a node with these inputs (no checks run): lets a kernel reuse the
// generic geometry of its shape rule (pads, windows) instead of restating it.
Rule<int64_t> concreteRule(const OpSpec& spec, const Node& node,
                           const std::vector<InputFacts>& inputs);
Rule<int64_t> concreteRule(const KernelCall& k);

// Checks dtypes and attribute values against the spec (Unsupported for values the spec
// declares unsupported; Error for inconsistent ones), then runs the concrete shape rule.
std::vector<TensorType> inferNode(const OpSpec& spec, const Node& node,
                                  const std::vector<InputFacts>& inputs);

// Records a node's outputs, of the types inferNode gave, in `facts`, with their contents where
// they are known before running: a Constant's value, Shape and Size of known shapes, and small
// outputs (shape operands, in practice) of nodes whose inputs' contents are all known. Exporters
// compute shape operands so (Shape -> Gather -> Concat -> Reshape), and ONNX's functions too.
void recordOutputs(const OpSpec& spec, const Node& node, const std::vector<InputFacts>& inputs,
                   const std::vector<TensorType>& outputs,
                   std::map<std::string, InputFacts>& facts);

// What is known of every value of the model: graph inputs as declared, initializers with their
// contents (pointers into `model`, which must outlive the result), node outputs by the rules in
// graph order (with contents as recordOutputs knows them). Throws like inferNode.
std::map<std::string, InputFacts> inferModel(const Model& model);

// The same for any graph, a body included, in `scope`: what is known of the values of its
// enclosing graphs, which it may capture. Inputs without a full declared shape have shape {}.
std::map<std::string, InputFacts> inferGraph(const Graph& g,
                                             std::map<std::string, InputFacts> scope,
                                             int64_t opset);

// inferModel for an engine that compiles static shapes: a shape operand not known before running
// (a graph input) is Unsupported, naming `engine` and the node.
std::map<std::string, InputFacts> inferStaticModel(const Model& model, const std::string& engine);

// Recomputes every graph output's declared type with inferModel, after an edit changed shapes;
// returns the facts. Throws like inferNode when a node no longer holds.
std::map<std::string, InputFacts> refreshOutputTypes(Model& model);

// Every Indices operand of the model held by an initializer or by `inputs` made valid for the
// shapes and attributes the model has now (after a mutation or a shrink changed them). Throws
// like inferModel.
void makeIndexOperandsValid(Model& model, TensorMap& inputs);

}  // namespace nncheck::ops
