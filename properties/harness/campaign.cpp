#include "nncheck/campaign.h"

#include <algorithm>
#include <set>

#include "nncheck/error.h"
#include "nncheck/localize.h"
#include "nncheck/tolerance.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

// One run of a case judged against the reference.
struct Judgement {
  enum class What { Pass, Unsupported, NonFinite, Fail } what = What::Pass;
  FailureKind kind = FailureKind::Mismatch;
  std::string message;
  double maxAbs = 0, maxRel = 0;
  Tolerance tolerance;
};

// assertMatchesReference's verdict as data: the NaN/Inf policy and the tolerance are its own.
Judgement judge(const Isolated& engine, const TestCase& tc) {
  Judgement j;
  j.tolerance = toleranceFor(tc.model);
  try {
    assertMatchesReference(engine, tc);
  } catch (const Unsupported& u) {
    j.what = u.category() == kNonFiniteCategory ? Judgement::What::NonFinite
                                                : Judgement::What::Unsupported;
    j.message = u.what();
  } catch (const PropertyFailure& f) {
    j.what = Judgement::What::Fail;
    j.kind = f.kind();
    j.message = f.what();
    j.maxAbs = f.maxAbsError;
    j.maxRel = f.maxRelError;
  } catch (const Error& e) {
    j.what = Judgement::What::Unsupported;  // the reference cannot compute it: no test
    j.message = std::string("reference: ") + e.what();
  }
  return j;
}

std::string outcomeName(const Judgement& j) {
  switch (j.what) {
    case Judgement::What::Pass:
      return "passes";
    case Judgement::What::Unsupported:
      return "unsupported";
    case Judgement::What::NonFinite:
      return "nonfinite";
    case Judgement::What::Fail:
      return std::string(failureKindName(j.kind));
  }
  return "?";
}

// The key failures are grouped by before shrinking: the kind and, for mismatches, the op of the
// first diverging node with every value exposed (one extra run); for crashes, the signal.
std::string preShrinkKey(const Isolated& engine, const TestCase& tc, const Judgement& j) {
  std::string key(failureKindName(j.kind));
  if (j.kind == FailureKind::Mismatch) {
    std::optional<Divergence> d = localizeExposed(engine, tc, j.tolerance);
    return key + "@" + (d ? d->opType : "?");
  }
  if (j.kind == FailureKind::Crash) {  // the signal, not the stderr text after it
    const size_t from = j.message.find(':') + 1;
    return key + ":" + j.message.substr(from, j.message.find(';', from) - from);
  }
  return key;
}

// Each engine isolated, a fresh process per run; made once, since each keeps the helper process
// that forks those.
std::vector<Isolated> freshPerEngine(const std::vector<CampaignEngine>& engines,
                                     const CampaignOptions& o) {
  std::vector<Isolated> out;
  for (const CampaignEngine& e : engines) out.push_back(isolated(*e.backend, o.timeout));
  return out;
}

