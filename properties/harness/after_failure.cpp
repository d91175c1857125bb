#include "harness/after_failure.h"

#include <algorithm>
#include <chrono>

#include "harness/corpus_store.h"
#include "harness/culprit.h"
#include "harness/root_cause.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "nncheck/shrink.h"
#include "nncheck/worker_engine.h"

namespace nncheck {
namespace {

// Adds the seconds of its scope to spent[step] (Finding::spent), however the scope is left.
class StepClock {
 public:
  StepClock(std::map<std::string, double>& spent, const char* step) : spent_(spent), step_(step) {}
  StepClock(const StepClock&) = delete;
  StepClock& operator=(const StepClock&) = delete;
  ~StepClock() {
    spent_[step_] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::map<std::string, double>& spent_;
  const char* step_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The culprit optimizations of the failure `v` of `tc` (harness/culprit.h), or none when the
// path has no search or the configuration cannot switch one of them off. `searchBeyond` false:
// only a set found before (a known bug's) is tried.
std::optional<Culprit> culpritOf(const FailurePath& p, const TestCase& tc, const Verdict& v,
                                 bool searchBeyond = true) {
  if (!p.without || p.optimizations.empty()) return std::nullopt;
  static const std::vector<std::vector<std::string>> none;
  try {
    std::optional<Culprit> c = findCulprit(
        p.optimizations,
        [&](const std::vector<std::string>& disabled) {
          return sameFailure(p.without(disabled, tc), v);
        },
        p.culprits ? *p.culprits : none, searchBeyond);
    if (!c) return c;
    if (p.workaround) c->workaround = p.workaround(c->needed);
    // One bug shows under many patterns: its set is tried first for the next finding.
    if (p.culprits &&
        std::find(p.culprits->begin(), p.culprits->end(), c->needed) == p.culprits->end())
      p.culprits->push_back(c->needed);
    return c;
  } catch (const Error&) {  // an optimization the configuration cannot switch off
    return std::nullopt;
  }
}

// The first node whose own sub-model (it and its ancestors, its outputs the graph's) fails the
// property the same way: how a failure is localized when the property's verdict cannot say (a
// user's oracle, which sees only the graph outputs). The sub-models are typed by the reference;
// a case it does not compute is not localized.
std::optional<Divergence> localizeByProperty(const FailurePath& p, const TestCase& tc,
                                             const Verdict& v) {
  TensorMap values;
  try {
    values = runReferenceAllValues(tc.model, tc.inputs);
  } catch (const Error&) {
    return std::nullopt;
  }
  const Graph& g = tc.model.graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const TestCase sub = subModelFor(tc, i, values);
    if (sub.model.graph.outputs.empty()) continue;
    const Verdict w = p.judge(sub);
    if (!sameFailure(w, v)) continue;
    const std::string detail = w.message.substr(0, w.message.find('\n'));
    return Divergence{
        i,    g.nodes[i].name, g.nodes[i].opType, sub.model.graph.outputs[0].name, detail,
        true, w.shapeOnly};
  }
  return std::nullopt;
}

// Where the failure `v` of `tc` starts: the verdict's own localization, else (a mismatch) the
// first sub-model failing the property the same way. `quick`: the verdict's quick way alone
// (Verdict::localize: one run).
std::optional<Divergence> localize(const FailurePath& p, const TestCase& tc, const Verdict& v,
                                   bool quick = false) {
  std::optional<Divergence> divergence;
  if (v.localize) divergence = v.localize(quick);
  // (Not an error: the first sub-model that errs is where the engine said it errs, and
  // recordFailure would take that node for one that computed a wrong value before the error.)
  if (!divergence && v.outcome == Outcome::Mismatch && !quick)
    divergence = localizeByProperty(p, tc, v);
  return divergence;
}

// The record of the failure `v` of `tc` (without triage and culprit).
FailureInfo describe(const FailurePath& p, const TestCase& tc, const Verdict& v,
                     std::optional<Divergence> divergence) {
  FailureInfo info = recordFailure(v, tc, std::move(divergence));
  info.property = p.property;
  info.oracle = p.oracle;
  // The reference's patterns are named as they were before oracles had names; another oracle's
  // failure of the same model is another finding.
  if (p.oracle != "reference") info.pattern = p.oracle + ": " + info.pattern;
  info.backend = p.backend;
  // A plug-in engine's library, for the command that replays the finding.
  const std::string engine = campaignEngine(p.property);
  info.engineWorker = workerEngineCommand(engine);
  if (info.engineWorker.empty()) info.engineLibrary = engines().library(engine);
  info.configuration = p.configuration;
  info.casesRun = p.casesRun;
  info.secondsRun = p.secondsRun;
  return info;
}

// What a failure is recognised as before shrinking: a known bug, or an earlier finding's pattern.
struct Recognised {
  std::optional<KnownBug> known;
  std::string earlier;
};

std::optional<Recognised> recognise(const FailurePath& p, const FailureInfo& info,
                                    const Model& failing) {
  if (p.known)
    if (std::optional<KnownBug> bug = p.known(info, failing)) return Recognised{std::move(bug), {}};
  if (p.earlier)
    if (std::optional<std::string> pattern = p.earlier(info, failing))
      return Recognised{std::nullopt, std::move(*pattern)};
  return std::nullopt;
}

// At most this many of a failing case's nodes are run alone to tell its error (each try is a
// compile, and on a crash a fresh process).
constexpr int kNodesTriedAlone = 3;

// An error, crash or hang that no wrong value explains is told by the node it happens at, which
// shrinking finds as its last node: a node that alone (ShrinkCandidates::alone, what shrinking
// ends at) would have a known root cause, and fails alone the same way, is that cause. The
// last nodes first (shrinking cuts from the end too); only nodes whose cause is known run.
std::optional<Recognised> recogniseAtANode(const FailurePath& p, const TestCase& failing,
                                           const Verdict& v, const std::optional<Culprit>& culprit);

// The known bug, or the earlier finding, the unshrunk failure `v` of `failing` is, when its root
// cause can be told before shrinking: by the culprit optimizations when they are the bug
// (harness/root_cause.h), else by the first diverging node, else (no wrong value explains it) by
// a node that fails alone. Told from `v` itself, the failing run, and not confirmed first: a
// known bug hit every few cases otherwise costs its shrinking each time (Inductor's freezing bug
// took 382 s of a 600 s campaign), and a confirmation in a fresh process costs a compiler's start
// each time (LiteRT's, 3 s).
std::optional<Finding> recognisedBeforeShrinking(const FailurePath& p, const TestCase& failing,
                                                 const Verdict& v) {
  // A known bug that is its optimizations is told by them alone: no search on the case as found.
  const std::optional<Culprit> culprit = culpritOf(p, failing, v, false);
  Finding f;
  f.info = describe(p, failing, v, std::nullopt);
  f.info.culprit = culprit;
  std::optional<Recognised> r;
  if (causedByOptimizations(f.info)) {
    r = recognise(p, f.info, failing.model);
  } else {
    // Localized by one run (every value exposed), which shrinking then starts from (its focus);
    // an error by it alone: the sub-models that look for a wrong value before it would compile
    // every prefix of the case (ten on IREE, at a second each) where the error mostly has none.
    std::optional<Divergence> divergence = localize(p, failing, v, true);
    if (!divergence && v.outcome == Outcome::Mismatch) divergence = localize(p, failing, v);
    f.info = describe(p, failing, v, std::move(divergence));
    f.info.culprit = culprit;
    if (f.info.divergence)
      r = recognise(p, f.info, failing.model);
    else if (v.outcome != Outcome::Mismatch)
      r = recogniseAtANode(p, failing, v, culprit);
  }
  if (!r) return std::nullopt;
  f.info.nodesBefore = f.info.nodesAfter;
  f.minimized = failing;
  if (r->known) {
    // Counted under its bug: the unshrunk case's own pattern would make each hit another finding.
    f.known = std::move(r->known);
    f.info.pattern = "known: " + f.known->rootCause;
  } else {
    f.info.pattern = std::move(r->earlier);
    f.recognised = true;
  }
  return f;
}

std::optional<Recognised> recogniseAtANode(const FailurePath& p, const TestCase& failing,
                                           const Verdict& v,
                                           const std::optional<Culprit>& culprit) {
  const ShrinkCandidates candidates(failing);
  int tries = 0;
  for (size_t i = failing.model.graph.nodes.size(); i-- > 0 && tries < kNodesTriedAlone;) {
    const std::optional<TestCase> alone = candidates.alone(i);
    if (!alone) continue;
    FailureInfo info = describe(p, *alone, v, std::nullopt);
    info.culprit = culprit;
    std::optional<Recognised> r = recognise(p, info, alone->model);
    if (!r) continue;
    ++tries;
    if (sameFailure(p.judge(*alone), v)) return r;
  }
  return std::nullopt;
}

}  // namespace

std::optional<size_t> nodeNamedIn(const std::string& message, const Model& model) {
  std::optional<size_t> best;
  const std::vector<Node>& nodes = model.graph.nodes;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].name.empty() && message.find(nodes[i].name) != std::string::npos &&
        (!best || nodes[i].name.size() > nodes[*best].name.size()))
      best = i;
  return best;
}

