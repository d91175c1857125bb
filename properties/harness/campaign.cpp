#include "nncheck/campaign.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "backends/coverage.h"
#include "core/deadline.h"
#include "nncheck/error.h"
#include "nncheck/localize.h"
#include "nncheck/tolerance.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

// One run of a case judged against the reference: assertMatchesReference's verdict, so the
// tolerance, the NaN/Inf policy and what counts as no test are its own.
Verdict judgeOn(const Isolated& engine, const TestCase& tc) {
  return judge([&](const TestCase& c) { assertMatchesReference(engine, c); }, tc);
}

// The key failures are grouped by before shrinking: the kind and, for mismatches, the op of the
// first diverging node with every value exposed (one extra run); for crashes, the signal.
std::string preShrinkKey(const Isolated& engine, const TestCase& tc, const Verdict& v) {
  std::string key(outcomeName(v.outcome));
  if (v.outcome == Outcome::Mismatch) {
    if (v.shapeOnly) key += " in shape";
    std::optional<Divergence> d = localizeExposed(engine, tc, v.tolerance);
    return key + "@" + (d ? d->opType : "?");
  }
  if (v.outcome == Outcome::Crash) return key + ":" + std::to_string(v.signal);
  return key;
}

// A campaign's time box past this is no time box (and would overflow the clock's range).
constexpr double kLongestTimeBox = 1e9;

