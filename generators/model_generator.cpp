// Grows a model node by node. Each insertion draws a candidate concretely (op, inputs,
// attributes, fresh leaves, shape-operand contents) and lets the op's own shape rule judge it;
// after a few rejected draws, z3 solves the same rule with the draw's structure kept and its
// numbers freed. With cfg.finiteValues, each committed node's values are computed at once and
// a node that makes any value NaN, infinite or huge gets value search on the model so far
// (inputs and weights move); if no values keep it finite, the node is taken back. See
// generator.h for the contract.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "core/rng.h"
#include "generators/attribute_draw.h"
#include "generators/mutations.h"
#include "generators/op_table.h"
#include "generators/value_domain.h"
#include "generators/values.h"
#include "interp/run_node.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/test_case.h"
#include "nncheck/value_search.h"
#include "ops/infer.h"
#include "ops/rule.h"
#include "solver/symbolic.h"

namespace nncheck {
namespace {

using gen::OpEntry;
using ops::AttrSampling;
using ops::AttrSpec;
using ops::InputRole;
using ops::OpSpec;
using ops::ValueDomain;

constexpr int kDrawsBeforeSolving = 4;
constexpr int kOpsPerInsertion = 12;
constexpr double kInPlaceShare = 1.0 / 3;  // mutants that keep the parent's nodes and wiring
// Of those, the share whose numbers z3 re-solves (the rest redraw an attribute): a fresh z3
// context and a whole-graph check cost several cases' time.
constexpr double kResolveShare = 1.0 / 3;
// Of the insertions a mutant aims (GrowAfter, InsertBefore), the share that repeats one of the
// parent's own ops: rewrites match chains of the ops a kept case holds (Transpose -> Transpose),
// which an op drawn from a library of over a hundred rarely forms.
constexpr double kRepeatShare = 0.5;

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  enum class Kind { Input, Initializer, Computed } kind = Kind::Input;
  Tensor data;  // initializers; graph inputs too with cfg.finiteValues
  bool hasData = false;
  std::string producer = {};  // computed values: the op computing it (pair weights)
};

// One input of a candidate: absent, an existing value, or a fresh leaf.
struct InputChoice {
  bool present = false;
  int existing = -1;  // index into values, or -1 for a fresh leaf
  Value leaf;         // fresh leaves; data set now only for shape operands
  bool leafIsInitializer = false;
  bool valuesFixed = false;  // shape operands: contents drawn by the op's sampler
};

struct Candidate {
  const OpEntry* entry = nullptr;
  Node node;
  std::vector<InputChoice> inputs;
  int outputCount = 1;
  std::vector<ops::TensorType> outputs;  // after the rule accepted it
  bool numbersWrong = false;             // rejected by a requirement on numbers, not structure
};

class Builder {
 public:
  Builder(const GeneratorConfig& cfg, const std::vector<OpEntry>& table, uint64_t seed,
          GenerationStats& stats)
      : cfg_(cfg), table_(table), seed_(seed), rng_(seed), stats_(stats) {}

  // The model, and with cfg.finiteValues its input values (else inputs are left empty).
  TestCase build();
  // A mutant of `parent` (see mutateTestCase), inputs as build's.
  TestCase mutate(const TestCase& parent);

 private:
  // --- drawing ---
  int64_t drawDim() {
    int64_t lo = cfg_.minDim, hi = cfg_.maxDim;
    switch (rng_.uniform(0, 3)) {  // bins, so that 1s and large dims both appear
      case 0:
        return lo;
      case 1:
        return rng_.uniform(lo, std::min(hi, lo + 2));
      default:
        return rng_.uniform(lo, hi);
    }
  }
  Shape drawShape(int64_t rank) {
    Shape s;
    for (int64_t i = 0; i < rank; ++i) s.push_back(drawDim());
    while (elementCount(s) > cfg_.maxElements)
      for (int64_t& d : s) d = std::max<int64_t>(1, d / 2);
    return s;
  }
  DType drawLeafDType(const std::vector<DType>& allowed) {
    std::vector<double> w;
    for (DType t : allowed) w.push_back(t == DType::Float32 ? 6.0 : 1.0);
    return allowed[rng_.weighted(w)];
  }
  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  void drawAttributes(Candidate& c, int64_t rank0);
  std::optional<Candidate> drawCandidate(const OpEntry& e, bool backward, int placeholder);
  std::optional<Candidate> drawUnchecked(const OpEntry& e, bool backward, int placeholder);
  bool judge(Candidate& c, int placeholder);
  bool solve(Candidate& c, int placeholder);
  void commit(Candidate& c, bool backward, int placeholder);
  bool place(Candidate& c, bool backward, int placeholder);
  bool keepsFinite(const OpSpec& spec, bool backward);
  int indexNamed(const std::string& name) const;  // -1 when no value has the name
  Value* valueNamed(const std::string& name);
  TestCase assemble() const;
  // A node whose output 0 is value `placeholder` when >= 0 (backward: always, one is drawn).
  bool insert(bool backward, int placeholder = -1);
  // Returns the parent's value names mapped to this model's.
  std::map<std::string, std::string> adopt(const TestCase& tc, const std::vector<size_t>& keep,
                                           const TensorMap& values);
  // One forward insertion of op `op` (any, when empty) whose first input is value `first` (any,
  // when -1); with `placeholder` >= 0, the node computes that value, of its shape, and goes at
  // position `at`, before the nodes reading it.
  bool insertAimed(const std::string& op, int first, int placeholder = -1, size_t at = 0);
  void plantSeed();
  // --- control flow (cfg.controlFlow) ---
  // An If, Loop or Scan node reading existing values, its bodies grown by growBody.
  bool insertControlFlow(const OpEntry& e);
  struct Body {
    Graph graph;                // inputs as given; nodes; initializers it made
    std::vector<Value> values;  // everything it can read: captured values, inputs, its own
  };
  // One to three nodes grown over `inputs` (the body's graph inputs) and the values of this
  // graph it captures; no control flow inside.
  Body growBody(const std::vector<Value>& inputs);
  // Names a value of the body of this type (any, when t is Undefined) to be an output: the
  // latest it computed, else an Identity of `fallback` (of type t) it adds, else (any type) "";
  // `avoid` is a name already listed.
  std::string bodyOutput(Body& b, DType t, const Shape& s, const std::string& fallback,
                         const std::string& avoid = "");
  TestCase growTo(size_t nodes);
  double pairWeight(const std::string& producer, const std::string& consumer) const {
    auto it = cfg_.pairWeights.find({producer, consumer});
    return it == cfg_.pairWeights.end() ? 1.0 : it->second;
  }
  // How much likelier op `e` is as the next forward node: its largest pair weight with the
  // producer of a value it could read first.
  double pairBoost(const OpEntry& e) const;
  std::vector<ops::InputFacts> facts(const Candidate& c) const;
  bool withinLimits(const Shape& s) const { return gen::shapeWithinLimits(cfg_, s); }
  z3::context& z3ctx() {
    if (!z3_) {
      // Fresh per model and seeded: z3 state never crosses models.
      z3_ = std::make_unique<z3::context>();
      ++stats_.z3Contexts;
    }
    return *z3_;
  }

