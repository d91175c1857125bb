// check(): RapidCheck drives generation and shrinking; this file adds what a compiler team
// needs around it: the saved failures replayed first, failure kinds kept while shrinking, a
// shrink budget, the corpus, coverage statistics, and a report that replays from anywhere.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "backends/coverage.h"
#include "check_environment.h"
#include "core/hash.h"
#include "core/shell_words.h"
#include "harness/after_failure.h"
#include "harness/corpus_store.h"
#include "harness/culprit.h"
#include "harness/probe.h"
#include "nncheck/error.h"
#include "nncheck/gtest.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string currentTestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!info) return "property";
  return std::string(info->test_suite_name()) + "." + info->name();
}

// A test's folder under the corpus: its GoogleTest name, whose '/' (TEST_P's instantiation
// and index) become sub-folders, so folders, gtest names and ctest names read alike.
fs::path testFolder(const std::string& test) {
  fs::path p;
  std::string part;
  for (char c : test + "/") {
    if (c != '/') {
      part += (c == ' ' || c == '\\') ? '_' : c;
      continue;
    }
    if (!part.empty() && part != "." && part != "..") p /= part;
    part.clear();
  }
  return p;
}

std::string selfPath() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("<test binary>") : p.string();
}

// The corpus NNCHECK_CORPUS_TEST registered first in this binary: where check() saves by default.
std::optional<fs::path>& registeredCorpus() {
  static std::optional<fs::path> corpus;
  return corpus;
}

fs::path corpusRoot() {
  const char* c = std::getenv("NNCHECK_CORPUS");
  fs::path root = c && *c              ? fs::path(c)
                  : registeredCorpus() ? *registeredCorpus()
                                       : fs::path("nncheck-corpus");
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec);
  return ec ? root : abs.lexically_normal();
}

// The environment, validated before anything runs: a wrong variable fails the test at its
// call site, and is never judged, shrunk and saved as the engine's failure.
std::optional<CheckEnvironment> environmentOf(const std::string& test, CallSite where) {
  try {
    CheckEnvironment env = readCheckEnvironment();
    for (const std::string& w : env.warnings) std::fprintf(stderr, "nncheck: %s\n", w.c_str());
    return env;
  } catch (const Error& e) {
    ADD_FAILURE_AT(where.file, where.line)
        << "nncheck: " << test << ": " << e.what() << " (nothing was run)";
    return std::nullopt;
  }
}

// judge(), with a failed RapidCheck assertion (RC_ASSERT in the property) as a mismatch.
Verdict runProperty(const Property& property, const TestCase& tc) {
  return judge(
      [&](const TestCase& c) {
        try {
          property(c);
        } catch (const rc::detail::CaseResult& r) {
          if (r.type == rc::detail::CaseResult::Type::Failure)
            throw PropertyFailure(Outcome::Mismatch, r.description);
        }
      },
      tc);
}

// NAME=value for each variable of nncheck's (and RapidCheck's) set in this process, for a
// command that reruns under the same settings.
std::string settingsPrefix(const std::vector<std::string>& skip) {
  std::string s;
  for (const char* name :
       {"NNCHECK_SEED", "NNCHECK_CASES", "NNCHECK_MAX_NODES", "NNCHECK_CORPUS",
        "NNCHECK_SHRINK_SECONDS", "NNCHECK_SHRINK_STEPS", "NNCHECK_TIMEOUT", "RC_PARAMS"}) {
    const char* v = std::getenv(name);
    if (!v || !*v || std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    s += std::string(name) + "=" + shellQuote(v) + " ";
  }
  return s;
}

std::string report(const std::string& test, const Verdict& v, const TestCase& tc,
                   const FailureInfo& info, const std::string& saved,
                   std::optional<uint64_t> seed) {
  std::ostringstream os;
  os << "nncheck: " << test << " failed: " << outcomeName(v.outcome);
  if (info.casesRun) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f", info.secondsRun);
    os << " after " << info.casesRun << (info.casesRun == 1 ? " case, " : " cases, ") << secs
       << " s";
  }
  if (info.nodesBefore) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f", info.shrinkSeconds);
    os << " (shrunk from " << info.nodesBefore << " to " << info.nodesAfter << " nodes in "
       << info.shrinkSteps << " steps, " << secs << " s)";
  }
  os << "\n" << v.message;
  if (!v.message.empty() && v.message.back() != '\n') os << "\n";
  if (info.divergence) os << "first diverging node: " << info.divergence->describe() << "\n";
  if (!info.triage.empty()) {
    os << "configurations:";
    for (const auto& [config, outcome] : info.triage)
      os << " [" << config << ": " << outcomeName(outcome) << "]";
    os << "\n";
  }
  if (info.culprit) os << "culprit: " << describeCulprit(*info.culprit) << "\n";
  os << "model (seed " << tc.seed << "):\n" << modelToText(tc.model);
  os << "saved: " << saved << "\n";
  if (std::error_code ec; fs::exists(fs::path(saved) / "model.svg", ec))
    os << "picture: " << (fs::path(saved) / "model.svg").string() << "\n";
  // Quoted as a shell reads them: a case folder's or test's name is no command.
  const std::string filter = " --gtest_filter=" + shellQuote(test);
  if (saved.rfind("(", 0) != 0)
    os << "replay: NNCHECK_REPLAY=" << shellQuote(saved) << " " << settingsPrefix({"NNCHECK_SEED"})
       << shellQuote(selfPath()) << filter << "\n";
  if (seed)
    os << "rerun:  " << settingsPrefix({"NNCHECK_SEED", "NNCHECK_CORPUS"})
       << "NNCHECK_SEED=" << *seed << " NNCHECK_CORPUS=/tmp/nncheck-rerun "
       << shellQuote(selfPath()) << filter << "\n";
  return os.str();
}

