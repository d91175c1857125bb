// check(): RapidCheck drives generation and shrinking; this file adds what a compiler team
// needs around it: failure kinds kept while shrinking, a shrink budget, the corpus, the report.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include "core/hash.h"
#include "nncheck/error.h"
#include "nncheck/gtest.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::optional<double> envNumber(const char* name) {
  const char* s = std::getenv(name);
  if (!s || !*s) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || v < 0)
    throw Error(std::string(name) + "='" + s + "': expected a non-negative number");
  return v;
}

std::string currentTestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!info) return "property";
  return std::string(info->test_suite_name()) + "." + info->name();
}

// A folder name for a test: TEST_P names hold '/'.
std::string folderName(std::string name) {
  for (char& c : name)
    if (c == '/' || c == ' ') c = '_';
  return name;
}

std::string selfPath() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("<test binary>") : p.string();
}

// The outcome of one property run.
struct Verdict {
  std::optional<FailureKind> kind;  // nullopt: passed, or unsupported
  std::string message;
  double maxAbs = 0, maxRel = 0;
  Tolerance tolerance;
  std::function<std::optional<Divergence>()> localize;
  std::optional<std::string> unsupported;  // the category, when the case was not a test
};

Verdict runProperty(const Property& property, const TestCase& tc) {
  Verdict v;
  try {
    property(tc);
  } catch (const PropertyFailure& f) {
    v = {f.kind(), f.what(), f.maxAbsError, f.maxRelError, f.tolerance, f.localize, {}};
  } catch (const Unsupported& u) {
    v.unsupported = u.category();
    v.message = u.what();
  } catch (const rc::detail::CaseResult& r) {
    if (r.type == rc::detail::CaseResult::Type::Failure)
      v = {FailureKind::Mismatch, r.description, 0, 0, {}, {}, {}};
  } catch (const std::exception& e) {
    v = {FailureKind::Error, std::string("the property threw: ") + e.what(), 0, 0, {}, {}, {}};
  }
  return v;
}

// "passes", "unsupported" or the failure kind.
std::string outcomeName(const Verdict& v) {
  if (v.kind) return std::string(failureKindName(*v.kind));
  return v.unsupported ? "unsupported" : "passes";
}

std::string report(const std::string& test, const Verdict& v, const TestCase& tc,
                   const FailureInfo& info, const std::string& saved) {
  std::ostringstream os;
  os << "nncheck: " << test << " failed: " << failureKindName(*v.kind);
  if (info.nodesBefore) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f", info.shrinkSeconds);
    os << " (shrunk from " << info.nodesBefore << " to " << info.nodesAfter << " nodes in "
       << info.shrinkSteps << " steps, " << secs << " s)";
  }
  os << "\n" << v.message;
  if (!v.message.empty() && v.message.back() != '\n') os << "\n";
  if (!info.firstDivergingNode.empty())
    os << "first diverging node: " << info.firstDivergingNode << "\n";
  if (!info.triage.empty()) {
    os << "configurations:";
    for (const auto& [config, outcome] : info.triage)
      os << " [" << config << ": " << outcome << "]";
    os << "\n";
  }
  os << "model (seed " << tc.seed << "):\n" << modelToText(tc.model);
  os << "saved: " << saved << "\n";
  if (saved.rfind("(", 0) != 0)
    os << "replay: NNCHECK_REPLAY=" << saved << " " << selfPath() << " --gtest_filter='" << test
       << "'\n";
  return os.str();
}

fs::path corpusRoot() {
  const char* c = std::getenv("NNCHECK_CORPUS");
  return c && *c ? fs::path(c) : fs::path("nncheck-corpus");
}

std::string saveOrSay(const std::string& test, const TestCase& tc, const FailureInfo& info) {
  try {
    return saveFailure(corpusRoot(), folderName(test), tc, info).string();
  } catch (const std::exception& e) {
    return std::string("(not saved: ") + e.what() + ")";
  }
}

}  // namespace