  const GeneratorConfig& cfg_;
  const std::vector<OpEntry>& table_;
  uint64_t seed_;
  Rng rng_;
  GenerationStats& stats_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  int counter_ = 0;
  TensorMap current_;  // with cfg.finiteValues: every value of the model so far
  std::unique_ptr<z3::context> z3_;
  int forcedFirst_ = -1;         // when >= 0: the value a forward insertion's first input must be
  std::string forcedOp_;         // when set: the op a forward insertion must be
  size_t insertAt_ = 0;          // where a forward node computing a placeholder goes
  std::set<std::string> later_;  // values computed at or after insertAt_: not its to read
  bool body_ = false;            // growing a subgraph: its fresh leaves are initializers of its own
};

void Builder::drawAttributes(Candidate& c, int64_t rank0) {
  for (const AttrSpec& a : c.entry->spec->attrs) {
    if (a.sampling == AttrSampling::Never || !c.entry->knowsAttribute(a.name)) continue;
    // Optional attributes and those with defaults are set about half the time, so defaults
    // are exercised too.
    if (!a.required && !rng_.chance(a.defaultValue ? 0.5 : 0.6)) continue;
    if (auto v = gen::drawAttribute(rng_, a, c.node, rank0, cfg_.dtypes))
      c.node.attributes.push_back(std::move(*v));
  }
}

std::optional<Candidate> Builder::drawCandidate(const OpEntry& e, bool backward, int placeholder) {
  // A hint that cannot cope with a draw (say, a rank too small for it) rejects the draw.
  try {
    return drawUnchecked(e, backward, placeholder);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<Candidate> Builder::drawUnchecked(const OpEntry& e, bool backward, int placeholder) {
  const OpSpec& spec = *e.spec;
  Candidate c;
  c.entry = &e;
  c.node.opType = spec.type;
  std::vector<std::optional<DType>> bound(spec.typeVars.size());
  std::map<std::string, DType> onnxBound;  // by ONNX's type parameter at the opset
  auto dtypeFor = [&](size_t i) {
    size_t t = e.typeVarIndex(i);
    auto tied = onnxBound.find(e.onnxTypeParam(i));
    if (!bound[t])
      bound[t] = tied != onnxBound.end() ? tied->second : drawLeafDType(e.typeVarDTypes[t]);
    onnxBound.emplace(e.onnxTypeParam(i), *bound[t]);
    return *bound[t];
  };

  // Input 0: an existing value (forward), or a fresh graph input shaped like the placeholder.
  InputChoice first;
  first.present = true;
  if (!backward) {
    std::vector<int> ok;
    const auto& allowed = e.dtypesOfInput(0);
    for (size_t v = 0; v < values_.size(); ++v)
      if (std::find(allowed.begin(), allowed.end(), values_[v].dtype) != allowed.end() &&
          values_[v].kind != Value::Kind::Initializer &&
          (forcedFirst_ < 0 || static_cast<int>(v) == forcedFirst_))
        ok.push_back(static_cast<int>(v));
    if (ok.empty()) return std::nullopt;
    // Prefer computed values, and recent ones, so graphs grow deep rather than wide.
    std::vector<double> w;
    for (int v : ok) {
      const Value& val = values_[static_cast<size_t>(v)];
      w.push_back(val.kind == Value::Kind::Computed
                      ? (1.0 + v) * pairWeight(val.producer, spec.type)
                      : 1.0);
    }
    first.existing = ok[rng_.weighted(w)];
    bound[e.typeVarIndex(0)] = values_[static_cast<size_t>(first.existing)].dtype;
    onnxBound.emplace(e.onnxTypeParam(0), *bound[e.typeVarIndex(0)]);
  } else {
    const Value& p = values_[static_cast<size_t>(placeholder)];
    const auto& allowed = e.dtypesOfInput(0);
    DType t = std::find(allowed.begin(), allowed.end(), p.dtype) != allowed.end()
                  ? p.dtype
                  : drawLeafDType(allowed);
    bound[e.typeVarIndex(0)] = t;
    onnxBound.emplace(e.onnxTypeParam(0), t);
    first.leaf = {fresh("x"), t, p.shape, Value::Kind::Input, {}};
  }
  c.inputs.push_back(first);
  const Shape shape0 =
      first.existing >= 0 ? values_[static_cast<size_t>(first.existing)].shape : first.leaf.shape;
  drawAttributes(c, static_cast<int64_t>(shape0.size()));

  // Outputs first: Split's sampler divides its axis among them.
  int outs = static_cast<int>(spec.outputs.size());
  if (spec.outputs.size() == 1 && spec.outputs[0].maxCount > 1) {
    outs = static_cast<int>(rng_.uniform(1, spec.outputs[0].maxCount));  // a variadic list
  } else {
    while (outs > 1 && spec.outputs[static_cast<size_t>(outs) - 1].optional &&
           (backward || !rng_.chance(0.25)))
      --outs;
  }
  c.outputCount = outs;
  c.node.outputs.assign(static_cast<size_t>(outs), "?");

  // Which inputs are present.
  size_t count = spec.inputs.size();
  if (spec.isVariadic()) count = spec.inputs.size() - 1 + static_cast<size_t>(rng_.uniform(1, 3));
  std::vector<bool> present(count, true);
  for (size_t i = 1; i < count; ++i) {
    const ops::InputSpec& is = spec.inputSpec(i);
    if (is.optional) present[i] = is.alwaysGenerated || (is.generated && rng_.chance(0.5));
  }
  while (count > 1 && !present[count - 1]) --count;

  c.inputs.reserve(count);  // samplers keep pointers to earlier inputs' contents
  ops::SampleContext ctx{rng_, c.node, {shape0}, {nullptr}, cfg_.maxDim, cfg_.maxRank};
  for (size_t i = 1; i < count; ++i) {
    InputChoice in;
    ctx.inputShapes.emplace_back();
    ctx.inputValues.push_back(nullptr);
    if (!present[i]) {
      c.inputs.push_back(in);
      continue;
    }
    in.present = true;
    const ops::InputSpec& is = spec.inputSpec(i);
    const DType t = dtypeFor(i);
    if (is.role != InputRole::Data) {
      if (!is.values) return std::nullopt;
      Tensor v = is.values(ctx);
      if (v.dtype() != t) v = castTensor(v, t);
      in.leaf = {fresh("s"), t, v.shape(), Value::Kind::Initializer, v};
      in.leafIsInitializer = true;
      in.valuesFixed = true;
    } else {
      Shape s = is.shape ? is.shape(ctx) : defaultLeafShape(rng_, shape0);
      const bool needsValues = is.domain == ValueDomain::Indices ||
                               is.domain == ValueDomain::Positive ||
                               (is.domain == ValueDomain::NonZeroIfInteger && !isFloatDType(t));
      const bool asWeight = is.weight && cfg_.weightsAsInitializers;
      if (!needsValues && !asWeight && !backward && rng_.chance(0.5)) {
        // An existing value of the dtype, preferably of the wanted shape.
        std::vector<int> same, any;
        for (size_t v = 0; v < values_.size(); ++v) {
          if (values_[v].dtype != t || values_[v].kind == Value::Kind::Initializer) continue;
          any.push_back(static_cast<int>(v));
          if (values_[v].shape == s) same.push_back(static_cast<int>(v));
        }
        if (!same.empty() || !any.empty()) {
          in.existing = !same.empty() && rng_.chance(0.8) ? rng_.pick(same)
                                                          : rng_.pick(any.empty() ? same : any);
          ctx.inputShapes.back() = values_[static_cast<size_t>(in.existing)].shape;
          c.inputs.push_back(in);
          continue;
        }
      }
      in.leafIsInitializer = needsValues || asWeight || body_ || rng_.chance(0.2);
      in.leaf = {fresh(in.leafIsInitializer ? "w" : "x"),
                 t,
                 s,
                 in.leafIsInitializer ? Value::Kind::Initializer : Value::Kind::Input,
                 {}};
    }
    ctx.inputShapes.back() = in.leaf.shape;
    c.inputs.push_back(in);
    if (in.valuesFixed) ctx.inputValues.back() = &c.inputs.back().leaf.data;
  }

  return c;
}

std::vector<ops::InputFacts> Builder::facts(const Candidate& c) const {
  std::vector<ops::InputFacts> f;
  for (const InputChoice& in : c.inputs) {
    if (!in.present) {
      f.push_back({});
      continue;
    }
    // Only shape operands have contents before commit; existing values are never initializers.
    const Value& v = in.existing >= 0 ? values_[static_cast<size_t>(in.existing)] : in.leaf;
    f.push_back({true, v.dtype, v.shape, in.valuesFixed ? &in.leaf.data : nullptr});
  }
  return f;
}

bool Builder::judge(Candidate& c, int placeholder) {
  ++stats_.attempts;
  for (const InputChoice& in : c.inputs)
    if (in.present && in.existing < 0 && !in.valuesFixed && !withinLimits(in.leaf.shape))
      return false;
  c.numbersWrong = false;
  try {
    c.outputs = ops::inferNode(*c.entry->spec, c.node, facts(c));
  } catch (const ops::Infeasible&) {
    return false;  // ranks or structural attributes: no numbers can fix it
  } catch (const ops::ShapeError&) {
    c.numbersWrong = true;  // dims, contents or symbolic attributes: z3 may find some that fit
    return false;
  } catch (const Error&) {
    return false;
  }
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    const auto& o = c.outputs[i];
    if (!withinLimits(o.shape)) return false;
    if (std::find(cfg_.dtypes.begin(), cfg_.dtypes.end(), o.dtype) == cfg_.dtypes.end())
      return false;
  }
  if (placeholder >= 0) {
    const Value& p = values_[static_cast<size_t>(placeholder)];
    if (c.outputs[0].dtype != p.dtype || c.outputs[0].shape != p.shape) return false;
  }
  // A node inserted before others reads nothing they compute, nor the value it computes.
  for (const InputChoice& in : c.inputs)
    if (in.existing >= 0 && (in.existing == placeholder ||
                             later_.count(values_[static_cast<size_t>(in.existing)].name)))
      return false;
  return true;
}

// Keeps the candidate's structure (op, inputs, ranks, which attributes are set) and lets z3
// choose its numbers: dims of fresh leaves, shape-operand contents and symbolic attributes.
bool Builder::solve(Candidate& c, int placeholder) {
  const OpSpec& spec = *c.entry->spec;
  z3::context& ctx = z3ctx();
  auto f = facts(c);
  // Shape operands expose their contents to the solver even though they were sampled.
  solver::SymbolicNode sym = solver::symbolize(ctx, spec, c.node, f);
  ops::Rule<z3::expr> rule = sym.rule(spec, c.node);
  try {
    spec.ruleSymbolic(rule);
  } catch (const Error&) {
    return false;  // infeasible structure: no numbers can fix it
  }
  z3::solver s = solver::makeSolver(ctx, static_cast<unsigned>(rng_.next() & 0x7fffffff));
  for (const auto& k : rule.constraints()) s.add(k);
  z3::expr_vector prefer(ctx);
  using Kind = solver::SymbolicNode::Binding::Kind;
  for (const auto& b : sym.bindings) {
    const InputChoice* in = b.kind == Kind::Attr ? nullptr : &c.inputs[b.input];
    const bool fixed = in && in->existing >= 0;
    if (fixed || (b.kind == Kind::Dim && in->valuesFixed)) {
      s.add(b.var == ctx.int_val(b.value));
      continue;
    }
    if (b.kind == Kind::Dim) {
      s.add(b.var >= ctx.int_val(cfg_.minDim) && b.var <= ctx.int_val(cfg_.maxDim));
    } else if (b.kind == Kind::Attr) {
      const AttrSpec* as = spec.attrSpec(b.attr);
      s.add(b.var >= ctx.int_val(as->lo) && b.var <= ctx.int_val(as->hi));
    } else {
      s.add(b.var >= ctx.int_val(-cfg_.maxElements) && b.var <= ctx.int_val(cfg_.maxElements));
    }
    if (rng_.chance(0.5)) prefer.push_back(b.var == ctx.int_val(b.value));  // stay near the draw
  }
  const Value* target = placeholder >= 0 ? &values_[static_cast<size_t>(placeholder)] : nullptr;
  for (size_t i = 0; i < rule.outputs().size(); ++i) {
    if (!rule.outputs()[i]) continue;
    const auto& dims = rule.outputs()[i]->dims;
    for (size_t a = 0; a < dims.size(); ++a) {
      if (target && i == 0) {
        if (dims.size() != target->shape.size()) return false;
        s.add(dims[a] == ctx.int_val(target->shape[a]));
      } else {
        s.add(dims[a] >= 1 && dims[a] <= ctx.int_val(cfg_.maxElements));
      }
    }
  }
  ++stats_.z3Checks;
  ++stats_.z3ChecksByOp[spec.type];
  if (s.check(prefer) != z3::sat) return false;
  z3::model m = s.get_model();
  auto eval = [&](const z3::expr& v) { return m.eval(v, true).get_numeral_int64(); };
  std::map<size_t, std::vector<int64_t>> contents;  // solved shape-operand contents by input
  for (const auto& b : sym.bindings) {
    const int64_t v = eval(b.var);
    if (b.kind == Kind::Attr) {
      for (Attribute& a : c.node.attributes)
        if (a.name == b.attr) {
          if (a.kind == Attribute::Kind::Int)
            a.i = v;
          else
            a.ints[b.position] = v;
        }
      continue;
    }
    InputChoice& in = c.inputs[b.input];
    if (in.existing >= 0) continue;
    if (b.kind == Kind::Dim && !in.valuesFixed) in.leaf.shape[b.position] = v;
    if (b.kind == Kind::Value) {
      auto& vals = contents.try_emplace(b.input, in.leaf.data.toInt64s()).first->second;
      vals[b.position] = v;
    }
  }
  for (auto& [i, vals] : contents) {
    Value& leaf = c.inputs[i].leaf;
    leaf.data = castTensor(Tensor::fromVector<int64_t>(leaf.data.shape(), vals), leaf.dtype);
  }
  ++stats_.solvedInsertions;
  return judge(c, placeholder);
}

void Builder::commit(Candidate& c, bool backward, int placeholder) {
  const OpSpec& spec = *c.entry->spec;
  Rng valueRng = rng_.fork(static_cast<uint64_t>(nodes_.size()));
  c.node.inputs.clear();
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    InputChoice& in = c.inputs[i];
    if (!in.present) {
      c.node.inputs.emplace_back();
      continue;
    }
    if (in.existing >= 0) {
      c.node.inputs.push_back(values_[static_cast<size_t>(in.existing)].name);
      continue;
    }
    if (in.leafIsInitializer && !in.valuesFixed) {
      const ops::InputSpec& is = spec.inputSpec(i);
      in.leaf.data = randomTensor(valueRng, in.leaf.dtype, in.leaf.shape, is.domain);
      if (is.domain == ValueDomain::Indices) {
        std::vector<Shape> shapes;
        for (const InputChoice& other : c.inputs)
          shapes.push_back(!other.present ? Shape{}
                           : other.existing >= 0
                               ? values_[static_cast<size_t>(other.existing)].shape
                               : other.leaf.shape);
        ops::makeIndicesValid(spec, i, c.node, shapes, in.leaf.data);
      }
    }
    c.node.inputs.push_back(in.leaf.name);
    values_.push_back(in.leaf);
  }
  c.node.name = spec.type + "_" + std::to_string(nodes_.size());
  c.node.outputs.clear();
  for (int o = 0; o < c.outputCount; ++o) {
    if (placeholder >= 0 && o == 0) {
      Value& p = values_[static_cast<size_t>(placeholder)];
      p.kind = Value::Kind::Computed;
      p.producer = spec.type;
      c.node.outputs.push_back(p.name);
      continue;
    }
    Value v{fresh("v"),
            c.outputs[static_cast<size_t>(o)].dtype,
            c.outputs[static_cast<size_t>(o)].shape,
            Value::Kind::Computed,
            {}};
    v.producer = spec.type;
    c.node.outputs.push_back(v.name);
    values_.push_back(v);
  }
  // A backward node reads only fresh leaves, so the front keeps the order topological; a
  // forward node computing a placeholder goes before the nodes reading it (judge saw to it that
  // it reads nothing they compute).
  if (backward)
    nodes_.insert(nodes_.begin(), c.node);
  else if (placeholder >= 0)
    nodes_.insert(nodes_.begin() + static_cast<long>(insertAt_), c.node);
  else
    nodes_.push_back(c.node);
}

bool Builder::place(Candidate& c, bool backward, int placeholder) {
  if (!cfg_.finiteValues) {
    commit(c, backward, placeholder);
    return true;
  }
  std::vector<Value> values = values_;
  std::vector<Node> nodes = nodes_;
  const int counter = counter_;
  commit(c, backward, placeholder);
  if (keepsFinite(*c.entry->spec, backward || placeholder >= 0)) return true;
  values_ = std::move(values);
  nodes_ = std::move(nodes);
  counter_ = counter;
  ++stats_.valueRejected;
  return false;
}

int Builder::indexNamed(const std::string& name) const {
  for (size_t v = 0; v < values_.size(); ++v)
    if (values_[v].name == name) return static_cast<int>(v);
  return -1;
}

Value* Builder::valueNamed(const std::string& name) {
  const int v = indexNamed(name);
  return v < 0 ? nullptr : &values_[static_cast<size_t>(v)];
}

// Search moves bodies' initializers too: the bodies of `from`'s nodes (a search's copy of some of
// `to`) go back into the nodes of `to` that compute the same first output.
void takeBodies(const std::vector<Node>& from, std::vector<Node>& to) {
  std::map<std::string, const Node*> searched;
  for (const Node& n : from)
    if (!n.subgraphs().empty()) searched[n.outputs.at(0)] = &n;
  for (Node& n : to)
    if (auto it = searched.find(n.outputs.at(0)); it != searched.end())
      n.attributes = it->second->attributes;
}

// A forward node only adds values: its own run decides. A backward node changes a graph input
// into a computed value, and search moves every leaf: both recompute the whole model.
bool Builder::keepsFinite(const OpSpec& spec, bool backward) {
  const auto start = std::chrono::steady_clock::now();
  struct Clock {
    std::chrono::steady_clock::time_point start;
    double& total;
    ~Clock() {
      total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  } clock{start, stats_.valueSeconds};
  Rng valueRng = rng_.fork(static_cast<uint64_t>(counter_));
  for (Value& v : values_)
    if (v.kind == Value::Kind::Input && !v.hasData) {
      v.data = randomTensor(valueRng, v.dtype, v.shape, ValueDomain::Any);
      v.hasData = true;
    }
  // A short search: when it fails, another node is usually cheaper than a longer search.
  const ValueSearchOptions options{.maxSteps = 10, .restarts = 0};
  if (!backward) {
    const Node& node = nodes_.back();
    for (const std::string& in : valuesRead(node))
      if (const Value* v = valueNamed(in); v && v->kind != Value::Kind::Computed)
        current_[in] = v->data;
    std::vector<Tensor> outs = runNode(node, nodes_.size() - 1, cfg_.opset, current_);
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) current_[node.outputs[i]] = std::move(outs[i]);
    // Values named by a node taken back are overwritten when the name comes again. A node
    // with bodies is judged inside them too, by the search's unrolled run.
    if (node.subgraphs().empty() && checkNode(spec, node, current_, options.valueBound) == 0)
      return true;
  }
  ++stats_.valueSearches;
  TestCase partial = assemble();
  if (!backward) {
    // Only the new node's ancestors can fix it: search them alone first (about half the model),
    // then check the whole.
    TestCase cone = subModelFor(partial, partial.model.graph.nodes.size() - 1, current_);
    if (!searchValues(cone, options).finite) return false;
    for (auto& [name, t] : cone.inputs) partial.inputs[name] = t;
    for (Initializer& w : partial.model.graph.initializers)
      if (const Initializer* moved = cone.model.graph.initializer(w.name)) w.value = moved->value;
    takeBodies(cone.model.graph.nodes, partial.model.graph.nodes);
  }
  if (!searchValues(partial, options).finite) return false;
  for (auto& [name, t] : partial.inputs) valueNamed(name)->data = t;
  for (const Initializer& w : partial.model.graph.initializers) valueNamed(w.name)->data = w.value;
  takeBodies(partial.model.graph.nodes, nodes_);
  current_ = runReferenceAllValues(partial.model, partial.inputs);
  return true;
}

bool Builder::insert(bool backward, int placeholder) {
  if (backward) {
    std::vector<int> inputs;
    for (size_t v = 0; v < values_.size(); ++v)
      if (values_[v].kind == Value::Kind::Input) inputs.push_back(static_cast<int>(v));
    if (inputs.empty()) return false;
    placeholder = rng_.pick(inputs);
  }
  std::vector<double> w;
  for (const OpEntry& e : table_)
    w.push_back(!forcedOp_.empty() && e.spec->type != forcedOp_
                    ? 0.0
                    : e.weight * (backward ? 1.0 : pairBoost(e)));
  if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; })) return false;
  for (int tries = 0; tries < kOpsPerInsertion; ++tries) {
    const OpEntry& e = table_[rng_.weighted(w)];
    if (gen::hasSubgraphs(*e.spec)) {
      if (!backward && placeholder < 0 && !body_ && insertControlFlow(e)) return true;
      continue;
    }
    std::optional<Candidate> last;
    for (int draw = 0; draw < kDrawsBeforeSolving; ++draw) {
      pollDeadline(1000);  // a draw and its judgement: tens of microseconds
      auto c = drawCandidate(e, backward, placeholder);
      if (!c) break;
      if (judge(*c, placeholder)) {
        if (place(*c, backward, placeholder)) return true;
        continue;
      }
      ++stats_.rejected;
      if (c->numbersWrong) last = std::move(c);
    }
    // z3 costs as much as hundreds of draws: it gets a share of the ops that sampling fails.
    if (last && cfg_.useSolver && rng_.chance(cfg_.solverShare) && solve(*last, placeholder) &&
        place(*last, backward, placeholder))
      return true;
  }
  return false;
}

