// The culprit search: delta debugging over an engine's named optimizations.
#include "harness/culprit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "nncheck/campaign.h"
#include "nncheck/engine.h"
#include "nncheck/property.h"
#include "nncheck/reference.h"

namespace nncheck {
namespace {

using namespace std::chrono_literals;

// A compiler double with eight named passes and one planted bug that needs two of them
// together: with both FuseMulAdd and FoldConstants on, it adds 1 to every output.
const std::vector<std::string> kPasses = {"CSE",      "DeadCode",   "FoldConstants",
                                          "FuseConv", "FuseMulAdd", "InlineShapes",
                                          "Layout",   "Vectorize"};

class PassesDouble : public Backend {
 public:
  explicit PassesDouble(std::set<std::string> disabled) : disabled_(std::move(disabled)) {}
  std::string name() const override { return "passes double"; }
  TensorMap run(const Model& m, const TensorMap& in) override {
    TensorMap out = ReferenceBackend().run(m, in);
    if (!disabled_.count("FuseMulAdd") && !disabled_.count("FoldConstants"))
      for (auto& [name, t] : out)
        for (float& x : t.span<float>()) x += 1;
    return out;
  }
  std::vector<std::string> optimizations() const override {
    std::vector<std::string> out;
    for (const std::string& p : kPasses)
      if (!disabled_.count(p)) out.push_back(p);
    return out;
  }

 private:
  std::set<std::string> disabled_;
};

TestCase relu() {
  TestCase tc;
  tc.model.opsets = {{"", 17}};
  tc.model.graph.name = "relu";
  tc.model.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2})};
  tc.model.graph.nodes = {Node::make("Relu", {"x"}, {"y"}, "relu")};
  tc.model.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2})};
  tc.inputs["x"] = Tensor::fromVector<float>({2}, {-1, 2});
  return tc;
}

TEST(Culprit, NamesExactlyTheTwoPassesABugNeedsTogether) {
  const TestCase tc = relu();
  int engines = 0;
  const auto fails = [&](const std::vector<std::string>& disabled) {
    ++engines;
    PassesDouble engine({disabled.begin(), disabled.end()});
    return judge([&](const TestCase& c) { assertMatchesReference(engine, c); }, tc).outcome ==
           Outcome::Mismatch;
  };
  const std::optional<Culprit> c = findCulprit(kPasses, fails);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->needed, (std::vector<std::string>{"FoldConstants", "FuseMulAdd"}));
  EXPECT_TRUE(c->workaroundPasses);
  EXPECT_EQ(c->runs, engines);
  EXPECT_LE(c->runs, 40) << "delta debugging, not each of the 256 subsets";
  EXPECT_EQ(describeCulprit(*c),
            "fails with only FoldConstants and FuseMulAdd enabled; passes with them disabled");
}

TEST(Culprit, NoneWhenTheFailureNeedsNoOptimizationOrDoesNotFail) {
  int runs = 0;
  // Fails whatever is switched off: the engine's kernels, not its optimizations.
  EXPECT_FALSE(findCulprit(kPasses, [&](const std::vector<std::string>&) {
    ++runs;
    return true;
  }));
  EXPECT_EQ(runs, 1);
  // Passes with everything on: nothing to search.
  EXPECT_FALSE(findCulprit(kPasses, [](const std::vector<std::string>&) { return false; }));
  EXPECT_FALSE(findCulprit({}, [](const std::vector<std::string>&) { return true; }));
}

TEST(Culprit, OneOfSeveralSetsIsFoundAndTheWorkaroundSaysItIsNotEnough) {
  // Fails when A is on, or when B and C are both on: the search finds one 1-minimal set, and
  // switching it off alone does not make the case pass.
  const auto fails = [](const std::vector<std::string>& disabled) {
    const std::set<std::string> off(disabled.begin(), disabled.end());
    return !off.count("A") || (!off.count("B") && !off.count("C"));
  };
  const std::optional<Culprit> c = findCulprit({"C", "B", "A", "D"}, fails);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->needed, std::vector<std::string>{"A"});
  EXPECT_FALSE(c->workaroundPasses);
  EXPECT_NE(describeCulprit(*c).find("still fails"), std::string::npos);
}

