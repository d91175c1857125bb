// The campaign report (nncheck fuzz --report, nncheck report) in a real browser: Debian's
// chromium, headless, loads it with no console message, draws its charts and every failure;
// a screenshot is left next to the build output (report-screenshot.png) for people to look at.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "nncheck/corpus.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCli;
using testing::runCommand;

// Headless chromium as the environment allows it (root, no GPU, no network), with a profile
// of its own.
std::string chromium(const fs::path& profile, const std::string& args) {
  return "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic "
         "--no-first-run --disable-background-networking --disable-component-update "
         "--disable-sync --user-data-dir=" +
         profile.string() + " " + args;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReportCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("report");
    campaign_ = new testing::CliOutcome(
        runCli("fuzz --backend opencv --cases 150 --seed 1 --corpus " + corpus().string() +
               " --report " + (dir_->path() / "campaign.html").string()));
  }
  static void TearDownTestSuite() {
    delete campaign_;
    delete dir_;
  }
  static fs::path corpus() { return dir_->path() / "corpus"; }
  // "distinct failures: 9 (9 new)" -> 9
  static size_t distinctFailures() {
    std::smatch m;
    return std::regex_search(campaign_->output, m, std::regex("distinct failures: (\\d+)"))
               ? std::stoul(m[1])
               : 0;
  }
  static testing::TempDir* dir_;
  static testing::CliOutcome* campaign_;
};
testing::TempDir* ReportCommand::dir_ = nullptr;
testing::CliOutcome* ReportCommand::campaign_ = nullptr;

TEST_F(ReportCommand, ACampaignReportIsOneSelfContainedPageWithEveryFailure) {
  ASSERT_EQ(campaign_->status, 0) << campaign_->output;
  const size_t failures = distinctFailures();
  ASSERT_GE(failures, 3u) << "too few failures for the report to show anything";
  const std::string page = readFile(dir_->path() / "campaign.html");
  EXPECT_EQ(count(page, "<section class=failure"), failures);
  EXPECT_EQ(count(page, "<svg"), failures) << "each failure's picture, inline";
  EXPECT_NE(page.find("Chart.js v"), std::string::npos) << "Chart.js is inlined";
  for (const char* outside : {"<script src", "<link", "src=\"http", "href=\"http", "@import"})
    EXPECT_EQ(page.find(outside), std::string::npos) << outside << ": nothing is fetched";
  for (const char* shown : {"nodes per model", "cases/s", "rejected by the engine", "replay",
                            "nncheck run --backend opencv --config", "configurations"})
    EXPECT_NE(page.find(shown), std::string::npos) << shown;
}

TEST_F(ReportCommand, LoadsInHeadlessChromiumWithoutConsoleMessagesAndShowsTheFailures) {
  ASSERT_EQ(campaign_->status, 0) << campaign_->output;
  const fs::path page = dir_->path() / "campaign.html";
  const fs::path profile = dir_->path() / "chromium-profile";
  // What the page's scripts left: the body says how many charts they drew.
  const auto dom =
      runCommand(chromium(profile, "--dump-dom file://" + page.string()) + " 2>/dev/null");
  ASSERT_EQ(dom.status, 0) << dom.output;
  EXPECT_NE(dom.output.find("data-charts=\"3\""), std::string::npos)
      << "the rate, outcome and op charts are drawn";
  EXPECT_EQ(count(dom.output, "class=\"failure\""), distinctFailures());
  // Every console message (errors too) is in chromium's log as CONSOLE.
  const fs::path shot = fs::path(NNCHECK_CLI).parent_path() / "report-screenshot.png";
  fs::remove(shot);
  const auto log =
      runCommand(chromium(profile, "--enable-logging=stderr --v=0 --screenshot=" + shot.string() +
                                       " --window-size=1280,2400 file://" + page.string()));
  ASSERT_EQ(log.status, 0) << log.output;
  EXPECT_EQ(log.output.find(":CONSOLE"), std::string::npos) << log.output;
  ASSERT_TRUE(fs::exists(shot)) << log.output;
  EXPECT_GT(fs::file_size(shot), 50000u) << "a page of charts and pictures, not a blank one";
  fs::copy_file(page, shot.parent_path() / "report-example.html",
                fs::copy_options::overwrite_existing);
}

TEST_F(ReportCommand, ACorpusReportIsTheSameBytesEachTime) {
  ASSERT_EQ(campaign_->status, 0) << campaign_->output;
  const fs::path a = dir_->path() / "a.html", b = dir_->path() / "b.html";
  auto first = runCli("report " + corpus().string() + " -o " + a.string());
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_EQ(runCli("report " + corpus().string() + " -o " + b.string()).status, 0);
  const std::string page = readFile(a);
  EXPECT_EQ(page, readFile(b));
  // Every saved case (the campaign's known bugs, recognised, were not saved).
  const size_t saved = loadCorpus(corpus()).size();
  ASSERT_GT(saved, 0u);
  EXPECT_EQ(count(page, "<section class=failure"), saved);
  EXPECT_NE(page.find("fuzz-opencv"), std::string::npos);
}

TEST_F(ReportCommand, BadArgumentsAreNamed) {
  auto missing = runCli("report /nonexistent/corpus -o " + (dir_->path() / "x.html").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("/nonexistent/corpus: no such corpus folder"), std::string::npos)
      << missing.output;
  auto unwritable = runCli("report " + corpus().string() + " -o /nonexistent/dir/x.html");
  EXPECT_EQ(unwritable.status, 2);
  EXPECT_NE(unwritable.output.find("/nonexistent/dir/x.html"), std::string::npos)
      << unwritable.output;
  auto fuzz = runCli("fuzz --backend reference --cases 1 --report /nonexistent/dir/r.html");
  EXPECT_EQ(fuzz.status, 2);
  EXPECT_NE(fuzz.output.find("--report /nonexistent/dir/r.html: no such folder"), std::string::npos)
      << fuzz.output;
}

}  // namespace
}  // namespace nncheck
