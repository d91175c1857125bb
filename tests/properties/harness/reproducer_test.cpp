// The standalone reproducers nncheck writes: inputs and expected outputs as literals that read
// back exactly (NaN, infinities, int64 beyond 2^53, bools), the spec's text at the head, and a
// script that passes when the engine agrees and fails when it does not.
#include "harness/reproducer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cli/cli_runner.h"
#include "core/files.h"
#include "nncheck/error.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

using testing::has;

// y = LeakyRelu(x) with alpha set, x holding NaN and infinities; i an int64 input passed through.
Reproduction leakyRelu(const std::string& language, const std::string& code) {
  Reproduction r;
  Model& m = r.saved.testCase.model;
  m.opsets = {{"", 17}};
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {2, 2}),
                    ValueInfo::tensor("i", DType::Int64, {2})};
  Node n = Node::make("LeakyRelu", {"x"}, {"y"}, "LeakyRelu_0");
  n.attributes = {Attribute::ofFloat("alpha", 0.5f)};
  m.graph.nodes = {n, Node::make("Identity", {"i"}, {"j"}, "Identity_1")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 2}),
                     ValueInfo::tensor("j", DType::Int64, {2})};
  Tensor x(DType::Float32, {2, 2});
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {std::nanf(""), inf, -inf, 0.1f};
  for (size_t k = 0; k < xs.size(); ++k) x.span<float>()[k] = xs[k];
  Tensor i(DType::Int64, {2});
  i.span<int64_t>()[0] = (int64_t{1} << 53) + 1;  // not a double
  i.span<int64_t>()[1] = -7;
  r.saved.testCase.inputs = {{"x", x}, {"i", i}};
  Tensor y = x;
  y.span<float>()[2] = -inf;
  y.span<float>()[3] = 0.1f;
  r.expected = {{"y", y}, {"j", i}};
  r.saved.kind = r.saved.info.kind = Outcome::Mismatch;
  r.saved.info.message = "outputs differ from the reference";
  Divergence& d = r.saved.info.divergence.emplace();
  d.name = "LeakyRelu_0";
  d.opType = "LeakyRelu";
  r.engine = "double";
  r.configuration = "O1";
  r.triage = {{"O0", Outcome::Pass}, {"O1", Outcome::Mismatch}};
  r.recipe = {
      .language = language, .code = code, .requirements = "nothing", .versions = "double 1.0"};
  r.command = "nncheck repro case --backend double";
  return r;
}

TEST(Reproducer, TheHeadCitesTheSpecAndSaysWhereItFailsAndPasses) {
  const std::string script =
      reproducerScript(leakyRelu("python", "def run(model_path, feeds):\n    return []\n"));
  EXPECT_TRUE(has(script,
                  "# The ONNX specification, LeakyRelu-16 (https://onnx.ai/onnx/"
                  "operators/onnx__LeakyRelu.html#leakyrelu-16):"))
      << script;
  EXPECT_TRUE(has(script, "#   alpha=0.5: Coefficient of leakage.")) << script;
  EXPECT_TRUE(has(script, "# Configurations: fails at O1 (mismatch); passes at O0")) << script;
  EXPECT_TRUE(has(script, "# Written by: nncheck repro case --backend double")) << script;
  EXPECT_TRUE(has(script, "np.nan, np.inf, -np.inf, 0.100000001")) << script;
  EXPECT_TRUE(has(script, "9007199254740993, -7")) << script;
  // A message whose first line only introduces the error says the error too.
  Reproduction introduced = leakyRelu("python", "");
  introduced.saved.info.message = "torch (freeze): \nThe size of tensor a (3) must match\nmore";
  EXPECT_TRUE(has(reproducerScript(introduced),
                  "# What goes wrong: torch (freeze): The size of tensor a (3) must match\n"));
  // A record from another configuration than the script's says where it comes from.
  introduced.found = introduced.configuration;
  EXPECT_TRUE(has(reproducerScript(introduced), "# What goes wrong: torch (freeze): The size"));
  introduced.found = "O2";
  EXPECT_TRUE(has(reproducerScript(introduced),
                  "# What goes wrong: (as recorded at O2) torch (freeze): The size"));
  EXPECT_TRUE(has(issueDraft(introduced, ActualResult{}, "Linux"),
                  "## What happens\n\n(as recorded at O2) torch (freeze): The size"));
}