double Builder::pairBoost(const OpEntry& e) const {
  double boost = 1;
  if (cfg_.pairWeights.empty()) return boost;
  const auto& allowed = e.dtypesOfInput(0);
  for (const Value& v : values_)
    if (v.kind == Value::Kind::Computed &&
        std::find(allowed.begin(), allowed.end(), v.dtype) != allowed.end())
      boost = std::max(boost, pairWeight(v.producer, e.spec->type));
  return boost;
}

std::map<std::string, std::string> Builder::adopt(const TestCase& tc,
                                                  const std::vector<size_t>& keep,
                                                  const TensorMap& values) {
  const Graph& g = tc.model.graph;
  std::map<std::string, std::string> renamed;  // the parent's names to this model's
  auto add = [&](Value v, const Tensor& t) {
    if (cfg_.finiteValues) current_[v.name] = t;
    values_.push_back(std::move(v));
    return values_.back().name;
  };
  auto read = [&](const std::string& old) {
    if (auto it = renamed.find(old); it != renamed.end()) return it->second;
    const Initializer* init = g.initializer(old);
    const Tensor& t = init ? init->value : values.at(old);
    const std::string name = add({fresh(init ? "w" : "x"), t.dtype(), t.shape(),
                                  init ? Value::Kind::Initializer : Value::Kind::Input, t, true},
                                 t);
    renamed[old] = name;
    return name;
  };
  for (size_t i : keep) {
    Node n = g.nodes[i];
    for (std::string& in : n.inputs)
      if (!in.empty()) in = read(in);
    n.name = n.opType + "_" + std::to_string(nodes_.size());
    for (std::string& out : n.outputs) {
      if (out.empty()) continue;
      const Tensor& t = values.at(out);
      Value v{fresh("v"), t.dtype(), t.shape(), Value::Kind::Computed, {}, false};
      v.producer = n.opType;
      const std::string old = out;
      out = add(std::move(v), t);
      renamed[old] = out;
    }
    nodes_.push_back(std::move(n));
  }
  return renamed;
}

