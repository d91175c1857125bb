// Control flow: If, Loop and Scan. Their bodies are graph attributes that the interpreter runs
// (KernelCall::runSubgraph) in the scope of the graph the node is in. Output types come from the
// bodies' declared output types, which must give every dim (else the node is Unsupported); the
// interpreter checks each body run against them. Generators grow these nodes themselves
// (GeneratorConfig::controlFlow), bodies included.
#include "ops/control_flow.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/kernels.h"

namespace nncheck::ops {

const Graph& subgraph(const Node& node, const char* attr) {
  const Attribute* a = node.attribute(attr);
  if (!a) throw ShapeError(node.opType + " '" + node.name + "': no '" + attr + "' attribute");
  return a->graph();
}

namespace {

// A subgraph value's declared dtype and dims, as the rule's integers.
template <class R>
auto declaredType(R& r, const ValueInfo& v, const std::string& what) {
  using I = std::decay_t<decltype(r.lit(0))>;
  const std::optional<Shape> shape = v.shape();
  // Output types come from the declarations alone: bodies are not inferred yet.
  if (!v.isTensor() || v.dtype == DType::Undefined || !shape)
    throw Unsupported("subgraph", r.context() + ": " + what + " '" + v.name +
                                      "' does not declare a tensor type with every dim");
  std::vector<I> dims;
  for (int64_t d : *shape) dims.push_back(r.lit(d));
  return std::make_pair(v.dtype, dims);
}

// The element block of `t` at `index` along `axis`, without that axis.
Tensor sliceAt(const Tensor& t, int64_t axis, int64_t index) {
  Shape s = t.shape();
  const int64_t outer = elementCount(Shape(s.begin(), s.begin() + axis));
  const int64_t inner = elementCount(Shape(s.begin() + axis + 1, s.end()));
  const int64_t n = s[static_cast<size_t>(axis)];
  s.erase(s.begin() + axis);
  Tensor out(t.dtype(), s);
  const size_t width = static_cast<size_t>(inner) * dtypeSize(t.dtype());
  for (int64_t o = 0; o < outer; ++o)
    if (width)
      std::memcpy(out.bytes().data() + static_cast<size_t>(o) * width,
                  t.bytes().data() + static_cast<size_t>(o * n + index) * width, width);
  return out;
}

// The tensors (all of one type) stacked along a new axis `axis`.
Tensor stack(const std::vector<Tensor>& parts, int64_t axis, DType dtype, const Shape& part) {
  Shape s = part;
  s.insert(s.begin() + axis, static_cast<int64_t>(parts.size()));
  Tensor out(dtype, s);
  const int64_t outer = elementCount(Shape(part.begin(), part.begin() + axis));
  const size_t width =
      static_cast<size_t>(elementCount(Shape(part.begin() + axis, part.end()))) * dtypeSize(dtype);
  for (size_t k = 0; k < parts.size(); ++k)
    for (int64_t o = 0; o < outer && width; ++o)
      std::memcpy(out.bytes().data() + (static_cast<size_t>(o) * parts.size() + k) * width,
                  parts[k].bytes().data() + static_cast<size_t>(o) * width, width);
  return out;
}

// Loop's trip count and condition are read as values when known (AxesValues): its scan outputs'
// length is the trip count.
void loopRule(auto& r) {
  const Graph& body = subgraph(r.node(), "body");
  const size_t carried = r.inputCount() > 2 ? r.inputCount() - 2 : 0;
  r.check(body.inputs.size() == carried + 2,
          "the body takes the iteration number, the condition and each loop-carried value");
  r.check(body.outputs.size() >= carried + 1,
          "the body gives the condition and each loop-carried value, then any scan outputs");
  if (r.has(0)) r.check(r.rank(0) == 0 || (r.rank(0) == 1), "M is a scalar");
  if (r.has(1)) r.check(r.rank(1) == 0 || (r.rank(1) == 1), "cond is a scalar");
  const size_t scans = body.outputs.size() - 1 - carried;
  for (size_t k = 0; k < carried; ++k) {
    auto [dtype, dims] = declaredType(r, body.outputs[1 + k], "body output");
    r.check(dtype == r.dtype(2 + k),
            "loop-carried value " + std::to_string(k) + " keeps its dtype through the body");
    r.output(k, dims, dtype);
  }
  if (scans == 0) return;
  r.check(r.has(0), "a loop with scan outputs has a trip count M");
  const int64_t trips = r.axes(0).at(0);
  r.check(trips >= 0, "M is not negative");
  for (size_t j = 0; j < scans; ++j) {
    auto [dtype, dims] = declaredType(r, body.outputs[1 + carried + j], "body output");
    dims.insert(dims.begin(), r.lit(trips));
    r.output(carried + j, dims, dtype);
  }
}

void scanRule(auto& r) {
  const Graph& body = subgraph(r.node(), "body");
  const int64_t m = r.attrInt("num_scan_inputs");
  r.check(m >= 1 && static_cast<size_t>(m) <= r.inputCount(), "num_scan_inputs names inputs");
  const size_t scanInputs = static_cast<size_t>(m), states = r.inputCount() - scanInputs;
  r.check(body.inputs.size() == r.inputCount(), "the body takes each state and each scan slice");
  r.check(body.outputs.size() >= states, "the body gives each state, then the scan outputs");
  const size_t scanOutputs = body.outputs.size() - states;
  auto listed = [&](const char* attr, size_t n) {
    std::vector<int64_t> v = r.hasAttr(attr) ? r.attrInts(attr) : std::vector<int64_t>(n, 0);
    r.check(v.size() == n, std::string(attr) + " has one entry per scan input or output");
    return v;
  };
  const std::vector<int64_t> inAxes = listed("scan_input_axes", scanInputs);
  const std::vector<int64_t> outAxes = listed("scan_output_axes", scanOutputs);
  for (const char* dirs : {"scan_input_directions", "scan_output_directions"})
    for (int64_t d : r.hasAttr(dirs) ? r.attrInts(dirs) : std::vector<int64_t>{})
      r.check(d == 0 || d == 1, std::string(dirs) + " are 0 (forward) or 1 (reverse)");
  std::optional<std::decay_t<decltype(r.lit(0))>> length;
  for (size_t j = 0; j < scanInputs; ++j) {
    const size_t i = states + j;
    const int64_t axis = r.normAxis(inAxes[j], r.rank(i), "scan_input_axes");
    if (length)
      r.require(r.dim(i, axis) == *length, "every scan input has the same length");
    else
      length = r.dim(i, axis);
  }
  for (size_t s = 0; s < states; ++s) {
    auto [dtype, dims] = declaredType(r, body.outputs[s], "body output");
    r.check(dtype == r.dtype(s), "state " + std::to_string(s) + " keeps its dtype");
    r.output(s, dims, dtype);
  }
  for (size_t j = 0; j < scanOutputs; ++j) {
    auto [dtype, dims] = declaredType(r, body.outputs[states + j], "body output");
    const int64_t rank = static_cast<int64_t>(dims.size()) + 1;
    const int64_t axis = r.normAxis(outAxes[j], rank, "scan_output_axes");
    dims.insert(dims.begin() + axis, *length);
    r.output(states + j, dims, dtype);
  }
}

// The kernel's executor of control_flow.h: values are tensors, bodies run in the interpreter.
struct TensorExecutor {
  using Value = Tensor;
  KernelCall& k;
  Tensor in(size_t i) const { return k.in(i); }
  const Tensor& tensor(const Tensor& t) const { return t; }
  Tensor constant(Tensor t) const { return t; }
  std::vector<Tensor> runBody(const Graph& g, const std::vector<Tensor>& inputs) const {
    return k.runSubgraph(g, inputs);
  }
  Tensor slice(const Tensor& x, int64_t axis, int64_t index) const {
    return sliceAt(x, axis, index);
  }
  Tensor stack(const std::vector<Tensor>& parts, int64_t axis, DType dtype,
               const Shape& part) const {
    return ops::stack(parts, axis, dtype, part);
  }
  void output(size_t o, Tensor t) const { k.out(o) = std::move(t); }
};

void controlFlowKernel(KernelCall& k) {
  TensorExecutor x{k};
  runControlFlow(k, x);
}

AttrSpec graphAttr(std::string name) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Graph;
  a.required = true;
  a.sampling = AttrSampling::Never;
  return a;
}

}  // namespace

