// Deliberately buggy engines: they wrap the reference and go wrong on one pattern, so tests can
// prove that a property fails, shrinks to exactly that pattern, and passes on the reference.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "backends/pc_table_fixture.h"
#include "nncheck/error.h"
#include "nncheck/isolation.h"
#include "nncheck/reference.h"
#include "nncheck/test_case.h"

namespace nncheck::testing {

// The producer of each value.
inline std::map<std::string, const Node*> producers(const Model& m) {
  std::map<std::string, const Node*> p;
  for (const Node& n : m.graph.nodes)
    for (const auto& o : n.outputs) p[o] = &n;
  return p;
}

// x[1,3] @ w[3,1] -> Relu (-> Sigmoid), x = [-1, -2, -3]: the doubles' fused MatMul->Relu is
// wrong there, the product being negative.
inline TestCase matMulRelu(bool sigmoidAfter) {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 14}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {1, 3})};
  m.graph.initializers = {{"w", Tensor::fromVector<float>({3, 1}, {1, 1, 1}), ""}};
  m.graph.nodes = {Node::make("MatMul", {"x", "w"}, {"p"}, "mm"),
                   Node::make("Relu", {"p"}, {"r"}, "relu")};
  std::string out = "r";
  if (sigmoidAfter) {
    m.graph.nodes.push_back(Node::make("Sigmoid", {"r"}, {"s"}, "sig"));
    out = "s";
  }
  m.graph.outputs = {ValueInfo::tensor(out, DType::Float32, {1, 1})};
  tc.inputs = {{"x", Tensor::fromVector<float>({1, 3}, {-1, -2, -3})}};
  return tc;
}

// A "fusion pass" that turns Relu into Abs when a MatMul with an odd inner dim feeds it.
struct MatMulReluOddInner : Backend {
  std::string name() const override { return "double:matmul-relu-odd-inner"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    Model rewritten = m;
    const TensorMap values = runReferenceAllValues(m, inputs);
    auto prod = producers(m);
    for (Node& n : rewritten.graph.nodes) {
      if (n.opType != "Relu") continue;
      auto p = prod.find(n.inputs[0]);
      if (p != prod.end() && p->second->opType == "MatMul" &&
          values.at(p->second->inputs[0]).shape().back() % 2 == 1)
        n.opType = "Abs";
    }
    return runReference(rewritten, inputs);
  }
};

// A Transpose that leaves its input as it is: a wrong shape, which a MatMul downstream then
// refuses with an error naming itself.
struct TransposeAsIdentity : Backend {
  std::string name() const override { return "double:transpose-as-identity"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    Model rewritten = m;
    for (Node& n : rewritten.graph.nodes)
      if (n.opType == "Transpose") {
        n.opType = "Identity";
        n.attributes.clear();
      }
    return runReference(rewritten, inputs);
  }
};

// The same bug as a switchable "fusion pass" that only fires while the MatMul's output stays
// internal (exposing it as a graph output stops the fusion, as in real engines).
struct FusedMatMulRelu : Backend {
  bool fusion = true;
  explicit FusedMatMulRelu(bool fusionOn = true) : fusion(fusionOn) {}
  std::string name() const override {
    return std::string("double:fused-matmul-relu (fusion ") + (fusion ? "on)" : "off)");
  }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    if (!fusion) return runReference(m, inputs);
    Model rewritten = m;
    const TensorMap values = runReferenceAllValues(m, inputs);
    auto prod = producers(m);
    auto isOutput = [&](const std::string& v) {
      return std::any_of(m.graph.outputs.begin(), m.graph.outputs.end(),
                         [&](const ValueInfo& o) { return o.name == v; });
    };
    for (Node& n : rewritten.graph.nodes) {
      if (n.opType != "Relu") continue;
      auto p = prod.find(n.inputs[0]);
      if (p != prod.end() && p->second->opType == "MatMul" && !isOutput(n.inputs[0]) &&
          values.at(p->second->inputs[0]).shape().back() % 2 == 1)
        n.opType = "Abs";
    }
    return runReference(rewritten, inputs);
  }
};