bool Builder::insertAimed(const std::string& op, int first, int placeholder, size_t at) {
  forcedOp_ = op;
  forcedFirst_ = first;
  insertAt_ = at;
  if (placeholder >= 0)
    for (size_t i = at; i < nodes_.size(); ++i)
      later_.insert(nodes_[i].outputs.begin(), nodes_[i].outputs.end());
  const bool placed = insert(false, placeholder);
  forcedOp_.clear();
  forcedFirst_ = -1;
  later_.clear();
  return placed;
}

// A part of a seed pattern: the whole when it leaves room for surroundings, else a window of
// consecutive nodes (inputs computed outside the window become graph inputs).
void Builder::plantSeed() {
  const TestCase& seed = (*cfg_.seeds)[rng_.index(cfg_.seeds->size())];
  const size_t n = seed.model.graph.nodes.size();
  const size_t room = static_cast<size_t>(std::max(1, cfg_.nodes - 1));
  const size_t length = n <= room ? n : std::max<size_t>(1, room / 2);
  const size_t start = rng_.index(n - length + 1);
  std::vector<size_t> keep;
  for (size_t i = start; i < start + length; ++i) keep.push_back(i);
  adopt(seed, keep, runReferenceAllValues(seed.model, seed.inputs));
}

Builder::Body Builder::growBody(const std::vector<Value>& inputs) {
  GeneratorConfig cfg = cfg_;
  cfg.finiteValues = false;  // the node's run is checked whole, once its bodies are done
  cfg.seeds = nullptr;
  Builder b(cfg, table_, rng_.next(), stats_);
  b.body_ = true;
  b.counter_ = counter_;  // names stay unique across the nested graphs, as ONNX requires
  for (const Value& v : values_)
    if (v.kind != Value::Kind::Initializer) b.values_.push_back(v);
  const size_t captured = b.values_.size();
  b.values_.insert(b.values_.end(), inputs.begin(), inputs.end());
  const int64_t n = rng_.uniform(1, 3);
  for (int64_t k = 0; k < n; ++k)
    if (!b.insert(false)) break;
  counter_ = b.counter_;
  Body body;
  for (const Value& v : inputs)
    body.graph.inputs.push_back(ValueInfo::tensor(v.name, v.dtype, v.shape));
  body.graph.nodes = std::move(b.nodes_);
  for (size_t v = captured + inputs.size(); v < b.values_.size(); ++v)
    if (b.values_[v].kind == Value::Kind::Initializer)
      body.graph.initializers.push_back({b.values_[v].name, b.values_[v].data, ""});
  body.values = std::move(b.values_);
  return body;
}