// Shrinks a judged failure keeping its kind, localizes it, triages it across the engines.
// Candidates run on `shrinker` (the persistent worker in campaigns: a fork per candidate costs
// four times the run); the result is confirmed in a fresh process, and if it does not fail
// there the shrink is redone in fresh processes. `freshes` holds one per engine, the first
// engine's first.
CampaignFinding reduceJudged(const std::vector<CampaignEngine>& engines, const Isolated& shrinker,
                             const std::vector<Isolated>& freshes, const TestCase& tc,
                             const Judgement& j, const CampaignOptions& o) {
  const Isolated& fresh = freshes.front();
  const FailureKind kind = j.kind;
  auto shrinkOn = [&](const Isolated& engine) {
    return shrinkGreedily(
        tc,
        [&](const TestCase& c) {
          Judgement k = judge(engine, c);
          return k.what == Judgement::What::Fail && k.kind == kind;
        },
        o.shrink);
  };
  // A crash or hang kills the worker at each failing candidate, and starting another forks
  // this process: those shrink on fresh processes from the start.
  const bool killsWorker = kind == FailureKind::Crash || kind == FailureKind::Hang;
  const Isolated& first = killsWorker ? fresh : shrinker;
  ShrinkResult r = shrinkOn(first);
  Judgement last = judge(fresh, r.testCase);
  if (&first != &fresh && (last.what != Judgement::What::Fail || last.kind != kind)) {
    r = shrinkOn(fresh);
    last = judge(fresh, r.testCase);
  }
  if (last.what != Judgement::What::Fail) last = j;  // keep the original figures
  std::optional<Divergence> d;
  if (kind == FailureKind::Mismatch)
    d = localizeDivergence(fresh, r.testCase, toleranceFor(r.testCase.model));
  CampaignFinding f;
  FailureInfo& info = f.info;
  info.property = o.property;
  info.backend = engines.front().backend->name();
  info.configuration = engines.front().configuration;
  info.kind = kind;
  info.pattern = failurePattern(r.testCase, kind, d ? d->opType : "");
  info.firstDivergingNode = d ? d->describe() : "";
  info.message = last.message;
  info.maxAbsError = last.maxAbs;
  info.maxRelError = last.maxRel;
  info.tolerance = last.tolerance;
  info.nodesBefore = static_cast<int>(tc.model.graph.nodes.size());
  info.nodesAfter = static_cast<int>(r.testCase.model.graph.nodes.size());
  info.shrinkSteps = r.steps;
  info.shrinkSeconds = r.seconds;
  for (size_t e = 0; e < engines.size(); ++e) {
    const std::string outcome = outcomeName(judge(freshes[e], r.testCase));
    info.triage[engines[e].configuration] = outcome;
    if (o.markKnownFailures && outcome != "passes" && outcome != "unsupported" &&
        outcome != "nonfinite")
      info.knownFailures[engines[e].configuration] = outcome;
  }
  f.minimized = std::move(r.testCase);
  return f;
}

std::set<std::string> corpusPatterns(const std::filesystem::path& dir) {
  std::set<std::string> out;
  for (const CorpusCase& c : loadCorpus(dir))
    if (!c.pattern.empty()) out.insert(c.pattern);
  return out;
}

}  // namespace

std::filesystem::path saveFinding(const CampaignFinding& f, const CampaignOptions& o) {
  return saveFailure(o.corpus, o.property, f.minimized, f.info);
}

std::optional<CampaignFinding> reduceCase(const std::vector<CampaignEngine>& engines,
                                          const TestCase& tc, const CampaignOptions& o) {
  if (engines.empty() || !engines.front().backend) throw Error("reduce: no engine to run against");
  const std::vector<Isolated> freshes = freshPerEngine(engines, o);
  Judgement j = judge(freshes.front(), tc);
  if (j.what != Judgement::What::Fail) return std::nullopt;
  return reduceJudged(engines, freshes.front(), freshes, tc, j, o);
}

int CampaignStats::newFindings() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [](const CampaignFinding& f) { return !f.fromCorpus; }));
}

std::string failurePattern(const TestCase& tc, FailureKind kind, const std::string& divergingOp) {
  const Graph& g = tc.model.graph;
  std::map<std::string, std::string> producer;
  for (const ValueInfo& in : g.inputs) producer[in.name] = g.initializer(in.name) ? "w" : "x";
  for (const Initializer& w : g.initializers) producer[w.name] = "w";
  std::string s(failureKindName(kind));
  s += divergingOp.empty() ? "" : " at " + divergingOp;
  s += ":";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    s += " " + n.opType + "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (k) s += ",";
      s += n.inputs[k].empty() ? "-" : producer.count(n.inputs[k]) ? producer[n.inputs[k]] : "?";
    }
    s += ")";
    for (const std::string& out : n.outputs) producer[out] = "#" + std::to_string(i);
  }
  return s;
}

std::string rejectedOp(const std::string& message, const Model& model) {
  const Node* best = nullptr;
  for (const Node& n : model.graph.nodes)
    if (!n.name.empty() && message.find(n.name) != std::string::npos &&
        (!best || n.name.size() > best->name.size()))
      best = &n;
  return best ? best->opType : "";
}

