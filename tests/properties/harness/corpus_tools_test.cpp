// Merging corpora (one case per pattern, marked cases kept) and checking that a corpus still
// loads and behaves as recorded.
#include "harness/corpus_tools.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "core/backend_test.h"
#include "core/files.h"
#include "doubles.h"
#include "harness/corpus_store.h"
#include "nncheck/error.h"
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

// Every entry below `root` as "<relative path> <type>", for comparing trees.
std::vector<std::string> tree(const fs::path& root) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::file_type type = it->symlink_status().type();
    out.push_back(it->path().lexically_relative(root).string() +
                  (type == fs::file_type::regular     ? " file"
                   : type == fs::file_type::directory ? " folder"
                                                      : " other"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool mentions(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(CorpusMerge, OnlyTheFilesOfACaseAreCopiedAndNoLinkIsFollowed) {
  // A corpus from a CI artifact or a shared volume may hold links: before, a case's
  // `notes.txt -> /etc/shadow` became a world-readable copy of the secret in the target.
  testing::TempDir tmp("merge_links");
  const fs::path from = tmp.path() / "from", into = tmp.path() / "into";
  const fs::path secret = tmp.path() / "secret";
  std::ofstream(secret) << "the secret";
  const fs::path c = save(from, 1, "p1");
  fs::create_symlink(secret, c / "notes.txt");
  fs::create_symlink(secret, c / "test_data_set_0" / "output_9.pb");
  std::ofstream(c / "extra.txt") << "not a file of a case";
  fs::create_directories(c / "test_data_set_0" / "sub");
  ASSERT_EQ(::mkfifo((c / "fifo").c_str(), 0600), 0);
  // A case made of links only, and a link to a whole case folder.
  const fs::path d = from / "S.T" / "linked_files";
  fs::create_directories(d / "test_data_set_0");
  for (const char* f : {"model.onnx", "nncheck.json"}) fs::create_symlink(c / f, d / f);
  fs::create_symlink(c / "test_data_set_0" / "input_0.pb", d / "test_data_set_0" / "input_0.pb");
  fs::create_directory_symlink(c, from / "S.T" / "linked_case");

  EXPECT_THROW(mergeCorpora({from}, into), Error) << "a case whose model is a link is unreadable";
  fs::remove_all(d);
  const MergeResult r = mergeCorpora({from}, into);
  EXPECT_EQ(r.copied, 1);
  const fs::path copy = into / c.lexically_relative(from);
  // The copy holds the regular files of the case's layout, its record and picture: nothing else.
  std::vector<std::string> expected;
  for (const std::string& e : tree(c)) {
    const bool dataFile = e.rfind("test_data_set_0/", 0) == 0 && e.ends_with(".pb file");
    if (dataFile || e == "test_data_set_0 folder" || e == "model.onnx file" ||
        e == "nncheck.json file" || e == "model.svg file")
      expected.push_back(e);
  }
  EXPECT_EQ(tree(copy), expected);
  EXPECT_EQ(findBackendTestCases(into), std::vector<fs::path>{copy});
  EXPECT_FALSE(fs::exists(fs::symlink_status(copy / "notes.txt")));
  EXPECT_EQ(loadCorpusCase(copy).pattern, "p1");
  for (const char* skipped :
       {"notes.txt: a symbolic link, not copied", "output_9.pb: a symbolic link, not copied",
        "extra.txt: not a file of a case", "sub: not a file of a case",
        "fifo: not a file of a case", "linked_case: a symbolic link to a folder, not followed"})
    EXPECT_TRUE(mentions(r.skipped, skipped)) << skipped;
}

TEST(CorpusMerge, OverlappingSourceAndTargetAreRefused) {
  // Before, merging a corpus into a folder inside it copied every case again, into itself.
  testing::TempDir tmp("merge_overlap");
  const fs::path corpus = tmp.path() / "corpus";
  save(corpus, 1, "p1");
  for (const auto& [from, into] : {std::pair{corpus, corpus / "merged"},
                                   {corpus / "S.T", corpus.parent_path()},
                                   {corpus / ".." / "corpus" / "", corpus / "sub"}}) {
    try {
      mergeCorpora({from}, into);
      ADD_FAILURE() << from << " into " << into << " merged";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("overlap (one holds the other)"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(findBackendTestCases(corpus).size(), 1u);
  // Neighbours whose names share a prefix do not overlap.
  save(tmp.path() / "corpus2", 2, "p2");
  EXPECT_EQ(mergeCorpora({tmp.path() / "corpus2"}, corpus).copied, 1);
}

TEST(CorpusMerge, ACaseWhoseRecordDiffersFromTheOneOfItsFolderIsAConflict) {
  // Before, a case of the same folder name but another pattern or kind was dropped as a
  // "duplicate" and its marks moved onto the other.
  testing::TempDir tmp("merge_conflict");
  const fs::path a = tmp.path() / "a", b = tmp.path() / "b";
  const fs::path kept = save(a, 1, "p1");
  const fs::path other = save(b, 1, "p1", {{"fusion=on", Outcome::Mismatch}});
  std::string record = readFile(other / "nncheck.json");
  record.replace(record.find("\"pattern\": \"p1\""), 15, "\"pattern\": \"p9\"");
  writeFileAtomic(other / "nncheck.json", record);
  const MergeResult r = mergeCorpora({b}, a);
  EXPECT_EQ(r.copied + r.duplicates, 0);
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_NE(r.conflicts[0].find("records another pattern or kind than"), std::string::npos)
      << r.conflicts[0];
  EXPECT_TRUE(loadCorpusCase(kept).knownFailures.empty()) << "no mark moved over";
}

TEST(CorpusMerge, TemporariesOfKilledMergesAreSwept) {
  testing::TempDir tmp("merge_sweep");
  const fs::path from = tmp.path() / "from", into = tmp.path() / "into";
  const fs::path c = save(from, 1, "p1");
  // What a merge killed midway leaves: a folder named for a process that is gone.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const fs::path stale = into / "S.T" / ("0123.tmp." + std::to_string(child));
  fs::create_directories(stale);
  std::ofstream(stale / "model.onnx") << "half";
  EXPECT_EQ(mergeCorpora({from}, into).copied, 1);
  EXPECT_FALSE(fs::exists(stale));
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
  const CorpusCheck same = checkCorpus(corpus_, {.engines = engines_});
  EXPECT_EQ(same.changed + same.broken, 0);
  ASSERT_EQ(same.ok, static_cast<int>(same.cases.size()));
  EXPECT_NE(same.cases[0].detail.find("mismatch at fusion=on, as recorded"), std::string::npos)
      << same.cases[0].detail;

  // The bug fixed: each case now passes where it was recorded to fail.
  const CorpusCheck fixed = checkCorpus(corpus_, {.engines = {{"fusion=on", &unfused_}}});
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
      corpus_,
      {.timeout = 5000ms, .onCase = [&](const CaseCheck& c) { seen.push_back(c.dir.string()); }});
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

// An engine whose configurations are named otherwise than the record's (a property saved its
// parameter as "\"O2\"") still runs every case, on each configuration, and says that nothing
// was recorded there: never the reference alone, counted as "as recorded".
TEST_F(CorpusCheckTest, ACaseRecordedForNoConfigurationGivenIsStillRunOnEach) {
  const CorpusCheck r = checkCorpus(corpus_, {.engines = {{"level=2", &fused_}}});
  ASSERT_FALSE(r.cases.empty());
  EXPECT_EQ(r.unrecorded, static_cast<int>(r.cases.size()));
  EXPECT_EQ(r.ok, static_cast<int>(r.cases.size()));
  for (const CaseCheck& c : r.cases) {
    EXPECT_TRUE(c.unrecorded);
    EXPECT_NE(c.detail.find("mismatch at level=2 (no outcome recorded there)"), std::string::npos)
        << c.detail;
    EXPECT_NE(c.detail.find("recorded: mismatch at 'fusion=on'"), std::string::npos) << c.detail;
  }
  // With a configuration that has a record, the others are not run.
  const CorpusCheck named = checkCorpus(corpus_, {.engines = {{"fusion=on", &fused_}}});
  EXPECT_EQ(named.unrecorded, 0);
}

}  // namespace
}  // namespace nncheck
