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
#include "nncheck/worker_engine.h"

namespace nncheck {
namespace {

using Clock = std::chrono::steady_clock;

// The oracle and the engines beside the one under test it judges with: the baseline, as a
// persistent worker for the cases and what follows their failures, and afresh for the
// confirmations.
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
  // The case on `engine`, beside the baseline's worker, or (fresh: `engine` runs each case in a
  // fresh process) beside a fresh process of the baseline.
  Verdict judge(const Isolated& engine, bool fresh, const TestCase& tc) const {
    return judgeWith(oracle, {engine, baseline(fresh)}, tc);
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
// an engine look at it too. Shrinking ends with the time box, keeping what it shrank so far: a
// finding is never lost to the time box.
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

// The engine at a configuration, in the engine's processes (Isolated::at): one under test, by its
// configuration (the campaign's caller keeps it), else one the culprit search asks for (made).
EngineMaker makerOf(const std::vector<CampaignEngine>& engines, const EngineWithout& without) {
  return [engines, make = without.make](const std::string& c) -> std::shared_ptr<Backend> {
    for (const CampaignEngine& e : engines)
      if (e.configuration == c) return std::shared_ptr<Backend>(e.backend, [](Backend*) {});
    if (make) return make(c);
    throw Error("campaign: no engine at the configuration '" + c + "'");
  };
}

// Each engine's fresh processes, made once, since each keeps the helper process that forks
// them: a fresh child per run; or, for an engine whose worker says a fork of it is fresh
// (WorkerBackend::servedByFreshForks), one persistent child whose worker serves each run from a
// fork that ran nothing, so that a confirmation costs no start of the engine (LiteRT's import
// of TensorFlow, 3 s). A crash or hang there is confirmed in a fresh child, as a persistent
// worker's is; the engine at another configuration (a crash's triage) is served so too.
struct Freshes {
  std::vector<std::shared_ptr<Backend>> forking;  // the engines the persistent ones run
  std::vector<Isolated> of;                       // by engine
};

// The engine `b` served by fresh forks, when it is a worker's that says a fork of it is fresh.
std::shared_ptr<Backend> servedByFreshForks(const Backend* b) {
  const auto* w = dynamic_cast<const WorkerBackend*>(b);
  return w ? std::shared_ptr<Backend>(w->servedByFreshForks()) : nullptr;
}

Freshes freshPerEngine(const std::vector<CampaignEngine>& engines, const CampaignOptions& o) {
  const EngineMaker maker = makerOf(engines, o.engineWithout);
  const EngineMaker forking = [maker](const std::string& c) -> std::shared_ptr<Backend> {
    std::shared_ptr<Backend> b = maker(c);
    std::shared_ptr<Backend> forked = servedByFreshForks(b.get());
    return forked ? forked : b;
  };
  Freshes out;
  for (const CampaignEngine& e : engines) {
    if (std::shared_ptr<Backend> forked = servedByFreshForks(e.backend)) {
      out.forking.push_back(forked);
      out.of.emplace_back(*forked, o.timeout, Isolation::Persistent, forking);
    } else {
      out.of.push_back(isolated(*e.backend, o.timeout, Isolation::ForkPerRun, maker));
    }
  }
  return out;
}

// What follows a failure `v` of engine `at` (harness/after_failure.h) runs on `worker`, the
// persistent process that ran the case, as cases do: the known bugs' recognition, shrinking,
// localization, the triage at every configuration and the culprit search at every set switched
// off (Isolated::at: one process serves them all, so an engine that takes seconds to start, as
// LiteRT's and Inductor's workers do, starts once, not once per run). A fresh process (`freshes`:
// one per engine) where the failure may come from the worker's state: the minimized case's
// confirmation, a case shrunk on the worker that fails afresh only as found (shrunk again
// there), and all of it for a crash or a hang, which Isolated::run saw in a fresh process
// already and which ends the worker at each failing run.
FailurePath failurePath(const std::vector<CampaignEngine>& engines, size_t at,
                        const Isolated& worker, const std::vector<Isolated>& freshes,
                        const Judging& judging, const CampaignOptions& o,
                        std::vector<std::vector<std::string>>& culprits, const Verdict& v,
                        const ShrinkBudget& budget, CampaignStats& stats,
                        const KnownBugs* known = nullptr,
                        std::optional<Clock::time_point> timeBoxEnd = std::nullopt) {
  const Isolated& fresh = freshes.at(at);
  const CampaignEngine& failed = engines[at];
  const bool afresh = v.outcome == Outcome::Crash || v.outcome == Outcome::Hang ||
                      worker.mode() == Isolation::ForkPerRun || o.freshAfterFailures;
  // (Copies: an Isolated's copies share its processes.)
  const Isolated on = afresh ? fresh : worker;
  // The verdicts of this failure's cases on the worker, by configuration and case: a case asked
  // again (the minimized one, judged last as a shrink candidate, then for its localization and
  // its own configuration's triage; the culprit search's every optimization on) is not run
  // again. Fresh processes are never answered from it: they confirm.
  auto judged = std::make_shared<std::map<std::string, Verdict>>();
  const auto judge = [&judging, &stats, judged](const Isolated& engine, bool fresh,
                                                const TestCase& c) {
    if (fresh) {
      ++stats.afterFailureFresh;
      return judging.judge(engine, true, c);
    }
    const std::string key = engine.configuration().value_or("") + '\n' + contentHash(c);
    auto it = judged->find(key);
    if (it == judged->end()) {
      ++stats.afterFailureJudged;
      it = judged->emplace(key, judging.judge(engine, false, c)).first;
    }
    return it->second;
  };
  FailurePath p;
  p.property = o.property;
  p.oracle = judging.oracle.name;
  p.backend = failed.backend->name();
  p.configuration = failed.configuration;
  p.judge = [judge, on, afresh](const TestCase& c) { return judge(on, afresh, c); };
  // Shrinking ends with the time box (each shrink: on the worker, then afresh), the case as
  // shrunk so far kept.
  auto shrinkOn = [judge, budget, timeBoxEnd](const Isolated& engine, bool fresh) {
    return [judge, budget, timeBoxEnd, engine, fresh](const TestCase& tc, const Verdict& failure,
                                                      const Focus& focus) {
      ShrinkBudget left = budget;
      if (timeBoxEnd)
        left.seconds = std::min(
            left.seconds,
            std::max(0.0, std::chrono::duration<double>(*timeBoxEnd - Clock::now()).count()));
      return shrinkGreedily(
          tc, [&](const TestCase& c) { return sameFailure(judge(engine, fresh, c), failure); },
          left, focus());
    };
  };
  p.shrink = shrinkOn(on, afresh);
  if (!afresh) {
    p.confirm = [judge, fresh](const TestCase& c) { return judge(fresh, true, c); };
    p.shrinkAfresh = shrinkOn(fresh, true);
  }
  // The engine at a configuration: on the processes what follows the failure runs on.
  const auto configured = [&failed, &freshes, &engines, on, afresh](const std::string& c) {
    if (c == failed.configuration) return on;
    if (!afresh) return on.at(c);
    for (size_t e = 0; e < engines.size(); ++e)
      if (engines[e].configuration == c) return freshes[e];
    return on.at(c);
  };
  for (const CampaignEngine& e : engines) {
    const Isolated there = configured(e.configuration);
    p.triage.emplace_back(e.configuration, [judge, there, afresh](const TestCase& c) {
      return judge(there, afresh, c);
    });
  }
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
    p.without = [judge, configured, &without, &failed, afresh](
                    const std::vector<std::string>& disabled, const TestCase& c) {
      return judge(configured(without.configuration(failed.configuration, disabled)), afresh, c);
    };
    p.workaround = [&without, &failed](const std::vector<std::string>& disabled) {
      return without.configuration(failed.configuration, disabled);
    };
  }
  if (timeBoxEnd) p.timeUp = [end = *timeBoxEnd] { return Clock::now() >= end; };
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
  const Freshes fresh = freshPerEngine(engines, o);
  const std::vector<Isolated>& freshes = fresh.of;
  if (o.checkSetUp) checkEngineSetUp(freshes.front());
  TestCase tc = given;
  // A case saved without rewrites (a hand-made one, another oracle's finding) gets them from its
  // seed, as the generator would have drawn them.
  if (tc.rewrites.empty()) tc.rewrites = drawRewrites(tc.model, tc.seed, judging.oracle.rewrites);
  Verdict v = judging.judge(freshes.front(), true, tc);
  if (v.outcome == Outcome::Unsupported || v.outcome == Outcome::NonFinite)
    throw Error("the case is no test of " + engines.front().backend->name() + ": " + v.message);
  if (!isFailure(v.outcome)) return std::nullopt;
  std::vector<std::vector<std::string>> culprits;
  CampaignStats stats;  // (reduce reports none)
  Finding f = afterFailure(
      failurePath(engines, 0, freshes.front(), freshes, judging, o, culprits, v, o.shrink, stats),
      tc, v);
  if (!f.saveError.empty()) throw Error(f.saveError);
  return f;
}

int CampaignStats::newFindings() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) {
    return !f.fromCorpus && !f.known;
  }));
}

