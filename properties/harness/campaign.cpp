#include "nncheck/campaign.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "backends/coverage.h"
#include "core/deadline.h"
#include "harness/after_failure.h"
#include "harness/corpus_store.h"
#include "harness/probe.h"
#include "harness/root_cause.h"
#include "nncheck/error.h"
#include "nncheck/localize.h"
#include "nncheck/oracle.h"
#include "nncheck/tolerance.h"
#include "nncheck/variants.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

// The oracle and the engines beside the one under test it judges with: the baseline, as a
// persistent worker for the cases and afresh for what follows a failure.
struct Judging {
  const OracleInfo& oracle;
  std::optional<Isolated> baselineWorker{}, baselineFresh{};

  Judging(const CampaignOptions& o, const std::vector<CampaignEngine>& engines)
      : oracle(oracles().at(o.oracle)) {
    if (!oracle.needsBaseline) return;
    if (!o.baseline.backend)
      throw Error("campaign: the oracle '" + oracle.name +
                  "' compares with the engine's baseline configuration, and none is given");
    for (const CampaignEngine& e : engines)
      if (e.configuration == o.baseline.configuration)
        throw Error("campaign: the baseline configuration " + e.configuration +
                    " is among the configurations under test; the oracle '" + oracle.name +
                    "' would compare it with itself");
    baselineWorker.emplace(*o.baseline.backend, o.timeout, Isolation::Persistent);
    baselineFresh.emplace(*o.baseline.backend, o.timeout);
  }
  const Isolated* baseline(bool fresh) const {
    const std::optional<Isolated>& b = fresh ? baselineFresh : baselineWorker;
    return b ? &*b : nullptr;
  }
  // On a persistent worker: the baseline's worker beside it.
  Verdict onWorker(const Isolated& engine, const TestCase& tc) const {
    return judgeWith(oracle, {engine, baseline(false)}, tc);
  }
  // Afresh: a fresh process of the baseline beside it.
  Verdict afresh(const Isolated& engine, const TestCase& tc) const {
    return judgeWith(oracle, {engine, baseline(true)}, tc);
  }
};

// The key failures are grouped by before shrinking: the kind and, for mismatches, the op of the
// first diverging node with every value exposed (one extra run); for crashes, the signal.
std::string preShrinkKey(const Verdict& v) {
  std::string key(outcomeName(v.outcome));
  if (v.outcome == Outcome::Mismatch) {
    if (v.shapeOnly) key += " in shape";
    std::optional<Divergence> d = v.localize ? v.localize(true) : std::nullopt;
    return key + "@" + (d ? d->opType : "?");
  }
  if (v.outcome == Outcome::Crash) return key + ":" + std::to_string(v.signal);
  return key;
}

// A campaign's time box past this is no time box (and would overflow the clock's range).
constexpr double kLongestTimeBox = 1e9;

// What `work` gives, or none when the time box ends first or an interrupt (Ctrl-C) comes.
// Generation and the reference poll the deadline (core/deadline.h): growing a model of a
// thousand nodes takes seconds, and a reference run may take up to its own time limit; waits on
// an engine look at it too. Shrinking is never cut short: a finding is never lost to the time
// box.
template <class Work>
auto withinTimeBox(Clock::time_point end, Work&& work) -> std::optional<decltype(work())> {
  Deadline box(end, Deadline::Interrupt::Ends);
  try {
    return work();
  } catch (const DeadlineExceeded& e) {
    if (!e.of(box)) throw;
    return std::nullopt;
  }
}

// The engine that runs the case of this seed, in round robin: a function of the seed alone
// (splitmix64's finalizer), so a case meets the same configuration in any shard, and every
// shard's slice spreads evenly over the configurations.
size_t engineFor(uint64_t seed, size_t engines) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<size_t>((z ^ (z >> 31)) % engines);
}

// Each engine isolated, a fresh process per run; made once, since each keeps the helper process
// that forks those.
std::vector<Isolated> freshPerEngine(const std::vector<CampaignEngine>& engines,
                                     const CampaignOptions& o) {
  std::vector<Isolated> out;
  for (const CampaignEngine& e : engines) out.push_back(isolated(*e.backend, o.timeout));
  return out;
}