// A set found for an earlier finding is checked first: taken when this failure needs it and it
// is 1-minimal, with fewer runs than a search; else the search runs as before.
TEST(Culprit, ASetFoundBeforeIsCheckedFirst) {
  // Fails while both B and D are on.
  const auto fails = [](const std::vector<std::string>& off) {
    const std::set<std::string> o(off.begin(), off.end());
    return !o.count("B") && !o.count("D");
  };
  const std::vector<std::string> all = {"A", "B", "C", "D", "E", "F", "G", "H"};
  const std::optional<Culprit> searched = findCulprit(all, fails);
  ASSERT_TRUE(searched);
  EXPECT_EQ(searched->needed, (std::vector<std::string>{"B", "D"}));
  const std::optional<Culprit> hinted = findCulprit(all, fails, {{"A"}, {"D", "B"}});
  ASSERT_TRUE(hinted);
  EXPECT_EQ(hinted->needed, searched->needed);
  EXPECT_TRUE(hinted->workaroundPasses);
  EXPECT_LT(hinted->runs, searched->runs);
  // A hint that is not 1-minimal for this failure (B, D and E) is not taken.
  const std::optional<Culprit> notMinimal = findCulprit(all, fails, {{"B", "D", "E"}});
  ASSERT_TRUE(notMinimal);
  EXPECT_EQ(notMinimal->needed, searched->needed);
  // Only those sets (a known bug's, told apart before shrinking): no search past them.
  int runs = 0;
  const auto counted = [&](const std::vector<std::string>& off) {
    ++runs;
    return fails(off);
  };
  EXPECT_FALSE(findCulprit(all, counted, {{"A"}, {"B", "D", "E"}}, false));
  EXPECT_EQ(runs, 7) << "both ends, A, then B+D+E and its subsets one smaller";
  EXPECT_FALSE(findCulprit(all, counted, {}, false));
  // Sets of switches this configuration lacks (another level's known bug) cost no run at all.
  runs = 0;
  EXPECT_FALSE(findCulprit(all, counted, {{"X"}, {"B", "Y"}}, false));
  EXPECT_EQ(runs, 0);
  const std::optional<Culprit> only = findCulprit(all, fails, {{"A"}, {"D", "B"}}, false);
  ASSERT_TRUE(only);
  EXPECT_EQ(only->needed, searched->needed);
}

// An optimization the engine names but cannot switch off (a release build's pass) stays out of
// the search: the culprit is found among the others.
TEST(Culprit, ASearchIsOverWhatTheConfigurationCanSwitchOff) {
  PassesDouble all({});
  CampaignOptions o;
  o.timeout = 5s;
  o.engineWithout.configuration = [](const std::string&, const std::vector<std::string>& off) {
    std::string text;
    for (const std::string& name : off) {
      if (name == "Layout") throw Error("cannot switch off 'Layout'");
      text += (text.empty() ? "" : "+") + name;
    }
    return text;
  };
  o.engineWithout.make = [](const std::string& text) -> std::unique_ptr<Backend> {
    std::set<std::string> off;
    for (size_t at = 0; at < text.size();) {
      const size_t end = std::min(text.find('+', at), text.size());
      off.insert(text.substr(at, end - at));
      at = end + 1;
    }
    return std::make_unique<PassesDouble>(off);
  };
  const std::optional<Finding> f = reduceCase({{"", &all}}, relu(), o);
  ASSERT_TRUE(f);
  ASSERT_TRUE(f->info.culprit);
  EXPECT_EQ(f->info.culprit->needed, (std::vector<std::string>{"FoldConstants", "FuseMulAdd"}));
  EXPECT_EQ(f->info.culprit->searched, static_cast<int>(kPasses.size()) - 1);
}

#ifdef NNCHECK_HAS_MLIR_ENGINE
TEST(Culprit, MlirsReductionRunTwiceNeedsAffineLoopFusion) {
  // examples/mlir/corpus holds MLIR 19's bug: with affine loops, affine-loop-fusion runs a
  // reduction twice. The search over the pipeline's optional passes must name it.
  const std::string config = "fusion=on,canonicalize=on,loops=affine,llvm=O3";
  const std::vector<CorpusCase> corpus = loadCorpus(NNCHECK_SOURCE_DIR "/examples/mlir/corpus");
  const CorpusCase* twice = nullptr;
  for (const CorpusCase& c : corpus)
    if (c.knownFailures.count(config) && c.knownFailures.size() == 1) twice = &c;
  ASSERT_NE(twice, nullptr) << "no case of examples/mlir/corpus fails in " << config << " alone";
  const EngineInfo& info = engines().at("mlir");
  ASSERT_TRUE(info.withDisabled);
  const std::unique_ptr<Backend> full = info.make(config);
  const auto fails = [&](const std::vector<std::string>& disabled) {
    const std::unique_ptr<Backend> engine = info.make(info.withDisabled(config, disabled));
    const Isolated run = isolated(*engine, 60s);
    return isFailure(
        judge([&](const TestCase& c) { assertMatchesReference(run, c); }, twice->testCase).outcome);
  };
  const std::optional<Culprit> c = findCulprit(full->unreportedOptimizations(), fails);
  ASSERT_TRUE(c);
  EXPECT_NE(std::find(c->needed.begin(), c->needed.end(), "affine-loop-fusion"), c->needed.end())
      << describeCulprit(*c);
  EXPECT_TRUE(c->workaroundPasses) << describeCulprit(*c);
}
#endif

}  // namespace
}  // namespace nncheck
