// The campaign report's page: self-contained, every failure with its facts and picture, and
// nothing a saved case holds (names, messages) able to break out of the page's markup.
#include "harness/report.h"

#include <gtest/gtest.h>

#include "core/files.h"
#include "harness/corpus_store.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

fs::path save(const fs::path& corpus, const std::string& property, uint64_t seed,
              const std::string& pattern, const std::string& message,
              std::map<std::string, Outcome> known = {}) {
  FailureInfo info;
  info.property = property;
  info.kind = Outcome::Mismatch;
  info.configuration = "fusion=on";
  info.message = message;
  info.maxAbsError = 0.5;
  info.maxRelError = 2;
  info.pattern = pattern;
  info.triage = {{"fusion=on", Outcome::Mismatch}, {"fusion=off", Outcome::Pass}};
  info.knownFailures = std::move(known);
  info.culprit =
      Culprit{.needed = {"fusion"}, .workaroundPasses = true, .workaround = "fusion=off"};
  return saveFailure(corpus, property, makeTestCase(GeneratorConfig{}, seed), info);
}

TEST(Report, ACorpusPageShowsEveryCaseWithItsFactsAndNothingEscapesTheMarkup) {
  testing::TempDir tmp("report");
  const fs::path corpus = tmp.path() / "corpus";
  const std::string hostile = "</script><script>alert(1)</script> & <b>bold</b>";
  save(corpus, "fuzz-opencv", 1, "p1", hostile);
  save(corpus, "Suite.Prop", 2, "p2", "plain", {{"fusion=on", Outcome::Mismatch}});
  fs::create_directories(corpus / "fuzz-opencv" / "broken");
  writeFileAtomic(corpus / "fuzz-opencv" / "broken" / "model.onnx", "not a model");

  const CampaignReport r = corpusReport(corpus);
  ASSERT_EQ(r.failures.size(), 2u) << "the unreadable case is left out";
  bool counted = false;
  for (const auto& [name, value] : r.settings)
    if (name == "unreadable cases, left out") counted = value.rfind("1 (first: ", 0) == 0;
  EXPECT_TRUE(counted) << "and counted";

  const std::string page = reportHtml(r);
  EXPECT_EQ(count(page, "<section class=failure"), 2u);
  EXPECT_EQ(count(page, "<svg"), 2u);
  EXPECT_EQ(page.find(hostile), std::string::npos);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
  // Three scripts of the page's own (Chart.js, the data, the drawing), no others.
  EXPECT_EQ(count(page, "<script"), 3u);
  EXPECT_EQ(count(page, "</script>"), 3u);
  for (const char* shown :
       {"max abs 0.5, max rel 2", "fusion=off: pass; fusion=on: mismatch", "known failure",
        "fails with only fusion enabled; passes with it disabled", "--config fusion=off",
        "nncheck run --backend opencv --config fusion=on", "--gtest_filter=Suite.Prop"})
    EXPECT_NE(page.find(shown), std::string::npos) << shown;
  EXPECT_EQ(page, reportHtml(corpusReport(corpus))) << "the same corpus, the same bytes";
}

TEST(Report, ACampaignPageHoldsItsTimelineAndOpCounts) {
  CampaignStats s;
  s.cases = 30;
  s.passed = 28;
  s.failures[Outcome::Crash] = 2;
  s.seconds = 2;
  s.timeline = {{0.5, 10, 10, 0, 0, 0}, {1.5, 20, 19, 0, 0, 1}, {2, 30, 28, 0, 0, 2}};
  s.opCases = {{"Conv", 12}, {"Relu", 30}};
  s.rejectedOps = {{"Conv", 3}};
  Finding f;
  f.minimized = makeTestCase(GeneratorConfig{}, 5);
  f.info.kind = Outcome::Crash;
  f.info.pattern = "crash: Relu(x)";
  f.hits = 2;
  s.findings.push_back(f);
  const CampaignReport r = campaignReport(s, {{"engine", "toy"}}, "toy");
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].status, "new");
  EXPECT_TRUE(r.failures[0].replay.empty()) << "a finding not saved has nothing to replay";
  const std::string page = reportHtml(r);
  EXPECT_NE(page.find("[[0.5,10,10,0,0,0],[1.5,20,19,0,0,1],[2.0,30,28,0,0,2]]"),
            std::string::npos);
  EXPECT_NE(page.find("[\"Relu\",30,0],[\"Conv\",12,3]"), std::string::npos)
      << "ops most common first, with their rejections";
  EXPECT_NE(page.find("30 cases in 2.0 s (15 cases/s)"), std::string::npos);
  EXPECT_NE(page.find("<canvas id=rate>"), std::string::npos);
  EXPECT_EQ(count(page, "<section class=failure"), 1u);
}

TEST(Report, NoOpNameOpensACommentOrEndsTheDataScript) {
  // "<!--<script>" as an op's name: before, only "</" was escaped in the embedded data, and
  // "<!--" followed by "<script" put the HTML parser in a state where the data script ran on
  // past its end, breaking every chart.
  CampaignStats s;
  s.cases = 1;
  s.opCases = {{"<!--<script>", 1}, {"</script>", 1}};
  const std::string page = reportHtml(campaignReport(s, {}, "toy"));
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 3u) << "the page's own three";
  EXPECT_NE(page.find("\\u003c!--\\u003cscript>"), std::string::npos);
  EXPECT_NE(page.find("\\u003c/script>"), std::string::npos);
}

TEST(Report, WritingNamesAMissingFolder) {
  try {
    writeReport("/nonexistent/dir/r.html", CampaignReport{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/r.html"), std::string::npos) << e.what();
  }
  EXPECT_THROW(corpusReport("/nonexistent/corpus"), Error);
}

}  // namespace
}  // namespace nncheck