// What follows a failure of engine `at` (harness/after_failure.h). Candidates shrink on
// `shrinker` (the persistent worker in campaigns: a fork per candidate costs four times the run);
// a result that does not fail in a fresh process is shrunk again in fresh processes. `freshes`
// holds one per engine: the failure is confirmed, localized and triaged on them.
FailurePath failurePath(const std::vector<CampaignEngine>& engines, size_t at,
                        const Isolated& shrinker, const std::vector<Isolated>& freshes,
                        const Judging& judging, const CampaignOptions& o,
                        std::vector<std::vector<std::string>>& culprits,
                        const KnownBugs* known = nullptr) {
  const Isolated& fresh = freshes.at(at);
  const CampaignEngine& failed = engines[at];
  FailurePath p;
  p.property = o.property;
  p.oracle = judging.oracle.name;
  p.backend = failed.backend->name();
  p.configuration = failed.configuration;
  p.judge = [&judging, &fresh](const TestCase& c) { return judging.afresh(fresh, c); };
  p.shrink = [&judging, &shrinker, &fresh, &o](const TestCase& tc, const Verdict& v) {
    auto shrinkOn = [&](const Isolated& engine, bool afresh) {
      return shrinkGreedily(
          tc,
          [&](const TestCase& c) {
            return sameFailure(afresh ? judging.afresh(engine, c) : judging.onWorker(engine, c), v);
          },
          o.shrink);
    };
    // A crash or hang kills the worker at each failing candidate, and starting another forks
    // this process: those shrink on fresh processes from the start.
    if (v.outcome == Outcome::Crash || v.outcome == Outcome::Hang) return shrinkOn(fresh, true);
    ShrinkResult r = shrinkOn(shrinker, false);
    if (!sameFailure(judging.afresh(fresh, r.testCase), v)) r = shrinkOn(fresh, true);
    return r;
  };
  for (size_t e = 0; e < engines.size(); ++e)
    p.triage.emplace_back(engines[e].configuration, [&judging, &freshes, e](const TestCase& c) {
      return judging.afresh(freshes[e], c);
    });
  p.markKnownFailures = o.markKnownFailures;
  const EngineWithout& without = o.engineWithout;
  if (without.configuration && without.make) {
    // The search is over what the configuration can switch off (an engine may name as applied
    // what it cannot: OpenVINO's release build, its passes).
    std::vector<std::string> names = failed.backend->optimizations();
    for (std::string& name : failed.backend->unreportedOptimizations())
      names.push_back(std::move(name));
    for (std::string& name : names) try {
        without.configuration(failed.configuration, {name});
        p.optimizations.push_back(std::move(name));
      } catch (const Error&) {
      }
    p.without = [&judging, &without, &failed, &o](const std::vector<std::string>& disabled,
                                                  const TestCase& c) {
      const std::unique_ptr<Backend> engine =
          without.make(without.configuration(failed.configuration, disabled));
      return judging.afresh(isolated(*engine, o.timeout), c);
    };
    p.workaround = [&without, &failed](const std::vector<std::string>& disabled) {
      return without.configuration(failed.configuration, disabled);
    };
  }
  p.culprits = &culprits;
  p.corpus = o.corpus;
  if (known && known->size() > 0)
    p.known = [known](const FailureInfo& info, const Model& minimized) {
      const KnownBug* bug = known->match(info, minimized);
      return bug ? std::optional(*bug) : std::nullopt;
    };
  return p;
}

KnownBugs knownBugs(const std::vector<std::filesystem::path>& folders) {
  KnownBugs known;
  for (const std::filesystem::path& folder : folders) known.add(folder);
  return known;
}

// What cannot be read of the cases saved under `dir`, each naming its file: reported, not fatal.
std::vector<std::string> unreadableCases(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const std::filesystem::path& c : corpusCaseDirs(dir)) {
    try {
      loadCorpusCase(c);
    } catch (const std::exception& e) {
      out.push_back(e.what());
    }
  }
  return out;
}

}  // namespace

std::optional<Finding> reduceCase(const std::vector<CampaignEngine>& engines, const TestCase& given,
                                  const CampaignOptions& o) {
  if (engines.empty() || !engines.front().backend) throw Error("reduce: no engine to run against");
  const Judging judging(o, engines);
  const std::vector<Isolated> freshes = freshPerEngine(engines, o);
  if (o.checkSetUp) checkEngineSetUp(freshes.front());
  TestCase tc = given;
  // A case saved without rewrites (a hand-made one, another oracle's finding) gets them from its
  // seed, as the generator would have drawn them.
  if (tc.rewrites.empty()) tc.rewrites = drawRewrites(tc.model, tc.seed, judging.oracle.rewrites);
  Verdict v = judging.afresh(freshes.front(), tc);
  if (v.outcome == Outcome::Unsupported || v.outcome == Outcome::NonFinite)
    throw Error("the case is no test of " + engines.front().backend->name() + ": " + v.message);
  if (!isFailure(v.outcome)) return std::nullopt;
  std::vector<std::vector<std::string>> culprits;
  Finding f =
      afterFailure(failurePath(engines, 0, freshes.front(), freshes, judging, o, culprits), tc, v);
  if (!f.saveError.empty()) throw Error(f.saveError);
  return f;
}