std::string Builder::bodyOutput(Body& b, DType t, const Shape& s, const std::string& fallback,
                                const std::string& avoid) {
  std::set<std::string> own;
  for (const Node& n : b.graph.nodes) own.insert(n.outputs.begin(), n.outputs.end());
  for (auto v = b.values.rbegin(); v != b.values.rend(); ++v)
    if (own.count(v->name) && v->name != avoid && (t == DType::Undefined || v->dtype == t) &&
        (t == DType::Undefined || v->shape == s))
      return v->name;
  if (t == DType::Undefined) return "";
  Node copy = Node::make("Identity", {fallback}, {fresh("v")});
  copy.name = "Identity_" + copy.outputs[0];
  b.values.push_back({copy.outputs[0], t, s, Value::Kind::Computed, {}});
  b.graph.nodes.push_back(copy);
  return copy.outputs[0];
}

bool Builder::insertControlFlow(const OpEntry& e) {
  const std::string& op = e.spec->type;
  auto allowed = [&](DType t) {
    return std::find(cfg_.dtypes.begin(), cfg_.dtypes.end(), t) != cfg_.dtypes.end();
  };
  std::vector<int> readable;  // what a node reads and a body carries: the config's dtypes
  for (size_t v = 0; v < values_.size(); ++v)
    if (values_[v].kind != Value::Kind::Initializer && allowed(values_[v].dtype))
      readable.push_back(static_cast<int>(v));
  if (readable.empty()) return false;
  const Value carried = values_[static_cast<size_t>(rng_.pick(readable))];
  auto scalarInit = [&](const char* prefix, Tensor t) {
    values_.push_back({fresh(prefix), t.dtype(), t.shape(), Value::Kind::Initializer, t, true});
    return values_.back().name;
  };
  auto typed = [](const std::string& name, const Value& like) {
    return Value{name, like.dtype, like.shape, Value::Kind::Input, {}};
  };
  std::vector<Value> saved = values_;
  const int counter = counter_;
  Node node;
  node.opType = op;
  std::vector<ops::TensorType> outs;
  if (op == "If") {
    node.inputs = {scalarInit("w", Tensor::scalar<bool>(rng_.chance(0.5)))};
    for (const char* branch : {"then_branch", "else_branch"}) {
      Body b = growBody({});
      b.graph.name = fresh(branch == std::string("then_branch") ? "then" : "else");
      const std::string out = bodyOutput(b, carried.dtype, carried.shape, carried.name);
      b.graph.outputs = {ValueInfo::tensor(out, carried.dtype, carried.shape)};
      node.attributes.push_back(Attribute::ofGraph(branch, std::move(b.graph)));
    }
    outs = {{carried.dtype, carried.shape}};
  } else if (op == "Loop") {
    const int64_t trips = rng_.uniform(1, 3);
    node.inputs = {scalarInit("w", Tensor::scalar<int64_t>(trips)),
                   rng_.chance(0.5) ? scalarInit("w", Tensor::scalar<bool>(true)) : "",
                   carried.name};
    const Value iter{fresh("i"), DType::Int64, {}, Value::Kind::Input, {}};
    const Value cond{fresh("c"), DType::Bool, {}, Value::Kind::Input, {}};
    const Value in = typed(fresh("x"), carried);
    Body b = growBody({iter, cond, in});
    b.graph.name = fresh("body");
    const std::string condOut = bodyOutput(b, DType::Bool, {}, cond.name);
    const std::string next = bodyOutput(b, in.dtype, in.shape, in.name, condOut);
    b.graph.outputs = {ValueInfo::tensor(condOut, DType::Bool, {}),
                       ValueInfo::tensor(next, in.dtype, in.shape)};
    outs = {{carried.dtype, carried.shape}};
    if (rng_.chance(0.6)) {  // a scan output: the last value the body computed
      std::string scanned = bodyOutput(b, DType::Undefined, {}, "", condOut);
      if (scanned.empty() || scanned == next)
        scanned = bodyOutput(b, in.dtype, in.shape, in.name, next);
      const Value& v = *std::find_if(b.values.begin(), b.values.end(),
                                     [&](const Value& x) { return x.name == scanned; });
      b.graph.outputs.push_back(ValueInfo::tensor(scanned, v.dtype, v.shape));
      Shape s = v.shape;
      s.insert(s.begin(), trips);
      outs.push_back({v.dtype, s});
    }
    node.attributes.push_back(Attribute::ofGraph("body", std::move(b.graph)));
  } else {  // Scan: one state, one scan input
    std::vector<int> sequences;
    for (int v : readable)
      if (!values_[static_cast<size_t>(v)].shape.empty()) sequences.push_back(v);
    if (sequences.empty()) return false;
    const Value xs = values_[static_cast<size_t>(rng_.pick(sequences))];
    const int64_t axis = rng_.uniform(0, static_cast<int64_t>(xs.shape.size()) - 1);
    Shape slice = xs.shape;
    slice.erase(slice.begin() + axis);
    const Value state = typed(fresh("x"), carried);
    const Value item{fresh("x"), xs.dtype, slice, Value::Kind::Input, {}};
    Body b = growBody({state, item});
    b.graph.name = fresh("body");
    const std::string next = bodyOutput(b, state.dtype, state.shape, state.name);
    std::string scanned = bodyOutput(b, DType::Undefined, {}, "", next);
    if (scanned.empty() || scanned == next)
      scanned = bodyOutput(b, item.dtype, item.shape, item.name, next);
    const Value& v = *std::find_if(b.values.begin(), b.values.end(),
                                   [&](const Value& x) { return x.name == scanned; });
    b.graph.outputs = {ValueInfo::tensor(next, state.dtype, state.shape),
                       ValueInfo::tensor(scanned, v.dtype, v.shape)};
    const bool reversed = rng_.chance(0.3);
    const int64_t outAxis = rng_.uniform(0, static_cast<int64_t>(v.shape.size()));
    Shape s = v.shape;
    s.insert(s.begin() + outAxis, xs.shape[static_cast<size_t>(axis)]);
    outs = {{carried.dtype, carried.shape}, {v.dtype, s}};
    node.inputs = {carried.name, xs.name};
    node.attributes = {Attribute::ofGraph("body", std::move(b.graph)),
                       Attribute::ofInt("num_scan_inputs", 1)};
    if (axis != 0) node.attributes.push_back(Attribute::ofInts("scan_input_axes", {axis}));
    if (reversed) node.attributes.push_back(Attribute::ofInts("scan_input_directions", {1}));
    if (outAxis != 0) node.attributes.push_back(Attribute::ofInts("scan_output_axes", {outAxis}));
  }
  for (const auto& o : outs)
    if (!withinLimits(o.shape)) {
      values_ = std::move(saved);
      counter_ = counter;
      return false;
    }
  std::vector<Node> nodes = nodes_;
  node.name = op + "_" + std::to_string(nodes_.size());
  for (const auto& o : outs) {
    Value v{fresh("v"), o.dtype, o.shape, Value::Kind::Computed, {}};
    v.producer = op;
    node.outputs.push_back(v.name);
    values_.push_back(v);
  }
  nodes_.push_back(std::move(node));
  ++stats_.attempts;
  if (!cfg_.finiteValues || keepsFinite(*e.spec, false)) return true;
  values_ = std::move(saved);
  nodes_ = std::move(nodes);
  counter_ = counter;
  ++stats_.valueRejected;
  return false;
}

