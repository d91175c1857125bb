// nncheck probe, run as a user runs it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <regex>

#include "cli/cli_runner.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::runCli;

TEST(ProbeCommand, TheReferenceAcceptsAndMatchesEveryOp) {
  auto o = runCli("probe --backend reference --per-op 2");
  ASSERT_EQ(o.status, 0) << o.output;
  // No op of the reference mismatches, is rejected, crashes or hangs against itself.
  std::regex bad(R"((mismatch|rejected|crash|hang)\s+[1-9])");
  EXPECT_FALSE(std::regex_search(o.output, bad)) << o.output;
  // Every op the generator draws (one it never draws has no single-op models to probe).
  const std::string all = std::to_string(usableOps(GeneratorConfig{}).size());
  EXPECT_NE(o.output.find("reference: " + all + " of " + all + " ops accepted"), std::string::npos)
      << o.output;
}

TEST(ProbeCommand, OpenCVsCompiledCapabilityTableMatchesAFreshProbe) {
  // The table the OpenCV backend compiles in must be what probing this engine gives now, so it
  // never drifts from the installed OpenCV.
  testing::TempDir tmp("probe");
  const std::string table = (tmp.path() / "table.inc").string();
  auto o = runCli("probe --backend opencv --write-table " + table);
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("opencv (cpu, fusion on):"), std::string::npos) << o.output;
  EXPECT_EQ(readFile(table),
            readFile(NNCHECK_SOURCE_DIR "/src/backends/opencv/opencv_capabilities.inc"))
      << "rebuild it: nncheck probe --backend opencv --write-table "
         "src/backends/opencv/opencv_capabilities.inc";
  auto bad = runCli("probe --backend nosuch");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("nosuch"), std::string::npos) << bad.output;
}

#ifdef NNCHECK_HAS_TORCH_ENGINE
TEST(ProbeCommand, TorchsCompiledCapabilityTableMatchesAFreshProbe) {
  // The same for the TorchScript engine: its shares are what the translation expresses of
  // Debian's libtorch.
  testing::TempDir tmp("probe");
  const std::string table = (tmp.path() / "table.inc").string();
  auto o = runCli("probe --backend torch --write-table " + table);
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(readFile(table),
            readFile(NNCHECK_SOURCE_DIR "/src/backends/torchscript/torchscript_capabilities.inc"))
      << "rebuild it: nncheck probe --backend torch --write-table "
         "src/backends/torchscript/torchscript_capabilities.inc";
}
#endif

#ifdef NNCHECK_HAS_ORT_ENGINE
TEST(ProbeCommand, OrtsCompiledCapabilityTableMatchesAFreshProbe) {
  // And for ONNX Runtime 1.30 at level all: the kernels it has for each op's generated models.
  testing::TempDir tmp("probe");
  const std::string table = (tmp.path() / "table.inc").string();
  auto o = runCli("probe --backend ort --write-table " + table);
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(readFile(table), readFile(NNCHECK_SOURCE_DIR "/src/backends/ort/ort_capabilities.inc"))
      << "rebuild it: nncheck probe --backend ort --write-table "
         "src/backends/ort/ort_capabilities.inc";
}
#endif

#ifdef NNCHECK_HAS_TVM_ENGINE
TEST(ProbeCommand, TvmsCapabilityTableMatchesAFreshProbe) {
  // And for TVM 0.27 at its zero pipeline: what its ONNX frontend imports and its CPU build runs
  // of each op's generated models. The worker reads the table to say which ops TVM takes.
  testing::TempDir tmp("probe");
  const std::string table = (tmp.path() / "table.inc").string();
  auto o = runCli("probe --backend tvm --write-table " + table);
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(readFile(table), readFile(NNCHECK_SOURCE_DIR "/src/backends/tvm/tvm_capabilities.inc"))
      << "rebuild it: nncheck probe --backend tvm --write-table "
         "src/backends/tvm/tvm_capabilities.inc";
}
#endif

#ifdef NNCHECK_HAS_MLIR_ENGINE
TEST(ProbeCommand, MlirsCompiledCapabilityTableMatchesAFreshProbe) {
  // And for MLIR's TOSA path: what the emission expresses and Debian's MLIR 19 runs, probed at
  // the default pipeline.
  testing::TempDir tmp("probe");
  const std::string table = (tmp.path() / "table.inc").string();
  auto o = runCli("probe --backend mlir --write-table " + table);
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(readFile(table),
            readFile(NNCHECK_SOURCE_DIR "/src/backends/mlir/mlir_capabilities.inc"))
      << "rebuild it: nncheck probe --backend mlir --write-table "
         "src/backends/mlir/mlir_capabilities.inc";
}
#endif

}  // namespace
}  // namespace nncheck