TEST(Reproducer, JavaScriptAndCppLiteralsReadBackExactly) {
  const std::string js = reproducerScript(leakyRelu("javascript", "async function run() {}\n"));
  EXPECT_TRUE(has(js, "Float32Array.from([NaN, Infinity, -Infinity, 0.100000001])")) << js;
  EXPECT_TRUE(has(js, "BigInt64Array.from([9007199254740993n, -7n])")) << js;
  Reproduction cpp = leakyRelu("c++", "std::vector<Tensor> run() { return {}; }\n");
  EXPECT_THROW(reproducerScript(cpp), Error) << "C++ values are doubles: 2^53 + 1 is none";
  cpp.saved.testCase.inputs.erase("i");
  cpp.saved.testCase.model.graph.inputs.pop_back();
  cpp.saved.testCase.model.graph.nodes.pop_back();
  cpp.saved.testCase.model.graph.outputs.pop_back();
  cpp.expected.erase("j");
  const std::string c = reproducerScript(cpp);
  EXPECT_TRUE(
      has(c, "{\"x\", {\"float32\", {2, 2}, {NAN, INFINITY, -INFINITY, 0.10000000149011612}}}"))
      << c;
  EXPECT_THROW(reproducerScript(leakyRelu("rust", "")), Error);
}

TEST(Reproducer, AnIssueDraftHasEverySection) {
  const Reproduction r = leakyRelu("python", "");
  ActualResult actual;
  actual.outcome = Outcome::Mismatch;
  actual.outputs = r.expected;
  const std::string draft = issueDraft(r, actual, "Debian GNU/Linux 12");
  for (const char* section :
       {"# double 1.0: LeakyRelu returns wrong values (with alpha)",
        "**Versions**: double 1.0; "
        "Debian GNU/Linux 12",
        "## The model", "![the model](model.svg)", "## Inputs", "## Expected and actual",
        "## Configurations", "## Specification", "## Reproduce",
        "_Written by `nncheck repro case --backend double`._"})
    EXPECT_TRUE(has(draft, section)) << section << "\n" << draft;
}

#ifdef NNCHECK_SDK_PYTHON
// The script itself: it exits 0 when run() returns what the reference does, 1 with MISMATCH when
// a value differs, and 1 with FAILS when run() raises.
TEST(Reproducer, APythonScriptPassesOnAgreementAndFailsOtherwise) {
  testing::TempDir dir("reproducer");
  const std::string body =
      "def run(model_path, feeds):\n    x = feeds['x']\n"
      "    y = np.where(x < 0, x * np.float32(0.5), x)\n";
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"agrees", body + "    return [y, feeds['i']]\n"},
      {"differs", body + "    return [y + np.float32(1), feeds['i']]\n"},
      {"raises", "def run(model_path, feeds):\n    raise RuntimeError('no kernel')\n"}};
  std::map<std::string, testing::CliOutcome> outcomes;
  for (const auto& [name, code] : runs) {
    const fs::path script = dir.path() / (name + ".py");
    writeFileAtomic(script, reproducerScript(leakyRelu("python", code)));
    outcomes.emplace(name, testing::runCommand(std::string(NNCHECK_SDK_PYTHON) + " " +
                                               script.string() + " 2>&1"));
  }
  EXPECT_EQ(outcomes.at("agrees").status, 0) << outcomes.at("agrees").output;
  EXPECT_EQ(outcomes.at("differs").status, 1) << outcomes.at("differs").output;
  EXPECT_TRUE(has(outcomes.at("differs").output, "output y: MISMATCH"))
      << outcomes.at("differs").output;
  EXPECT_EQ(outcomes.at("raises").status, 1) << outcomes.at("raises").output;
  EXPECT_TRUE(has(outcomes.at("raises").output, "FAILS: the engine raised RuntimeError: no kernel"))
      << outcomes.at("raises").output;
}
#endif

}  // namespace
}  // namespace nncheck
