#include "doubles/optimizer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck::testing {
namespace {

// The graph's wiring, rebuilt after every rewrite.
struct Wiring {
  std::map<std::string, size_t> producer;  // value -> node index
  std::map<std::string, int> uses;
  std::set<std::string> outputs;
  explicit Wiring(const Graph& g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& o : g.nodes[i].outputs) producer[o] = i;
      for (const std::string& in : g.nodes[i].inputs) ++uses[in];
    }
    for (const ValueInfo& o : g.outputs) outputs.insert(o.name);
  }
  // The node computing `value` when it has type `op`; else -1.
  int producerOf(const Graph& g, const std::string& value, const char* op) const {
    auto p = producer.find(value);
    return p == producer.end() || g.nodes[p->second].opType != op ? -1
                                                                  : static_cast<int>(p->second);
  }
  // Whether node `n`'s outputs are read by nothing once one of their reads was rewired away.
  bool deadAfterOneRead(const Graph& g, int n) const {
    int reads = 0;
    for (const std::string& o : g.nodes[static_cast<size_t>(n)].outputs) {
      if (outputs.count(o)) return false;
      auto u = uses.find(o);
      reads += u == uses.end() ? 0 : u->second;
    }
    return reads <= 1;
  }
};

class Rewriter {
 public:
  Rewriter(Model& m, const TensorMap& values, unsigned bugs)
      : m_(m), values_(values), bugs_(bugs) {}

  // Applies the first rewrite that matches; false when none does.
  bool step() {
    const Wiring w(m_.graph);
    for (size_t i = 0; i < m_.graph.nodes.size(); ++i) {
      const std::string& op = m_.graph.nodes[i].opType;
      if (foldConstant(w, i) || (op == "BatchNormalization" && foldConvBn(w, i)) ||
          (op == "Transpose" && mergeTransposes(w, i)) || (op == "Add" && fuseMatMulAdd(w, i)) ||
          (op == "Reshape" && mergeReshapes(w, i)) || (op == "Conv" && fusePadConv(w, i)) ||
          (op == "Cast" && dropCastRoundTrip(w, i)) ||
          (op == "Unsqueeze" && cancelSqueezeUnsqueeze(w, i)))
        return true;
    }
    return false;
  }

