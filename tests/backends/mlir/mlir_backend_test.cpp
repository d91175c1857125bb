// The MLIR engine against Debian's MLIR 19: its configurations are pass pipelines, the emitted
// TOSA parses and lowers, and at every pipeline single-op models agree with the reference, are
// declared unsupported, or fail as the corpus of MLIR's bugs says they do.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "harness/probe.h"
#include "mlir/emit.h"
#include "mlir/jit.h"
#include "mlir/translate.h"
#include "nncheck/corpus.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/isolation.h"
#include "nncheck/mlir.h"
#include "nncheck/reference.h"

namespace nncheck::mlir {
namespace {

using namespace std::chrono_literals;

const char* kCorpus = NNCHECK_SOURCE_DIR "/examples/mlir/corpus";

TEST(MlirBackend, IsRegisteredWithEveryPipeline) {
  ASSERT_TRUE(engines().contains("mlir"));
  const std::vector<std::string> configs = engines().configurations("mlir");
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front(), engines().at("mlir").baseline);
  EXPECT_EQ(configs.front(), "fusion=off,canonicalize=off,loops=scf,llvm=O0");
  for (const Config& c : mlir::configurations()) EXPECT_EQ(Config::parse(c.key()), c) << c.key();
  EXPECT_EQ(Config::parse("llvm=O0,loops=tiled").key(),
            "fusion=on,canonicalize=on,loops=tiled,llvm=O0");
  for (const char* bad : {"llvm=O2", "fusion=yes", "level=eager", "loops="}) {
    try {
      Config::parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(MlirBackend, EachSwitchChangesThePassesThePipelineRuns) {
  auto has = [](const Config& c, const std::string& pass) {
    return c.pipeline().find(pass) != std::string::npos;
  };
  EXPECT_TRUE(has(Config{}, "linalg-fuse-elementwise-ops"));
  EXPECT_FALSE(has(Config{.fusion = false}, "linalg-fuse-elementwise-ops"));
  EXPECT_TRUE(has(Config{}, "canonicalize"));
  EXPECT_FALSE(has(Config{.canonicalize = false}, "canonicalize"));
  EXPECT_TRUE(has(Config{}, "convert-linalg-to-loops"));
  EXPECT_TRUE(has(Config{.loops = mlir::Loops::Affine}, "affine-loop-fusion"));
  EXPECT_TRUE(has(Config{.loops = mlir::Loops::Tiled}, "affine-loop-tile"));
  EXPECT_TRUE(has(Config{.loops = mlir::Loops::Vectorized}, "affine-super-vectorize"));
}

// The probed table the engine compiles in names only ops with an emitter, and every emitter is an
// op of the library.
TEST(MlirBackend, ProbedOpsAreEmittedOpsOfTheLibrary) {
  const Capabilities caps = mlir::Backend().capabilities();
  EXPECT_FALSE(caps.ops.empty());
  for (const std::string& op : caps.ops) EXPECT_TRUE(mlir::emitters().count(op)) << op;
  const std::vector<std::string> library = usableOps(GeneratorConfig{});
  for (const auto& [op, emit] : mlir::emitters())
    EXPECT_NE(std::find(library.begin(), library.end(), op), library.end()) << op;
}

Model singleNode(const std::string& op, std::vector<ValueInfo> inputs, DType out,
                 const Shape& shape, std::vector<Attribute> attrs = {}) {
  Model m;
  m.opsets = {{"", 14}};
  std::vector<std::string> names;
  for (const ValueInfo& v : inputs) names.push_back(v.name);
  m.graph.inputs = std::move(inputs);
  m.graph.nodes = {Node::make(op, names, {"y"}, "node")};
  m.graph.nodes[0].attributes = std::move(attrs);
  m.graph.outputs = {ValueInfo::tensor("y", out, shape)};
  return m;
}

// Integer division where LLVM's sdiv traps (INT64_MIN / -1) wraps as the kernels do; Mod takes
// the divisor's sign. Run isolated: a trap kills only the child.
TEST(MlirBackend, IntegerDivisionMatchesTheKernelsWhereLlvmWouldTrap) {
  const TensorMap in = {{"a", Tensor::fromVector<int64_t>({4}, {INT64_MIN, 7, -7, 9})},
                        {"b", Tensor::fromVector<int64_t>({4}, {-1, -2, 2, 4})}};
  for (const char* op : {"Div", "Mod"}) {
    const Model m = singleNode(
        op, {ValueInfo::tensor("a", DType::Int64, {4}), ValueInfo::tensor("b", DType::Int64, {4})},
        DType::Int64, {4});
    mlir::Backend engine;
    Isolated isolated(engine, 30s, Isolation::ForkPerRun);
    const RunOutcome got = isolated.run(m, in);
    ASSERT_EQ(got.kind, Outcome::Pass) << op << ": " << got.message;
    EXPECT_EQ(got.outputs.at("y"), runReference(m, in).at("y")) << op;
  }
}

// A float function of an integer tensor (Pow of int64 computes in float64) converts back as the
// kernels do, saturating; MLIR 19's tosa.cast to i64 would make every value INT64_MAX (see the
// corpus), so the emission avoids it there.
TEST(MlirBackend, FloatFunctionsOfIntegersConvertBackExactly) {
  const Model m = singleNode(
      "Pow", {ValueInfo::tensor("x", DType::Int64, {4}), ValueInfo::tensor("p", DType::Int64, {4})},
      DType::Int64, {4});
  const TensorMap in = {{"x", Tensor::fromVector<int64_t>({4}, {3, 10, -2, 4000000000})},
                        {"p", Tensor::fromVector<int64_t>({4}, {2, 3, 3, 3})}};
  const Tensor want = Tensor::fromVector<int64_t>({4}, {9, 1000, -8, INT64_MAX});
  EXPECT_EQ(runReference(m, in).at("y"), want);
  EXPECT_EQ(mlir::Backend().run(m, in).at("y"), want);
}

// TOSA's argmax makes i32; an i64 result crashes MLIR 19's folder over an axis of size 1.
TEST(MlirBackend, ArgMaxOverAnAxisOfSizeOneCompiles) {
  const Model m = singleNode("ArgMax", {ValueInfo::tensor("x", DType::Float32, {2, 1, 3})},
                             DType::Int64, {2, 1, 3}, {Attribute::ofInt("axis", 1)});
  const TensorMap in = {{"x", Tensor::fromVector<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6})}};
  mlir::Backend engine;
  Isolated isolated(engine, 30s, Isolation::ForkPerRun);
  const RunOutcome got = isolated.run(m, in);
  ASSERT_EQ(got.kind, Outcome::Pass) << got.message;
  EXPECT_EQ(got.outputs.at("y"), Tensor(DType::Int64, {2, 1, 3}));
}

// Found by the campaign as a verifier error: a window that reads only the leading padding left
// TOSA's conv2d an empty input once the unread columns were cropped.
TEST(MlirBackend, ConvWhoseWindowReadsOnlyPaddingComputesZeros) {
  const Model m =
      singleNode("Conv",
                 {ValueInfo::tensor("x", DType::Float32, {1, 1, 1, 1}),
                  ValueInfo::tensor("w", DType::Float32, {1, 1, 1, 1})},
                 DType::Float32, {1, 1, 1, 1},
                 {Attribute::ofInts("pads", {0, 1, 0, 0}), Attribute::ofInts("strides", {1, 3})});
  const TensorMap in = {{"x", Tensor::fromVector<float>({1, 1, 1, 1}, {2})},
                        {"w", Tensor::fromVector<float>({1, 1, 1, 1}, {3})}};
  EXPECT_EQ(runReference(m, in).at("y"), Tensor(DType::Float32, {1, 1, 1, 1}));
  EXPECT_EQ(mlir::Backend().run(m, in).at("y"), Tensor(DType::Float32, {1, 1, 1, 1}));
}

// Found by the campaign: the kernel sums int32 in int64 before dividing, so a sum past int32's
// range must not wrap.
TEST(MlirBackend, IntegerReduceMeanSumsInInt64) {
  const Model m = singleNode("ReduceMean", {ValueInfo::tensor("x", DType::Int32, {2})},
                             DType::Int32, {}, {Attribute::ofInt("keepdims", 0)});
  const TensorMap in = {{"x", Tensor::fromVector<int32_t>({2}, {2000000000, 2000000001})}};
  const Tensor want = Tensor::fromVector<int32_t>({}, {2000000000});
  EXPECT_EQ(runReference(m, in).at("y"), want);
  EXPECT_EQ(mlir::Backend().run(m, in).at("y"), want);
}

// Relu and a Clip with constant bounds as TOSA's legalizations write them, tosa.clamp, which the
// canonicalizer folds and fuses; right under every pipeline. Computed bounds stay max and min.
TEST(MlirBackend, ClampsAreWrittenAsTosaClamp) {
  const ValueInfo x = ValueInfo::tensor("x", DType::Float32, {4});
  Model relu = singleNode("Relu", {x}, DType::Float32, {4});
  Model relu6 = singleNode("Clip", {x}, DType::Float32, {4});
  relu6.graph.initializers = {{"lo", Tensor::fromVector<float>({}, {0}), ""},
                              {"hi", Tensor::fromVector<float>({}, {6}), ""}};
  relu6.graph.nodes[0].inputs = {"x", "lo", "hi"};
  Model computed =
      singleNode("Clip", {x, ValueInfo::tensor("hi", DType::Float32, {})}, DType::Float32, {4});
  computed.graph.nodes[0].inputs = {"x", "", "hi"};
  const TensorMap in = {{"x", Tensor::fromVector<float>({4}, {-2, 0.5f, 3, 9})},
                        {"hi", Tensor::fromVector<float>({}, {2})}};
  for (const Model* m : {&relu, &relu6, &computed}) {
    const bool clamp = mlir::translate(*m).text.find("tosa.clamp") != std::string::npos;
    EXPECT_EQ(clamp, m != &computed) << mlir::translate(*m).text;
    TensorMap feeds = in;
    if (m != &computed) feeds.erase("hi");
    const Tensor want = runReference(*m, feeds).at("y");
    for (const Config& c : mlir::configurations())
      EXPECT_EQ(mlir::Backend(c).run(*m, feeds).at("y"), want) << c.key();
  }
}

TEST(MlirBackend, MlirsDiagnosticsNameTheStageAndTheLine) {
  const Model m =
      singleNode("Relu", {ValueInfo::tensor("x", DType::Float32, {2})}, DType::Float32, {2});
  mlir::Program p = mlir::translate(m);
  const Tensor x = Tensor::fromVector<float>({2}, {-1, 1});
  mlir::Jit jit;
  try {
    jit.run(p, "no-such-pass", 0, {&x});
    ADD_FAILURE() << "a pipeline of an unknown pass ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-pass"), std::string::npos) << e.what();
  }
  const size_t at = p.text.find("tosa.clamp");
  ASSERT_NE(at, std::string::npos) << p.text;
  p.text.replace(at, std::string("tosa.clamp").size(), "tosa.clamq");
  try {
    jit.run(p, Config{}.pipeline(), 0, {&x});
    ADD_FAILURE() << "an unknown op parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not parse or verify"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

class MlirPipelines : public ::testing::TestWithParam<Config> {};

// Single-op models of every op, 3 per op at each of the seven pipelines: each matches the
// reference, is rejected with a reason, or fails where the corpus holds a known failure of its op
// at this pipeline. Anything else is an emission bug (or one of MLIR's) to look at.
TEST_P(MlirPipelines, SingleOpModelsMatchTheReference) {
  mlir::Backend engine(GetParam());
  Isolated isolated(engine, 30s, Isolation::Persistent);
  const std::set<std::string> known = opsWithKnownFailures(kCorpus, GetParam().key());
  const std::vector<ProbeRow> rows =
      probe(isolated, mlir::Backend::baseCapabilities(), {.perOp = 3, .seed = 1});
  int matched = 0;
  for (const ProbeRow& r : rows) {
    matched += r.count(Outcome::Pass);
    if (known.count(r.op)) continue;
    EXPECT_EQ(r.count(Outcome::Pass) + r.count(Outcome::Unsupported), r.models)
        << r.op << ": " << r.firstProblem;
  }
  EXPECT_GT(matched, 0);
}

INSTANTIATE_TEST_SUITE_P(AllPipelines, MlirPipelines, ::testing::ValuesIn(mlir::configurations()),
                         [](const auto& info) {
                           std::string name = info.param.key();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace nncheck::mlir