// What the generated cases covered: how many, which ops in how many cases, which op pairs
// (producer -> consumer), and the cases that were not tests.
struct Coverage {
  int cases = 0;
  std::map<std::string, int> casesWithOp;
  std::map<std::string, int> pairs;
  std::map<std::string, int> unsupported;    // by category
  std::map<std::string, int> optimizations;  // cases in which each changed the model
  std::map<std::string, int64_t> rewrites;   // cases whose variant applied each rewrite rule
  coverage::Reached reached;                 // the engine's code, with a pc-table

  void add(const TestCase& tc) {
    ++cases;
    std::map<std::string, std::string> producer;
    std::set<std::string> ops;
    for (const Node& n : tc.model.graph.nodes) {
      ops.insert(n.opType);
      for (const std::string& in : n.inputs)
        if (auto it = producer.find(in); !in.empty() && it != producer.end())
          ++pairs[it->second + "->" + n.opType];
      for (const std::string& out : n.outputs) producer[out] = n.opType;
    }
    for (const std::string& op : ops) ++casesWithOp[op];
    countRewriteRules(tc.rewrites, rewrites);
  }

  int skipped() const {
    int n = 0;
    for (const auto& [category, k] : unsupported) n += k;
    return n;
  }
  std::string skippedText() const {
    std::string why;
    for (const auto& [category, n] : unsupported)
      why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + category;
    return why;
  }
};

// The statistics of a passing run, and what it reached too rarely to have tested. `known`: the
// optimizations the configuration may apply (CheckOptions::optimizations).
void printCoverage(const std::string& test, const Coverage& c, const CoverageStats& guided,
                   const std::map<std::string, int>& tags, const std::vector<std::string>& known) {
  constexpr int kRare = 3;  // cases an op must appear in to count as tested
  std::printf("nncheck: %s: %d cases, %d not tests%s%s%s\n", test.c_str(), c.cases, c.skipped(),
              c.skipped() ? " (" : "", c.skippedText().c_str(), c.skipped() ? ")" : "");
  std::vector<std::pair<int, std::string>> pairs;
  for (const auto& [pair, n] : c.pairs) pairs.emplace_back(-n, pair);
  std::sort(pairs.begin(), pairs.end());
  std::string top;
  for (size_t i = 0; i < pairs.size() && i < 5; ++i)
    top += (i ? ", " : "") + pairs[i].second + " " + std::to_string(-pairs[i].first);
  const std::shared_ptr<const GeneratorConfig> cfg = detail::lastGeneratorConfig;
  std::vector<std::string> usable;
  if (cfg) usable = usableOps(*cfg);
  std::string never, rarely;
  for (const std::string& op : usable) {
    auto it = c.casesWithOp.find(op);
    if (it == c.casesWithOp.end())
      never += (never.empty() ? "" : ", ") + op;
    else if (it->second < kRare)
      rarely += (rarely.empty() ? "" : ", ") + op + "(" + std::to_string(it->second) + ")";
  }
  if (cfg)
    std::printf("  ops seen: %zu of %zu usable; op pairs: %zu distinct%s%s\n", c.casesWithOp.size(),
                usable.size(), c.pairs.size(), top.empty() ? "" : ", most frequent ", top.c_str());
  else
    std::printf("  ops seen: %zu; op pairs: %zu distinct%s%s\n", c.casesWithOp.size(),
                c.pairs.size(), top.empty() ? "" : ", most frequent ", top.c_str());
  if (!never.empty() || !rarely.empty())
    std::printf(
        "  not tested enough: %s%s%s%s%s (raise NNCHECK_CASES or weight them up in "
        "GeneratorConfig::opWeights)\n",
        never.empty() ? "" : "never generated: ", never.c_str(),
        !never.empty() && !rarely.empty() ? "; " : "",
        rarely.empty() ? "" : "in fewer than 3 cases: ", rarely.c_str());
  if (guided.features > 0)
    std::printf(
        "  coverage-guided: %lld features of the engine reached, %lld cases kept for new "
        "coverage, %lld mutants of them among the cases\n",
        static_cast<long long>(guided.features), static_cast<long long>(guided.kept),
        static_cast<long long>(guided.mutants));
  if (const std::string unreached = c.reached.functions().summary(); !unreached.empty())
    std::printf("  %s\n", unreached.c_str());
  if (!c.optimizations.empty()) {
    std::string names;
    for (const auto& [name, n] : c.optimizations)
      names += (names.empty() ? "" : ", ") + name + " " + std::to_string(n);
    std::printf("  optimizations that changed a model: %zu (cases: %s)\n", c.optimizations.size(),
                names.c_str());
    // Only an engine that names what changed a model tells what never did.
    std::string never;
    size_t neverCount = 0;
    for (const std::string& name : known)
      if (!c.optimizations.count(name)) {
        never += (never.empty() ? "" : ", ") + name;
        ++neverCount;
      }
    if (neverCount > 0)
      std::printf("  optimizations never triggered: %zu of %zu: %s\n", neverCount, known.size(),
                  never.c_str());
  }
  if (!c.rewrites.empty()) std::printf("  %s\n", describeRewriteCounts(c.rewrites).c_str());
  for (const auto& [tag, n] : tags)
    std::printf("  %5.1f%% %s\n", 100.0 * n / std::max(c.cases, 1), tag.c_str());
  std::fflush(stdout);
}

