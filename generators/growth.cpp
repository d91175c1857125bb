#include "generators/growth.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "generators/attribute_draw.h"
#include "generators/value_domain.h"
#include "generators/values.h"
#include "interp/run_node.h"
#include "nncheck/error.h"
#include "nncheck/value_search.h"
#include "ops/infer.h"
#include "solver/symbolic.h"

namespace nncheck::gen {

using ops::AttrSampling;
using ops::AttrSpec;
using ops::InputRole;
using ops::OpSpec;
using ops::ValueDomain;

namespace {

constexpr int kDrawsBeforeSolving = 4;
constexpr int kOpsPerInsertion = 12;

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

}  // namespace

// One input of a candidate: absent, an existing value, or a fresh leaf.
struct Growth::InputChoice {
  bool present = false;
  int existing = -1;  // index into values, or -1 for a fresh leaf
  Value leaf;         // fresh leaves; data set now only for shape operands and constants
  bool leafIsInitializer = false;
  bool valuesFixed = false;  // shape operands and an aim's constants: contents set at the draw
};

struct Growth::Candidate {
  const OpEntry* entry = nullptr;
  Node node;
  std::vector<InputChoice> inputs;
  int outputCount = 1;
  std::vector<ops::TensorType> outputs;  // after the rule accepted it
  bool numbersWrong = false;             // rejected by a requirement on numbers, not structure
};

Growth::Growth(const GeneratorConfig& cfg, const std::vector<OpEntry>& table, uint64_t seed,
               GenerationStats& stats, bool body)
    : cfg_(cfg), table_(table), seed_(seed), rng_(seed), stats_(stats), body_(body) {}

Growth::~Growth() = default;

z3::context& Growth::z3ctx() {
  if (!z3_) {
    // Fresh per model and seeded: z3 state never crosses models.
    z3_ = std::make_unique<z3::context>();
    ++stats_.z3Contexts;
  }
  return *z3_;
}

int64_t Growth::drawDim() {
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

Shape Growth::drawShape(int64_t rank) {
  Shape s;
  for (int64_t i = 0; i < rank; ++i) s.push_back(drawDim());
  while (elementCount(s) > cfg_.maxElements)
    for (int64_t& d : s) d = std::max<int64_t>(1, d / 2);
  return s;
}

DType Growth::drawLeafDType(const std::vector<DType>& allowed) {
  std::vector<double> w;
  for (DType t : allowed) w.push_back(t == DType::Float32 ? 6.0 : 1.0);
  return allowed[rng_.weighted(w)];
}

void Growth::addInput(int64_t lo, int64_t hi) {
  const int64_t rank = rng_.uniform(std::min(lo, cfg_.maxRank), std::min(hi, cfg_.maxRank));
  const DType t = drawLeafDType(cfg_.dtypes);
  values_.push_back({fresh("x"), t, drawShape(rank), Value::Kind::Input, {}});
}

void Growth::drawAttributes(Candidate& c, const Aim& aim, int64_t rank0) {
  for (const AttrSpec& a : c.entry->spec->attrs) {
    if (auto given = std::find_if(aim.attributes.begin(), aim.attributes.end(),
                                  [&](const Attribute& x) { return x.name == a.name; });
        given != aim.attributes.end()) {
      c.node.attributes.push_back(*given);
      continue;
    }
    if (a.sampling == AttrSampling::Never || !c.entry->knowsAttribute(a.name)) continue;
    // Optional attributes and those with defaults are set about half the time, so defaults
    // are exercised too.
    if (!a.required && !rng_.chance(a.defaultValue ? 0.5 : 0.6)) continue;
    if (auto v = drawAttribute(rng_, a, c.node, rank0, cfg_.dtypes))
      c.node.attributes.push_back(std::move(*v));
  }
}

std::optional<Growth::Candidate> Growth::drawCandidate(const OpEntry& e, const Aim& aim) {
  // A hint that cannot cope with a draw (say, a rank too small for it) rejects the draw.
  try {
    return drawUnchecked(e, aim);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<Growth::Candidate> Growth::drawUnchecked(const OpEntry& e, const Aim& aim) {
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
  auto read = [&](size_t i) -> const int* {
    auto it = aim.reads.find(i);
    return it == aim.reads.end() ? nullptr : &it->second;
  };

  // Input 0: an existing value (forward), or a fresh leaf shaped like the placeholder.
  InputChoice first;
  first.present = true;
  if (!aim.backward) {
    std::vector<int> ok;
    const auto& allowed = e.dtypesOfInput(0);
    const int* forced = read(0);
    for (size_t v = 0; v < values_.size(); ++v)
      if (std::find(allowed.begin(), allowed.end(), values_[v].dtype) != allowed.end() &&
          values_[v].kind != Value::Kind::Initializer &&
          (!forced || static_cast<int>(v) == *forced))
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
    const Value& p = values_[static_cast<size_t>(aim.placeholder)];
    const auto& allowed = e.dtypesOfInput(0);
    DType t = std::find(allowed.begin(), allowed.end(), p.dtype) != allowed.end()
                  ? p.dtype
                  : drawLeafDType(allowed);
    bound[e.typeVarIndex(0)] = t;
    onnxBound.emplace(e.onnxTypeParam(0), t);
    first.leafIsInitializer = aim.constantLeaves;
    first.leaf = {fresh(aim.constantLeaves ? "w" : "x"),
                  t,
                  p.shape,
                  aim.constantLeaves ? Value::Kind::Initializer : Value::Kind::Input,
                  {}};
  }
  c.inputs.push_back(first);
  const Shape shape0 =
      first.existing >= 0 ? values_[static_cast<size_t>(first.existing)].shape : first.leaf.shape;
  drawAttributes(c, aim, static_cast<int64_t>(shape0.size()));

  // Outputs first: Split's sampler divides its axis among them.
  int outs = static_cast<int>(spec.outputs.size());
  if (spec.outputs.size() == 1 && spec.outputs[0].maxCount > 1) {
    outs = static_cast<int>(rng_.uniform(1, spec.outputs[0].maxCount));  // a variadic list
  } else {
    while (outs > 1 && spec.outputs[static_cast<size_t>(outs) - 1].optional &&
           (aim.backward || !rng_.chance(0.25)))
      --outs;
  }
  c.outputCount = outs;
  c.node.outputs.assign(static_cast<size_t>(outs), "?");

  // Which inputs are present: an aimed one always.
  size_t count = spec.inputs.size();
  if (spec.isVariadic()) count = spec.inputs.size() - 1 + static_cast<size_t>(rng_.uniform(1, 3));
  std::vector<bool> present(count, true);
  for (size_t i = 1; i < count; ++i) {
    const ops::InputSpec& is = spec.inputSpec(i);
    if (is.optional)
      present[i] = is.alwaysGenerated || (is.generated && rng_.chance(0.5)) || read(i) ||
                   aim.constants.count(i);
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
    if (const int* v = read(i)) {
      const Value& val = values_[static_cast<size_t>(*v)];
      if (val.dtype != t) return std::nullopt;
      in.existing = *v;
      ctx.inputShapes.back() = val.shape;
      c.inputs.push_back(in);
      continue;
    }
    if (auto k = aim.constants.find(i); k != aim.constants.end()) {
      const Tensor v = castTensor(Tensor::scalar<double>(k->second), t);
      in.leaf = {fresh("w"), t, v.shape(), Value::Kind::Initializer, v};
      in.leafIsInitializer = true;
      in.valuesFixed = true;
    } else if (is.role != InputRole::Data) {
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
      if (!needsValues && !asWeight && !aim.backward && rng_.chance(0.5)) {
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
      in.leafIsInitializer =
          needsValues || asWeight || body_ || aim.constantLeaves || rng_.chance(0.2);
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

std::vector<ops::InputFacts> Growth::facts(const Candidate& c) const {
  std::vector<ops::InputFacts> f;
  for (const InputChoice& in : c.inputs) {
    if (!in.present) {
      f.push_back({});
      continue;
    }
    // Only shape operands and constants have contents before commit; existing values are never
    // initializers.
    const Value& v = in.existing >= 0 ? values_[static_cast<size_t>(in.existing)] : in.leaf;
    f.push_back({true, v.dtype, v.shape, in.valuesFixed ? &in.leaf.data : nullptr});
  }
  return f;
}

bool Growth::judge(Candidate& c, const Aim& aim, const std::set<std::string>& later) {
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
  if (aim.placeholder >= 0) {
    const Value& p = values_[static_cast<size_t>(aim.placeholder)];
    if (c.outputs[0].dtype != p.dtype || c.outputs[0].shape != p.shape) return false;
  }
  // A node inserted before others reads nothing they compute, nor the value it computes.
  for (const InputChoice& in : c.inputs)
    if (in.existing >= 0 && (in.existing == aim.placeholder ||
                             later.count(values_[static_cast<size_t>(in.existing)].name)))
      return false;
  return true;
}

// Keeps the candidate's structure (op, inputs, ranks, which attributes are set) and lets z3
// choose its numbers: dims of fresh leaves, shape-operand contents and symbolic attributes.
bool Growth::solve(Candidate& c, const Aim& aim, const std::set<std::string>& later) {
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
    const bool fixed =
        (in && in->existing >= 0) ||
        (b.kind == Kind::Attr && std::any_of(aim.attributes.begin(), aim.attributes.end(),
                                             [&](const Attribute& a) { return a.name == b.attr; }));
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
  const Value* target =
      aim.placeholder >= 0 ? &values_[static_cast<size_t>(aim.placeholder)] : nullptr;
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
  return judge(c, aim, later);
}

void Growth::commit(Candidate& c, const Aim& aim) {
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
    if (aim.placeholder >= 0 && o == 0) {
      Value& p = values_[static_cast<size_t>(aim.placeholder)];
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
  if (aim.backward)
    nodes_.insert(nodes_.begin(), c.node);
  else if (aim.placeholder >= 0)
    nodes_.insert(nodes_.begin() + static_cast<long>(aim.at), c.node);
  else
    nodes_.push_back(c.node);
}

bool Growth::place(Candidate& c, const Aim& aim) {
  if (!cfg_.finiteValues) {
    commit(c, aim);
    return true;
  }
  std::vector<Value> values = values_;
  std::vector<Node> nodes = nodes_;
  const int counter = counter_;
  commit(c, aim);
  if (keepsFinite(*c.entry->spec, aim.backward || aim.placeholder >= 0)) return true;
  values_ = std::move(values);
  nodes_ = std::move(nodes);
  counter_ = counter;
  ++stats_.valueRejected;
  return false;
}

bool Growth::appendNode(Node node, const std::vector<ops::TensorType>& outputs,
                        const OpSpec& spec) {
  const size_t valueCount = values_.size();
  node.name = spec.type + "_" + std::to_string(nodes_.size());
  for (const auto& o : outputs) {
    Value v{fresh("v"), o.dtype, o.shape, Value::Kind::Computed, {}};
    v.producer = spec.type;
    node.outputs.push_back(v.name);
    values_.push_back(v);
  }
  nodes_.push_back(std::move(node));
  ++stats_.attempts;
  if (!cfg_.finiteValues || keepsFinite(spec, false)) return true;
  values_.resize(valueCount);
  nodes_.pop_back();
  ++stats_.valueRejected;
  return false;
}

const OpEntry* Growth::entry(const std::string& op) const {
  for (const OpEntry& e : table_)
    if (e.spec->type == op) return &e;
  return nullptr;
}

int Growth::indexNamed(const std::string& name) const {
  for (size_t v = 0; v < values_.size(); ++v)
    if (values_[v].name == name) return static_cast<int>(v);
  return -1;
}

Value* Growth::valueNamed(const std::string& name) {
  const int v = indexNamed(name);
  return v < 0 ? nullptr : &values_[static_cast<size_t>(v)];
}

std::vector<std::pair<size_t, size_t>> Growth::readersOf(const std::string& name) const {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (size_t k = 0; k < nodes_[i].inputs.size(); ++k)
      if (nodes_[i].inputs[k] == name) out.emplace_back(i, k);
  return out;
}

void Growth::computeInitializer(int value, Node node, std::vector<Value> leaves) {
  Value& v = values_[static_cast<size_t>(value)];
  v.kind = Value::Kind::Computed;
  v.producer = node.opType;
  if (cfg_.finiteValues) current_[v.name] = v.data;
  node.name = node.opType + "_" + std::to_string(nodes_.size());
  node.outputs = {v.name};
  for (Value& leaf : leaves) {
    leaf.kind = Value::Kind::Initializer;
    leaf.hasData = true;
    if (cfg_.finiteValues) current_[leaf.name] = leaf.data;
    values_.push_back(std::move(leaf));
  }
  nodes_.insert(nodes_.begin(), std::move(node));
}

// A forward node only adds values: its own run decides. A backward node changes a graph input
// into a computed value, and search moves every leaf: both recompute the whole model.
bool Growth::keepsFinite(const OpSpec& spec, bool wholeModel) {
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
  if (!wholeModel) {
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
  if (!wholeModel) {
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

std::set<std::string> Growth::contentsMatter() const {
  std::set<std::string> matter;
  for (size_t n = nodes_.size(); n-- > 0;) {
    const Node& node = nodes_[n];
    const OpSpec& spec = ops::specFor(node, cfg_.opset);
    const bool outputsMatter = std::any_of(node.outputs.begin(), node.outputs.end(),
                                           [&](const std::string& o) { return matter.count(o); });
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ops::InputSpec& is = spec.inputSpec(k);
      const bool anyNumber = is.role == InputRole::Data && is.domain == ValueDomain::Any &&
                             !(is.weight && cfg_.weightsAsInitializers);
      if (!node.inputs[k].empty() && (outputsMatter || !anyNumber)) matter.insert(node.inputs[k]);
    }
  }
  return matter;
}

bool Growth::insert(const Aim& given) {
  Aim aim = given;
  if (aim.backward && aim.placeholder < 0) {
    // A graph input whose contents a reader needs (a shape operand a mutant's parent computed)
    // keeps them: a node computing it would compute others.
    const std::set<std::string> matter = contentsMatter();
    std::vector<int> inputs;
    for (size_t v = 0; v < values_.size(); ++v)
      if (values_[v].kind == Value::Kind::Input && !matter.count(values_[v].name))
        inputs.push_back(static_cast<int>(v));
    if (inputs.empty()) return false;
    aim.placeholder = rng_.pick(inputs);
  }
  std::set<std::string> later;
  if (!aim.backward && aim.placeholder >= 0)
    for (size_t i = aim.at; i < nodes_.size(); ++i)
      later.insert(nodes_[i].outputs.begin(), nodes_[i].outputs.end());
  std::vector<double> w;
  for (const OpEntry& e : table_)
    w.push_back(!aim.op.empty() && e.spec->type != aim.op
                    ? 0.0
                    : e.weight * (aim.backward ? 1.0 : pairBoost(e)));
  if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; })) return false;
  for (int tries = 0; tries < kOpsPerInsertion; ++tries) {
    const OpEntry& e = table_[rng_.weighted(w)];
    if (hasSubgraphs(*e.spec)) {
      if (!aim.backward && aim.placeholder < 0 && !body_ && growControlFlow &&
          growControlFlow(*this, e))
        return true;
      continue;
    }
    std::optional<Candidate> last;
    for (int draw = 0; draw < kDrawsBeforeSolving; ++draw) {
      pollDeadline(1000);  // a draw and its judgement: tens of microseconds
      auto c = drawCandidate(e, aim);
      if (!c) break;
      if (judge(*c, aim, later)) {
        if (place(*c, aim)) return true;
        continue;
      }
      ++stats_.rejected;
      if (c->numbersWrong) last = std::move(c);
    }
    // z3 costs as much as hundreds of draws: it gets a share of the ops that sampling fails.
    if (last && cfg_.useSolver && rng_.chance(cfg_.solverShare) && solve(*last, aim, later) &&
        place(*last, aim))
      return true;
  }
  return false;
}

double Growth::pairWeight(const std::string& producer, const std::string& consumer) const {
  auto it = cfg_.pairWeights.find({producer, consumer});
  return it == cfg_.pairWeights.end() ? 1.0 : it->second;
}

double Growth::pairBoost(const OpEntry& e) const {
  double boost = 1;
  if (cfg_.pairWeights.empty()) return boost;
  const auto& allowed = e.dtypesOfInput(0);
  for (const Value& v : values_)
    if (v.kind == Value::Kind::Computed &&
        std::find(allowed.begin(), allowed.end(), v.dtype) != allowed.end())
      boost = std::max(boost, pairWeight(v.producer, e.spec->type));
  return boost;
}

std::map<std::string, std::string> Growth::adopt(const TestCase& tc,
                                                 const std::vector<size_t>& keep,
                                                 const TensorMap& values) {
  const Graph& g = tc.model.graph;
  std::map<std::string, std::string> renamed;  // the parent's names to this model's
  auto add = [&](Value v, const Tensor& t) {
    if (cfg_.finiteValues) current_[v.name] = t;
    values_.push_back(std::move(v));
    return values_.back().name;
  };
  // A value computed outside the part becomes a graph input holding it; one read as a shape
  // operand, an initializer, as shape operands are.
  auto read = [&](const std::string& old, bool shapeOperand) {
    if (auto it = renamed.find(old); it != renamed.end()) return it->second;
    const Initializer* init = g.initializer(old);
    const Tensor& t = init ? init->value : values.at(old);
    const bool constant = init || shapeOperand;
    const std::string name =
        add({fresh(constant ? "w" : "x"), t.dtype(), t.shape(),
             constant ? Value::Kind::Initializer : Value::Kind::Input, t, true},
            t);
    renamed[old] = name;
    return name;
  };
  for (size_t i : keep) {
    Node n = g.nodes[i];
    const OpSpec& spec = ops::specFor(n, cfg_.opset);
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (!n.inputs[k].empty())
        n.inputs[k] = read(n.inputs[k], spec.inputSpec(k).role != InputRole::Data);
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

TestCase Growth::assemble() const {
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

}  // namespace nncheck::gen
