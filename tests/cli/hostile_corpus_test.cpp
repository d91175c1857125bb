// nncheck corpus list|check|merge and report on corpora made by hand to attack them (the second
// hostile probe): links out of the corpus, terminal escapes in records, overlapping folders,
// conflicting records, unreadable cases. Each command names what it passed over.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "harness/corpus_store.h"
#include "nncheck/corpus.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using testing::runCli;

class HostileCorpus : public ::testing::Test {
 protected:
  fs::path save(uint64_t seed, FailureInfo info = {}) {
    if (info.pattern.empty()) info.pattern = "p" + std::to_string(seed);
    return saveFailure(corpus_, "fuzz-reference", makeTestCase(GeneratorConfig{}, seed), info);
  }
  testing::TempDir tmp_{"hostile_corpus"};
  fs::path corpus_ = tmp_.path() / "corpus";
};

TEST_F(HostileCorpus, ListPrintsNoTerminalEscapeFromARecord) {
  // Before, `corpus list` passed a record's escape sequences to the terminal (a retitled
  // window, a cleared screen), while `run` and `show --format text` escaped them.
  FailureInfo info;
  info.configuration = "\x1b]0;pwned\x07";
  info.pattern = "\x1b[2J cleared";
  info.knownFailures = {{"\x1b[31mred", Outcome::Mismatch}};
  save(1, info);
  auto o = runCli("corpus list " + corpus_.string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(o.output.find('\x1b'), std::string::npos) << o.output;
  EXPECT_EQ(o.output.find('\x07'), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("cleared"), std::string::npos) << o.output;
}

TEST_F(HostileCorpus, CommandsNameTheLinksTheyDoNotFollow) {
  const fs::path c = save(1);
  std::ofstream(tmp_.path() / "secret") << "the secret";
  fs::create_symlink(tmp_.path() / "secret", c / "notes.txt");
  fs::create_directory_symlink(c, corpus_ / "fuzz-reference" / "linked");
  auto list = runCli("corpus list " + corpus_.string());
  EXPECT_EQ(list.status, 0) << list.output;
  EXPECT_NE(list.output.find("left out " + (corpus_ / "fuzz-reference" / "linked").string() +
                             ": a symbolic link to a folder, not followed"),
            std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("1 cases, 1 root causes, 1 entries left out"), std::string::npos)
      << list.output;
  const fs::path into = tmp_.path() / "into";
  auto merge = runCli("corpus merge " + corpus_.string() + " --into " + into.string());
  EXPECT_EQ(merge.status, 0) << merge.output;
  EXPECT_NE(merge.output.find("notes.txt: a symbolic link, not copied"), std::string::npos)
      << merge.output;
  EXPECT_NE(merge.output.find("1 cases copied, 0 duplicates left out, 2 entries not copied"),
            std::string::npos)
      << merge.output;
  EXPECT_FALSE(fs::exists(fs::symlink_status(into / c.lexically_relative(corpus_) / "notes.txt")));
  auto check = runCli("corpus check " + corpus_.string());
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("left out"), std::string::npos) << check.output;
  auto run = runCli("run " + corpus_.string());
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("nncheck run: left out"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("1 passed"), std::string::npos) << run.output;
  // Seeds taken from a corpus: a link in it is an error naming it, not a file read through it.
  auto seeds = runCli("gen --count 1 --seeds " + corpus_.string());
  EXPECT_EQ(seeds.status, 2) << seeds.output;
  EXPECT_NE(seeds.output.find("linked: a symbolic link to a folder, not followed (seed folders"),
            std::string::npos)
      << seeds.output;
  fs::remove(corpus_ / "fuzz-reference" / "linked");
  fs::create_symlink(tmp_.path() / "secret", corpus_ / "stolen.onnx");
  seeds = runCli("gen --count 1 --seeds " + corpus_.string());
  EXPECT_EQ(seeds.status, 2) << seeds.output;
  EXPECT_NE(seeds.output.find("stolen.onnx: not a usable seed pattern at opset 17: " +
                              (corpus_ / "stolen.onnx").string() + ": is a symbolic link"),
            std::string::npos)
      << seeds.output;
}

TEST_F(HostileCorpus, MergeRefusesOverlapsAndReportsConflicts) {
  save(1);
  auto inside =
      runCli("corpus merge " + corpus_.string() + " --into " + (corpus_ / "merged").string());
  EXPECT_EQ(inside.status, 2) << inside.output;
  EXPECT_NE(inside.output.find("overlap (one holds the other)"), std::string::npos)
      << inside.output;
  EXPECT_FALSE(fs::exists(corpus_ / "merged"));
  // The same folder name with another pattern in its record.
  const fs::path other = tmp_.path() / "other";
  const fs::path twin =
      saveFailure(other, "fuzz-reference", makeTestCase(GeneratorConfig{}, 1), [] {
        FailureInfo i;
        i.pattern = "another pattern";
        return i;
      }());
  auto conflict = runCli("corpus merge " + other.string() + " --into " + corpus_.string());
  EXPECT_EQ(conflict.status, 1) << conflict.output;
  EXPECT_NE(
      conflict.output.find("conflict: " + (corpus_ / twin.lexically_relative(other)).string() +
                           " records another pattern or kind"),
      std::string::npos)
      << conflict.output;
  EXPECT_NE(conflict.output.find("1 conflicts left as they are"), std::string::npos);
}

TEST_F(HostileCorpus, CheckWithoutABackendSaysSoAndItsHelpShowsNoDefaultEngine) {
  save(1);
  auto o = runCli("corpus check " + corpus_.string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("(no --backend given: loading and the reference checked)"),
            std::string::npos)
      << o.output;
  auto help = runCli("corpus check --help");
  const size_t at = help.output.find("--backend");
  ASSERT_NE(at, std::string::npos) << help.output;
  const std::string line = help.output.substr(at, help.output.find('\n', at) - at);
  EXPECT_EQ(line.find("opencv"), std::string::npos)
      << "before, its help showed a default the command did not use: " << line;
  auto lib = runCli("corpus check " + corpus_.string() + " --engine-lib /nonexistent/lib.so");
  EXPECT_EQ(lib.status, 2) << lib.output;
  EXPECT_NE(lib.output.find("--backend"), std::string::npos) << lib.output;
}

// Issue 46, item 10: one case naming an oracle no library registered stopped `corpus check`
// (rc 2) before any case ran, and the error did not name the case.
TEST_F(HostileCorpus, ACaseNamingAnUnknownOracleIsNamedAndTheOthersAreChecked) {
  FailureInfo strange;
  strange.oracle = "nosuch";
  const fs::path bad = save(1, strange);
  save(2);
  auto o = runCli("corpus check " + corpus_.string());
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find((bad / "nncheck.json").string() +
                          ": cannot be judged: unknown oracle 'nosuch'"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("2 cases: 1 as recorded, 0 behave otherwise, 1 do not load"),
            std::string::npos)
      << o.output;
}

TEST_F(HostileCorpus, AReportOfUnreadableCasesSaysSoAndFails) {
  // Before, `report` exited 0 when every case was unreadable.
  const fs::path c = save(1);
  writeFileAtomic(c / "model.onnx", "not a model");
  const fs::path page = tmp_.path() / "r.html";
  auto o = runCli("report " + corpus_.string() + " -o " + page.string());
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("unreadable, left out: " + (c / "model.onnx").string()),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("(0 cases; 1 unreadable)"), std::string::npos) << o.output;
  EXPECT_TRUE(fs::exists(page)) << "the page is written without the case";
}

}  // namespace
}  // namespace nncheck
