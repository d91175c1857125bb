// Files and tensors that claim more than they hold: clear errors, before anything that size is
// allocated, and never a read without end.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/onnx_proto.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::errorOf;

TEST(FileLimits, ATensorClaimingMoreElementsThanItsBytesIsRefusedBeforeAllocating) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {512, 1024, 1024}) p.add_dims(d);  // 2 GiB of float32
  p.set_raw_data(std::string(16, '\0'));
  const std::string bytes = p.SerializeAsString();
  ASSERT_LT(bytes.size(), 64u);
  EXPECT_NE(errorOf([&] {
              parseTensor(bytes, "input_0.pb");
            }).find("input_0.pb: TensorProto claims 536870912 elements"),
            std::string::npos);
  // Strings had no cap at all: ten bytes claiming fifty million of them.
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(50000000);
  EXPECT_NE(errorOf([&] { parseTensor(s.SerializeAsString(), "s.pb"); }).find("claims 50000000"),
            std::string::npos);
}

TEST(FileLimits, TensorsLargerThanTheLimitAreAnErrorNamingIt) {
  EXPECT_NE(errorOf([] {
              Tensor t(DType::Float32, {1 << 20, 1 << 10});
            }).find("MiB per tensor"),
            std::string::npos);
  EXPECT_NE(errorOf([] { Tensor t(DType::String, {int64_t{1} << 40}); }).find("MiB per tensor"),
            std::string::npos);
}

TEST(FileLimits, OnlyRegularFilesAreRead) {
  testing::TempDir dir("file_limits");
  const auto fifo = dir.path() / "model.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(errorOf([&] { loadModel(fifo); }).find("model.onnx: not a regular file"),
            std::string::npos);  // before: blocked forever in open()
  const auto zero = dir.path() / "input_0.pb";
  std::filesystem::create_symlink("/dev/zero", zero);
  EXPECT_NE(errorOf([&] { loadTensor(zero); }).find("input_0.pb: not a regular file"),
            std::string::npos);
}

TEST(FileLimits, AComplexTensorWithAnOddNumberOfPartsIsMalformed) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::COMPLEX64);
  p.add_dims(2);
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f}) p.add_float_data(v);  // 2 values need 4 parts
  EXPECT_NE(errorOf([&] {
              parseTensor(p.SerializeAsString(), "c.pb");
            }).find("c.pb: complex TensorProto of shape [2] needs 4 values"),
            std::string::npos);
}

}  // namespace
}  // namespace nncheck