 private:
  bool bug(Optimizer::Bug b) const { return (bugs_ & b) != 0; }
  const Tensor* value(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  std::vector<Node>& nodes() { return m_.graph.nodes; }
  // Removes the producer a rewrite bypassed, unless other nodes or the graph still read it.
  void dropIfDead(const Wiring& w, int node) {
    if (w.deadAfterOneRead(m_.graph, node)) nodes().erase(nodes().begin() + node);
  }
  void setInts(Node& n, const char* name, std::vector<int64_t> v) {
    std::erase_if(n.attributes, [&](const Attribute& a) { return a.name == name; });
    n.attributes.push_back(Attribute::ofInts(name, std::move(v)));
  }
  std::string addShapeInitializer(const std::string& name, const Shape& shape) {
    m_.graph.initializers.push_back(
        {name, Tensor::fromVector<int64_t>({static_cast<int64_t>(shape.size())}, shape), ""});
    return name;
  }

  const Tensor* initializer(const std::string& name) const {
    const Initializer* w = m_.graph.initializer(name);
    return w ? &w->value : nullptr;
  }

  bool foldConstant(const Wiring& w, size_t i) {
    const Node& n = nodes()[i];
    if (n.inputs.empty() || !n.subgraphs().empty()) return false;
    std::vector<Tensor> in;
    for (const std::string& name : n.inputs) {
      if (name.empty()) {
        in.emplace_back();
        continue;
      }
      const Tensor* t = initializer(name);
      if (!t) return false;
      in.push_back(*t);
    }
    for (const std::string& o : n.outputs)
      if (w.outputs.count(o)) return false;
    Node evaluated = n;
    if (bug(Optimizer::ConstantFoldAttributes)) evaluated.attributes.clear();
    std::vector<Tensor> out;
    try {
      out = runReferenceNode(evaluated, in, m_.defaultOpset());
    } catch (const Error&) {
      return false;  // not foldable here: left to run
    }
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (!n.outputs[k].empty()) m_.graph.initializers.push_back({n.outputs[k], out[k], ""});
    nodes().erase(nodes().begin() + static_cast<long>(i));
    return true;
  }

  bool foldConvBn(const Wiring& w, size_t i) {
    const Node& bn = nodes()[i];
    const int conv = w.producerOf(m_.graph, bn.inputs[0], "Conv");
    const Attribute* training = bn.attribute("training_mode");
    if (conv < 0 || bn.outputs.size() != 1 || (training && training->i != 0) ||
        !w.deadAfterOneRead(m_.graph, conv))
      return false;
    const Node& c = nodes()[conv];
    const Tensor* weight = initializer(c.inputs[1]);
    const Tensor* bias = c.hasInput(2) ? initializer(c.inputs[2]) : nullptr;
    std::vector<const Tensor*> stats;  // scale, B, mean, var
    for (size_t k = 1; k < 5; ++k) stats.push_back(initializer(bn.inputs[k]));
    if (!weight || weight->dtype() != DType::Float32 || (c.hasInput(2) && !bias) ||
        std::find(stats.begin(), stats.end(), nullptr) != stats.end())
      return false;
    for (const Tensor* t : stats)
      if (t->dtype() != DType::Float32) return false;
    const Attribute* eps = bn.attribute("epsilon");
    const double epsilon = eps ? eps->f : 1e-5;
    const int64_t channels = weight->shape()[0];
    const int64_t perChannel = weight->size() / channels;
    Tensor w2 = *weight;
    Tensor b2 = Tensor::fromVector<float>({channels}, std::vector<float>(channels, 0.0f));
    for (int64_t k = 0; k < channels; ++k) {
      const double s = stats[0]->toDouble(k) / std::sqrt(stats[3]->toDouble(k) + epsilon);
      for (int64_t e = 0; e < perChannel; ++e)
        w2.span<float>()[k * perChannel + e] =
            static_cast<float>(weight->toDouble(k * perChannel + e) * s);
      const double b = bias ? bias->toDouble(k) : 0.0;
      const double shift =
          bias || !bug(Optimizer::ConvBnNoBias) ? s * (b - stats[2]->toDouble(k)) : 0.0;
      b2.span<float>()[k] = static_cast<float>(shift + stats[1]->toDouble(k));
    }
    Node fused = c;
    fused.outputs = bn.outputs;
    fused.name = bn.name + "_conv";
    fused.inputs.resize(3);
    fused.inputs[1] = fused.name + "_w";
    fused.inputs[2] = fused.name + "_b";
    m_.graph.initializers.push_back({fused.inputs[1], w2, ""});
    m_.graph.initializers.push_back({fused.inputs[2], b2, ""});
    nodes()[i] = fused;
    nodes().erase(nodes().begin() + conv);
    return true;
  }

  static std::vector<int64_t> perm(const Node& n, size_t rank) {
    if (const Attribute* a = n.attribute("perm")) return a->ints;
    std::vector<int64_t> p(rank);
    for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
    return p;
  }

  bool mergeTransposes(const Wiring& w, size_t i) {
    const int first = w.producerOf(m_.graph, nodes()[i].inputs[0], "Transpose");
    const Tensor* x = first < 0 ? nullptr : value(nodes()[first].inputs[0]);
    if (!x) return false;
    const size_t rank = x->shape().size();
    const std::vector<int64_t> p1 = perm(nodes()[first], rank), p2 = perm(nodes()[i], rank);
    std::vector<int64_t> composed(rank);
    for (size_t k = 0; k < rank; ++k)
      composed[k] = bug(Optimizer::TransposeMergeOrder) && rank >= 3
                        ? p2[static_cast<size_t>(p1[k])]
                        : p1[static_cast<size_t>(p2[k])];
    nodes()[i].inputs[0] = nodes()[first].inputs[0];
    setInts(nodes()[i], "perm", composed);
    dropIfDead(w, first);
    return true;
  }

  bool fuseMatMulAdd(const Wiring& w, size_t i) {
    for (size_t k = 0; k < 2; ++k) {
      const Node& add = nodes()[i];
      const int mm = w.producerOf(m_.graph, add.inputs[k], "MatMul");
      if (mm < 0) continue;
      const std::string a = nodes()[mm].inputs[0], b = nodes()[mm].inputs[1], c = add.inputs[1 - k];
      const Tensor *ta = value(a), *tb = value(b), *tc = value(c);
      if (!ta || !tb || !tc || ta->dtype() != DType::Float32 || ta->rank() != 2 || tb->rank() != 2)
        continue;
      const int64_t rows = ta->shape()[0], cols = tb->shape()[1];
      const Shape& cs = tc->shape();
      // Gemm broadcasts C to [rows, cols] one way only.
      const bool fits =
          cs.size() == 0 || (cs.size() == 1 && (cs[0] == 1 || cs[0] == cols)) ||
          (cs.size() == 2 && (cs[0] == 1 || cs[0] == rows) && (cs[1] == 1 || cs[1] == cols));
      if (!fits) continue;
      Node gemm = Node::make("Gemm", {a, b, c}, add.outputs, add.name + "_gemm");
      std::vector<Node> before;
      if (bug(Optimizer::MatMulAddColumn) && cs.size() == 1 && rows == cols && cols > 1) {
        const std::string column = c + "_column";
        before.push_back(Node::make("Reshape",
                                    {c, addShapeInitializer(column + "_shape", {cols, 1})},
                                    {column}, add.name + "_column"));
        gemm.inputs[2] = column;
      }
      nodes()[i] = gemm;
      nodes().insert(nodes().begin() + static_cast<long>(i), before.begin(), before.end());
      dropIfDead(w, mm);
      return true;
    }
    return false;
  }

  bool mergeReshapes(const Wiring& w, size_t i) {
    const int first = w.producerOf(m_.graph, nodes()[i].inputs[0], "Reshape");
    const Tensor* shape = first < 0 ? nullptr : value(nodes()[i].inputs[1]);
    if (!shape) return false;
    const Attribute* allowZero = nodes()[i].attribute("allowzero");
    const std::vector<int64_t> s = shape->toInt64s();
    const bool copiesADim =
        (!allowZero || allowZero->i == 0) && std::find(s.begin(), s.end(), 0) != s.end();
    if (copiesADim && !bug(Optimizer::ReshapeMergeZero)) return false;
    nodes()[i].inputs[0] = nodes()[first].inputs[0];
    dropIfDead(w, first);
    return true;
  }

  bool fusePadConv(const Wiring& w, size_t i) {
    const int pad = w.producerOf(m_.graph, nodes()[i].inputs[0], "Pad");
    if (pad < 0) return false;
    const Node& p = nodes()[pad];
    const Tensor *x = value(p.inputs[0]), *pads = p.hasInput(1) ? value(p.inputs[1]) : nullptr;
    if (!x || !pads) return false;
    if (p.hasInput(2)) {
      const Tensor* fill = value(p.inputs[2]);
      if (!fill || fill->toDouble(0) != 0) return false;
    }
    const Attribute* mode = p.attribute("mode");
    if (mode && mode->s != "constant" && !bug(Optimizer::PadConvMode)) return false;
    const Attribute* autoPad = nodes()[i].attribute("auto_pad");
    if (autoPad && autoPad->s != "NOTSET") return false;
    const size_t rank = x->shape().size(), spatial = rank - 2;
    const std::vector<int64_t> added = pads->toInt64s();
    if (rank < 3 || added.size() != 2 * rank) return false;
    if (added[0] || added[1] || added[rank] || added[rank + 1]) return false;  // N, C padded
    if (std::any_of(added.begin(), added.end(), [](int64_t v) { return v < 0; })) return false;
    std::vector<int64_t> convPads(2 * spatial, 0);
    if (const Attribute* a = nodes()[i].attribute("pads")) convPads = a->ints;
    for (size_t k = 0; k < spatial; ++k) {
      convPads[k] += added[2 + k];
      convPads[spatial + k] += added[rank + 2 + k];
    }
    nodes()[i].inputs[0] = p.inputs[0];
    setInts(nodes()[i], "pads", convPads);
    dropIfDead(w, pad);
    return true;
  }

  bool dropCastRoundTrip(const Wiring& w, size_t i) {
    const int first = w.producerOf(m_.graph, nodes()[i].inputs[0], "Cast");
    const Tensor* x = first < 0 ? nullptr : value(nodes()[first].inputs[0]);
    const Attribute *to1 = first < 0 ? nullptr : nodes()[first].attribute("to"),
                    *to2 = nodes()[i].attribute("to");
    if (!x || !to1 || !to2 || static_cast<DType>(to2->i) != x->dtype()) return false;
    const DType through = static_cast<DType>(to1->i);
    const bool lossless = through == x->dtype() || x->dtype() == DType::Bool ||
                          (x->dtype() == DType::Float32 && through == DType::Float64);
    if (!lossless && !bug(Optimizer::CastRoundTrip)) return false;
    nodes()[i].inputs[0] = nodes()[first].inputs[0];  // a Cast to x's own type: a no-op
    dropIfDead(w, first);
    return true;
  }

  static std::vector<int64_t> normalized(std::vector<int64_t> axes, int64_t rank) {
    for (int64_t& a : axes) a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    return axes;
  }

  bool cancelSqueezeUnsqueeze(const Wiring& w, size_t i) {
    const int squeeze = w.producerOf(m_.graph, nodes()[i].inputs[0], "Squeeze");
    if (squeeze < 0 || !nodes()[squeeze].hasInput(1) || !nodes()[i].hasInput(1)) return false;
    const Tensor *x = value(nodes()[squeeze].inputs[0]), *a1 = value(nodes()[squeeze].inputs[1]),
                 *a2 = value(nodes()[i].inputs[1]);
    if (!x || !a1 || !a2 || a1->size() != a2->size()) return false;
    const int64_t rank = static_cast<int64_t>(x->shape().size());
    const bool same = normalized(a1->toInt64s(), rank) == normalized(a2->toInt64s(), rank);
    if (!same && !bug(Optimizer::SqueezeUnsqueezeAxes)) return false;
    // x itself, through a Reshape to its own shape (the graph keeps the output's name).
    Node& n = nodes()[i];
    n = Node::make("Reshape",
                   {nodes()[squeeze].inputs[0], addShapeInitializer(n.name + "_shape", x->shape())},
                   n.outputs, n.name);
    dropIfDead(w, squeeze);
    return true;
  }

  Model& m_;
  const TensorMap& values_;
  unsigned bugs_;
};

}  // namespace

