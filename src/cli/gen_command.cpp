// nncheck gen: random valid models, written in ONNX backend-test layout with random inputs and
// the reference's outputs, so that `nncheck run` replays them.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/generation_options.h"
#include "core/backend_test.h"
#include "core/files.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/test_case.h"
#include "nncheck/validity.h"
#include "nncheck/value_search.h"

namespace nncheck::cli {
namespace {

namespace fs = std::filesystem;

struct GenOptions {
  uint64_t seed = 1;
  int count = 10;
  GeneratorConfig cfg;
  std::string ops, denyOps;
  GenerationOptions generation;
  std::string out;
  bool stats = false;
  bool check = false;
};

struct Stats {
  std::map<std::string, int> ops;
  std::map<std::pair<std::string, std::string>, int> pairs;
  std::set<std::array<std::string, 3>> chains;  // a -> b -> c: distinct op triples
  std::map<int64_t, int> ranks;
  std::map<std::string, int> dtypes;
  GenerationStats gen;
  double seconds = 0;
  int models = 0, invalid = 0;
  int nested = 0;                     // models with control flow (If, Loop, Scan)
  int withConstants = 0;              // models with a constant subexpression
  std::map<std::string, int> blocks;  // models containing each block of the prior
  // Values: models with a NaN, infinity or out-of-domain value on random inputs (before) and on
  // the values the case comes with, searched (after); time spent on values per model.
  int brokenBefore = 0, brokenAfter = 0;
  std::vector<double> valueSeconds;

  void addValues(const TestCase& tc, bool searched, double seconds) {
    const ValueSearchOptions checkOnly{.maxSteps = 0, .restarts = 0};
    TestCase raw = tc;
    raw.inputs = randomInputs(tc.model, tc.seed);
    brokenBefore += !searchValues(raw, checkOnly).finite;
    TestCase after = tc;
    if (!searched) {
      ValueSearchResult r = searchValues(after);
      seconds = r.seconds;
    }
    brokenAfter += !searchValues(after, checkOnly).finite;
    valueSeconds.push_back(seconds);
  }

  void add(const Model& m) {
    ++models;
    for (const Node& n : m.graph.nodes) ++ops[n.opType];
    nested += std::any_of(m.graph.nodes.begin(), m.graph.nodes.end(),
                          [](const Node& n) { return !n.subgraphs().empty(); });
    const AimedPatterns aimed = aimedPatternsIn(m);
    withConstants += aimed.constantNodes > 0;
    for (const std::string& b : aimed.blocks) ++blocks[b];
    std::map<std::string, const Node*> made;  // value -> the node computing it
    for (const Node& n : m.graph.nodes)
      for (const auto& o : n.outputs) made[o] = &n;
    for (const Node& n : m.graph.nodes)
      for (const auto& in : n.inputs) {
        auto b = made.find(in);
        if (b == made.end()) continue;
        ++pairs[{b->second->opType, n.opType}];
        for (const auto& in2 : b->second->inputs)
          if (auto a = made.find(in2); a != made.end())
            chains.insert({a->second->opType, b->second->opType, n.opType});
      }
    for (const auto* list : {&m.graph.inputs, &m.graph.outputs})
      for (const ValueInfo& v : *list) {
        ++ranks[v.dims ? static_cast<int64_t>(v.dims->size()) : -1];
        ++dtypes[std::string(dtypeName(v.dtype))];
      }
  }