int CampaignStats::newFindings() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) {
    return !f.fromCorpus && !f.known;
  }));
}

std::string rejectedOp(const std::string& message, const Model& model) {
  const Node* best = nullptr;
  for (const Node& n : model.graph.nodes)
    if (!n.name.empty() && message.find(n.name) != std::string::npos &&
        (!best || n.name.size() > best->name.size()))
      best = &n;
  return best ? best->opType : "";
}

void checkCampaign(const std::vector<CampaignEngine>& engines, const CampaignOptions& o) {
  if (engines.empty() || !engines.front().backend)
    throw Error("campaign: no engine to run against");
  if (o.shardCount < 1 || o.shardIndex < 0 || o.shardIndex >= o.shardCount)
    throw Error("campaign: shard " + std::to_string(o.shardIndex) + " of " +
                std::to_string(o.shardCount) + ": expected 0 <= index < count");
  validateConfig(o.generator);
  knownBugs(o.known);  // a folder that is none, or a case that cannot be read, stops it here
}

CampaignStats runCampaign(const std::vector<CampaignEngine>& engines, const CampaignOptions& o,
                          const std::function<void(const CampaignStats&)>& progress) {
  checkCampaign(engines, o);
  CampaignStats stats;
  if (o.maxCases > 0)
    stats.plannedCases =
        std::max<int64_t>(0, o.maxCases - o.shardIndex + o.shardCount - 1) / o.shardCount;
  const auto start = Clock::now();
  const auto timeBoxEnd =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::min(o.seconds, kLongestTimeBox)));
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  double lastProgress = 0;
  auto report = [&](std::string activity) {
    stats.seconds = elapsed();
    stats.activity = std::move(activity);
    lastProgress = stats.seconds;
    if (progress) progress(stats);
  };
  report("starting the engines");  // which may take a while: say what is planned at once
  const Judging judging(o, engines);
  // One persistent worker per engine that runs cases: the first, or each in turn. (Optional, to
  // be started again in place: an Isolated holds a reference and cannot be assigned.)
  std::vector<std::optional<Isolated>> workers(o.roundRobin ? engines.size() : 1);
  auto startWorker = [&](size_t e) {
    workers[e].emplace(*engines[e].backend, o.timeout, Isolation::Persistent);
  };
  for (size_t e = 0; e < workers.size(); ++e) startWorker(e);
  const std::vector<Isolated> freshes = freshPerEngine(engines, o);
  // Checking that each engine works here may take minutes (a compiler's first compile at each
  // configuration): the time box, a stop and an interrupt end it, and nothing runs then.
  const auto stopped = [&] { return o.stop && o.stop(); };
  const bool started =
      !o.checkSetUp ||
      withinTimeBox(timeBoxEnd, [&] {
        for (size_t e = 0; e < engines.size() && !stopped(); ++e)
          checkEngineSetUp(e < workers.size() ? *workers[e] : freshes[e]);
        if (const Isolated* baseline = judging.baseline(false); baseline && !stopped())
          checkEngineSetUp(*baseline);
        return true;
      }).has_value();
  {
    std::set<std::string> all;
    for (size_t e = 0; e < workers.size(); ++e)
      for (std::string& name : engines[e].backend->optimizations()) all.insert(std::move(name));
    stats.optimizations.assign(all.begin(), all.end());
  }
  GeneratorConfig cfg = o.generator;
  cfg.rewrites = std::max(cfg.rewrites, judging.oracle.rewrites);  // the equivalence oracle's
  std::map<std::string, double> initialWeight;
  std::map<std::string, int> shrunkPerKey;
  if (!o.corpus.empty()) stats.unreadableCorpusCases = unreadableCases(o.corpus / o.property);
  std::map<std::string, size_t> findingIndex;
  const KnownBugs known = knownBugs(o.known);
  // Tried first for a finding: the known bugs' culprits (a known bug is then recognised in a few
  // runs), and those found so far.
  std::vector<std::vector<std::string>> culprits = known.culprits();
  CoverageGuide guide;
  coverage::Reached reached;  // the engine's code, with a pc-table

  auto sample = [&] {
    CampaignSample at{stats.seconds,     stats.cases,     stats.passed,
                      stats.unsupported, stats.nonfinite, 0};
    for (const auto& [kind, n] : stats.failures) at.failures += n;
    stats.timeline.push_back(at);
  };

  // Case i of the whole seed space, this shard's slice of it.
  if (!started) stats.interrupted = stopped() || interruptRequested();  // else: the time box
  for (int64_t i = o.shardIndex; started; i += o.shardCount) {
    if (stopped()) {
      stats.interrupted = true;
      break;
    }
    if (o.maxCases > 0 ? i >= o.maxCases : elapsed() >= o.seconds) break;
    if (o.maxCases > 0 && elapsed() >= o.seconds) break;
    if (o.maxFindings > 0 && static_cast<int64_t>(stats.findings.size()) >= o.maxFindings) break;
    const uint64_t seed = o.seed + static_cast<uint64_t>(i);
    std::optional<TestCase> generated = withinTimeBox(timeBoxEnd, [&] {
      return o.coverageGuided ? guide.next(cfg, seed) : makeTestCase(cfg, seed);
    });
    if (!generated) break;
    TestCase& tc = *generated;
    const size_t at = engineFor(seed, workers.size());
    const Isolated& primary = *workers[at];
    const Isolated& fresh = freshes[at];
    std::optional<Verdict> judged =
        withinTimeBox(timeBoxEnd, [&] { return judging.onWorker(primary, tc); });
    if (!judged) break;  // the case counts for nothing: the time box ended while judging it
    Verdict v = std::move(*judged);
    ++stats.cases;
    std::set<std::string> ops;
    for (const Node& n : tc.model.graph.nodes) ops.insert(n.opType);
    for (const std::string& op : ops) ++stats.opCases[op];
    for (const std::string& name : v.optimizations) ++stats.optimizationCases[name];
    countRewriteRules(tc.rewrites, stats.rewriteCases);
    reached.add(v.coverage);
    if (o.coverageGuided) {
      guide.observe(tc, v.coverage);
      stats.coverage = guide.stats();
    }
    // Failures: the pre-shrink key, per configuration when several run cases.
    auto keyOf = [&](const Verdict& judged) {
      const std::string key = preShrinkKey(judged);
      return workers.size() > 1 ? engines[at].configuration + " " + key : key;
    };
    std::string key;
    if (isFailure(v.outcome)) {
      key = keyOf(v);
      // A failure to be shrunk is confirmed in a fresh process first (the worker may carry
      // damage from an earlier case); a repeat is counted as the worker saw it, since a fresh
      // process costs as much as 40 runs on the worker.
      if (o.shrinksPerKey == 0 || shrunkPerKey[key] < o.shrinksPerKey) {
        Verdict again = judging.afresh(fresh, tc);
        if (!sameFailure(again, v)) {
          // The worker's state is suspect: left running, an engine that corrupted its own
          // memory failed most later cases there (15,647 of 66,153 in an OpenCV campaign), each
          // then confirmed in a fresh process at 40 runs' cost.
          ++stats.unconfirmed;
          startWorker(at);
          v = again;
          if (isFailure(v.outcome)) key = keyOf(v);
        }
      }
    }
    switch (v.outcome) {
      case Outcome::Pass:
        ++stats.passed;
        break;
      case Outcome::NonFinite:
        ++stats.nonfinite;
        break;
      case Outcome::Unsupported: {
        ++stats.unsupported;
        const std::string op = rejectedOp(v.message, tc.model);
        ++stats.rejectedOps[op.empty() ? "(not named)" : op];
        if (o.learnUnsupported && !op.empty()) {
          double& w = cfg.opWeights.try_emplace(op, 1.0).first->second;
          initialWeight.try_emplace(op, w);
          w = std::max(w * 0.8, initialWeight[op] * 0.05);
        }
        break;
      }
      default: {  // a failure
        ++stats.failures[v.outcome];
        if (o.shrinksPerKey > 0 && shrunkPerKey[key]++ >= o.shrinksPerKey) {
          ++stats.repeats;
          break;
        }
        const auto shrinkStart = Clock::now();
        const double failedAt = elapsed();
        report("shrinking " + key);
        // Saved once per pattern, whoever finds it first: this campaign before, another on the
        // same corpus meanwhile, or an earlier run.
        FailurePath path = failurePath(engines, at, primary, freshes, judging, o, culprits, &known);
        path.casesRun = i + 1;
        path.secondsRun = failedAt;
        Finding f = afterFailure(path, tc, v);
        if (!f.saveError.empty()) throw Error(f.saveError);
        stats.shrinkSeconds += std::chrono::duration<double>(Clock::now() - shrinkStart).count();
        if (auto it = findingIndex.find(f.info.pattern); it != findingIndex.end()) {
          ++stats.findings[it->second].hits;
          break;
        }
        const std::string pattern = f.info.pattern;
        findingIndex[pattern] = stats.findings.size();
        stats.findings.push_back(std::move(f));
        break;
      }
    }
    stats.seconds = elapsed();
    if (stats.timeline.empty() || stats.seconds - stats.timeline.back().seconds >= 1) sample();
    if (stats.seconds - lastProgress >= 0.5 || !stats.activity.empty()) report("");
  }
  stats.seconds = elapsed();
  stats.activity.clear();
  stats.unreachedFunctions = reached.functions().summary();
  sample();
  return stats;
}

}  // namespace nncheck
