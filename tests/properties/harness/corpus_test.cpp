// Saving to the corpus: any bytes in names, nothing half-saved left behind, stale temporaries of
// killed saves swept and never replayed.
#include "nncheck/corpus.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "core/backend_test.h"
#include "core/files.h"
#include "doubles.h"
#include "harness/case_files.h"
#include "harness/corpus_store.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/property.h"
#include "render/picture.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const fs::path& folder) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(folder)) out.push_back(e.path().filename().string());
  return out;
}

// A pid no process has: a child that has exited and been reaped.
pid_t deadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// Issue 46, item 2: two campaigns of one seed on one corpus. One removed its copy of a case as
// a duplicate of its pattern while the other renamed the same case into place; the rename met
// the half-removed folder ("Directory not empty") and that campaign ended without its summary.
TEST(Corpus, ACaseIsSavedWhileAnotherProcessRemovesItsFolder) {
  testing::TempDir tmp("publish_race");
  const fs::path dir = tmp.path() / "fuzz" / "0123456789abcdef";
  std::thread remover;
  const bool made = publishCase(dir, [&](const fs::path& staging) {
    fs::create_directories(staging / "test_data_set_0");
    std::ofstream(staging / "model.onnx") << "the case";
    // The other process's copy, half removed: its model gone, a data set still there.
    fs::create_directories(dir / "test_data_set_0");
    std::ofstream(dir / "test_data_set_0" / "input_0.pb") << "the other copy";
    remover = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      // As nncheck's own removers do, with an error code: when our copy is renamed into the
      // folder it has just emptied, its last rmdir finds our case there and leaves it.
      std::error_code ec;
      fs::remove_all(dir, ec);
    });
  });
  remover.join();
  EXPECT_TRUE(made);
  EXPECT_TRUE(isCaseFolder(dir));
  EXPECT_FALSE(fs::exists(dir / "test_data_set_0" / "input_0.pb"));
}

TEST(Corpus, NamesThatAreNotUtf8AreSaved) {
  testing::TempDir dir("corpus_utf8");
  TestCase tc = makeTestCase(GeneratorConfig{}, 5);
  FailureInfo info;
  info.message =
      "output '\xFF\xFE"
      "3' differs";
  const fs::path saved = saveFailure(dir.path(), "S.T", tc, info);
  EXPECT_NO_THROW(loadCorpusCase(saved));
}

TEST(Corpus, AFailedSaveLeavesNothingBehind) {
  testing::TempDir dir("corpus_failed");
  TestCase tc = makeTestCase(GeneratorConfig{}, 6);
  tc.inputs.clear();  // the reference cannot run it: the save fails midway
  EXPECT_THROW(saveFailure(dir.path(), "S.T", tc, FailureInfo{}), Error);
  ASSERT_TRUE(fs::exists(dir.path() / "S.T"));
  EXPECT_TRUE(entries(dir.path() / "S.T").empty());
}

TEST(Corpus, TemporariesOfKilledSavesAreSweptAndNeverReplayed) {
  testing::TempDir dir("corpus_stale");
  const TestCase tc = makeTestCase(GeneratorConfig{}, 7);
  // What a save killed mid-way leaves: a complete-looking case under a temporary name.
  const fs::path stale = dir.path() / "S.T" / ("0123456789abcdef.tmp." + std::to_string(deadPid()));
  saveBackendTestCase(stale, tc.model, tc.inputs, {});
  EXPECT_TRUE(findBackendTestCases(dir.path()).empty()) << "a temporary folder is no case";
  EXPECT_TRUE(loadCorpus(dir.path()).empty());
  saveFailure(dir.path(), "S.T", tc, FailureInfo{});
  EXPECT_FALSE(fs::exists(stale)) << "the dead process's temporary folder is still there";
  EXPECT_EQ(loadCorpus(dir.path()).size(), 1u);
}