// An engine without Tanh: it rejects any model holding one, naming the node, as importers do.
struct RejectsTanh : Backend {
  std::string name() const override { return "double:rejects-tanh"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    for (const Node& n : m.graph.nodes)
      if (n.opType == "Tanh")
        throw Unsupported("engine", "cannot create layer '" + n.name + "' of type Tanh");
    return runReference(m, inputs);
  }
};

// Concat on axis 0 with an initializer operand: the operands come out in reverse order.
struct ConcatAxis0Initializer : Backend {
  std::string name() const override { return "double:concat-axis0-initializer"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    Model rewritten = m;
    const TensorMap values = runReferenceAllValues(m, inputs);
    for (Node& n : rewritten.graph.nodes) {
      if (n.opType != "Concat" || n.inputs.size() < 2) continue;
      const int64_t rank = values.at(n.inputs[0]).rank();
      const int64_t axis = n.attribute("axis")->i;
      bool anyInit = false;
      for (const auto& in : n.inputs) anyInit = anyInit || m.graph.initializer(in);
      if ((axis == 0 || axis == -rank) && anyInit) std::reverse(n.inputs.begin(), n.inputs.end());
    }
    return runReference(rewritten, inputs);
  }
};

// A segfault on any Transpose of a rank-5 tensor.
struct SegfaultOnRank5Transpose : Backend {
  std::string name() const override { return "double:segfault-rank5-transpose"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    const TensorMap values = runReferenceAllValues(m, inputs);
    for (const Node& n : m.graph.nodes)
      if (n.opType == "Transpose" && values.at(n.inputs[0]).rank() == 5) ::raise(SIGSEGV);
    return runReference(m, inputs);
  }
};

// A hang on any Pow whose base a Sigmoid computes.
struct HangOnPowAfterSigmoid : Backend {
  std::string name() const override { return "double:hang-pow-after-sigmoid"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    auto prod = producers(m);
    for (const Node& n : m.graph.nodes) {
      auto p = prod.find(n.inputs[0]);
      if (n.opType == "Pow" && p != prod.end() && p->second->opType == "Sigmoid")
        for (;;) ::pause();
    }
    return runReference(m, inputs);
  }
};

// Correct, but once it has run a model with a Tanh, every later run in the same process is
// off by one: an engine that corrupts its own state, which a fresh process does not carry.
struct DamagedAfterTanh : Backend {
  std::string name() const override { return "double:damaged-after-tanh"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    static bool damaged = false;  // this process's state
    TensorMap out = runReference(m, inputs);
    if (damaged)
      for (auto& [name, t] : out)
        if (t.dtype() == DType::Float32)
          for (float& v : t.span<float>()) v += 1;
    for (const Node& n : m.graph.nodes) damaged = damaged || n.opType == "Tanh";
    return out;
  }
};

// A crash (SIGSEGV) on a Tanh: on every one (`always`), else only once the process has run a
// model with a Sigmoid before, a crash that earlier cases made and no fresh process repeats.
struct CrashesOnTanh : Backend {
  bool always;
  explicit CrashesOnTanh(bool everyTime) : always(everyTime) {}
  std::string name() const override { return "double:crashes-on-tanh"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    static bool primed = false;  // this process's state
    const auto has = [&](const char* op) {
      return std::any_of(m.graph.nodes.begin(), m.graph.nodes.end(),
                         [&](const Node& n) { return n.opType == op; });
    };
    if ((always || primed) && has("Tanh")) ::raise(SIGSEGV);
    primed = primed || has("Sigmoid");
    return runReference(m, inputs);
  }
};

