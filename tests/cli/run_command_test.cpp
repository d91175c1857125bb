// The nncheck command, run as a user runs it: exit codes and messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/cli_runner.h"
#include "core/backend_test.h"
#include "core/files.h"
#include "core/onnx_proto.h"
#include "nncheck/engine.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

using testing::runCli;

class RunCommand : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"run_cli"};
  fs::path dir_ = tmp_.path();
  // A copy of a node test case that the test may then damage.
  fs::path copyCase(const std::string& name) {
    fs::copy(testing::nodeTestDir() / name, dir_ / name, fs::copy_options::recursive);
    return dir_ / name;
  }
};

TEST_F(RunCommand, PassingCasesExitZeroWithTheSummaryLine) {
  testing::CliOutcome o = runCli("run " + copyCase("test_abs").string() + " " +
                                 copyCase("test_conv_with_strides_padding").string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("2 passed, 0 failed, 0 skipped"), std::string::npos) << o.output;
}

TEST_F(RunCommand, MissingFolderIsAnError) {
  testing::CliOutcome o = runCli("run " + (dir_ / "nowhere").string());
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_NE(o.output.find("nowhere: no such file or folder"), std::string::npos) << o.output;
}

TEST_F(RunCommand, TruncatedModelFailsNamingTheFile) {
  fs::path c = copyCase("test_abs");
  std::string bytes = readFile(c / "model.onnx");
  std::ofstream(c / "model.onnx", std::ios::binary | std::ios::trunc)
      << bytes.substr(0, bytes.size() - 7);
  testing::CliOutcome o = runCli("run " + c.string());
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("model.onnx"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("0 passed, 1 failed"), std::string::npos) << o.output;
}

TEST_F(RunCommand, WrongTypePbFailsNamingTheFile) {
  fs::path c = copyCase("test_abs");
  fs::copy_file(c / "model.onnx", c / "test_data_set_0" / "input_0.pb",
                fs::copy_options::overwrite_existing);
  testing::CliOutcome o = runCli("run " + c.string());
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("input_0.pb: not an ONNX TensorProto"), std::string::npos) << o.output;
}

TEST_F(RunCommand, UnknownOpFailsWhileUnregisteredOpIsSkipped) {
  fs::path c = copyCase("test_abs");
  Model m = loadModel(c / "model.onnx");
  m.graph.nodes[0].opType = "Abz";
  saveModel(m, c / "model.onnx");
  testing::CliOutcome o = runCli("run " + c.string());
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("unknown op 'Abz'"), std::string::npos) << o.output;

  testing::CliOutcome skipped = runCli("run -v " + copyCase("test_nonzero_example").string());
  EXPECT_EQ(skipped.status, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("NonZero is not registered"), std::string::npos) << skipped.output;
  EXPECT_NE(skipped.output.find("0 passed, 0 failed, 1 skipped"), std::string::npos)
      << skipped.output;
}

TEST_F(RunCommand, AWrongExpectedOutputIsAFailureWithErrorFigures) {
  fs::path c = copyCase("test_relu");
  Tensor want = loadTensor(c / "test_data_set_0" / "output_0.pb");
  want.span<float>()[0] += 1.0f;
  saveTensor(want, "y", c / "test_data_set_0" / "output_0.pb");
  testing::CliOutcome o = runCli("run --by-op " + c.string());
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("max abs error"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("Relu"), std::string::npos) << o.output;
}

// Issue 46, item 13: an engine was given inputs of another shape than the model declares, and
// was blamed for what the case got wrong. Every engine the registry has (and the reference, in
// process and isolated) skips such a case as no test before running it.
TEST_F(RunCommand, InputsOfAnotherShapeThanDeclaredAreNoTestOnEveryEngine) {
  fs::path c = copyCase("test_relu");
  saveTensor(Tensor::fromVector<float>({2}, {1.0f, -1.0f}), "x",
             c / "test_data_set_0" / "input_0.pb");
  std::vector<std::string> selections = {"", "--backend reference --config ''"};
  for (const std::string& engine : engines().available())
    if (engine != "reference") selections.push_back("--backend " + engine);
  for (const std::string& selection : selections) {
    testing::CliOutcome o = runCli("run -v " + selection + " " + c.string());
    EXPECT_EQ(o.status, 0) << selection << "\n" << o.output;
    EXPECT_NE(o.output.find("0 passed, 0 failed, 1 skipped"), std::string::npos)
        << selection << "\n"
        << o.output;
    EXPECT_NE(o.output.find("test_data_set_0: no test: input 'x' has shape [2], not its declared "
                            "shape"),
              std::string::npos)
        << selection << "\n"
        << o.output;
  }
}

