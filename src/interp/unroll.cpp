#include "interp/unroll.h"

#include <map>
#include <set>

#include "interp/run_node.h"
#include "nncheck/error.h"
#include "ops/control_flow.h"
#include "ops/infer.h"

namespace nncheck {
namespace {

// Where a name of the source model lives in the unrolled one; a body's scope falls back on its
// enclosing graph's, as ONNX's scoping does.
struct Scope {
  const Scope* parent = nullptr;
  std::map<std::string, std::string> renamed;
  std::string operator()(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (auto it = s->renamed.find(name); it != s->renamed.end()) return it->second;
    return name;
  }
};

// Every name a graph defines, at any depth, with how many times: a body's initializer keeps its
// name only when nothing else has it.
void countNames(const Graph& g, std::map<std::string, int>& count) {
  std::set<std::string> own;  // an initializer may be listed as an input too
  for (const ValueInfo& v : g.inputs) own.insert(v.name);
  for (const Initializer& i : g.initializers) own.insert(i.name);
  for (const std::string& name : own) ++count[name];
  for (const Node& n : g.nodes) {
    for (const std::string& o : n.outputs) ++count[o];
    for (const Graph* sub : n.subgraphs()) countNames(*sub, count);
  }
}

class Unroller {
 public:
  Unroller(const Model& model, const TensorMap& inputs) : opset_(model.defaultOpset()) {
    // What the unrolled model keeps of the source: its opsets and leaves, not its nodes.
    out_.model.irVersion = model.irVersion;
    out_.model.opsets = model.opsets;
    out_.model.graph.name = model.graph.name;
    out_.model.graph.inputs = model.graph.inputs;
    out_.model.graph.initializers = model.graph.initializers;
    out_.model.graph.outputs = model.graph.outputs;
    countNames(model.graph, names_);
    for (const Initializer& init : model.graph.initializers) values_.set(init.name, init.value);
    for (const ValueInfo* in : model.graph.feedInputs()) {
      auto it = inputs.find(in->name);
      if (it == inputs.end()) throw Error("input '" + in->name + "' was not given");
      values_.set(in->name, it->second);
    }
  }

  Unrolled run(const Graph& g) {
    Scope top;
    nodes(g, top);
    for (ValueInfo& o : out_.model.graph.outputs) o.name = top(o.name);
    out_.values = values_.release();
    return std::move(out_);
  }

  // The executor of ops/control_flow.h: values are names in the unrolled model.
  struct Executor {
    using Value = std::string;
    Unroller& u;
    Scope& scope;
    const Node& node;
    std::string in(size_t i) const { return scope(node.inputs[i]); }
    const Tensor& tensor(const std::string& name) const { return *u.values_.find(name); }
    std::string constant(Tensor t) const { return u.constant(std::move(t)); }
    std::vector<std::string> runBody(const Graph& g, const std::vector<std::string>& ins) const {
      return u.body(g, ins, scope);
    }
    std::string slice(const std::string& x, int64_t axis, int64_t index) const {
      Node gather =
          Node::make("Gather", {x, u.constant(Tensor::scalar<int64_t>(index))}, {u.fresh(x)}, "");
      gather.attributes = {Attribute::ofInt("axis", axis)};
      return u.emit(std::move(gather));
    }
    std::string stack(const std::vector<std::string>& parts, int64_t axis, DType dtype,
                      const Shape& part) const {
      if (parts.empty()) {
        Shape s = part;
        s.insert(s.begin() + axis, 0);
        return u.constant(Tensor(dtype, s));
      }
      std::vector<std::string> lifted;
      for (const std::string& p : parts) {
        Node unsqueeze = Node::make("Unsqueeze", {p}, {u.fresh(p)}, "");
        if (u.opset_ >= 13)
          unsqueeze.inputs.push_back(u.constant(Tensor::fromVector<int64_t>({1}, {axis})));
        else
          unsqueeze.attributes = {Attribute::ofInts("axes", {axis})};
        lifted.push_back(u.emit(std::move(unsqueeze)));
      }
      if (lifted.size() == 1) return lifted[0];
      Node concat = Node::make("Concat", lifted, {u.fresh(parts[0])}, "");
      concat.attributes = {Attribute::ofInt("axis", axis)};
      return u.emit(std::move(concat));
    }
    void output(size_t o, std::string name) const {
      if (!node.outputs[o].empty()) scope.renamed[node.outputs[o]] = std::move(name);
    }
  };