void check(const rc::Gen<TestCase>& gen, const Property& property, const CheckOptions& options) {
  const std::string test = currentTestName();
  if (const char* replay = std::getenv("NNCHECK_REPLAY"); replay && *replay) {
    TestCase tc = loadCase(replay);
    Verdict v = runProperty(property, tc);
    if (v.kind) ADD_FAILURE() << report(test, v, tc, {}, replay);
    return;
  }

  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* rcParams = std::getenv("RC_PARAMS");
  const bool rcSeed = rcParams && std::string(rcParams).find("seed=") != std::string::npos;
  if (auto seed = envNumber("NNCHECK_SEED"))
    params.seed = static_cast<uint64_t>(*seed);
  else if (!rcSeed)
    params.seed = fnv1a(test);  // reproducible by default
  if (auto cases = envNumber("NNCHECK_CASES")) params.maxSuccess = static_cast<int>(*cases);
  const double shrinkSeconds = envNumber("NNCHECK_SHRINK_SECONDS").value_or(60);
  const int shrinkSteps = static_cast<int>(envNumber("NNCHECK_SHRINK_STEPS").value_or(2000));

  struct State {
    std::optional<FailureKind> kind;  // of the first failure: shrinking keeps it
    Verdict last;
    TestCase first, lastCase;
    int steps = 0;
    Clock::time_point shrinkStart;
    bool exhausted = false;
    int cases = 0;
    std::map<std::string, int> unsupported;  // by category, before the first failure
  } s;

  auto wrapped = [&] {
    const TestCase tc = *gen;
    if (s.exhausted) return;  // past the budget every candidate "passes": shrinking stops
    if (s.kind) {
      ++s.steps;
      const double spent = std::chrono::duration<double>(Clock::now() - s.shrinkStart).count();
      if (s.steps > shrinkSteps || spent > shrinkSeconds) {
        s.exhausted = true;
        return;
      }
    }
    Verdict v = runProperty(property, tc);
    if (!s.kind) {
      ++s.cases;
      if (v.unsupported) ++s.unsupported[*v.unsupported];
    }
    if (!v.kind) return;
    if (!s.kind) {
      s.kind = v.kind;
      s.first = tc;
      s.shrinkStart = Clock::now();
    } else if (*v.kind != *s.kind) {
      return;  // another kind of failure is another bug: not this one's shrink
    }
    s.last = v;
    s.lastCase = tc;
    RC_FAIL(std::string(failureKindName(*v.kind)));
  };

  rc::detail::TestMetadata metadata;
  metadata.id = test;
  metadata.description = test;
  const auto result = rc::detail::checkTestable(wrapped, metadata, params);
  int skipped = 0;
  std::string why;
  for (const auto& [category, n] : s.unsupported) {
    skipped += n;
    why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + category;
  }
  if (skipped)
    std::printf("nncheck: %s: %d of %d cases were not tests (%s)\n", test.c_str(), skipped, s.cases,
                why.c_str());
  if (result.template is<rc::detail::SuccessResult>()) {
    if (s.cases > 0 && skipped == s.cases)
      ADD_FAILURE() << "nncheck: " << test << ": all " << s.cases
                    << " cases were rejected or skipped (" << why
                    << "), so the property tested nothing; narrow the generator to what the "
                       "engine accepts";
    return;
  }
  if (!s.kind) {
    std::ostringstream os;
    rc::detail::printResultMessage(result, os);
    ADD_FAILURE() << "nncheck: " << test << ": " << os.str();
    return;
  }
  FailureInfo info;
  info.property = test;
  info.backend = options.backend;
  info.configuration = options.configuration;
  info.kind = *s.kind;
  info.message = s.last.message;
  info.maxAbsError = s.last.maxAbs;
  info.maxRelError = s.last.maxRel;
  info.tolerance = s.last.tolerance;
  info.nodesBefore = static_cast<int>(s.first.model.graph.nodes.size());
  info.nodesAfter = static_cast<int>(s.lastCase.model.graph.nodes.size());
  info.shrinkSteps = s.steps;
  info.shrinkSeconds = std::chrono::duration<double>(Clock::now() - s.shrinkStart).count();
  if (s.last.localize)
    if (std::optional<Divergence> d = s.last.localize()) info.firstDivergingNode = d->describe();
  for (const auto& [config, other] : options.triage)
    info.triage[config] = outcomeName(runProperty(other, s.lastCase));
  const std::string saved = saveOrSay(test, s.lastCase, info);
  ADD_FAILURE() << report(test, s.last, s.lastCase, info, saved) << "(RapidCheck seed "
                << params.seed << "; rerun with NNCHECK_SEED=" << params.seed << ")\n";
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
  CorpusCase c = loadCorpusCase(dir);
  Verdict v = runProperty(property, c.testCase);
  auto known = c.knownFailures.find(configuration);
  if (known == c.knownFailures.end()) {
    if (v.kind) ADD_FAILURE() << report(currentTestName(), v, c.testCase, {}, dir.string());
    return;
  }
  // A known failure: it must still fail the same way.
  const std::string got = outcomeName(v);
  if (got != known->second)
    ADD_FAILURE() << "nncheck: " << dir.string() << " is a known " << known->second << " failure"
                  << (configuration.empty() ? "" : " in " + configuration) << " but now " << got
                  << ": if the engine was fixed, remove the entry from known_failures in its "
                     "nncheck.json\n"
                  << v.message;
  else
    std::printf("nncheck: known %s failure still reproduces: %s\n", got.c_str(),
                dir.string().c_str());
}

void registerCorpusTests(const std::string& suite, const fs::path& corpus, Property property,
                         const std::string& configuration) {
  for (const CorpusCase& c : loadCorpus(corpus)) {
    std::string name = folderName(fs::relative(c.dir, corpus).string());
    ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [dir = c.dir, property, configuration]() -> ::testing::Test* {
                              return new CorpusCaseTest(dir, property, configuration);
                            });
  }
}

}  // namespace nncheck
