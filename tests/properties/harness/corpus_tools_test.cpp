// Merging corpora (one case per pattern, marked cases kept) and checking that a corpus still
// loads and behaves as recorded.
#include "nncheck/corpus_tools.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "doubles.h"
#include "nncheck/backend_test.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path save(const fs::path& corpus, uint64_t seed, const std::string& pattern,
              std::map<std::string, Outcome> known = {}) {
  FailureInfo info;
  info.pattern = pattern;
  info.knownFailures = std::move(known);
  return saveFailure(corpus, "S.T", makeTestCase(GeneratorConfig{}, seed), info);
}

std::multiset<std::string> patternsIn(const fs::path& corpus) {
  std::multiset<std::string> out;
  for (const CorpusCase& c : loadCorpus(corpus)) out.insert(c.pattern);
  return out;
}

TEST(CorpusMerge, KeepsOneCasePerPatternAndPrefersMarkedOnes) {
  testing::TempDir tmp("merge");
  const fs::path a = tmp.path() / "a", b = tmp.path() / "b", into = tmp.path() / "into";
  save(a, 1, "p1");
  save(a, 2, "p2");
  save(b, 3, "p2", {{"fusion=on", Outcome::Mismatch}});  // the same pattern, marked
  save(b, 4, "p3");
  const fs::path same = save(b, 1, "p1");  // the same content as a's first
  (void)same;
  const MergeResult r = mergeCorpora({a, b}, into);
  EXPECT_EQ(r.copied, 3);
  EXPECT_EQ(r.duplicates, 2);
  EXPECT_EQ(patternsIn(into), (std::multiset<std::string>{"p1", "p2", "p3"}));
  for (const CorpusCase& c : loadCorpus(into)) {
    if (c.pattern == "p2") {
      EXPECT_EQ(c.knownFailures.size(), 1u) << "the marked case of p2 is kept";
    }
    EXPECT_EQ(c.dir.parent_path().filename(), "S.T") << "a case keeps its property folder";
    EXPECT_TRUE(fs::exists(c.dir / "test_data_set_0" / "output_0.pb"));
  }

  // Merging again copies nothing; a case already there wins and takes the marks it lacks.
  save(tmp.path() / "c", 9, "p3", {{"fusion=on", Outcome::Crash}});
  const MergeResult again = mergeCorpora({a, b, tmp.path() / "c"}, into);
  EXPECT_EQ(again.copied, 0);
  EXPECT_EQ(again.duplicates, 6);
  EXPECT_EQ(again.marked, 1);
  const std::vector<CorpusCase> merged = loadCorpus(into);
  EXPECT_EQ(merged.size(), 3u);
  for (const CorpusCase& c : merged)
    if (c.pattern == "p3") {
      EXPECT_EQ(c.knownFailures, (std::map<std::string, Outcome>{{"fusion=on", Outcome::Crash}}));
      EXPECT_EQ(c.testCase.seed, 4u) << "the case already there is kept";
    }
  EXPECT_EQ(mergeCorpora({tmp.path() / "c"}, into).marked, 0) << "marks are added once";
}

TEST(CorpusMerge, ADuplicateLeftOutGivesItsMarksToTheCaseKept) {
  testing::TempDir tmp("merge_marks");
  const fs::path a = tmp.path() / "a", b = tmp.path() / "b", into = tmp.path() / "into";
  save(a, 1, "p1", {{"fusion=on", Outcome::Mismatch}, {"fusion=off", Outcome::Mismatch}});
  save(b, 2, "p1", {{"opencl", Outcome::Crash}});
  const MergeResult r = mergeCorpora({a, b}, into);
  EXPECT_EQ(r.copied, 1);
  EXPECT_EQ(r.marked, 1);
  const std::vector<CorpusCase> merged = loadCorpus(into);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].testCase.seed, 1u) << "the case with more marks is kept";
  EXPECT_EQ(merged[0].knownFailures.size(), 3u);
  EXPECT_EQ(merged[0].knownFailures.at("opencl"), Outcome::Crash);
  EXPECT_EQ(merged[0].pattern, "p1") << "the rest of the record stays";
}

