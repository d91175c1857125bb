// nncheck corpus list|check|merge: looking after a corpus (nncheck/corpus.h,
// nncheck/corpus_tools.h) — a table of its cases, a check that each still loads and behaves as
// recorded, and the merge of several campaigns' corpora (shards, machines) into one.
#include <cstdio>
#include <iostream>

#include "cli/campaign_engines.h"
#include "cli/commands.h"
#include "nncheck/corpus.h"
#include "nncheck/corpus_tools.h"
#include "nncheck/error.h"

namespace nncheck::cli {
namespace {
namespace fs = std::filesystem;

int list(const std::string& corpus) {
  std::error_code ec;
  if (!fs::is_directory(corpus, ec)) {
    std::cerr << "nncheck corpus list: error: " << corpus << ": no such corpus folder\n";
    return 2;
  }
  const std::vector<fs::path> dirs = corpusCaseDirs(corpus);
  std::printf("%-44s %-11s %-22s %5s  %-24s %s\n", "case", "kind", "failed in", "nodes", "known",
              "pattern");
  int unreadable = 0;
  for (const fs::path& dir : dirs) {
    const std::string name = dir.lexically_relative(corpus).string();
    try {
      const CorpusCase c = loadCorpusCase(dir);
      std::printf("%-44s %-11s %-22s %5zu  %-24s %s\n", name.c_str(),
                  c.kind ? std::string(outcomeName(*c.kind)).c_str() : "-",
                  c.configuration.empty() ? "-" : c.configuration.c_str(),
                  c.testCase.model.graph.nodes.size(),
                  c.knownFailures.empty() ? "-" : outcomesByConfiguration(c.knownFailures).c_str(),
                  c.pattern.empty() ? "-" : c.pattern.c_str());
    } catch (const std::exception& e) {
      ++unreadable;
      std::printf("%-44s unreadable: %s\n", name.c_str(), e.what());
    }
  }
  std::printf("%zu cases", dirs.size());
  if (unreadable) std::printf(", %d unreadable", unreadable);
  std::printf("\n");
  return unreadable ? 1 : 0;
}

struct CheckOptions {
  std::string corpus = "nncheck-corpus";
  CampaignEngineOptions engine;
  bool withEngine = false;
  bool verbose = false;
};

int check(const CheckOptions& o) {
  CampaignEngines engines;
  std::chrono::milliseconds timeout;
  try {
    timeout = secondsOption("--timeout", o.engine.timeout);
    if (o.withEngine) engines = makeCampaignEngines(o.engine);
  } catch (const Error& e) {
    std::cerr << "nncheck corpus check: error: " << e.what() << "\n";
    return 2;
  }
  CorpusCheck r;
  try {
    r = checkCorpus(o.corpus, engines.list, o.withEngine ? o.engine.selection.backend : "", timeout,
                    [&](const CaseCheck& c) {
                      if (!c.ok || o.verbose)
                        std::printf("%-8s %s: %s\n", c.ok ? "ok" : "CHANGED",
                                    c.dir.lexically_relative(o.corpus).c_str(),
                                    c.detail.empty() ? "loads; the reference computes its "
                                                       "saved outputs"
                                                     : c.detail.c_str());
                    });
  } catch (const Error& e) {
    std::cerr << "nncheck corpus check: error: " << e.what() << "\n";
    return 2;
  }
  std::printf("%zu cases: %d as recorded, %d behave otherwise, %d do not load%s\n", r.cases.size(),
              r.ok, r.changed, r.broken,
              o.withEngine ? "" : " (no engine given: loading and the reference checked)");
  return r.changed + r.broken > 0 ? 1 : 0;
}

struct MergeOptions {
  std::vector<std::string> from;
  std::string into;
};

int merge(const MergeOptions& o) {
  std::vector<fs::path> from(o.from.begin(), o.from.end());
  MergeResult r;
  try {
    r = mergeCorpora(from, o.into);
  } catch (const Error& e) {
    std::cerr << "nncheck corpus merge: error: " << e.what() << "\n";
    return 2;
  }
  std::printf("merged into %s: %d cases copied, %d duplicates left out", o.into.c_str(), r.copied,
              r.duplicates);
  if (r.marked) std::printf(", %d cases took the known-failure marks of a duplicate", r.marked);
  std::printf("\n");
  return 0;
}

}  // namespace

void addCorpusCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "corpus", "Look after a corpus: list its cases, check them, merge corpora into one.");
  cmd->require_subcommand(1);

  auto listCorpus = std::make_shared<std::string>("nncheck-corpus");
  CLI::App* l = cmd->add_subcommand("list", "A table of the corpus's cases.");
  l->add_option("CORPUS", *listCorpus, "the corpus folder")->capture_default_str();
  l->callback([listCorpus] { setExitCode(list(*listCorpus)); });

  auto c = std::make_shared<CheckOptions>();
  CLI::App* k = cmd->add_subcommand(
      "check",
      "Check that every case still loads, the reference still computes its saved outputs, and "
      "(with --backend) the engine's configurations still give the recorded outcomes. Exit 1 "
      "when a case differs.");
  k->add_option("CORPUS", c->corpus, "the corpus folder")->capture_default_str();
  addCampaignEngineOptions(k, c->engine);
  k->add_flag("-v,--verbose", c->verbose, "print every case, not only those that differ");
  k->callback([c, k] {
    c->withEngine =
        k->get_option("--backend")->count() > 0 || k->get_option("--engine-lib")->count() > 0;
    setExitCode(check(*c));
  });

  auto m = std::make_shared<MergeOptions>();
  CLI::App* g = cmd->add_subcommand(
      "merge",
      "Copy the cases of corpora into one, one case per property and minimized pattern; "
      "cases marked as known failures win over unmarked ones, and the case kept takes the "
      "marks of those left out.");
  g->add_option("CORPUS", m->from, "corpora to merge")->required();
  g->add_option("--into", m->into, "the corpus to merge into (made if missing)")->required();
  g->callback([m] { setExitCode(merge(*m)); });
}

}  // namespace nncheck::cli