CampaignStats runCampaign(const std::vector<CampaignEngine>& engines, const CampaignOptions& o,
                          const std::function<void(const CampaignStats&)>& progress) {
  if (engines.empty() || !engines.front().backend)
    throw Error("campaign: no engine to run against");
  validateConfig(o.generator);
  CampaignStats stats;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const Isolated primary = isolated(*engines.front().backend, o.timeout, Isolation::Persistent);
  const std::vector<Isolated> freshes = freshPerEngine(engines, o);
  const Isolated& fresh = freshes.front();
  GeneratorConfig cfg = o.generator;
  std::map<std::string, double> initialWeight;
  std::map<std::string, int> shrunkPerKey;
  std::set<std::string> known =
      o.corpus.empty() ? std::set<std::string>{} : corpusPatterns(o.corpus / o.property);
  std::map<std::string, size_t> findingIndex;
  double lastProgress = 0;

  for (int64_t i = 0;; ++i) {
    if (o.maxCases > 0 ? i >= o.maxCases : elapsed() >= o.seconds) break;
    if (o.maxCases > 0 && elapsed() >= o.seconds) break;
    TestCase tc = makeTestCase(cfg, o.seed + static_cast<uint64_t>(i));
    ++stats.cases;
    Judgement j = judge(primary, tc);
    std::string key;  // failures: the pre-shrink key
    if (j.what == Judgement::What::Fail) {
      key = preShrinkKey(primary, tc, j);
      // A failure to be shrunk is confirmed in a fresh process first (the worker may carry
      // damage from an earlier case); a repeat is counted as the worker saw it, since a fresh
      // process costs as much as 40 runs on the worker.
      if (shrunkPerKey[key] < o.shrinksPerKey) {
        Judgement again = judge(fresh, tc);
        if (again.what != Judgement::What::Fail || again.kind != j.kind) {
          ++stats.unconfirmed;
          j = again;
          if (j.what == Judgement::What::Fail) key = preShrinkKey(primary, tc, j);
        }
      }
    }
    switch (j.what) {
      case Judgement::What::Pass:
        ++stats.passed;
        break;
      case Judgement::What::NonFinite:
        ++stats.nonfinite;
        break;
      case Judgement::What::Unsupported: {
        ++stats.unsupported;
        const std::string op = rejectedOp(j.message, tc.model);
        ++stats.rejectedOps[op.empty() ? "(not named)" : op];
        if (o.learnUnsupported && !op.empty()) {
          double& w = cfg.opWeights.try_emplace(op, 1.0).first->second;
          initialWeight.try_emplace(op, w);
          w = std::max(w * 0.8, initialWeight[op] * 0.05);
        }
        break;
      }
      case Judgement::What::Fail: {
        ++stats.failures[j.kind];
        if (shrunkPerKey[key]++ >= o.shrinksPerKey) {
          ++stats.repeats;
          break;
        }
        const auto shrinkStart = Clock::now();
        CampaignFinding f = reduceJudged(engines, primary, freshes, tc, j, o);
        stats.shrinkSeconds += std::chrono::duration<double>(Clock::now() - shrinkStart).count();
        if (auto it = findingIndex.find(f.info.pattern); it != findingIndex.end()) {
          ++stats.findings[it->second].hits;
          break;
        }
        f.fromCorpus = known.count(f.info.pattern) > 0;
        if (!o.corpus.empty() && !f.fromCorpus) f.dir = saveFinding(f, o);
        const std::string pattern = f.info.pattern;
        findingIndex[pattern] = stats.findings.size();
        stats.findings.push_back(std::move(f));
        break;
      }
    }
    stats.seconds = elapsed();
    if (progress && stats.seconds - lastProgress >= 0.5) {
      lastProgress = stats.seconds;
      progress(stats);
    }
  }
  stats.seconds = elapsed();
  return stats;
}

}  // namespace nncheck