TEST(CorpusMerge, BadSourcesAreNamed) {
  testing::TempDir tmp("merge_bad");
  try {
    mergeCorpora({tmp.path() / "missing"}, tmp.path() / "into");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing: no such corpus folder"), std::string::npos)
        << e.what();
  }
  save(tmp.path() / "into", 1, "p1");
  EXPECT_THROW(mergeCorpora({tmp.path() / "into"}, tmp.path() / "into"), Error);
}

class CorpusCheckTest : public ::testing::Test {
 protected:
  // A corpus of the fusion bug, as a campaign saves it: recorded mismatch at fusion=on, pass at
  // fusion=off.
  void SetUp() override {
    CampaignOptions o;
    o.generator.nodes = 6;
    o.generator.dtypes = {DType::Float32};
    o.generator.ops = {"MatMul", "Relu", "Add"};
    o.generator.opWeights = {{"MatMul", 3}, {"Relu", 3}};
    o.seed = 7;
    o.maxCases = 80;
    o.seconds = 1e9;
    o.corpus = corpus_;
    o.timeout = 5s;
    o.coverageGuided = false;
    ASSERT_FALSE(runCampaign(engines_, o).findings.empty());
  }

  testing::FusedMatMulRelu fused_{true}, unfused_{false};
  std::vector<CampaignEngine> engines_ = {{"fusion=on", &fused_}, {"fusion=off", &unfused_}};
  testing::TempDir tmp_{"corpus_check"};
  fs::path corpus_ = tmp_.path() / "corpus";
};

TEST_F(CorpusCheckTest, ACorpusBehavesAsRecordedUntilTheEngineOrACaseChanges) {
  const CorpusCheck same = checkCorpus(corpus_, engines_);
  EXPECT_EQ(same.changed + same.broken, 0);
  ASSERT_EQ(same.ok, static_cast<int>(same.cases.size()));
  EXPECT_NE(same.cases[0].detail.find("mismatch at fusion=on, as recorded"), std::string::npos)
      << same.cases[0].detail;

  // The bug fixed: each case now passes where it was recorded to fail.
  const CorpusCheck fixed = checkCorpus(corpus_, {{"fusion=on", &unfused_}});
  EXPECT_EQ(fixed.changed, static_cast<int>(fixed.cases.size()));
  EXPECT_NE(fixed.cases[0].detail.find("pass at fusion=on, recorded mismatch"), std::string::npos)
      << fixed.cases[0].detail;

  // A saved output that the reference no longer computes, and a case that does not load.
  const fs::path first = same.cases[0].dir;
  Model m = loadModel(first / "model.onnx");
  TestDataSet data = loadTestDataSet(m, first / "test_data_set_0");
  for (auto& [name, t] : data.outputs)
    for (float& v : t.span<float>()) v += 1;
  saveBackendTestCase(first, m, data.inputs, data.outputs);
  if (same.cases.size() > 1) writeFileAtomic(same.cases[1].dir / "nncheck.json", "{");
  std::vector<std::string> seen;
  const CorpusCheck edited = checkCorpus(
      corpus_, {}, "", 5000ms, [&](const CaseCheck& c) { seen.push_back(c.dir.string()); });
  EXPECT_EQ(seen.size(), edited.cases.size());
  EXPECT_FALSE(edited.cases[0].ok);
  EXPECT_NE(edited.cases[0].detail.find("no longer computes the saved outputs"), std::string::npos)
      << edited.cases[0].detail;
  if (same.cases.size() > 1) {
    EXPECT_EQ(edited.broken, 1);
    EXPECT_NE(edited.cases[1].detail.find("nncheck.json"), std::string::npos);
  }
  EXPECT_THROW(checkCorpus(tmp_.path() / "missing"), Error);
}

}  // namespace
}  // namespace nncheck