TestCase Builder::growTo(size_t nodes) {
  if (values_.empty()) {
    // The first leaf: a graph input of a dtype some op can consume.
    const int64_t rank =
        rng_.uniform(std::min<int64_t>(2, cfg_.maxRank), std::min<int64_t>(4, cfg_.maxRank));
    DType t = drawLeafDType(cfg_.dtypes);
    values_.push_back({fresh("x"), t, drawShape(rank), Value::Kind::Input, {}});
  }
  int failures = 0;
  while (nodes_.size() < nodes) {
    bool backward = !nodes_.empty() && rng_.chance(cfg_.backwardProbability);
    if (insert(backward)) continue;
    // A dead end (say, only bool values and no op takes them): a fresh input opens new paths.
    if (++failures > 64)
      throw Error("generator: cannot grow the model past " + std::to_string(nodes_.size()) +
                  " nodes with this config (seed " + std::to_string(seed_) + ")");
    const int64_t rank = rng_.uniform(1, std::min<int64_t>(4, cfg_.maxRank));
    values_.push_back(
        {fresh("x"), drawLeafDType(cfg_.dtypes), drawShape(rank), Value::Kind::Input, {}});
  }
  return assemble();
}

TestCase Builder::build() {
  if (cfg_.seeds && !cfg_.seeds->empty() && rng_.chance(cfg_.seedShare)) plantSeed();
  return growTo(static_cast<size_t>(cfg_.nodes));
}