// What `work` gives, or none when the time box ends first. Generation and the reference poll
// the deadline (core/deadline.h): growing a model of a thousand nodes takes seconds, and a
// reference run may take up to its own time limit. Shrinking is never cut short: a finding is
// never lost to the time box.
template <class Work>
auto withinTimeBox(Clock::time_point end, Work&& work) -> std::optional<decltype(work())> {
  Deadline box(end);
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

// The optimizations of engine `e` that the failure `v` of `tc` needs (nncheck/culprit.h), each
// trial judged in a fresh process of the engine with the others switched off.
std::optional<Culprit> culpritOf(const CampaignEngine& e, const TestCase& tc, const Verdict& v,
                                 const CampaignOptions& o,
                                 std::vector<std::vector<std::string>>& found) {
  const EngineWithout& without = o.engineWithout;
  std::vector<std::string> optimizations = e.backend->optimizations();
  for (std::string& name : e.backend->unreportedOptimizations())
    optimizations.push_back(std::move(name));
  if (!without.configuration || !without.make || optimizations.empty()) return std::nullopt;
  std::optional<Culprit> c = findCulprit(
      optimizations,
      [&](const std::vector<std::string>& disabled) {
        const std::unique_ptr<Backend> engine =
            without.make(without.configuration(e.configuration, disabled));
        return sameFailure(judgeOn(isolated(*engine, o.timeout), tc), v);
      },
      found);
  if (c) {
    c->workaround = without.configuration(e.configuration, c->needed);
    // One bug shows under many patterns: its set is tried first for the next finding.
    if (std::find(found.begin(), found.end(), c->needed) == found.end()) found.push_back(c->needed);
  }
  return c;
}

// Shrinks a judged failure of engine `at` keeping its kind, localizes it, triages it across the
// engines. Candidates run on `shrinker` (the persistent worker in campaigns: a fork per
// candidate costs four times the run); the result is confirmed in a fresh process, and if it
// does not fail there the shrink is redone in fresh processes, and if that result does not fail
// either, the unshrunk case is kept. `freshes` holds one per engine.
CampaignFinding reduceJudged(const std::vector<CampaignEngine>& engines, size_t at,
                             const Isolated& shrinker, const std::vector<Isolated>& freshes,
                             const TestCase& tc, const Verdict& v, const CampaignOptions& o,
                             std::vector<std::vector<std::string>>& culprits) {
  const Isolated& fresh = freshes.at(at);
  const Outcome kind = v.outcome;
  auto shrinkOn = [&](const Isolated& engine) {
    return shrinkGreedily(
        tc, [&](const TestCase& c) { return sameFailure(judgeOn(engine, c), v); }, o.shrink);
  };
  // A crash or hang kills the worker at each failing candidate, and starting another forks
  // this process: those shrink on fresh processes from the start.
  const bool killsWorker = kind == Outcome::Crash || kind == Outcome::Hang;
  const Isolated& first = killsWorker ? fresh : shrinker;
  ShrinkResult r = shrinkOn(first);
  Verdict last = judgeOn(fresh, r.testCase);
  if (&first != &fresh && !sameFailure(last, v)) {
    r = shrinkOn(fresh);
    last = judgeOn(fresh, r.testCase);
  }
  if (!sameFailure(last, v)) {
    // Flaky (the engine failed on the shrunk case once, not again): keep the case that failed
    // in a fresh process before shrinking, with its figures, rather than a minimized case that
    // replays green (an NNC campaign once saved an Abs(Sub(x, x)) that no fresh process fails).
    r.testCase = tc;
    last = v;
  }
  std::optional<Divergence> d;
  if (kind == Outcome::Mismatch || kind == Outcome::Error)
    d = localizeDivergence(fresh, r.testCase, toleranceFor(r.testCase.model));
  CampaignFinding f;
  FailureInfo& info = f.info;
  info = recordFailure(last, r.testCase, std::move(d));
  info.property = o.property;
  info.backend = engines[at].backend->name();
  info.configuration = engines[at].configuration;
  info.nodesBefore = static_cast<int>(tc.model.graph.nodes.size());
  info.shrinkSteps = r.steps;
  info.shrinkSeconds = r.seconds;
  for (size_t e = 0; e < engines.size(); ++e) {
    const Outcome outcome = judgeOn(freshes[e], r.testCase).outcome;
    info.triage[engines[e].configuration] = outcome;
    if (o.markKnownFailures && isFailure(outcome))
      info.knownFailures[engines[e].configuration] = outcome;
  }
  try {
    info.culprit = culpritOf(engines[at], r.testCase, last, o, culprits);
  } catch (const Error&) {  // an optimization the configuration cannot switch off: no culprit
  }
  f.minimized = std::move(r.testCase);
  return f;
}

// The cases saved under `dir`, by pattern; a case that cannot be read is reported, not fatal.
std::map<std::string, std::filesystem::path> corpusCasesByPattern(
    const std::filesystem::path& dir, std::vector<std::string>& unreadable) {
  std::map<std::string, std::filesystem::path> out;
  for (const std::filesystem::path& c : corpusCaseDirs(dir)) {
    try {
      const CorpusCase saved = loadCorpusCase(c);
      if (!saved.pattern.empty()) out.emplace(saved.pattern, c);
    } catch (const std::exception& e) {
      unreadable.push_back(e.what());
    }
  }
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
  Verdict v = judgeOn(freshes.front(), tc);
  if (v.outcome == Outcome::Unsupported || v.outcome == Outcome::NonFinite)
    throw Error("the case is no test of " + engines.front().backend->name() + ": " + v.message);
  if (!isFailure(v.outcome)) return std::nullopt;
  std::vector<std::vector<std::string>> culprits;
  return reduceJudged(engines, 0, freshes.front(), freshes, tc, v, o, culprits);
}

int CampaignStats::newFindings() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [](const CampaignFinding& f) { return !f.fromCorpus; }));
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
  if (o.shardCount < 1 || o.shardIndex < 0 || o.shardIndex >= o.shardCount)
    throw Error("campaign: shard " + std::to_string(o.shardIndex) + " of " +
                std::to_string(o.shardCount) + ": expected 0 <= index < count");
  validateConfig(o.generator);
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
  // One persistent worker per engine that runs cases: the first, or each in turn. (Optional, to
  // be started again in place: an Isolated holds a reference and cannot be assigned.)
  std::vector<std::optional<Isolated>> workers(o.roundRobin ? engines.size() : 1);
  auto startWorker = [&](size_t e) {
    workers[e].emplace(*engines[e].backend, o.timeout, Isolation::Persistent);
  };
  for (size_t e = 0; e < workers.size(); ++e) startWorker(e);
  const std::vector<Isolated> freshes = freshPerEngine(engines, o);
  {
    std::set<std::string> all;
    for (size_t e = 0; e < workers.size(); ++e)
      for (std::string& name : engines[e].backend->optimizations()) all.insert(std::move(name));
    stats.optimizations.assign(all.begin(), all.end());
  }
  GeneratorConfig cfg = o.generator;
  std::map<std::string, double> initialWeight;
  std::map<std::string, int> shrunkPerKey;
  const std::map<std::string, std::filesystem::path> known =
      o.corpus.empty() ? std::map<std::string, std::filesystem::path>{}
                       : corpusCasesByPattern(o.corpus / o.property, stats.unreadableCorpusCases);
  std::map<std::string, size_t> findingIndex;
  std::vector<std::vector<std::string>> culprits;  // found so far: tried first for a finding
  CoverageGuide guide;
  coverage::Reached reached;  // the engine's code, with a pc-table

  auto sample = [&] {
    CampaignSample at{stats.seconds,     stats.cases,     stats.passed,
                      stats.unsupported, stats.nonfinite, 0};
    for (const auto& [kind, n] : stats.failures) at.failures += n;
    stats.timeline.push_back(at);
  };

  // Case i of the whole seed space, this shard's slice of it.
  for (int64_t i = o.shardIndex;; i += o.shardCount) {
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
    std::optional<Verdict> judged = withinTimeBox(timeBoxEnd, [&] { return judgeOn(primary, tc); });
    if (!judged) break;  // the case counts for nothing: the time box ended while judging it
    Verdict v = std::move(*judged);
    ++stats.cases;
    std::set<std::string> ops;
    for (const Node& n : tc.model.graph.nodes) ops.insert(n.opType);
    for (const std::string& op : ops) ++stats.opCases[op];
    for (const std::string& name : v.optimizations) ++stats.optimizationCases[name];
    reached.add(v.coverage);
    if (o.coverageGuided) {
      guide.observe(tc, v.coverage);
      stats.coverage = guide.stats();
    }
    // Failures: the pre-shrink key, per configuration when several run cases.
    auto keyOf = [&](const Verdict& judged) {
      const std::string key = preShrinkKey(primary, tc, judged);
      return workers.size() > 1 ? engines[at].configuration + " " + key : key;
    };
    std::string key;
    if (isFailure(v.outcome)) {
      key = keyOf(v);
      // A failure to be shrunk is confirmed in a fresh process first (the worker may carry
      // damage from an earlier case); a repeat is counted as the worker saw it, since a fresh
      // process costs as much as 40 runs on the worker.
      if (o.shrinksPerKey == 0 || shrunkPerKey[key] < o.shrinksPerKey) {
        Verdict again = judgeOn(fresh, tc);
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
        CampaignFinding f = reduceJudged(engines, at, primary, freshes, tc, v, o, culprits);
        stats.shrinkSeconds += std::chrono::duration<double>(Clock::now() - shrinkStart).count();
        f.info.casesRun = i + 1;
        f.info.secondsRun = failedAt;
        if (auto it = findingIndex.find(f.info.pattern); it != findingIndex.end()) {
          ++stats.findings[it->second].hits;
          break;
        }
        if (auto saved = known.find(f.info.pattern); saved != known.end()) {
          f.fromCorpus = true;
          f.dir = saved->second;
        }
        // Another campaign on the same corpus may have found it meanwhile: one saves it.
        if (!o.corpus.empty() && !f.fromCorpus) {
          const SavedPattern saved = savePatternOnce(o.corpus, o.property, f.minimized, f.info);
          f.dir = saved.dir;
          f.fromCorpus = !saved.isNew;
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

std::vector<std::pair<std::vector<std::string>, std::vector<size_t>>> findingsByCulprit(
    const std::vector<CampaignFinding>& findings) {
  std::map<std::vector<std::string>, std::vector<size_t>> byCulprit;
  for (size_t i = 0; i < findings.size(); ++i)
    if (const auto& c = findings[i].info.culprit; c && !c->needed.empty())
      byCulprit[c->needed].push_back(i);
  std::vector<std::pair<std::vector<std::string>, std::vector<size_t>>> out;
  for (auto& [needed, indices] : byCulprit)
    if (indices.size() >= 2) out.emplace_back(needed, std::move(indices));
  return out;
}

}  // namespace nncheck