std::vector<Optimizer::Bug> Optimizer::allBugs() {
  return {MatMulAddColumn, TransposeMergeOrder,  ReshapeMergeZero,       PadConvMode,
          CastRoundTrip,   SqueezeUnsqueezeAxes, ConstantFoldAttributes, ConvBnNoBias};
}

std::pair<std::string, std::string> Optimizer::patternOf(Bug b) {
  switch (b) {
    case MatMulAddColumn:
      return {"MatMul", "Add"};
    case TransposeMergeOrder:
      return {"Transpose", "Transpose"};
    case ReshapeMergeZero:
      return {"Reshape", "Reshape"};
    case PadConvMode:
      return {"Pad", "Conv"};
    case CastRoundTrip:
      return {"Cast", "Cast"};
    case SqueezeUnsqueezeAxes:
      return {"Squeeze", "Unsqueeze"};
    case ConstantFoldAttributes:
      return {};
    case ConvBnNoBias:
      return {"Conv", "BatchNormalization"};
    case None:
      break;
  }
  return {};
}

std::string Optimizer::bugName(Bug b) {
  switch (b) {
    case MatMulAddColumn:
      return "matmul-add-column";
    case TransposeMergeOrder:
      return "transpose-merge-order";
    case ReshapeMergeZero:
      return "reshape-merge-zero";
    case PadConvMode:
      return "pad-conv-mode";
    case CastRoundTrip:
      return "cast-round-trip";
    case SqueezeUnsqueezeAxes:
      return "squeeze-unsqueeze-axes";
    case ConstantFoldAttributes:
      return "constant-fold-attributes";
    case ConvBnNoBias:
      return "conv-bn-no-bias";
    case None:
      break;
  }
  return "none";
}