// Mutation kinds, each a way a rewrite's pattern or condition comes about from a case close to
// it. Values computed by nodes left out become graph inputs holding them, so every kept node
// sees what it saw in the parent.
enum class Mutation {
  GrowAfter,     // one to three nodes added (up to twice cfg.nodes), the first reading a value the
                 // parent computed: a pattern of two nodes formed from a case holding one
  InsertBefore,  // a node put between a value and one reader of it, computing a value of the
                 // same shape: a pattern formed from the consumer's side
  Replace,       // one node drawn again (its op or any op, new attributes and operands) computing
                 // a value of its old shape, so that its readers stay
  Redraw,        // one node drawn again (same op and first input), free to change shape, without
                 // the nodes that depended on it, grown back
  Delete,        // one node left out, one or two grown
  Window,        // consecutive nodes kept, grown back to the parent's size
};

// A third of the time, the nodes stay and their numbers or one attribute change instead
// (generators/mutations.h); when that is impossible, a mutation below is made.
TestCase Builder::mutate(const TestCase& parent) {
  const Graph& g = parent.model.graph;
  const size_t n = g.nodes.size();
  // Bodies capture values by name and declare their types: in-place edits and adopted copies
  // would break them, so a parent's control-flow nodes are left out and may grow anew.
  const bool bodies = std::any_of(g.nodes.begin(), g.nodes.end(),
                                  [](const Node& x) { return !x.subgraphs().empty(); });
  if (n > 0 && !bodies && rng_.chance(kInPlaceShare)) {
    std::optional<TestCase> m = rng_.chance(kResolveShare)
                                    ? gen::resolveNumbers(cfg_, parent, rng_)
                                    : gen::redrawAttribute(cfg_, table_, parent, rng_);
    if (m) {
      m->model.graph.name = "nncheck_" + std::to_string(seed_);
      return *m;
    }
  }
  const size_t cap = static_cast<size_t>(2 * std::max(1, cfg_.nodes));
  using M = Mutation;
  const std::vector<M> kinds = n == 0 ? std::vector<M>{M::GrowAfter}
                               : n < cap
                                   ? std::vector<M>{M::GrowAfter, M::InsertBefore, M::Replace,
                                                    M::Redraw,    M::Delete,       M::Window}
                                   : std::vector<M>{M::Replace, M::Redraw, M::Delete, M::Window};
  const M kind = rng_.pick(kinds);
  std::vector<size_t> keep;
  size_t target = n;
  const size_t chosen = n == 0 ? 0 : rng_.index(n);  // the node Replace and Redraw draw again
  switch (kind) {
    case M::GrowAfter:
    case M::InsertBefore:
      for (size_t i = 0; i < n; ++i) keep.push_back(i);
      if (kind == M::GrowAfter) target = std::min(cap, n + static_cast<size_t>(rng_.uniform(1, 3)));
      break;
    case M::Replace:
    case M::Delete:
      for (size_t i = 0; i < n; ++i)
        if (i != chosen) keep.push_back(i);
      if (kind == M::Delete)
        target = std::min(cap, n - 1 + static_cast<size_t>(rng_.uniform(1, 2)));
      break;
    case M::Window: {
      const size_t length = static_cast<size_t>(rng_.uniform(1, static_cast<int64_t>(n)));
      const size_t start = rng_.index(n - length + 1);
      for (size_t i = start; i < start + length; ++i) keep.push_back(i);
      target = std::max(n, length + 1);
      break;
    }
    case M::Redraw: {
      std::set<std::string> tainted(g.nodes[chosen].outputs.begin(), g.nodes[chosen].outputs.end());
      for (size_t i = 0; i < n; ++i) {
        bool depends = i == chosen;
        for (const std::string& in : g.nodes[i].inputs) depends |= i > chosen && tainted.count(in);
        if (depends)
          tainted.insert(g.nodes[i].outputs.begin(), g.nodes[i].outputs.end());
        else
          keep.push_back(i);
      }
      break;
    }
  }
  std::erase_if(keep, [&](size_t i) { return !g.nodes[i].subgraphs().empty(); });
  const std::map<std::string, std::string> renamed =
      adopt(parent, keep, runReferenceAllValues(parent.model, parent.inputs));
  auto indexOf = [&](const std::string& parentName) {
    auto it = renamed.find(parentName);
    return it == renamed.end() ? -1 : indexNamed(it->second);
  };
  // Each aimed insertion below may find no node that fits; the growth that follows is unaimed.
  const std::string repeated =
      n > 0 && rng_.chance(kRepeatShare) ? g.nodes[rng_.index(n)].opType : std::string();
  if (kind == M::GrowAfter) {
    std::vector<int> computed;
    for (size_t v = 0; v < values_.size(); ++v)
      if (values_[v].kind == Value::Kind::Computed) computed.push_back(static_cast<int>(v));
    if (!computed.empty()) {
      const int first = rng_.pick(computed);
      if (!insertAimed(repeated, first) && !repeated.empty()) insertAimed("", first);
    }
  } else if (kind == M::InsertBefore) {
    // (reader, input) of a value not a weight, read as plain data: a node computing indices or
    // a divisor would break what the reader needs of its values.
    std::vector<std::pair<size_t, size_t>> edges;
    for (size_t i = 0; i < nodes_.size(); ++i)
      for (size_t k = 0; k < nodes_[i].inputs.size(); ++k) {
        const ops::InputSpec& is = ops::specFor(nodes_[i], cfg_.opset).inputSpec(k);
        if (is.role != InputRole::Data || is.domain != ValueDomain::Any) continue;
        if (const Value* v =
                nodes_[i].inputs[k].empty() ? nullptr : valueNamed(nodes_[i].inputs[k]);
            v && v->kind != Value::Kind::Initializer)
          edges.emplace_back(i, k);
      }
    if (!edges.empty()) {
      const auto [reader, input] = rng_.pick(edges);
      std::string& edge = nodes_[reader].inputs[input];
      const std::string read = edge;
      const int first = indexNamed(read);
      const Value& v = values_[static_cast<size_t>(first)];
      values_.push_back({fresh("v"), v.dtype, v.shape, Value::Kind::Input, {}});
      const int placeholder = static_cast<int>(values_.size()) - 1;
      edge = values_.back().name;
      if (!insertAimed(repeated, first, placeholder, reader) &&
          (repeated.empty() || !insertAimed("", first, placeholder, reader)))
        nodes_[reader].inputs[input] = read;  // the placeholder, unread, is left out
    }
  } else if (kind == M::Replace || kind == M::Redraw) {
    const Node& old = g.nodes[chosen];
    const std::string op = kind == M::Redraw || rng_.chance(0.5) ? old.opType : "";
    const int first = old.inputs.empty() ? -1 : indexOf(old.inputs[0]);
    const int placeholder = kind == M::Replace ? indexOf(old.outputs[0]) : -1;
    // Where the chosen node was among the kept ones (control-flow nodes may be left out).
    const size_t at = static_cast<size_t>(
        std::count_if(keep.begin(), keep.end(), [&](size_t i) { return i < chosen; }));
    if (placeholder >= 0)
      insertAimed(op, first, placeholder, at);
    else if (first >= 0 || kind == M::Redraw)
      insertAimed(op, first);
  }
  return growTo(target);
}

