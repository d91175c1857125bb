// Drawing and applying rewrites of the table (variants/rules.cpp).
#include <algorithm>
#include <cstring>
#include <optional>

#include "core/rng.h"
#include "nncheck/error.h"
#include "nncheck/validity.h"
#include "variants/rules.h"

namespace nncheck {
namespace variants {

const ops::InputFacts* Site::fact(const std::string& value) const {
  auto it = facts.find(value);
  return it == facts.end() ? nullptr : &it->second;
}

std::vector<size_t> Site::readers(const std::string& value) const {
  std::vector<size_t> out;
  const auto& nodes = model.graph.nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::vector<std::string> reads = valuesRead(nodes[i]);
    if (std::find(reads.begin(), reads.end(), value) != reads.end()) out.push_back(i);
  }
  return out;
}

bool Site::allows(DType t) const {
  return !limits || limits->dtypes.empty() ||
         std::find(limits->dtypes.begin(), limits->dtypes.end(), t) != limits->dtypes.end();
}

bool Site::isGraphOutput(const std::string& value) const {
  const auto& outs = model.graph.outputs;
  return std::any_of(outs.begin(), outs.end(), [&](const ValueInfo& o) { return o.name == value; });
}

namespace {

// Every name a graph uses, at any depth: values, initializers and nodes.
void collectNames(const Graph& g, std::set<std::string>& names) {
  for (const ValueInfo& v : g.inputs) names.insert(v.name);
  for (const ValueInfo& v : g.outputs) names.insert(v.name);
  for (const Initializer& w : g.initializers) names.insert(w.name);
  for (const Node& n : g.nodes) {
    names.insert(n.name);
    names.insert(n.inputs.begin(), n.inputs.end());
    names.insert(n.outputs.begin(), n.outputs.end());
    for (const Graph* body : n.subgraphs()) collectNames(*body, names);
  }
}

}  // namespace

Edit::Edit(Model& model) : model_(model) { collectNames(model.graph, used_); }

std::string Edit::fresh(const std::string& hint) {
  for (int i = 0;; ++i) {
    std::string name = hint + "_eq" + std::to_string(i);
    if (used_.insert(name).second) return name;
  }
}

std::string Edit::constant(const std::string& hint, Tensor value) {
  const std::string name = fresh(hint);
  model_.graph.initializers.push_back({name, std::move(value), ""});
  return name;
}

std::string Edit::ints(const std::string& hint, const std::vector<int64_t>& values) {
  return constant(hint, Tensor::fromVector<int64_t>({static_cast<int64_t>(values.size())}, values));
}

std::string Edit::node(const std::string& op, std::vector<std::string> inputs,
                       std::vector<Attribute> attributes, std::string output) {
  if (output.empty()) output = fresh(op);
  node(op, std::move(inputs), std::move(attributes), std::vector<std::string>{output});
  return output;
}

void Edit::node(const std::string& op, std::vector<std::string> inputs,
                std::vector<Attribute> attributes, std::vector<std::string> outputs) {
  Node n = Node::make(op, std::move(inputs), std::move(outputs), fresh(op + "_node"));
  n.attributes = std::move(attributes);
  nodes_.push_back(std::move(n));
}

std::string Edit::detach(const Site& site) {
  const std::string renamed = fresh(site.at);
  for (std::string& out : model_.graph.nodes[site.node].outputs)
    if (out == site.at) out = renamed;
  return renamed;
}

void Edit::insertAfter(size_t index) {
  auto& nodes = model_.graph.nodes;
  nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(index) + 1, nodes_.begin(),
               nodes_.end());
  nodes_.clear();
}

void Edit::replace(size_t index) {
  auto& nodes = model_.graph.nodes;
  nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(index));
  nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(index), nodes_.begin(), nodes_.end());
  nodes_.clear();
}

void Edit::remove(size_t index) {
  // Only nodes before the edited one are removed (a producer folded into it), so `index` holds.
  auto& nodes = model_.graph.nodes;
  nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(index));
}

Tensor tensorOf(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  visitCompute(dtype, [&]<class T>() {
    auto s = t.span<T>();
    for (size_t i = 0; i < values.size() && i < s.size(); ++i) {
      if constexpr (std::is_same_v<T, Half>)
        s[i] = Half(static_cast<float>(values[i]));
      else
        s[i] = static_cast<T>(values[i]);
    }
  });
  return t;
}

Tensor scalarOf(DType dtype, double v) { return tensorOf(dtype, {}, {v}); }

namespace {

const RuleImpl& ruleNamed(const std::string& name) {
  for (const RuleImpl& r : ruleTable())
    if (r.info.name == name) return r;
  std::string known;
  for (const RuleImpl& r : ruleTable()) known += (known.empty() ? "" : ", ") + r.info.name;
  throw Error("unknown rewrite rule '" + name + "' (the table has: " + known + ")");
}

// Whether the limits let a variant hold each op the rule may add.
bool allowed(const RuleImpl& rule, const VariantLimits& limits) {
  auto has = [](const std::vector<std::string>& list, const std::string& op) {
    return std::find(list.begin(), list.end(), op) != list.end();
  };
  return std::all_of(rule.ops.begin(), rule.ops.end(), [&](const std::string& op) {
    return (limits.ops.empty() || has(limits.ops, op)) && !has(limits.denyOps, op);
  });
}

// The site of a value a top-level node computes, with a known type; none otherwise.
std::optional<Site> siteAt(const Model& m, const std::map<std::string, ops::InputFacts>& facts,
                           const std::string& value, const VariantLimits* limits = nullptr) {
  const auto f = facts.find(value);
  if (value.empty() || f == facts.end() || f->second.dtype == DType::Undefined) return std::nullopt;
  const auto& nodes = m.graph.nodes;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (std::find(nodes[i].outputs.begin(), nodes[i].outputs.end(), value) !=
        nodes[i].outputs.end())
      return Site{m, facts, value, i, f->second.dtype, f->second.shape, m.defaultOpset(), limits};
  return std::nullopt;
}

// The model with the rewrite applied, or none when it does not apply there.
std::optional<Model> applyOne(const Model& m, const Rewrite& r) {
  const RuleImpl& rule = ruleNamed(r.rule);
  std::map<std::string, ops::InputFacts> facts;
  try {
    facts = ops::inferModel(m);
  } catch (const Error&) {
    return std::nullopt;
  }
  const std::optional<Site> site = siteAt(m, facts, r.at);
  if (!site || r.form < 0 || r.form >= rule.forms(*site)) return std::nullopt;
  Model out = m;
  Edit edit(out);
  rule.apply(edit, *site, r.form);
  return out;
}

}  // namespace
}  // namespace variants