Capabilities Optimizer::capabilities() const {
  Capabilities caps;
  caps.shapeOperandsMustBeInitializers = false;  // it folds constants
  caps.ops = {"Add",     "AveragePool", "BatchNormalization",
              "Cast",    "Concat",      "Conv",
              "Div",     "Flatten",     "Gather",
              "Gemm",    "Identity",    "MatMul",
              "MaxPool", "Mul",         "Pad",
              "Relu",    "ReduceMean",  "Reshape",
              "Sigmoid", "Slice",       "Softmax",
              "Split",   "Squeeze",     "Sub",
              "Tanh",    "Transpose",   "Unsqueeze"};
  return caps;
}

std::string Optimizer::name() const {
  std::string bugs;
  for (Bug b : allBugs())
    if (bugs_ & b) {
      if (!bugs.empty()) bugs += ",";
      bugs += bugName(b);
    }
  return "double:optimizer(" + bugs + ")";
}

Model Optimizer::optimize(const Model& model, const TensorMap& inputs) const {
  Model m = model;
  const TensorMap values = runReferenceAllValues(model, inputs);
  Rewriter r(m, values, bugs_);
  for (int round = 0; round < 64 && r.step(); ++round) {
  }
  return m;
}

TensorMap Optimizer::run(const Model& model, const TensorMap& inputs) {
  return runReference(optimize(model, inputs), inputs);
}

}  // namespace nncheck::testing