// RC_TAG and RC_CLASSIFY of a passing run, as RapidCheck prints them.
std::map<std::string, int> tagsOf(const rc::detail::TestResult& result) {
  std::map<std::string, int> out;
  if (result.template is<rc::detail::SuccessResult>()) {
    for (const auto& [tags, n] : result.template get<rc::detail::SuccessResult>().distribution) {
      std::string s;
      for (const std::string& t : tags) s += (s.empty() ? "" : ", ") + t;
      if (!s.empty()) out[s] += n;
    }
  }
  return out;
}

// Replays the failures saved for this test before anything is generated; true when one still
// fails (reported at `where`), so the run stops there.
bool replaySavedFailures(const std::string& test, const fs::path& folder, const Property& property,
                         const CheckOptions& options, const CallSite& where) {
  for (const fs::path& dir : corpusCaseDirs(folder)) {
    CorpusCase c;
    try {
      c = loadCorpusCase(dir);
    } catch (const std::exception& e) {
      ADD_FAILURE_AT(where.file, where.line)
          << "nncheck: " << test << ": a saved case cannot be read: " << e.what();
      continue;
    }
    Verdict v = runProperty(property, c.testCase);
    if (!isFailure(v.outcome)) {
      std::printf("nncheck: %s: replayed %s: passes now\n", test.c_str(), dir.string().c_str());
      continue;
    }
    auto known = c.knownFailures.find(options.configuration);
    if (known != c.knownFailures.end() && known->second == v.outcome) continue;
    ADD_FAILURE_AT(where.file, where.line)
        << "nncheck: " << test << ": a saved failure still fails (replayed before generating)\n"
        << report(test, v, c.testCase, {}, dir.string(), std::nullopt);
    return true;
  }
  return false;
}

}  // namespace

int detail::casesToGenerate() { return readCheckEnvironment().cases; }