std::string rejectedOp(const std::string& message, const Model& model) {
  const std::optional<size_t> node = nodeNamedIn(message, model);
  return node ? model.graph.nodes[*node].opType : "";
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
  // One persistent worker runs the cases, at the first configuration or at each in turn, and
  // what follows their failures at any (Isolated::at): one engine process and one worker
  // program, started once (six configurations of Inductor's worker were six imports of torch, a
  // first compile each, and 860 MiB each).
  std::vector<Isolated> workers;  // the worker at each configuration that runs cases
  auto startWorker = [&] {
    const Isolated worker(*engines.front().backend, o.timeout, Isolation::Persistent,
                          makerOf(engines, o.engineWithout));
    workers = {worker};
    for (size_t e = 1; o.roundRobin && e < engines.size(); ++e)
      workers.push_back(worker.at(engines[e].configuration));
  };
  startWorker();
  const Freshes fresh = freshPerEngine(engines, o);
  const std::vector<Isolated>& freshes = fresh.of;
  // Checking that each engine works here may take minutes (a compiler's first compile at each
  // configuration): the time box, a stop and an interrupt end it, and nothing runs then.
  const auto stopped = [&] { return o.stop && o.stop(); };
  const bool started =
      !o.checkSetUp ||
      withinTimeBox(timeBoxEnd, [&] {
        for (size_t e = 0; e < engines.size() && !stopped(); ++e)
          checkEngineSetUp(e < workers.size() ? workers[e]
                                              : workers.front().at(engines[e].configuration));
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
  // The campaign's findings by root cause, their patterns: a failure of one of them is
  // recognised before shrinking (FailurePath::earlier), unless every failure is to be shrunk.
  std::map<std::string, std::string> patternByCause;
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
    const Isolated primary = workers[at];  // (a copy: starting the worker again replaces it)
    std::optional<Verdict> judged =
        withinTimeBox(timeBoxEnd, [&] { return judging.judge(primary, false, tc); });
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
    // A failure: its pre-shrink key (per configuration when several run cases) counts repeats,
    // which are counted as the worker saw them; the rest go down the failure path, which
    // confirms the minimized case in a fresh process.
    if (isFailure(v.outcome)) {
      const std::string preShrink = preShrinkKey(v);
      const std::string key =
          workers.size() > 1 ? engines[at].configuration + " " + preShrink : preShrink;
      if (o.shrinksPerKey > 0 && shrunkPerKey[key] >= o.shrinksPerKey) {
        ++stats.repeats;
      } else {
        const auto shrinkStart = Clock::now();
        const double failedAt = elapsed();
        report("shrinking " + key);
        // What follows the failure ends with the time box: the case as shrunk so far is the
        // finding, confirmed, and a finding past the box is neither triaged nor searched for its
        // culprit, so that a campaign ends on time whatever it found (a finding that is being
        // shrunk when Ctrl-C comes is still finished).
        FailurePath path = failurePath(engines, at, primary, freshes, judging, o, culprits, v,
                                       o.shrink, stats, &known, timeBoxEnd);
        path.casesRun = i + 1;
        path.secondsRun = failedAt;
        if (o.shrinksPerKey > 0)
          path.earlier = [&patternByCause](const FailureInfo& info, const Model& failing) {
            const auto it = patternByCause.find(rootCause(info, failing));
            return it == patternByCause.end() ? std::nullopt : std::optional(it->second);
          };
        // Saved once per pattern, whoever finds it first: this campaign before, another on the
        // same corpus meanwhile, or an earlier run.
        Finding f = afterFailure(path, tc, v);
        stats.shrinkSeconds += std::chrono::duration<double>(Clock::now() - shrinkStart).count();
        for (const auto& [step, seconds] : f.spent) stats.afterFailureSpent[step] += seconds;
        if (f.unrepeatedAfresh) {
          // The worker's state made the failure: left running, an engine that corrupted its own
          // memory failed most later cases there (15,647 of 66,153 in an OpenCV campaign). The
          // case counts as the fresh process saw it.
          ++stats.unconfirmed;
          startWorker();
          v = std::move(*f.unrepeatedAfresh);
        } else {
          if (!f.saveError.empty()) throw Error(f.saveError);
          ++shrunkPerKey[key];
          if (f.recognised) ++stats.recognised;
          if (auto it = findingIndex.find(f.info.pattern); it != findingIndex.end()) {
            ++stats.findings[it->second].hits;
          } else {
            findingIndex[f.info.pattern] = stats.findings.size();
            patternByCause.emplace(rootCause(f.info, f.minimized.model), f.info.pattern);
            stats.findings.push_back(std::move(f));
          }
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
      default:  // a failure
        ++stats.failures[v.outcome];
        break;
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