  void print(int usable) const {
    std::printf("\n%d models in %.3f s: %.1f models/s (generation only)\n", models, seconds,
                seconds > 0 ? models / seconds : 0.0);
    std::printf("z3: %.3f checks and %.3f contexts per model; %lld insertions solved by z3\n",
                models ? static_cast<double>(gen.z3Checks) / models : 0.0,
                models ? static_cast<double>(gen.z3Contexts) / models : 0.0,
                static_cast<long long>(gen.solvedInsertions));
    if (!gen.z3ChecksByOp.empty()) {
      std::vector<std::pair<int64_t, std::string>> byOp;
      for (const auto& [op, n] : gen.z3ChecksByOp) byOp.push_back({-n, op});
      std::sort(byOp.begin(), byOp.end());
      std::printf("z3 checks by op:");
      for (size_t i = 0; i < byOp.size() && i < 12; ++i)
        std::printf(" %s %lld", byOp[i].second.c_str(), static_cast<long long>(-byOp[i].first));
      std::printf("\n");
    }
    std::printf("candidates: %lld tried, %lld rejected by shape rules or limits\n",
                static_cast<long long>(gen.attempts), static_cast<long long>(gen.rejected));
    std::printf("\nops used: %zu of the %d usable under this config\n", ops.size(), usable);
    for (const auto& [op, n] : ops) std::printf("  %-24s %6d\n", op.c_str(), n);
    std::printf("models with nested graphs (If, Loop, Scan): %d of %d\n", nested, models);
    // Per 10,000 models, so that runs of any --count compare.
    const auto per10k = [&](int n) { return models ? 1e4 * n / models : 0.0; };
    std::printf(
        "\nper 10,000 models: %.0f with a constant subexpression; with each block of the "
        "prior:\n",
        per10k(withConstants));
    for (const std::string& b : blockNames()) {
      auto it = blocks.find(b);
      std::printf("  %-28s %7.0f\n", b.c_str(), per10k(it == blocks.end() ? 0 : it->second));
    }
    // The diversity figure: compare generators at --count 10000.
    std::printf("\ndiversity: %zu distinct op pairs, %zu distinct three-node chains in %d models\n",
                pairs.size(), chains.size(), models);
    std::printf("\nop pairs (producer -> consumer): %zu distinct; most frequent:\n", pairs.size());
    std::vector<std::pair<int, std::pair<std::string, std::string>>> sorted;
    for (const auto& [p, n] : pairs) sorted.push_back({-n, p});
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size() && i < 15; ++i)
      std::printf("  %-20s -> %-20s %6d\n", sorted[i].second.first.c_str(),
                  sorted[i].second.second.c_str(), -sorted[i].first);
    std::printf("\nranks of graph inputs and outputs:");
    for (const auto& [r, n] : ranks) std::printf("  %lld: %d", static_cast<long long>(r), n);
    std::printf("\ndtypes of graph inputs and outputs:");
    for (const auto& [d, n] : dtypes) std::printf("  %s: %d", d.c_str(), n);
    std::printf("\n");
    if (invalid >= 0) std::printf("invalid models (--check): %d\n", invalid);
    if (valueSeconds.empty()) return;
    std::vector<double> t = valueSeconds;
    std::sort(t.begin(), t.end());
    std::printf(
        "\nvalues: models with NaN, Inf or values outside their ops' domains: %d of %d on random "
        "inputs, %d after search\n",
        brokenBefore, models, brokenAfter);
    std::printf("value search: %.3f ms median, %.3f ms p95 per model", 1e3 * t[t.size() / 2],
                1e3 * t[std::min(t.size() - 1, t.size() * 95 / 100)]);
    if (gen.valueSearches > 0)
      std::printf(" (while growing: %lld searches, %lld nodes taken back)",
                  static_cast<long long>(gen.valueSearches),
                  static_cast<long long>(gen.valueRejected));
    std::printf("\n");
  }
};

void writeCase(const fs::path& dir, const TestCase& tc) {
  saveBackendTestCase(dir, tc.model, tc.inputs, runReference(tc.model, tc.inputs));
}

int run(GenOptions o) {
  try {
    o.cfg.ops = splitList(o.ops);
    o.cfg.denyOps = splitList(o.denyOps);
    applyGenerationOptions(o.generation, o.cfg);
  } catch (const std::exception& e) {
    std::cerr << "nncheck gen: error: " << e.what() << "\n";
    return 2;
  }
  if (o.count < 1) {
    std::cerr << "nncheck gen: error: --count must be at least 1\n";
    return 2;
  }
  Stats stats;
  stats.invalid = o.check ? 0 : -1;
  auto lastReport = std::chrono::steady_clock::now();
  // Progress: a line rewritten in place on a terminal; elsewhere (a log, CI) a line every 10 s.
  const bool tty = ::isatty(STDERR_FILENO);
  const auto every = std::chrono::seconds(tty ? 1 : 10);
  bool progressShown = false;
  // Each case is written whole, and all of them are made durable once at the end: a sync per
  // file cost more than generating the case.
  std::optional<BulkWrite> bulk;
  if (!o.out.empty()) bulk.emplace(o.out);
  for (int i = 0; i < o.count; ++i) {
    const uint64_t seed = o.seed + static_cast<uint64_t>(i);
    try {
      auto t0 = std::chrono::steady_clock::now();
      const double valuesBefore = stats.gen.valueSeconds;
      const TestCase tc = makeTestCase(o.cfg, seed, &stats.gen);
      const Model& m = tc.model;
      stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      stats.add(m);
      if (o.stats) stats.addValues(tc, o.cfg.finiteValues, stats.gen.valueSeconds - valuesBefore);
      if (o.check)
        if (auto why = whyInvalid(m)) {
          ++stats.invalid;
          std::cerr << "invalid model for seed " << seed << ": " << *why << "\n";
        }
      if (!o.out.empty()) writeCase(fs::path(o.out) / ("seed_" + std::to_string(seed)), tc);
    } catch (const std::exception& e) {
      std::cerr << "nncheck gen: error at seed " << seed << ": " << e.what() << "\n";
      return 1;
    }
    auto now = std::chrono::steady_clock::now();
    if (now - lastReport > every) {
      std::cerr << (tty ? "\r" : "") << "generated " << (i + 1) << "/" << o.count
                << (tty ? "" : "\n") << std::flush;
      progressShown = tty;
      lastReport = now;
    }
  }
  if (progressShown) std::cerr << "\r\033[K" << std::flush;  // the terminal's line cleared
  if (bulk) try {
      bulk->commit();
    } catch (const std::exception& e) {
      std::cerr << "nncheck gen: error: " << e.what() << "\n";
      return 1;
    }
  if (!o.out.empty())
    std::printf("wrote %d cases to %s (replay: nncheck run %s)\n", o.count, o.out.c_str(),
                o.out.c_str());
  if (o.stats) stats.print(static_cast<int>(usableOps(o.cfg).size()));
  return stats.invalid > 0 ? 1 : 0;
}

}  // namespace

