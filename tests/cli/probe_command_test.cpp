// nncheck probe, run as a user runs it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <regex>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::runCli;

// Probes `engine` afresh and expects the table its source compiles in (or its worker reads),
// `table` under the source tree, to be that probe's, so it never drifts from the installed
// engine; returns the probe's output.
std::string expectFreshProbeMatches(const std::string& engine, const std::string& table,
                                    const std::string& config = "", int perOp = 0) {
  testing::TempDir tmp("probe");
  const std::string fresh = (tmp.path() / "table.inc").string();
  std::string probe = "probe --backend " + engine;
  if (!config.empty()) probe.append(" --config ").append(config);
  if (perOp > 0) probe.append(" --per-op ").append(std::to_string(perOp));
  auto o = runCli(probe + " --write-table " + fresh);
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_EQ(readFile(fresh), readFile(std::string(NNCHECK_SOURCE_DIR "/") + table))
      << "rebuild it: nncheck " << probe << " --write-table " << table;
  return o.output;
}

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
  const std::string output =
      expectFreshProbeMatches("opencv", "src/backends/opencv/opencv_capabilities.inc");
  EXPECT_NE(output.find("opencv (cpu, fusion on):"), std::string::npos) << output;
  auto bad = runCli("probe --backend nosuch");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("nosuch"), std::string::npos) << bad.output;
}

#ifdef NNCHECK_HAS_TORCH_ENGINE
TEST(ProbeCommand, TorchsCompiledCapabilityTableMatchesAFreshProbe) {
  // The same for the TorchScript engine: its shares are what the translation expresses of
  // Debian's libtorch.
  expectFreshProbeMatches("torch", "src/backends/torchscript/torchscript_capabilities.inc");
}
#endif

#ifdef NNCHECK_HAS_ORT_ENGINE
TEST(ProbeCommand, OrtsCompiledCapabilityTableMatchesAFreshProbe) {
  // And for ONNX Runtime 1.30 at level all: the kernels it has for each op's generated models.
  expectFreshProbeMatches("ort", "src/backends/ort/ort_capabilities.inc");
}
#endif

#ifdef NNCHECK_HAS_TVM_ENGINE
TEST(ProbeCommand, TvmsCapabilityTableMatchesAFreshProbe) {
  // And for TVM 0.27 at its zero pipeline: what its ONNX frontend imports and its CPU build runs
  // of each op's generated models. The worker reads the table to say which ops TVM takes. Four
  // models an op, for CI's time: ten gave the same ops, with shares a tenth apart.
  expectFreshProbeMatches("tvm", "src/backends/tvm/tvm_capabilities.inc", "", 4);
}
#endif

#ifdef NNCHECK_HAS_INDUCTOR_ENGINE
TEST(ProbeCommand, InductorsCapabilityTableMatchesAFreshProbe) {
  // And for PyTorch 2.15 in eager mode: what the translation to PyTorch expresses and eager
  // PyTorch runs of each op's generated models (what the compiling modes then fail on is theirs).
  expectFreshProbeMatches("inductor", "src/backends/inductor/inductor_capabilities.inc",
                          "mode=eager");
}
#endif

#ifdef NNCHECK_HAS_XLA_ENGINE
TEST(ProbeCommand, XlasCapabilityTableMatchesAFreshProbe) {
  // And for XLA through JAX op by op: what the translation to JAX expresses and JAX runs of each
  // op's generated models without jit (what jit then fails on is XLA's). Four models an op, as
  // for TVM.
  expectFreshProbeMatches("xla", "src/backends/xla/xla_capabilities.inc", "mode=eager", 4);
}
#endif

#ifdef NNCHECK_HAS_OPENVINO_ENGINE
TEST(ProbeCommand, OpenVinosCapabilityTableMatchesAFreshProbe) {
  // And for OpenVINO at its accuracy mode: what its ONNX frontend converts and its CPU plugin runs
  // of each op's generated models. Four models an op, as for TVM.
  expectFreshProbeMatches("openvino", "src/backends/openvino/openvino_capabilities.inc", "", 4);
}
#endif

#ifdef NNCHECK_HAS_MLIR_ENGINE
TEST(ProbeCommand, MlirsCompiledCapabilityTableMatchesAFreshProbe) {
  // And for MLIR's TOSA path: what the emission expresses and Debian's MLIR 19 runs, probed at
  // the default pipeline.
  expectFreshProbeMatches("mlir", "src/backends/mlir/mlir_capabilities.inc");
}
#endif

#ifdef NNCHECK_HAS_IREE_ENGINE
TEST(ProbeCommand, IreesCapabilityTableMatchesAFreshProbe) {
  // And for IREE at O0: what its ONNX importer converts and llvm-cpu compiles and runs. Two
  // models an op, not ten: IREE compiles each in about 0.6 s.
  expectFreshProbeMatches("iree", "src/backends/iree/iree_capabilities.inc", "", 2);
}
#endif

#ifdef NNCHECK_HAS_LITERT_ENGINE
TEST(ProbeCommand, LiteRtsCapabilityTableMatchesAFreshProbe) {
  // And for LiteRT at its default (XNNPACK): what onnx2tf and TensorFlow's converter convert to
  // LiteRT's own ops and the interpreter runs. Two models an op: a conversion takes 0.25 s.
  expectFreshProbeMatches("litert", "src/backends/litert/litert_capabilities.inc", "", 2);
}
#endif

}  // namespace
}  // namespace nncheck