// Issue 46, item 1: a corpus of 16 cases, each a sparse initializer whose data is one byte at an
// offset of ./secret.txt, returned the file's 16 bytes through ORT's "got N". Every engine that
// reads models is given none that refers to a file: the case is refused, naming the tensor.
TEST_F(RunCommand, ACaseThatRefersToAFileIsRefusedOnEveryEngine) {
  const fs::path c = dir_ / "test_secret";
  {
    Model m;
    m.opsets = {{"", 17}};
    m.graph.name = "g";
    m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1})};
    m.graph.nodes = {Node::make("Add", {"x", "w"}, {"y"}, "add")};
    m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1})};
    saveBackendTestCase(c, m, {{"x", Tensor::fromVector<float>({1}, {0})}},
                        {{"y", Tensor::fromVector<float>({1}, {0})}});
  }
  // The sparse initializer, written as protobuf text would: values of one uint8 at offset 3.
  onnx::ModelProto p;
  p.ParseFromString(readFile(c / "model.onnx"));
  onnx::SparseTensorProto* w = p.mutable_graph()->add_sparse_initializer();
  w->add_dims(1);
  onnx::TensorProto* values = w->mutable_values();
  values->set_name("w");
  values->set_data_type(onnx::TensorProto::UINT8);
  values->add_dims(1);
  values->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"location", "secret.txt"}, {"offset", "3"}, {"length", "1"}}) {
    auto* kv = values->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  }
  onnx::TensorProto* indices = w->mutable_indices();
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(1);
  indices->add_int64_data(0);
  writeFileAtomic(c / "model.onnx", p.SerializeAsString());
  std::ofstream(dir_ / "secret.txt") << "SECRET-0123456789";
  std::vector<std::string> selections = {""};
  for (const std::string& engine : engines().available())
    selections.push_back("--backend " + engine);
  for (const std::string& selection : selections) {
    testing::CliOutcome o =
        testing::runCommand("cd " + dir_.string() + " && " + std::string(NNCHECK_CLI) + " run " +
                            selection + " " + c.string());
    EXPECT_EQ(o.status, 1) << selection << "\n" << o.output;
    EXPECT_NE(o.output.find("tensor 'w' (model.graph.sparse_initializer[0].values) keeps its data "
                            "in the file 'secret.txt'"),
              std::string::npos)
        << selection << "\n"
        << o.output;
    EXPECT_EQ(o.output.find("got"), std::string::npos) << selection << "\n" << o.output;
  }
}

TEST_F(RunCommand, ACaseNeedingMoreThanTheMemoryLimitIsSkippedAsUnsupported) {
  // Expand to 1024x1024 floats: 4 MiB, which fits the default limit but not --memory-limit 1.
  Model m;
  m.opsets = {{"", 14}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1})};
  m.graph.initializers = {{"shape", Tensor::fromVector<int64_t>({2}, {1024, 1024}), ""}};
  m.graph.nodes = {Node::make("Expand", {"x", "shape"}, {"y"}, "big")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {1024, 1024})};
  fs::path c = dir_ / "test_big";
  fs::create_directories(c / "test_data_set_0");
  saveModel(m, c / "model.onnx");
  saveTensor(Tensor::fromVector<float>({1}, {2.0f}), "x", c / "test_data_set_0" / "input_0.pb");
  saveTensor(runReference(m, {{"x", Tensor::fromVector<float>({1}, {2.0f})}}).at("y"), "y",
             c / "test_data_set_0" / "output_0.pb");

  testing::CliOutcome fits = runCli("run " + c.string());
  EXPECT_EQ(fits.status, 0) << fits.output;
  EXPECT_NE(fits.output.find("1 passed"), std::string::npos) << fits.output;
  testing::CliOutcome over = runCli("run -v --memory-limit 1 " + c.string());
  EXPECT_EQ(over.status, 0) << over.output;
  EXPECT_NE(over.output.find("1 skipped"), std::string::npos) << over.output;
  EXPECT_NE(over.output.find("big"), std::string::npos) << over.output;
  EXPECT_NE(over.output.find("1 MiB per run"), std::string::npos) << over.output;
  testing::CliOutcome bad = runCli("run --memory-limit 0 " + c.string());
  EXPECT_EQ(bad.status, 105) << bad.output;
  EXPECT_NE(bad.output.find("--memory-limit"), std::string::npos) << bad.output;
}