Finding afterFailure(const FailurePath& p, const TestCase& failing, const Verdict& v) {
  if (!p.judge) throw Error("after a failure: no property to judge the case with");
  std::map<std::string, double> spent;
  if ((p.known || p.earlier) && p.shrink) {
    std::optional<Finding> seen;
    {
      const StepClock clock(spent, "recognition");
      seen = recognisedBeforeShrinking(p, failing, v);
    }
    if (seen) {
      seen->spent = std::move(spent);
      return *seen;
    }
  }
  // Where the failure starts, by one run: its first diverging node (asked before shrinking
  // already, and kept by the verdict), else the node its error names.
  const Focus focus = [&]() -> std::optional<size_t> {
    if (std::optional<Divergence> d = localize(p, failing, v, true)) return d->node;
    return nodeNamedIn(v.message, failing.model);
  };
  ShrinkResult r{failing, 0, 0};
  if (p.shrink) {
    const StepClock clock(spent, "shrinking");
    r = p.shrink(failing, v, focus);
  }
  const Judge& afresh = p.confirm ? p.confirm : p.judge;
  const auto confirmed = [&](const TestCase& c) {
    const StepClock clock(spent, "confirmation");
    return afresh(c);
  };
  Verdict last = confirmed(r.testCase);
  if (!sameFailure(last, v) && p.shrinkAfresh) {
    // Shrunk on a worker, and the minimized case fails in no fresh process: does the case as
    // found? If not, the worker's state made the failure: no finding.
    Verdict found = confirmed(failing);
    if (!sameFailure(found, v)) {
      Finding f;
      f.minimized = failing;
      f.info = describe(p, failing, v, std::nullopt);
      f.unrepeatedAfresh = std::move(found);
      f.spent = std::move(spent);
      return f;
    }
    ShrinkResult again;
    {
      const StepClock clock(spent, "shrinking");
      again = p.shrinkAfresh(failing, v, focus);
    }
    r = {again.testCase, r.steps + again.steps, r.seconds + again.seconds};
    last = confirmed(r.testCase);
  }
  if (!sameFailure(last, v)) {
    // Flaky (the engine failed on the shrunk case once, not again): keep the case that failed
    // before shrinking, with its figures, rather than a minimized case that replays green (an
    // NNC campaign once saved an Abs(Sub(x, x)) that no fresh process fails).
    r.testCase = failing;
    last = v;
  }
  Finding f;
  FailureInfo& info = f.info;
  const auto timeUp = [&] { return p.timeUp && p.timeUp(); };
  {
    // Localized where what follows a failure runs: a fresh process's verdict would localize in
    // fresh processes, one per sub-model.
    const StepClock clock(spent, "localization");
    Verdict here = &afresh == &p.judge ? last : p.judge(r.testCase);
    if (!sameFailure(here, last)) here = last;
    info = describe(p, r.testCase, last, localize(p, r.testCase, here, timeUp()));
  }
  info.nodesBefore = static_cast<int>(failing.model.graph.nodes.size());
  info.shrinkSteps = r.steps;
  info.shrinkSeconds = r.seconds;
  {
    const StepClock clock(spent, "triage");
    for (const auto& [configuration, judge] : p.triage) {
      // Past the time box, each is an engine run (a hang's, a timeout): the triage is its own
      // configuration's alone then, not some of the others' (which could read as all of them).
      if (timeUp()) {
        f.timeBoxEnded = true;
        info.triage = {{p.configuration, last.outcome}};
        info.knownFailures.clear();
        if (p.markKnownFailures) info.knownFailures[p.configuration] = last.outcome;
        break;
      }
      const Outcome outcome = judge(r.testCase).outcome;
      info.triage[configuration] = outcome;
      if (p.markKnownFailures && isFailure(outcome)) info.knownFailures[configuration] = outcome;
    }
  }
  if (timeUp() && p.without && !p.optimizations.empty()) {
    f.timeBoxEnded = true;
  } else {
    const StepClock clock(spent, "culprit search");
    info.culprit = culpritOf(p, r.testCase, last);
  }
  f.minimized = std::move(r.testCase);
  f.spent = std::move(spent);
  if (p.known) f.known = p.known(info, f.minimized.model);
  if (!p.corpus.empty() && !f.known) {
    try {
      const SavedPattern saved = savePatternOnce(p.corpus, p.property, f.minimized, info);
      f.dir = saved.dir;
      f.fromCorpus = !saved.isNew;
    } catch (const std::exception& e) {
      f.saveError = e.what();
    }
  }
  return f;
}

}  // namespace nncheck
