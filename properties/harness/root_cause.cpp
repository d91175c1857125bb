#include "harness/root_cause.h"

#include <signal.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "nncheck/error.h"
#include "ops/infer.h"
#include "ops/op_spec.h"

namespace nncheck {

const Node* rootNode(const FailureInfo& info, const Graph& g) {
  if (info.divergence)
    for (const Node& n : g.nodes)
      if (n.name == info.divergence->name) return &n;
  return g.nodes.empty() ? nullptr : &g.nodes.back();
}

std::vector<std::string> nonDefaultAttributes(const Node& n) {
  const ops::OpSpec* spec = ops::Registry::instance().find(n.opType);
  auto isDefault = [&](const Attribute& a) {
    if (!spec) return false;
    for (const ops::AttrSpec& declared : spec->attrs) {
      if (declared.name != a.name || !declared.defaultValue) continue;
      Attribute byDefault = *declared.defaultValue;
      byDefault.name = a.name;
      return byDefault == a;
    }
    return false;
  };
  std::vector<std::string> names;
  for (const Attribute& a : n.attributes)
    if (!isDefault(a)) names.push_back(a.name);
  return names;
}

std::string faultStage(const std::map<std::string, Outcome>& triage, const std::string& baseline,
                       const std::string& sharedStage) {
  const bool all =
      triage.size() > 1 &&
      std::all_of(triage.begin(), triage.end(), [](const auto& c) { return isFailure(c.second); });
  if (all)
    return "fails at every configuration: the fault is in what they share" +
           (sharedStage.empty() ? std::string() : ", " + sharedStage);
  const auto b = triage.find(baseline);
  if (b == triage.end()) return "";
  if (isFailure(b->second))
    return "fails at " + baseline + " too: the engine's kernels or its adapter, not its " +
           "optimizations";
  return b->second == Outcome::Pass
             ? "passes at " + baseline + ": a bug of the optimizing configurations"
             : "";
}

namespace {

// " on int64, float32": the dtypes of the node's inputs ("-" for an absent optional one); empty
// when the model's types cannot be inferred.
std::string inputDTypes(const Node& n, const Model& model) {
  std::map<std::string, ops::InputFacts> facts;
  try {
    facts = ops::inferModel(model);
  } catch (const Error&) {
    return "";
  }
  std::string out;
  for (const std::string& in : n.inputs) {
    out += out.empty() ? " on " : ", ";
    const auto it = facts.find(in);
    out += in.empty() || it == facts.end() ? "-" : std::string(dtypeName(it->second.dtype));
  }
  return out;
}

}  // namespace

bool causedByOptimizations(const FailureInfo& info) {
  return info.culprit && !info.culprit->needed.empty() &&
         static_cast<int>(info.culprit->needed.size()) < info.culprit->searched;
}

namespace {

// The root cause less the oracle that showed it.
std::string causeOf(const FailureInfo& info, const Model& minimized) {
  std::string cause;
  std::string needed;
  if (info.culprit)
    for (const std::string& name : info.culprit->needed) {
      needed += needed.empty() ? "" : "+";
      needed += name;
    }
  // Optimizations named finely enough to tell bugs apart are the bug, whatever op or kind shows
  // it (EliminateDropout's wrong values, shapes and failed loads under every reader of a Dropout).
  if (causedByOptimizations(info)) return cause + "fails with only " + needed + " enabled";
  // A wrong shape apart from wrong values: at the first diverging node, else at the outputs
  // (records before layout_differs say it in their pattern alone).
  const bool shape = (info.divergence && info.divergence->layoutDiffers) ||
                     info.pattern.find("mismatch in shape") != std::string::npos;
  // An error after a node computed a wrong value is that node's mismatch (recordFailure).
  if (info.kind == Outcome::Mismatch || (info.kind == Outcome::Error && info.divergence))
    cause += shape ? "mismatch in shape" : "mismatch";
  else
    cause += outcomeName(info.kind);
  if (info.kind == Outcome::Crash && info.signal) {
    const char* name = sigabbrev_np(info.signal);
    cause +=
        name ? std::string(" (SIG") + name + ")" : " (signal " + std::to_string(info.signal) + ")";
  }
  if (const Node* root = rootNode(info, minimized.graph)) {
    cause += " at ";
    cause += root->opType;
    std::string attributes;
    for (const std::string& name : nonDefaultAttributes(*root)) {
      attributes += attributes.empty() ? "" : ", ";
      attributes += name;
    }
    if (!attributes.empty()) cause += " (" + attributes + ")";
    // An engine that fails on a valid model mostly fails on a dtype it does not handle (TVM's Pow
    // on two integers and on an integer and a float are two reports).
    if (info.kind != Outcome::Mismatch && !info.divergence) cause += inputDTypes(*root, minimized);
  }
  if (!needed.empty()) cause += ", needs " + needed;
  return cause;
}

}  // namespace

std::string rootCause(const FailureInfo& info, const Model& minimized) {
  return (info.oracle == "reference" ? "" : info.oracle + ": ") + causeOf(info, minimized);
}

std::vector<RootCauseGroup> groupByRootCause(const std::vector<std::string>& causes) {
  std::vector<RootCauseGroup> groups;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < causes.size(); ++i) {
    auto [it, first] = at.emplace(causes[i], groups.size());
    if (first) groups.push_back({causes[i], {}});
    groups[it->second].members.push_back(i);
  }
  return groups;
}

void KnownBugs::add(const std::filesystem::path& corpus) {
  std::error_code ec;
  if (!std::filesystem::is_directory(corpus, ec))
    throw Error(corpus.string() + ": no such folder of known bugs");
  for (const CorpusCase& c : loadCorpus(corpus)) {
    if (!c.kind) continue;  // a case without a record is no finding
    bugs_.push_back({c.dir, rootCause(c.info, c.testCase.model), c.info.title, c.info.upstream});
    causes_.push_back(causeOf(c.info, c.testCase.model));
    if (c.info.culprit && !c.info.culprit->needed.empty() &&
        std::find(culprits_.begin(), culprits_.end(), c.info.culprit->needed) == culprits_.end())
      culprits_.push_back(c.info.culprit->needed);
  }
  folders_.push_back(corpus);
}

const KnownBug* KnownBugs::match(const FailureInfo& info, const Model& minimized) const {
  const std::string cause = causeOf(info, minimized);
  for (size_t i = 0; i < bugs_.size(); ++i)
    if (causes_[i] == cause) return &bugs_[i];
  return nullptr;
}

}  // namespace nncheck