void check(const rc::Gen<TestCase>& gen, const Property& property, const CheckOptions& options,
           CallSite where) {
  const std::string test = currentTestName();
  const std::optional<CheckEnvironment> env = environmentOf(test, where);
  if (!env) return;
  EngineScope engines;  // one persistent worker per engine for the whole run
  if (!env->replay.empty()) {
    TestCase tc = loadCase(env->replay);
    Verdict v = runProperty(property, tc);
    if (isFailure(v.outcome))
      ADD_FAILURE_AT(where.file, where.line) << report(test, v, tc, {}, env->replay, std::nullopt);
    return;
  }
  const fs::path corpus = corpusRoot();
  if (replaySavedFailures(test, corpus / testFolder(test), property, options, where)) return;

  loadRapidCheckConfigurationQuietly();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* rcParams = std::getenv("RC_PARAMS");
  const bool rcSeed = rcParams && std::string(rcParams).find("seed=") != std::string::npos;
  if (env->seed)
    params.seed = *env->seed;
  else if (!rcSeed)
    params.seed = fnv1a(test);  // reproducible by default
  params.maxSuccess = env->cases;
  const double shrinkSeconds = env->shrinkSeconds;
  const int shrinkSteps = env->shrinkSteps;

  struct State {
    std::optional<Verdict> firstFailure;  // shrinking keeps its failure (sameFailure)
    Verdict last;
    TestCase first, lastCase;
    int steps = 0;
    Clock::time_point shrinkStart;
    bool exhausted = false;
    Coverage coverage;  // before the first failure
    Clock::time_point start = Clock::now();
    double secondsRun = 0;  // until the first failure
  } s;
  // Cases come from gen::testCase through the guide while this check runs (NNCHECK_COVERAGE=off:
  // never; and every case is fresh until an engine reports coverage).
  CoverageGuide guide;
  const bool guiding = env->coverage;
  struct Activate {
    CoverageGuide* outer;
    explicit Activate(CoverageGuide* g) : outer(std::exchange(detail::activeGuide, g)) {}
    ~Activate() { detail::activeGuide = outer; }
  } activate(guiding ? &guide : nullptr);

  auto wrapped = [&] {
    const TestCase tc = *gen;
    if (s.exhausted) return;  // past the budget every candidate "passes": shrinking stops
    if (s.firstFailure) {
      ++s.steps;
      const double spent = std::chrono::duration<double>(Clock::now() - s.shrinkStart).count();
      if (s.steps > shrinkSteps || spent > shrinkSeconds) {
        s.exhausted = true;
        return;
      }
    }
    Verdict v = runProperty(property, tc);
    if (!s.firstFailure) {
      s.coverage.add(tc);
      if (!v.category.empty()) ++s.coverage.unsupported[v.category];
      for (const std::string& name : v.optimizations) ++s.coverage.optimizations[name];
      s.coverage.reached.add(v.coverage);
      if (guiding) guide.observe(tc, v.coverage);
    }
    if (!isFailure(v.outcome)) return;
    if (!s.firstFailure) {
      s.firstFailure = v;
      s.first = tc;
      s.shrinkStart = Clock::now();
      s.secondsRun = std::chrono::duration<double>(s.shrinkStart - s.start).count();
    } else if (!sameFailure(v, *s.firstFailure)) {
      return;  // another kind of failure is another bug: not this one's shrink
    }
    s.last = v;
    s.lastCase = tc;
    RC_FAIL(std::string(outcomeName(v.outcome)));
  };

  // No metadata.id: RapidCheck would print a "reproduce" string at exit that depends on settings
  // it does not know of (NNCHECK_MAX_NODES...); the report's replay and rerun lines do the job.
  rc::detail::TestMetadata metadata;
  metadata.description = test;
  const auto result = rc::detail::checkTestable(wrapped, metadata, params);
  const Coverage& coverage = s.coverage;
  if (result.template is<rc::detail::SuccessResult>()) {
    printCoverage(test, coverage, guide.stats(), tagsOf(result), options.optimizations);
    if (coverage.cases > 0 && coverage.skipped() == coverage.cases)
      ADD_FAILURE_AT(where.file, where.line)
          << "nncheck: " << test << ": all " << coverage.cases
          << " cases were rejected or skipped (" << coverage.skippedText()
          << "), so the property tested nothing; narrow the generator to what the engine "
             "accepts";
    return;
  }
  if (!s.firstFailure) {
    std::ostringstream os;
    rc::detail::printResultMessage(result, os);
    ADD_FAILURE_AT(where.file, where.line) << "nncheck: " << test << ": " << os.str();
    return;
  }
  // An engine that does not work here at all (its runtime missing, its worker exiting) fails
  // every case alike: said so, and nothing is shrunk or saved.
  if (const Outcome kind = s.firstFailure->outcome;
      kind == Outcome::Error || kind == Outcome::Crash || kind == Outcome::Hang) {
    try {
      for (const Isolated& engine : engines.isolated()) checkEngineSetUp(engine);
    } catch (const SetUpError& e) {
      ADD_FAILURE_AT(where.file, where.line)
          << "nncheck: " << test << ": " << e.what() << "\nnothing was saved (the case ended in "
          << s.firstFailure->message << ")";
      return;
    }
  }
  // What follows the failure, as in campaigns (harness/after_failure.h): the shrunk case judged
  // again on engines of its own, not on workers the failure may have damaged.
  EngineScope afresh;
  FailurePath path;
  path.property = testFolder(test).string();
  // Who failed, when the options name no backend: the one engine the property ran, by its name.
  const std::vector<std::string>& ran = s.firstFailure->engines;
  path.backend = !options.backend.empty() ? options.backend : ran.size() == 1 ? ran[0] : "";
  path.configuration = options.configuration;
  path.judge = [&](const TestCase& tc) { return runProperty(property, tc); };
  const double shrunkIn = std::chrono::duration<double>(Clock::now() - s.shrinkStart).count();
  path.shrink = [&](const TestCase&, const Verdict&, const Focus&) {
    return ShrinkResult{s.lastCase, s.steps, shrunkIn};  // RapidCheck's
  };
  for (const auto& configured : options.triage)  // (clang 14 cannot capture a binding)
    path.triage.emplace_back(configured.first, [&configured](const TestCase& tc) {
      return runProperty(configured.second, tc);
    });
  if (options.without) {
    path.optimizations = options.optimizations;
    path.without = [&](const std::vector<std::string>& off, const TestCase& tc) {
      return runProperty(options.without(off), tc);
    };
  }
  path.corpus = corpus;
  path.casesRun = s.coverage.cases;  // the failing case included
  path.secondsRun = s.secondsRun;
  const Finding f = afterFailure(path, s.first, *s.firstFailure);
  // One saved case per minimized pattern: a run that started before another saved the pattern
  // (ctest -j over seeds) points at that case instead.
  const std::string saved =
      !f.saveError.empty() ? "(not saved: " + f.saveError + ")" : f.dir.string();
  const std::string note =
      f.fromCorpus
          ? "(this case was not saved: an earlier run saved the same minimized pattern above)\n"
          : "";
  ADD_FAILURE_AT(where.file, where.line)
      << report(test, Verdict{f.info.kind, f.info.message}, f.minimized, f.info, saved, params.seed)
      << note;
}