TEST(Corpus, MetadataOutsideWhatNncheckWritesIsRefusedNamingTheFile) {
  testing::TempDir dir("corpus_meta");
  const fs::path saved = saveFailure(dir.path(), "S.T", makeTestCase(GeneratorConfig{}, 8), {});
  auto errorWith = [&](const std::string& json) {
    std::ofstream(saved / "nncheck.json") << json;
    try {
      loadCorpusCase(saved);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(errorWith(R"({"seed": 7})"), "(accepted)");
  EXPECT_NE(errorWith(R"({"seed": 1e300})").find("nncheck.json: seed = "), std::string::npos);
  EXPECT_NE(errorWith(R"({"seed": -4})").find("seed = -4"), std::string::npos);
  EXPECT_NE(errorWith(std::string(100000, '[') + std::string(100000, ']')).find("nested deeper"),
            std::string::npos);
  EXPECT_NE(errorWith("{\"message\": \"" + std::string(2 << 20, 'x') + "\"}").find("1 MiB"),
            std::string::npos);
}

// A case's equivalence rewrites and oracle are saved with it and read back; a rewrite the table
// does not have, or a record of another shape, is refused naming the file.
TEST(Corpus, RewritesAndTheOracleAreSavedAndReadBack) {
  testing::TempDir dir("corpus_rewrites");
  GeneratorConfig cfg;
  cfg.rewrites = 2;
  TestCase tc = makeTestCase(cfg, 8);
  ASSERT_FALSE(tc.rewrites.empty());
  FailureInfo info;
  info.oracle = "equivalence";
  const fs::path saved = saveFailure(dir.path(), "S.T", tc, info);
  const CorpusCase back = loadCorpusCase(saved);
  EXPECT_EQ(back.testCase.rewrites, tc.rewrites);
  EXPECT_EQ(back.oracle, "equivalence");
  // The same model with other rewrites is another case.
  TestCase other = tc;
  other.rewrites.pop_back();
  EXPECT_NE(contentHash(other), contentHash(tc));
  auto errorWith = [&](const std::string& rewrites) {
    std::ofstream(saved / "nncheck.json") << R"({"seed": 8, "rewrites": )" << rewrites << "}";
    try {
      loadCorpusCase(saved);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(errorWith(R"([{"rule": "identity", "at": "v1", "form": 0}])"), "(accepted)");
  EXPECT_NE(errorWith(R"([{"rule": "teleport", "at": "v1", "form": 0}])")
                .find("nncheck.json: rewrites: 'teleport' is no rule"),
            std::string::npos);
  EXPECT_NE(errorWith(R"([{"rule": "identity", "at": "v1", "form": -1}])")
                .find("nncheck.json: rewrites: "),
            std::string::npos);
  EXPECT_NE(errorWith(R"({"rule": "identity"})").find("expected a list"), std::string::npos);
  // A record without an oracle is the reference's, as every case saved before oracles had names.
  std::ofstream(saved / "nncheck.json") << R"({"seed": 8})";
  EXPECT_EQ(loadCorpusCase(saved).oracle, "reference");
}

// A saved case replays by the command its record implies: the reference's findings by `nncheck
// run`, another oracle's by `nncheck corpus check` (which judges with it), a plug-in engine's with
// the library it came from, a property's by its test binary.
// The record reads back whole: what a `fuzz --jobs` worker hands its findings back in.
TEST(Corpus, TheWholeRecordReadsBack) {
  testing::TempDir dir("corpus_record");
  const TestCase tc = makeTestCase(GeneratorConfig{}, 7);
  FailureInfo info;
  info.property = "fuzz-toy";
  info.oracle = "equivalence";
  info.backend = "toy";
  info.engineLibrary = "/x/libtoy.so";
  info.configuration = "O2";
  info.kind = Outcome::Crash;
  info.message = "boom";
  info.maxAbsError = 0.5;
  info.maxRelError = 2;
  info.tolerance = {0.01, 1e-5};
  info.estimatedError = 1e-6;
  info.signal = 11;
  info.divergence = Divergence{
      .name = "n1", .opType = "Relu", .output = "y", .detail = "3 differ", .exposed = false};
  info.differingOutputs = {{"y", "3 of 4 differ"}};
  info.ops = {"Relu"};
  info.pattern = "crash at Relu: Relu(x)";
  info.casesRun = 1234;
  info.secondsRun = 5.5;
  info.nodesBefore = 9;
  info.nodesAfter = 1;
  info.shrinkSteps = 17;
  info.shrinkSeconds = 0.25;
  info.triage = {{"O0", Outcome::Pass}, {"O2", Outcome::Crash}};
  info.knownFailures = {{"O2", Outcome::Crash}};
  info.culprit = Culprit{.needed = {"fold"}, .workaround = "O2,disable=fold"};
  const FailureInfo back = loadCorpusCase(saveFailure(dir.path(), "S.T", tc, info)).info;
  EXPECT_EQ(back.property, info.property);
  EXPECT_EQ(back.oracle, info.oracle);
  EXPECT_EQ(back.backend, info.backend);
  EXPECT_EQ(back.engineLibrary, info.engineLibrary);
  EXPECT_EQ(back.configuration, info.configuration);
  EXPECT_EQ(back.kind, info.kind);
  EXPECT_EQ(back.message, info.message);
  EXPECT_EQ(back.maxAbsError, info.maxAbsError);
  EXPECT_EQ(back.maxRelError, info.maxRelError);
  EXPECT_EQ(back.tolerance.rtol, info.tolerance.rtol);
  EXPECT_EQ(back.tolerance.atol, info.tolerance.atol);
  EXPECT_EQ(back.estimatedError, info.estimatedError);
  EXPECT_EQ(back.signal, info.signal);
  ASSERT_TRUE(back.divergence);
  EXPECT_EQ(back.divergence->describe(), info.divergence->describe());
  EXPECT_EQ(back.differingOutputs, info.differingOutputs);
  EXPECT_EQ(back.ops, info.ops);
  EXPECT_EQ(back.pattern, info.pattern);
  EXPECT_EQ(back.casesRun, info.casesRun);
  EXPECT_EQ(back.secondsRun, info.secondsRun);
  EXPECT_EQ(back.nodesBefore, info.nodesBefore);
  EXPECT_EQ(back.nodesAfter, info.nodesAfter);
  EXPECT_EQ(back.shrinkSteps, info.shrinkSteps);
  EXPECT_EQ(back.shrinkSeconds, info.shrinkSeconds);
  EXPECT_EQ(back.triage, info.triage);
  EXPECT_EQ(back.knownFailures, info.knownFailures);
  ASSERT_TRUE(back.culprit);
  EXPECT_EQ(back.culprit->needed, info.culprit->needed);
  EXPECT_EQ(back.culprit->workaround, info.culprit->workaround);
}

TEST(Corpus, ReplayCommandsNameTheOracleAndThePlugIn) {
  testing::TempDir dir("corpus_replay");
  FailureInfo info;
  info.property = "fuzz-toy";
  info.backend = "toy";
  info.configuration = "O2";
  const TestCase tc = makeTestCase(GeneratorConfig{}, 3);
  CorpusCase c = loadCorpusCase(saveFailure(dir.path(), info.property, tc, info));
  EXPECT_EQ(replayCommand(c), "nncheck run --backend toy --config O2 " + c.dir.string());
  info.oracle = "equivalence";
  info.engineLibrary = "/opt/my engines/libtoy.so";
  c = loadCorpusCase(
      saveFailure(dir.path(), info.property, makeTestCase(GeneratorConfig{}, 4), info));
  EXPECT_EQ(c.engineLibrary, info.engineLibrary);
  // What the case records of the library or worker serving its engine is never printed ready
  // to run: this process loaded neither, so the user supplies theirs.
  EXPECT_EQ(replayCommand(c),
            "nncheck corpus check --engine-lib '<the library of toy>' --backend toy "
            "--config O2 " +
                c.dir.string());
  c.engineLibrary.clear();
  c.engineWorker = "sh -c 'touch /tmp/pwned'";
  EXPECT_EQ(replayCommand(c),
            "nncheck corpus check --engine-worker '<the command serving toy>' --backend toy "
            "--config O2 " +
                c.dir.string());
  c.property = "reduce-toy";
  EXPECT_EQ(campaignEngine(c.property), "toy");
  EXPECT_NE(replayCommand(c).find("--backend toy"), std::string::npos);
  c.property = "Suite.Prop";
  EXPECT_EQ(campaignEngine(c.property), "");
  EXPECT_EQ(replayCommand(c), "<test binary> --gtest_filter=Suite.Prop");
  c.dir.clear();
  EXPECT_EQ(replayCommand(c), "");
}

TEST(Corpus, APatternIsSavedOnceAndAClaimWithoutItsCaseIsTakenOver) {
  testing::TempDir dir("corpus_claims");
  FailureInfo info;
  info.pattern = "Relu(x)";
  const TestCase first = makeTestCase(GeneratorConfig{}, 11);
  const TestCase second = makeTestCase(GeneratorConfig{}, 12);
  const SavedPattern a = savePatternOnce(dir.path(), "S.T", first, info);
  EXPECT_TRUE(a.isNew);
  EXPECT_TRUE(fs::exists(a.dir / "model.onnx"));
  const SavedPattern b = savePatternOnce(dir.path(), "S.T", second, info);
  EXPECT_FALSE(b.isNew);
  EXPECT_EQ(b.dir, a.dir) << "the case that holds the pattern";
  EXPECT_EQ(loadCorpus(dir.path()).size(), 1u) << "the second case is not kept";
  // What a kill between claim and case left before (the claim was written first), or a case a
  // person removed: a claim whose case is gone. Before, every later campaign said "already in
  // the corpus" and the finding was lost for good.
  fs::remove_all(a.dir);
  const SavedPattern c = savePatternOnce(dir.path(), "S.T", second, info);
  EXPECT_TRUE(c.isNew);
  EXPECT_TRUE(fs::exists(c.dir / "model.onnx"));
  EXPECT_EQ(savePatternOnce(dir.path(), "S.T", first, info).dir, c.dir)
      << "the claim now names the case that took it over";
  // A campaign's workers: the case first in case order takes the place of the one saved first.
  const fs::path replaced = replacePatternCase(dir.path(), "S.T", first, info, c.dir);
  EXPECT_FALSE(fs::exists(c.dir));
  EXPECT_EQ(replaced.filename(), contentHash(first));
  EXPECT_EQ(loadCorpus(dir.path()).size(), 1u);
  const SavedPattern d = savePatternOnce(dir.path(), "S.T", second, info);
  EXPECT_FALSE(d.isNew);
  EXPECT_EQ(d.dir, replaced) << "the claim names the case that replaced the other";
}

TEST(Corpus, ACaseAnotherProcessPutInPlaceFirstIsNotMadeTwice) {
  // Two merges into one corpus at once: the second's rename met the first's folder and failed
  // "Directory not empty" midway. It is the same content, so nothing is made and nothing left.
  testing::TempDir dir("corpus_publish");
  const TestCase tc = makeTestCase(GeneratorConfig{}, 13);
  const fs::path target = dir.path() / "S.T" / "0123456789abcdef";
  const bool made = publishCase(target, [&](const fs::path& tmp) {
    saveBackendTestCase(tmp, tc.model, tc.inputs, {});
    saveBackendTestCase(target, tc.model, tc.inputs, {});  // the other process, meanwhile
  });
  EXPECT_FALSE(made);
  EXPECT_EQ(entries(dir.path() / "S.T"), std::vector<std::string>{"0123456789abcdef"})
      << "no temporary folder is left";
  EXPECT_FALSE(publishCase(target, [](const fs::path&) { FAIL() << "filled a case that exists"; }));
}

TEST(Corpus, NothingIsSavedThroughALinkInTheCorpus) {
  // A corpus made elsewhere may link its property folder or its claims out of itself: saving
  // there would write (and sweep temporaries) wherever the link points.
  testing::TempDir dir("corpus_linked");
  const fs::path elsewhere = dir.path() / "elsewhere", corpus = dir.path() / "corpus";
  fs::create_directories(elsewhere);
  fs::create_directories(corpus);
  fs::create_directory_symlink(elsewhere, corpus / "S.T");
  FailureInfo info;
  info.pattern = "p";
  const TestCase tc = makeTestCase(GeneratorConfig{}, 15);
  EXPECT_NE(testing::errorOf([&] {
              savePatternOnce(corpus, "S.T", tc, info);
            }).find("S.T: is a symbolic link; nncheck writes nothing through a link"),
            std::string::npos);
  fs::remove(corpus / "S.T");
  fs::create_directories(corpus / "S.T");
  fs::create_directory_symlink(elsewhere, corpus / "S.T" / ".patterns");
  EXPECT_NE(testing::errorOf([&] {
              savePatternOnce(corpus, "S.T", tc, info);
            }).find(".patterns: is a symbolic link"),
            std::string::npos);
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "nothing was written where the links point";
}

TEST(Corpus, ARecordThatIsNoRegularFileMakesTheCaseUnreadable) {
  // Before: a FIFO or /dev/zero gave "18446744073709551615 bytes, more than 1 MiB", and a
  // dangling or looping link was taken for no record at all, losing its known-failure marks.
  testing::TempDir dir("corpus_record");
  const fs::path saved = saveFailure(dir.path(), "S.T", makeTestCase(GeneratorConfig{}, 14), {});
  const fs::path meta = saved / "nncheck.json";
  auto errorOf = [&] { return testing::errorOf([&] { loadCorpusCase(saved); }); };
  fs::remove(meta);
  EXPECT_EQ(errorOf(), "(no error)") << "no record at all is a case without one";
  ASSERT_EQ(::mkfifo(meta.c_str(), 0600), 0);
  EXPECT_NE(errorOf().find("nncheck.json: not a regular file"), std::string::npos) << errorOf();
  fs::remove(meta);
  fs::create_directory(meta);
  EXPECT_NE(errorOf().find("nncheck.json: is a directory"), std::string::npos) << errorOf();
  fs::remove(meta);
  fs::create_symlink("/dev/zero", meta);
  EXPECT_NE(errorOf().find("nncheck.json: is a symbolic link"), std::string::npos) << errorOf();
  fs::remove(meta);
  fs::create_symlink(saved / "gone.json", meta);
  EXPECT_NE(errorOf().find("nncheck.json: is a symbolic link"), std::string::npos) << errorOf();
  fs::remove(meta);
  fs::create_symlink(meta, meta);  // a loop
  EXPECT_NE(errorOf().find("nncheck.json: is a symbolic link"), std::string::npos) << errorOf();
}

TEST(Corpus, AnInvalidModelInACaseIsRefusedNamingTheValue) {
  // Two nodes writing 'y': before, `run` and `reduce` ran it on OpenCV and reported (and saved)
  // OpenCV's answer as a bug.
  testing::TempDir dir("corpus_invalid");
  const fs::path c = dir.path() / "case";
  saveBackendTestCase(c, testing::oneValueWrittenTwice(),
                      {{"x", Tensor::fromVector<float>({2}, {1, -1})}}, {});
  try {
    loadCorpusCase(c);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("case/model.onnx: not a valid model"), std::string::npos) << what;
    EXPECT_NE(what.find("Neg 'second'"), std::string::npos) << what;
    EXPECT_NE(what.find("writes 'y', which Relu 'first'"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace nncheck

namespace nncheck {
namespace {

// A mismatch known in one configuration points at its first diverging op; an error at every op
// of its model; a failure no configuration knows points at nothing.
TEST(Corpus, OpsWithKnownFailuresAreTheDivergingOrAllOps) {
  testing::TempDir dir("known_ops");
  GeneratorConfig small;
  small.nodes = 3;
  const TestCase tc = makeTestCase(small, 7);
  FailureInfo mismatch;
  mismatch.divergence = Divergence{};
  mismatch.divergence->opType = "Sigmoid";
  mismatch.ops = {"Relu", "Sigmoid"};
  mismatch.knownFailures = {{"level=eager", Outcome::Mismatch}};
  saveFailure(dir.path(), "A.Mismatch", tc, mismatch);
  FailureInfo error;
  error.kind = Outcome::Error;
  error.ops = {"Tile", "Gather"};
  error.knownFailures = {{"fusion=on", Outcome::Error}};
  saveFailure(dir.path(), "B.Error", makeTestCase(small, 8), error);
  FailureInfo open;
  open.ops = {"Conv"};
  saveFailure(dir.path(), "C.Open", makeTestCase(small, 9), open);
  EXPECT_EQ(opsWithKnownFailures(dir.path()), (std::set<std::string>{"Sigmoid", "Tile", "Gather"}));
  // Per configuration: a bug only NNC has keeps its ops out of NNC's properties alone.
  EXPECT_EQ(opsWithKnownFailures(dir.path(), "fusion=on"),
            (std::set<std::string>{"Tile", "Gather"}));
  EXPECT_EQ(opsWithKnownFailures(dir.path(), "level=eager"), (std::set<std::string>{"Sigmoid"}));
  EXPECT_TRUE(opsWithKnownFailures(dir.path(), "level=nnc").empty());
}

}  // namespace
}  // namespace nncheck

namespace nncheck {
namespace {

// A saved failure carries model.svg, drawn from its nncheck.json as `nncheck show` draws it: the
// first diverging node highlighted, the differing values noted.
TEST(Corpus, SavedFailuresCarryAPictureOfWhereTheyDiverge) {
  testing::TempDir dir("corpus_picture");
  const TestCase tc = makeTestCase(GeneratorConfig{}, 9);
  const Node& node = tc.model.graph.nodes.front();
  FailureInfo info;
  info.divergence =
      Divergence{0, node.name, node.opType, node.outputs[0], "max abs error 0.25", true};
  const std::string output = tc.model.graph.outputs.front().name;
  info.differingOutputs = {{output, "max abs error 0.75 at [0]"}};
  const fs::path saved = saveFailure(dir.path(), "S.T", tc, info);
  const CorpusCase c = loadCorpusCase(saved);
  EXPECT_EQ(c.divergingOutput, node.outputs[0]);
  EXPECT_EQ(c.differingOutputs, info.differingOutputs);
  const DrawOptions o = drawOptionsFor(c);
  EXPECT_EQ(o.highlightOutput, node.outputs[0]);
  EXPECT_EQ(o.notes.at(node.outputs[0]), "max abs error 0.25");
  ASSERT_TRUE(fs::exists(saved / "model.svg"));
  const std::string svg = readFile(saved / "model.svg");
  EXPECT_EQ(svg, drawModel(tc.model, PictureFormat::Svg, o));
  EXPECT_NE(svg.find("#f4a6a6"), std::string::npos) << "the diverging node is drawn red";
  EXPECT_NE(svg.find("max abs error 0.75 at [0]"), std::string::npos);
}

}  // namespace
}  // namespace nncheck

namespace nncheck {
namespace {

using namespace std::chrono_literals;

// x[2,3] -> Transpose, and with `matMul` then @ w[2,4].
TestCase transposeThen(bool matMul) {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 3})};
  m.graph.nodes = {Node::make("Transpose", {"x"}, {"t"}, "tr")};
  m.graph.outputs = {ValueInfo::tensor("t", DType::Float32, {3, 2})};
  if (matMul) {
    m.graph.initializers = {{"w", Tensor::fromVector<float>({2, 4}, std::vector<float>(8, 1)), ""}};
    m.graph.nodes.push_back(Node::make("MatMul", {"t", "w"}, {"y"}, "mm"));
    m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {3, 4})};
  }
  tc.inputs = {{"x", Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}};
  return tc;
}

// One Transpose bug: an error where a MatMul refuses its wrong shape, and a mismatch where the
// Transpose's value is an output. The error is localized to the Transpose and is the same finding.
TEST(Corpus, AnErrorAfterAWrongShapeIsOneFindingWithThatNodesMismatch) {
  testing::TransposeAsIdentity engine;
  auto infoOf = [&](const TestCase& tc) {
    const Isolated isolatedEngine = isolated(engine, 5s);
    const Verdict v =
        judge([&](const TestCase& c) { assertMatchesReference(isolatedEngine, c); }, tc);
    return recordFailure(v, tc, v.localize ? v.localize(false) : std::nullopt);
  };
  const FailureInfo error = infoOf(transposeThen(true));
  const FailureInfo mismatch = infoOf(transposeThen(false));
  EXPECT_EQ(error.kind, Outcome::Error) << error.message;
  EXPECT_EQ(mismatch.kind, Outcome::Mismatch) << mismatch.message;
  ASSERT_TRUE(error.divergence);
  EXPECT_EQ(error.divergence->opType, "Transpose");
  EXPECT_TRUE(error.divergence->layoutDiffers);
  EXPECT_EQ(error.pattern, mismatch.pattern);
}

}  // namespace
}  // namespace nncheck