TEST_F(RunCommand, AReferenceRunPastItsTimeLimitIsSkippedNamingTheNode) {
  // Two nested Loops of 100,000 trips: before, `run` hung (the reference runs in process, out of
  // --timeout's reach). Run under `timeout`, so that a hang fails the test.
  // (Its expected output is never reached: any value does.)
  const fs::path c = dir_ / "test_nested_loops";
  const Tensor x = Tensor::fromVector<float>({1}, {1});
  saveBackendTestCase(c, testing::nestedLoops(100000), {{"x", x}}, {{"y", x}});
  testing::CliOutcome o = testing::runCommand("timeout -s KILL 120 " + std::string(NNCHECK_CLI) +
                                              " --reference-timeout 0.5 run -v " + c.string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("0 passed, 0 failed, 1 skipped"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("Loop 'outer': the reference ran past its time limit of 500 ms"),
            std::string::npos)
      << o.output;
  for (const char* bad : {"0", "-1", "nan", "1e300"}) {
    testing::CliOutcome b =
        runCli(std::string("--reference-timeout ") + bad + " run " + c.string());
    EXPECT_NE(b.status, 0) << bad;
    EXPECT_NE(b.output.find("--reference-timeout"), std::string::npos) << bad << ": " << b.output;
  }
}

TEST_F(RunCommand, AnInvalidModelIsAnErrorNamingTheValueNotAnEnginesFailure) {
  // Two nodes writing 'y': before, OpenCV's answer was reported (and `reduce` saved it) as an
  // OpenCV bug.
  const Model m = testing::oneValueWrittenTwice();
  const fs::path c = dir_ / "test_twice";
  const Tensor x = Tensor::fromVector<float>({2}, {1, -1});
  saveBackendTestCase(c, m, {{"x", x}}, {{"y", Tensor::fromVector<float>({2}, {-1, 1})}});
  for (const std::string backend : {"reference", "opencv"}) {
    testing::CliOutcome o = runCli("run --backend " + backend + " " + c.string());
    EXPECT_EQ(o.status, 1) << o.output;
    EXPECT_NE(o.output.find("not a valid model: Neg 'second' writes 'y', which Relu 'first' "
                            "defines too"),
              std::string::npos)
        << backend << ": " << o.output;
    EXPECT_EQ(o.output.find("mismatch"), std::string::npos) << backend << ": " << o.output;
  }
  const fs::path corpus = dir_ / "corpus";
  testing::CliOutcome r =
      runCli("reduce " + c.string() + " --backend opencv --corpus " + corpus.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("writes 'y'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(corpus)) << "nothing is saved";
}

TEST_F(RunCommand, HelpDescribesRun) {
  testing::CliOutcome o = runCli("run --help");
  EXPECT_EQ(o.status, 0);
  EXPECT_NE(o.output.find("--by-op"), std::string::npos) << o.output;
  testing::CliOutcome bad = runCli("run --backend nosuch " + copyCase("test_abs").string());
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("nosuch"), std::string::npos) << bad.output;
}

TEST_F(RunCommand, ReplaysOnOpenCVIsolatedWithRejectionsSkipped) {
  // Relu runs on OpenCV and matches; Mod is rejected by its importer: skipped with the reason.
  testing::CliOutcome o = runCli("run --backend opencv -v " + copyCase("test_relu").string() + " " +
                                 copyCase("test_mod_mixed_sign_float32").string());
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("PASS  test_relu"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("SKIP  test_mod_mixed_sign_float32"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("rejected by the engine"), std::string::npos) << o.output;
  // The OpenCV example's corpus holds known OpenCV bugs: every case fails there.
  testing::CliOutcome corpus = runCli("run --backend opencv --config fusion=on " NNCHECK_SOURCE_DIR
                                      "/examples/opencv/corpus");
  EXPECT_EQ(corpus.status, 1) << corpus.output;
  EXPECT_NE(corpus.output.find("\n0 passed"), std::string::npos) << corpus.output;
  EXPECT_EQ(runCli("run --backend opencv --config fusion=maybe").status, 2);
}

TEST_F(RunCommand, AFolderGivenWithATrailingSlashIsNamed) {
  const fs::path c = copyCase("test_abs");
  auto o = runCli("run -v " + c.string() + "/");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("PASS  test_abs"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace nncheck