 private:
  void nodes(const Graph& g, Scope& scope) {
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      if (node.subgraphs().empty()) {
        Node copy = node;
        for (std::string& in : copy.inputs)
          if (!in.empty()) in = scope(in);
        // A body's values are new at each of its runs; the top graph's keep their names.
        if (scope.parent)
          for (std::string& o : copy.outputs)
            if (!o.empty()) o = scope.renamed[o] = fresh(o);
        emit(std::move(copy));
        continue;
      }
      const ops::OpSpec& spec = ops::specFor(node, opset_);
      std::vector<const Tensor*> ins;
      for (const std::string& in : node.inputs) {
        const Tensor* t = in.empty() ? nullptr : values_.find(scope(in));
        if (!in.empty() && !t)
          throw Error(node.label(n) + ": input '" + in + "' is not computed before this node");
        ins.push_back(t);
      }
      ops::KernelCall call(spec, node, std::move(ins), std::vector<Tensor>(node.outputs.size()));
      Executor x{*this, scope, node};
      if (!ops::runControlFlow(call, x))
        throw Unsupported("subgraph", node.label(n) + ": unrolling knows no op " + node.opType);
    }
  }

  std::vector<std::string> body(const Graph& g, const std::vector<std::string>& ins,
                                const Scope& enclosing) {
    Scope scope{&enclosing, {}};
    if (ins.size() != g.inputs.size())
      throw Error("subgraph '" + g.name + "' takes " + std::to_string(g.inputs.size()) +
                  " inputs, given " + std::to_string(ins.size()));
    for (size_t i = 0; i < ins.size(); ++i) scope.renamed[g.inputs[i].name] = ins[i];
    for (const Initializer& init : g.initializers) {
      auto [it, first] = bodyInitializers_.try_emplace(&init);
      if (first) {
        it->second = names_[init.name] == 1 ? init.name : fresh(init.name);
        out_.model.graph.initializers.push_back({it->second, init.value, ""});
        values_.set(it->second, init.value);
      }
      scope.renamed[init.name] = it->second;
    }
    nodes(g, scope);
    std::vector<std::string> outs;
    for (const ValueInfo& o : g.outputs) outs.push_back(scope(o.name));
    return outs;
  }

  // Appends the node and computes its outputs; returns its first output's name.
  std::string emit(Node node) {
    const size_t index = out_.model.graph.nodes.size();
    std::vector<Tensor> outs = runNode(node, index, opset_, values_);
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) values_.set(node.outputs[i], std::move(outs[i]));
    out_.model.graph.nodes.push_back(std::move(node));
    return out_.model.graph.nodes.back().outputs.at(0);
  }

  std::string constant(Tensor t) {
    std::string name = fresh("nncheck.unrolled");
    out_.model.graph.initializers.push_back({name, t, ""});
    values_.set(name, std::move(t));
    return name;
  }

  // A name no value of the source model or the unrolled one has.
  std::string fresh(const std::string& base) {
    for (;;) {
      std::string name = base + "~" + std::to_string(counter_++);
      if (!names_.count(name) && !values_.find(name)) return name;
    }
  }

  int64_t opset_;
  Unrolled out_;  // its values are in values_ until the run is done
  HeldValues values_;
  std::map<std::string, int> names_;
  std::map<const Initializer*, std::string> bodyInitializers_;
  int64_t counter_ = 0;
};

}  // namespace

Unrolled unrollControlFlow(const Model& model, const TensorMap& inputs) {
  return underReferenceTimeLimit([&] { return Unroller(model, inputs).run(model.graph); });
}

}  // namespace nncheck