void addGenCommand(CLI::App& app) {
  auto o = std::make_shared<GenOptions>();
  CLI::App* cmd =
      app.add_subcommand("gen",
                         "Generate random valid models (model i uses seed S+i) and, with --out, "
                         "write each with random "
                         "inputs and the reference's outputs in ONNX backend-test layout.");
  cmd->add_option("--seed", o->seed, "seed of the first model")->capture_default_str();
  cmd->add_option("--count", o->count, "number of models")->capture_default_str();
  cmd->add_option("--nodes", o->cfg.nodes, "nodes per model")->capture_default_str();
  cmd->add_option("--ops", o->ops, "comma-separated ops to use (default: all registered)");
  cmd->add_option("--deny-ops", o->denyOps, "comma-separated ops never to use");
  addGenerationOptions(cmd, o->generation);
  cmd->add_option("--opset", o->cfg.opset, "ONNX opset, 13..17")->capture_default_str();
  cmd->add_option("--max-dim", o->cfg.maxDim, "largest dim of a graph input")
      ->capture_default_str();
  cmd->add_option("--max-rank", o->cfg.maxRank, "largest rank of any tensor")
      ->capture_default_str();
  cmd->add_option("--max-elements", o->cfg.maxElements, "largest element count of any tensor")
      ->capture_default_str();
  cmd->add_flag(
      "--no-solver", [o](int64_t) { o->cfg.useSolver = false; }, "never call z3");
  cmd->add_option("--solver-share", o->cfg.solverShare,
                  "chance that z3 solves an op whose concrete draws failed")
      ->capture_default_str();
  cmd->add_flag(
      "--no-finite-values", [o](int64_t) { o->cfg.finiteValues = false; },
      "grow models without looking at values (random inputs; NaN/Inf possible)");
  cmd->add_option("--out", o->out, "folder to write the cases into");
  cmd->add_flag("--stats", o->stats,
                "print op, op-pair, rank and dtype counts, models per second, and models with "
                "NaN/Inf before and after value search");
  cmd->add_flag("--check", o->check, "check every model with the validity check (slower)");
  cmd->callback([o] { setExitCode(run(*o)); });
}

}  // namespace nncheck::cli