TestCase Builder::assemble() const {
  TestCase tc;
  tc.seed = seed_;
  Model& m = tc.model;
  m.irVersion = 8;
  m.opsets = {{"", cfg_.opset}};
  m.producerName = "nncheck";
  m.graph.name = "nncheck_" + std::to_string(seed_);
  m.graph.nodes = nodes_;
  std::vector<int> consumers(values_.size(), 0);
  std::map<std::string, size_t> index;
  for (size_t v = 0; v < values_.size(); ++v) index[values_[v].name] = v;
  for (const Node& n : nodes_)
    for (const std::string& in : valuesRead(n)) ++consumers[index.at(in)];
  for (size_t v = 0; v < values_.size(); ++v) {
    const Value& val = values_[v];
    if (val.kind == Value::Kind::Input && consumers[v] > 0) {
      m.graph.inputs.push_back(ValueInfo::tensor(val.name, val.dtype, val.shape));
      if (cfg_.finiteValues) tc.inputs[val.name] = val.data;
    } else if (val.kind == Value::Kind::Initializer && consumers[v] > 0)
      m.graph.initializers.push_back({val.name, val.data, ""});
    else if (val.kind == Value::Kind::Computed && consumers[v] == 0)
      m.graph.outputs.push_back(ValueInfo::tensor(val.name, val.dtype, val.shape));
  }
  return tc;
}

}  // namespace

GeneratorConfig configFor(const Capabilities& caps, int nodes) {
  GeneratorConfig cfg;
  cfg.nodes = nodes;
  cfg.ops = caps.ops;
  if (!caps.dtypes.empty()) cfg.dtypes = caps.dtypes;
  cfg.opset = caps.opset;
  // An engine that takes weights from anywhere gets them from anywhere, sometimes computed.
  cfg.weightsAsInitializers = caps.weightsMustBeInitializers;
  cfg.opWeights = caps.opWeights;
  return cfg;
}

void validateConfig(const GeneratorConfig& cfg) { gen::buildOpTable(cfg); }

std::vector<std::string> usableOps(const GeneratorConfig& cfg) {
  std::vector<std::string> out;
  for (const auto& e : gen::buildOpTable(cfg)) out.push_back(e.spec->type);
  return out;
}

TestCase makeTestCase(const GeneratorConfig& cfg, uint64_t seed, GenerationStats* stats) {
  const ops::DefinedOnly definedOnly;
  GenerationStats local;
  const auto table = gen::buildOpTable(cfg);
  Builder b(cfg, table, seed, stats ? *stats : local);
  TestCase tc = b.build();
  if (!cfg.finiteValues) tc.inputs = randomInputs(tc.model, seed);
  return tc;
}

TestCase mutateTestCase(const GeneratorConfig& cfg, const TestCase& parent, uint64_t seed,
                        GenerationStats* stats) {
  const ops::DefinedOnly definedOnly;
  GenerationStats local;
  const auto table = gen::buildOpTable(cfg);
  Builder b(cfg, table, seed, stats ? *stats : local);
  TestCase tc = b.mutate(parent);
  tc.seed = seed;
  if (!cfg.finiteValues) tc.inputs = randomInputs(tc.model, seed);
  return tc;
}

Model generateModel(const GeneratorConfig& cfg, uint64_t seed, GenerationStats* stats) {
  return makeTestCase(cfg, seed, stats).model;
}

TensorMap randomInputs(const Model& model, uint64_t seed) {
  TensorMap out;
  Rng rng(seed ^ 0x5eed5eed5eed5eedull);
  for (const ValueInfo* in : model.graph.feedInputs()) {
    auto shape = in->shape();
    if (!shape) throw Error("randomInputs: input '" + in->name + "' has no fully known shape");
    out[in->name] = randomTensor(rng, in->dtype, *shape, ValueDomain::Any);
  }
  return out;
}

}  // namespace nncheck