namespace {

class CorpusCaseTest : public ::testing::Test {
 public:
  CorpusCaseTest(fs::path dir, Property property, std::string configuration)
      : dir_(std::move(dir)), property_(std::move(property)), config_(std::move(configuration)) {}
  void TestBody() override { replayCorpusCase(dir_, property_, config_); }

 private:
  fs::path dir_;
  Property property_;
  std::string config_;
};

}  // namespace

void replayCorpusCase(const fs::path& dir, const Property& property,
                      const std::string& configuration) {
  if (!environmentOf(currentTestName(), CallSite(__FILE__, __LINE__))) return;
  CorpusCase c;
  try {
    c = loadCorpusCase(dir);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "nncheck: the saved case cannot be read: " << e.what();
    return;
  }
  Verdict v = runProperty(property, c.testCase);
  auto known = c.knownFailures.find(configuration);
  if (known == c.knownFailures.end()) {
    if (isFailure(v.outcome))
      ADD_FAILURE() << report(currentTestName(), v, c.testCase, {}, dir.string(), std::nullopt);
    else  // a saved failure that passes: the engine was fixed, or the case no longer shows it
      std::printf("nncheck: replayed %s: passes now\n", dir.string().c_str());
    return;
  }
  // A known failure: it must still fail the same way.
  const std::string got(outcomeName(v.outcome));
  if (v.outcome != known->second)
    ADD_FAILURE() << "nncheck: " << dir.string() << " is a known " << outcomeName(known->second)
                  << " failure" << (configuration.empty() ? "" : " in " + configuration)
                  << " but now it " << (v.outcome == Outcome::Pass ? "passes" : "fails with " + got)
                  << ": if the engine was fixed, remove the entry from known_failures in its "
                     "nncheck.json\n"
                  << v.message;
  else
    std::printf("nncheck: known %s failure still reproduces: %s\n", got.c_str(),
                dir.string().c_str());
}

fs::path corpusNextTo(const fs::path& dir, const char* sourceFile) {
  const fs::path source(sourceFile ? sourceFile : "");
  if (dir.is_absolute() || !source.is_absolute()) return dir;
  return (source.parent_path() / dir).lexically_normal();
}

void registerCorpusTests(const std::string& suite, const fs::path& corpus, Property property,
                         const std::string& configuration) {
  if (!registeredCorpus()) registeredCorpus() = corpus;
  for (const fs::path& dir : corpusCaseDirs(corpus)) {
    const std::string name = "corpus/" + fs::relative(dir, corpus).generic_string();
    ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [dir, property, configuration]() -> ::testing::Test* {
                              return new CorpusCaseTest(dir, property, configuration);
                            });
  }
}

}  // namespace nncheck
