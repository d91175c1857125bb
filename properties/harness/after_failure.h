// What follows a failure, one path for check() and campaigns alike: recognise a known bug, shrink
// (RapidCheck's result in check(), greedy in campaigns), confirm afresh, localize, record, triage
// over the configurations, search for the culprit optimizations where the engine switches them
// off, and save once per minimized pattern through an exclusive claim (two processes finding one
// pattern at once save it once).
//
//   nncheck::FailurePath p;
//   p.property = "fuzz-mycompiler";
//   p.judge = [&](const nncheck::TestCase& c) { return nncheck::judge(property, c); };
//   p.corpus = "nncheck-corpus";
//   nncheck::Finding f = nncheck::afterFailure(p, failingCase, verdict);   // f.dir: saved
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nncheck/campaign.h"
#include "nncheck/corpus.h"
#include "nncheck/shrink.h"

namespace nncheck {

// A property at one configuration, judged on a case.
using Judge = std::function<Verdict(const TestCase&)>;
// The node a failure starts at, when one run tells it (asked only by a shrinker that uses it).
using Focus = std::function<std::optional<size_t>()>;
// Shrinks a failing case keeping its failure (sameFailure), from the failure's focus alone first
// (shrinkGreedily).
using Shrinker = std::function<ShrinkResult(const TestCase&, const Verdict&, const Focus&)>;

struct FailurePath {
  std::string property;                // the corpus folder: <corpus>/<property>/<hash>
  std::string oracle = "reference";    // what the failure was judged against (nncheck/oracle.h)
  std::string backend, configuration;  // who failed
  // The failing configuration's property, judged where what follows the failure runs (a
  // campaign's persistent worker; check()'s engines of its own): its verdict localizes the
  // shrunk case (Verdict::localize; a mismatch without one, as of a user's property, is localized
  // to the first node whose own sub-model fails the property the same way).
  Judge judge;
  // The property afresh, in processes no earlier case ran in: confirms the shrunk case. Empty:
  // `judge` is afresh already.
  Judge confirm{};
  // Shrinks the failing case; empty: it is shrunk already.
  Shrinker shrink{};
  // Shrinks in fresh processes, when the case `shrink` minimized on a worker does not fail afresh
  // though the case as found does (the worker's state was part of it). Empty: none.
  Shrinker shrinkAfresh{};
  // Configuration triage: each configuration's property on the minimized case.
  std::vector<std::pair<std::string, Judge>> triage{};
  bool markKnownFailures = false;  // record the configurations it fails in as known failures
  // The culprit search (harness/culprit.h): the configuration's optimizations, and its property
  // with some of them switched off (throws nncheck::Error for one it cannot switch off: no
  // culprit then); `workaround` names the configuration with a set switched off.
  std::vector<std::string> optimizations{};
  std::function<Verdict(const std::vector<std::string>& disabled, const TestCase&)> without{};
  std::function<std::string(const std::vector<std::string>& disabled)> workaround{};
  // Sets found for earlier failures, tried first; a set found is added (may be null).
  std::vector<std::vector<std::string>>* culprits = nullptr;
  // Whether the campaign's time box has ended: a finding confirmed then is neither triaged nor
  // searched for its culprit, and is localized by one run (Finding::timeBoxEnded). Empty: never.
  std::function<bool()> timeUp{};
  std::filesystem::path corpus;  // where it is saved; empty: not saved
  // The known bug a failure is, if any (a campaign's KnownBugs::match): a known bug is not
  // saved, whatever `corpus` says. Empty: none is known.
  std::function<std::optional<KnownBug>(const FailureInfo&, const Model&)> known{};
  // The pattern of an earlier finding of the campaign with the root cause of a failure, if any:
  // recognised as a known bug is, before shrinking (a bug that fails at every configuration of
  // a round robin was shrunk at each). Empty: none is looked for.
  std::function<std::optional<std::string>(const FailureInfo&, const Model&)> earlier{};
  // How it was found (FailureInfo::casesRun, secondsRun).
  int64_t casesRun = 0;
  double secondsRun = 0;
};

// The node of `model` an engine's message names (the longest node name it contains), if any.
std::optional<size_t> nodeNamedIn(const std::string& message, const Model& model);

// The finding of `failing`, which failed `v` with the path's property. A known bug, and an earlier
// finding (Finding::recognised), is recognised from `v` itself, before anything else runs. When the
// shrunk case does not fail afresh (the engine failed on it once, not again), the unshrunk case is
// kept with `v`: a minimized case that replays green is worse than a large one that fails. When the
// case as found does not fail afresh either (with `shrinkAfresh`: it failed on a worker), there is
// no finding (Finding::unrepeatedAfresh).
Finding afterFailure(const FailurePath& path, const TestCase& failing, const Verdict& v);

}  // namespace nncheck
