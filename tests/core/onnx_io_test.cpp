#include "nncheck/onnx_io.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/onnx_proto.h"
#include "nncheck/error.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

// Import, export and import again gives the same IR, and export is a fixed point: lossless.
TEST(OnnxIo, EveryNodeTestModelRoundTrips) {
  int n = 0;
  for (const auto& dir : testing::allNodeCases()) {
    std::string bytes = readFile(dir / "model.onnx");
    Model m = parseModel(bytes, dir.string());
    std::string out = serializeModel(m);
    Model back = parseModel(out, "re-export of " + dir.string());
    ASSERT_TRUE(back == m) << dir;
    ASSERT_EQ(serializeModel(back), out) << dir;
    // Semantically the same protobuf: identical when the original used raw_data throughout.
    onnx::ModelProto original;
    original.ParseFromString(bytes);
    EXPECT_EQ(original.graph().node_size(), modelToProto(m).graph().node_size());
    ++n;
  }
  EXPECT_GE(n, 900);
}

TEST(OnnxIo, EveryNodeTestTensorRoundTrips) {
  int roundTripped = 0;
  const auto cases = testing::allNodeCases();
  ASSERT_FALSE(cases.empty()) << "no node test found";
  for (const auto& dir : cases) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.path().extension() != ".pb") continue;
      std::string name;
      Tensor t;
      try {
        t = loadTensor(e.path(), &name);
      } catch (const Error&) {
        continue;  // sequences and optionals are other message types
      }
      Tensor back = parseTensor(serializeTensor(t, name), "memory");
      ASSERT_TRUE(back == t) << e.path();
      ++roundTripped;
    }
  }
  // Most node-test files are tensors: a loader that rejects them all must not pass this test.
  EXPECT_GT(roundTripped, static_cast<int>(cases.size())) << "tensors loaded: " << roundTripped;
}

class MalformedFiles : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"io"};
  fs::path dir_ = tmp_.path();
  fs::path write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
};

void expectErrorMentioning(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    FAIL() << "no exception; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST_F(MalformedFiles, TruncatedModelIsRejectedNamingTheFile) {
  std::string bytes =
      readFile(testing::nodeTestDir() / "test_conv_with_strides_padding" / "model.onnx");
  fs::path p = write("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  expectErrorMentioning([&] { loadModel(p); }, "truncated.onnx");
}

TEST_F(MalformedFiles, TensorFileGivenAsModelIsRejected) {
  std::string tensor =
      readFile(testing::nodeTestDir() / "test_abs" / "test_data_set_0" / "input_0.pb");
  fs::path p = write("model.onnx", tensor);
  expectErrorMentioning([&] { loadModel(p); }, "not an ONNX model");
}

TEST_F(MalformedFiles, ModelGivenAsTensorIsRejected) {
  fs::path p = write("input_0.pb", readFile(testing::nodeTestDir() / "test_abs" / "model.onnx"));
  expectErrorMentioning([&] { loadTensor(p); }, "not an ONNX TensorProto");
}

TEST_F(MalformedFiles, MissingFileAndRawDataOfTheWrongSizeAreRejected) {
  expectErrorMentioning([&] { loadModel(dir_ / "absent.onnx"); }, "absent.onnx: no such file");
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(3);
  p.set_raw_data(std::string(8, '\0'));
  expectErrorMentioning([&] { parseTensor(p.SerializeAsString(), "t.pb"); }, "needs 12");
}

TEST_F(MalformedFiles, SavesAreAtomicAndLeaveNoTemporaryFile) {
  Tensor t = Tensor::fromVector<float>({2}, {1.5f, -2.0f});
  saveTensor(t, "x", dir_ / "x.pb");
  std::string name;
  EXPECT_TRUE(loadTensor(dir_ / "x.pb", &name) == t);
  EXPECT_EQ(name, "x");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
  expectErrorMentioning([&] { saveTensor(t, "x", dir_ / "no_such_dir" / "x.pb"); }, "no_such_dir");
}

}  // namespace
}  // namespace nncheck
