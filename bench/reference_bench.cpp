// Reference interpreter speed: replaying ONNX's node suite, and single heavy kernels.
//   ./build/bench/reference_bench
#include <benchmark/benchmark.h>

#include "harness/conformance.h"
#include "nncheck/reference.h"

namespace {

using namespace nncheck;

void BM_NodeSuiteReplay(benchmark::State& state) {
  auto dir = defaultNodeTestDir();
  if (dir.empty()) {
    state.SkipWithError("libonnx-testdata is not installed");
    return;
  }
  int cases = 0;
  for (auto _ : state) {
    ConformanceReport r = runConformance({dir});
    cases = r.passed + r.failed + r.skipped;
    benchmark::DoNotOptimize(r.passed);
  }
  state.counters["cases/s"] =
      benchmark::Counter(cases, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_NodeSuiteReplay)->Unit(benchmark::kMillisecond);

Model singleNode(const std::string& op, std::vector<ValueInfo> inputs, ValueInfo output,
                 std::vector<Attribute> attrs = {}) {
  Model m;
  m.opsets = {{"", 14}};
  m.graph.name = "bench";
  std::vector<std::string> names;
  for (const auto& v : inputs) names.push_back(v.name);
  Node n = Node::make(op, names, {output.name});
  n.attributes = std::move(attrs);
  m.graph.nodes.push_back(n);
  m.graph.inputs = std::move(inputs);
  m.graph.outputs = {std::move(output)};
  return m;
}

void BM_Conv2d(benchmark::State& state) {
  const int64_t c = state.range(0);
  Model m = singleNode("Conv",
                       {ValueInfo::tensor("x", DType::Float32, {1, c, 32, 32}),
                        ValueInfo::tensor("w", DType::Float32, {c, c, 3, 3})},
                       ValueInfo::tensor("y", DType::Float32, {1, c, 32, 32}),
                       {Attribute::ofInts("pads", {1, 1, 1, 1})});
  TensorMap in{{"x", Tensor(DType::Float32, {1, c, 32, 32})},
               {"w", Tensor(DType::Float32, {c, c, 3, 3})}};
  for (auto _ : state) benchmark::DoNotOptimize(runReference(m, in));
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(c * c * 9 * 32 * 32),
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Conv2d)->Arg(8)->Arg(16)->Unit(benchmark::kMicrosecond);

void BM_MatMul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Model m = singleNode("MatMul",
                       {ValueInfo::tensor("a", DType::Float32, {n, n}),
                        ValueInfo::tensor("b", DType::Float32, {n, n})},
                       ValueInfo::tensor("y", DType::Float32, {n, n}));
  TensorMap in{{"a", Tensor(DType::Float32, {n, n})}, {"b", Tensor(DType::Float32, {n, n})}};
  for (auto _ : state) benchmark::DoNotOptimize(runReference(m, in));
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(n * n * n),
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMul)->Arg(64)->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