void registerControlFlow(Registry& reg) {
  reg.add(OpSpec("If", 11)
              .types("B", boolTypes())
              .input("cond", "B", InputRole::AxesValues)
              .variadicOutput("outputs", 64)
              .attr(graphAttr("then_branch"))
              .attr(graphAttr("else_branch"))
              .shapeRule([](auto& r) {
                r.check(r.rank(0) <= 1, "cond is a scalar or a vector of one");
                if (r.rank(0) == 1) r.require(r.dim(0, 0) == r.lit(1), "cond holds one element");
                const Graph& thenG = subgraph(r.node(), "then_branch");
                const Graph& elseG = subgraph(r.node(), "else_branch");
                r.check(thenG.outputs.size() == elseG.outputs.size(),
                        "both branches give the same number of outputs");
                for (size_t o = 0; o < thenG.outputs.size(); ++o) {
                  auto [dt, dims] = declaredType(r, thenG.outputs[o], "then_branch output");
                  auto [de, dimsElse] = declaredType(r, elseG.outputs[o], "else_branch output");
                  r.check(dt == de,
                          "both branches give output " + std::to_string(o) + " the same dtype");
                  // Branches of different shapes: the output's is the taken branch's.
                  if (*thenG.outputs[o].shape() != *elseG.outputs[o].shape())
                    r.output(o, r.axes(0).at(0) ? dims : dimsElse, dt);
                  else
                    r.output(o, dims, dt);
                }
              })
              .kernel(controlFlowKernel));

  reg.add(OpSpec("Loop", 11)
              .types("I", {DType::Int64})
              .types("B", boolTypes())
              .types("V", allComputeTypes())
              .optionalInput("M", "I", InputRole::AxesValues)
              .optionalInput("cond", "B", InputRole::AxesValues)
              .variadicInput("v_initial", "V")
              .heterogeneous()
              .variadicOutput("v_final_and_scan_outputs", 64)
              .attr(graphAttr("body"))
              .onnxPartialShapes()
              .shapeRule([](auto& r) { loopRule(r); })
              .kernel(controlFlowKernel));

  reg.add(OpSpec("Scan", 9)
              .types("V", allComputeTypes())
              .variadicInput("initial_state_and_scan_inputs", "V")
              .heterogeneous()
              .variadicOutput("final_state_and_scan_outputs", 64)
              .attr(graphAttr("body"))
              .attr(requiredInt("num_scan_inputs", 1, 4))
              .attr(intsAttr("scan_input_axes"))
              .attr(intsAttr("scan_input_directions"))
              .attr(intsAttr("scan_output_axes"))
              .attr(intsAttr("scan_output_directions"))
              .shapeRule([](auto& r) { scanRule(r); })
              .kernel(controlFlowKernel));
}

}  // namespace nncheck::ops