const std::vector<RewriteRule>& rewriteRules() {
  static const std::vector<RewriteRule> rules = [] {
    std::vector<RewriteRule> out;
    for (const variants::RuleImpl& r : variants::ruleTable()) out.push_back(r.info);
    return out;
  }();
  return rules;
}

Model applyRewrites(const Model& model, const std::vector<Rewrite>& rewrites,
                    std::vector<Rewrite>* applied) {
  Model m = model;
  if (applied) applied->clear();
  for (const Rewrite& r : rewrites)
    if (std::optional<Model> next = variants::applyOne(m, r)) {
      m = std::move(*next);
      if (applied) applied->push_back(r);
    }
  return m;
}

std::vector<Rewrite> drawRewrites(const Model& model, uint64_t seed, int count,
                                  const VariantLimits& limits) {
  if (count <= 0) return {};
  std::map<std::string, ops::InputFacts> facts;
  try {
    facts = ops::inferModel(model);
  } catch (const Error&) {
    return {};
  }
  // Every (rule, value, form) that applies to the model as it is, in a fixed order.
  std::vector<Rewrite> candidates;
  for (const Node& n : model.graph.nodes)
    for (const std::string& out : n.outputs)
      if (const std::optional<variants::Site> site = variants::siteAt(model, facts, out, &limits))
        for (const variants::RuleImpl& r : variants::ruleTable())
          for (int form = 0, forms = variants::allowed(r, limits) ? r.forms(*site) : 0;
               form < forms; ++form)
            candidates.push_back({r.info.name, out, form});
  // Rules first, then where: a rule with many sites is not drawn more often than one with few.
  Rng rng(seed ^ 0x5eed0f7e3a1ull);
  std::vector<Rewrite> chosen;
  std::set<std::string> taken;  // values already rewritten
  Model variant = model;
  for (int attempt = 0;
       attempt < 8 * count && static_cast<int>(chosen.size()) < count && !candidates.empty();
       ++attempt) {
    std::vector<std::string> rules;
    for (const Rewrite& c : candidates)
      if (!taken.count(c.at) && std::find(rules.begin(), rules.end(), c.rule) == rules.end())
        rules.push_back(c.rule);
    if (rules.empty()) break;
    const std::string& rule =
        rules[static_cast<size_t>(rng.uniform(0, static_cast<int64_t>(rules.size()) - 1))];
    std::vector<const Rewrite*> of;
    for (const Rewrite& c : candidates)
      if (c.rule == rule && !taken.count(c.at)) of.push_back(&c);
    const Rewrite pick =
        *of[static_cast<size_t>(rng.uniform(0, static_cast<int64_t>(of.size()) - 1))];
    taken.insert(pick.at);
    std::optional<Model> next = variants::applyOne(variant, pick);
    if (!next) continue;  // no longer applies after the others
    variant = std::move(*next);
    chosen.push_back(pick);
  }
  // The rules keep a model valid (tests/variants checks each on generated models); the full
  // check, which costs more than drawing, runs once on the variant, and rewrite by rewrite only
  // if it fails.
  if (chosen.empty() || !whyInvalid(variant)) return chosen;
  std::vector<Rewrite> valid;
  Model partial = model;
  for (const Rewrite& r : chosen)
    if (std::optional<Model> next = variants::applyOne(partial, r); next && !whyInvalid(*next)) {
      partial = std::move(*next);
      valid.push_back(r);
    }
  return valid;
}

void countRewriteRules(const std::vector<Rewrite>& rewrites,
                       std::map<std::string, int64_t>& casesByRule) {
  std::set<std::string> rules;
  for (const Rewrite& r : rewrites) rules.insert(r.rule);
  for (const std::string& rule : rules) ++casesByRule[rule];
}

std::string describeRewriteCounts(const std::map<std::string, int64_t>& casesByRule) {
  std::string applied, never;
  for (const RewriteRule& rule : rewriteRules()) {
    auto it = casesByRule.find(rule.name);
    if (it == casesByRule.end())
      never += (never.empty() ? "" : ", ") + rule.name;
    else
      applied += (applied.empty() ? "" : ", ") + rule.name + " " + std::to_string(it->second);
  }
  return "equivalence rewrites applied (cases): " + (applied.empty() ? "none" : applied) +
         (never.empty() ? "" : "; never applied: " + never);
}

std::string describeRewrites(const std::vector<Rewrite>& rewrites) {
  std::string s;
  for (const Rewrite& r : rewrites) {
    s += (s.empty() ? "" : ", ") + r.rule + " at " + r.at;
    if (r.form) s += " (form " + std::to_string(r.form) + ")";
  }
  return s;
}

}  // namespace nncheck