// Another engine as it is, noting each run's process and engine in `log` (a line "pid name"):
// what a test reads to tell which processes a campaign ran what in.
struct NotesItsProcess : Backend {
  Backend& inner;
  std::filesystem::path log;
  NotesItsProcess(Backend& engine, std::filesystem::path file)
      : inner(engine), log(std::move(file)) {}
  std::string name() const override { return inner.name(); }
  Capabilities capabilities() const override { return inner.capabilities(); }
  std::vector<std::string> optimizations() const override { return inner.optimizations(); }
  std::vector<std::string> optimizationsApplied() const override {
    return inner.optimizationsApplied();
  }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    std::ofstream(log, std::ios::app) << ::getpid() << ' ' << inner.name() << '\n';
    return inner.run(m, inputs);
  }
  // pid -> the names of the engines each run in that process ran.
  static std::map<long, std::vector<std::string>> read(const std::filesystem::path& file) {
    std::map<long, std::vector<std::string>> runs;
    std::ifstream in(file);
    long pid = 0;
    std::string name;
    while (in >> pid && std::getline(in >> std::ws, name)) runs[pid].push_back(name);
    return runs;
  }
};

// A racy kernel: Tanh's outputs change from one run to the next, in any process (each run
// takes the next number of a counter kept in a file, as threads racing would differ).
struct RacyTanh : Backend {
  std::filesystem::path counter;
  explicit RacyTanh(std::filesystem::path file) : counter(std::move(file)) {}
  std::string name() const override { return "double:racy-tanh"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    int n = 0;
    if (std::ifstream in(counter); in) in >> n;
    std::ofstream(counter) << n + 1;
    Model rewritten = m;
    for (Node& n2 : rewritten.graph.nodes)
      if (n2.opType == "Tanh" && n % 2) n2.opType = "Softsign";
    return runReference(rewritten, inputs);
  }
};

// An engine with a custom op the reference does not know, test.custom's Twice (y = 2x), that
// its optimizing configuration computes wrongly for negative x (3x): only the baseline oracle
// can judge it.
struct CustomTwice : Backend {
  bool optimize = false;
  explicit CustomTwice(bool optimizing) : optimize(optimizing) {}
  std::string name() const override {
    return std::string("double:custom-twice (") + (optimize ? "optimizing)" : "baseline)");
  }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    Model rewritten = m;
    TensorMap feeds = inputs;
    for (Node& n : rewritten.graph.nodes)
      if (n.domain == "test.custom" && n.opType == "Twice") {
        n.opType = "Mul";
        n.domain = "";
        const std::string factor = n.name + "_factor";
        n.inputs.push_back(factor);
        rewritten.graph.inputs.push_back(ValueInfo::tensor(factor, DType::Float32, {}));
        float k = 2;
        if (optimize)
          for (float v : inputs.at(n.inputs[0]).span<float>()) k = v < 0 ? 3 : k;
        feeds[factor] = Tensor::fromVector<float>({}, {k});
      }
    std::erase_if(rewritten.opsets, [](const OpsetImport& o) { return o.domain == "test.custom"; });
    return runReference(rewritten, feeds);
  }
};

// x: float32[n] -> test.custom.Twice -> Neg -> y, a model the reference does not compute.
inline TestCase customTwiceCase(std::vector<float> x) {
  TestCase tc;
  Model& m = tc.model;
  m.opsets = {{"", 17}, {"test.custom", 1}};
  m.graph.name = "custom";
  const int64_t n = static_cast<int64_t>(x.size());
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {n})};
  Node twice = Node::make("Twice", {"x"}, {"t"}, "twice");
  twice.domain = "test.custom";
  m.graph.nodes = {twice, Node::make("Neg", {"t"}, {"y"}, "neg")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {n})};
  tc.inputs = {{"x", Tensor::fromVector<float>({n}, x)}};
  return tc;
}

#ifdef NNCHECK_PC_TABLE_FIXTURE
// A correct engine whose code has a pc-table (tests/backends/pc_table_fixture.h): each run
// reaches one of its four functions, so three are never reached.
struct ReachesOneFixtureFunction : Backend {
  std::string name() const override { return "double:reaches-one-fixture-function"; }
  TensorMap run(const Model& m, const TensorMap& inputs) override {
    pc_table_fixture::reached(static_cast<int>(m.graph.nodes.size()));
    return runReference(m, inputs);
  }
};
#endif

}  // namespace nncheck::testing
