// nncheck corpus list|check|merge: looking after a corpus (nncheck/corpus.h,
// harness/corpus_tools.h) — a table of its cases by root cause, a check that each still loads and
// behaves as recorded, and the merge of several campaigns' corpora (shards, machines) into one.
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/campaign_engines.h"
#include "cli/commands.h"
#include "cli/engines.h"
#include "core/backend_test.h"
#include "core/deadline.h"
#include "harness/corpus_tools.h"
#include "harness/root_cause.h"
#include "nncheck/corpus.h"
#include "nncheck/error.h"

namespace nncheck::cli {
namespace {
namespace fs = std::filesystem;

// The corpus's cases by root cause (harness/root_cause.h), causes in the order of their first
// case, then those that cannot be read.
int list(const std::string& corpus) {
  std::error_code ec;
  if (!fs::is_directory(corpus, ec)) {
    std::cerr << "nncheck corpus list: error: " << corpus << ": no such corpus folder\n";
    return 2;
  }
  const CaseScan scan = scanBackendTestCases(corpus);
  sayLeftOut("corpus list", scan.leftOut);
  std::vector<CorpusCase> cases;
  std::vector<std::string> causes, unreadable;
  for (const fs::path& dir : scan.cases) {
    try {
      cases.push_back(loadCorpusCase(dir));
      causes.push_back(cases.back().kind ? rootCause(cases.back().info, cases.back().testCase.model)
                                         : "no failure recorded");
    } catch (const std::exception& e) {
      unreadable.push_back(printable(dir.lexically_relative(corpus).string()) +
                           " unreadable: " + printable(e.what()));
    }
  }
  // Everything from a case is printed through printable(): a record may hold terminal escape
  // sequences.
  const std::vector<RootCauseGroup> groups = groupByRootCause(causes);
  for (size_t g = 0; g < groups.size(); ++g) {
    const RootCauseGroup& group = groups[g];
    std::printf("%sroot cause %zu: %s (%zu case%s)\n", g ? "\n" : "", g + 1,
                printable(group.rootCause).c_str(), group.members.size(),
                group.members.size() == 1 ? "" : "s");
    std::set<std::string> notes;  // what people wrote about the bug, once each
    for (size_t i : group.members) {
      const FailureInfo& info = cases[i].info;
      if (!info.title.empty() && notes.insert("bug: " + info.title).second)
        std::printf("  bug: %s\n", printable(info.title).c_str());
      if (!info.upstream.empty() && notes.insert("upstream: " + info.upstream).second)
        std::printf("  upstream: %s\n", printable(info.upstream).c_str());
    }
    std::printf("  %-44s %-11s %-22s %5s  %-24s %s\n", "case", "kind", "failed in", "nodes",
                "known", "pattern");
    for (size_t i : group.members) {
      const CorpusCase& c = cases[i];
      std::printf("  %-44s %-11s %-22s %5zu  %-24s %s\n",
                  printable(c.dir.lexically_relative(corpus).string()).c_str(),
                  c.kind ? std::string(outcomeName(*c.kind)).c_str() : "-",
                  c.configuration.empty() ? "-" : printable(c.configuration).c_str(),
                  c.testCase.model.graph.nodes.size(),
                  c.knownFailures.empty()
                      ? "-"
                      : printable(outcomesByConfiguration(c.knownFailures)).c_str(),
                  c.pattern.empty() ? "-" : printable(c.pattern).c_str());
    }
  }
  for (const std::string& line : unreadable) std::printf("%s\n", line.c_str());
  std::printf("%zu cases, %zu root causes", scan.cases.size(), groups.size());
  if (!unreadable.empty()) std::printf(", %zu unreadable", unreadable.size());
  if (!scan.leftOut.empty()) std::printf(", %zu entries left out", scan.leftOut.size());
  std::printf("\n");
  return unreadable.empty() ? 0 : 1;
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
    timeout = timeLimitFromSeconds("--timeout", o.engine.timeout);
    if (!o.withEngine && !o.engine.selection.libraries.empty())
      throw Error("--engine-lib: name the engine to check with --backend");
    if (o.withEngine)
      engines = makeCampaignEngines(o.engine, /*anyOracle=*/o.engine.oracle.empty());
  } catch (const Error& e) {
    std::cerr << "nncheck corpus check: error: " << printable(e.what()) << "\n";
    return 2;
  }
  CorpusCheck r;
  try {
    r = checkCorpus(o.corpus,
                    {.engines = engines.list,
                     .engineName = o.withEngine ? o.engine.selection.backend : "",
                     .baseline = engines.baselineEngine,
                     .oracle = o.engine.oracle,
                     .timeout = timeout,
                     .onCase = [&](const CaseCheck& c) {
                       if (!c.ok || c.unrecorded || o.verbose)
                         std::printf("%-10s %s: %s\n",
                                     !c.ok          ? "CHANGED"
                                     : c.unrecorded ? "UNRECORDED"
                                                    : "ok",
                                     printable(c.dir.lexically_relative(o.corpus).string()).c_str(),
                                     c.detail.empty() ? "loads; the reference computes its "
                                                        "saved outputs"
                                                      : printable(c.detail).c_str());
                     }});
  } catch (const SetUpError& e) {
    return reportSetUpError("corpus check", e, o.engine.selection.backend);
  } catch (const Error& e) {
    std::cerr << "nncheck corpus check: error: " << printable(e.what()) << "\n";
    return 2;
  }
  sayLeftOut("corpus check", r.leftOut);
  std::printf("%zu cases: %d as recorded, %d behave otherwise, %d do not load%s%s\n",
              r.cases.size(), r.ok - r.unrecorded, r.changed, r.broken,
              r.unrecorded ? (", " + std::to_string(r.unrecorded) +
                              " recorded for no configuration given (run on each)")
                                 .c_str()
                           : "",
              o.withEngine ? "" : " (no --backend given: loading and the reference checked)");
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
    std::cerr << "nncheck corpus merge: error: " << printable(e.what()) << "\n";
    return 2;
  }
  sayLeftOut("corpus merge", r.skipped);
  for (const std::string& c : r.conflicts)
    std::cerr << "nncheck corpus merge: conflict: " << printable(c) << "\n";
  std::printf("merged into %s: %d cases copied, %d duplicates left out", o.into.c_str(), r.copied,
              r.duplicates);
  if (r.marked) std::printf(", %d cases took the known-failure marks of a duplicate", r.marked);
  if (!r.skipped.empty()) std::printf(", %zu entries not copied", r.skipped.size());
  if (!r.conflicts.empty()) std::printf(", %zu conflicts left as they are", r.conflicts.size());
  std::printf("\n");
  return r.conflicts.empty() ? 0 : 1;
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
      "(with --backend) the engine's configurations still give the recorded outcomes, judged "
      "by the oracle each case records. Exit 1 when a case differs.");
  k->add_option("CORPUS", c->corpus, "the corpus folder")->capture_default_str();
  addCampaignEngineOptions(k, c->engine, "");  // no engine unless named
  addOracleOption(k, c->engine.oracle, "default: the one each case records");
  k->add_flag("-v,--verbose", c->verbose, "print every case, not only those that differ");
  k->callback([c] {
    c->withEngine = !c->engine.selection.backend.empty() || !c->engine.selection.worker.empty();
    setExitCode(check(*c));
  });

  auto m = std::make_shared<MergeOptions>();
  CLI::App* g = cmd->add_subcommand(
      "merge",
      "Copy the cases of corpora into one, one case per property and minimized pattern; "
      "cases marked as known failures win over unmarked ones, and the case kept takes the "
      "marks of those left out. Only a case's own files are copied, never through a link. "
      "Exit 1 when a case conflicts with the one of the same folder in the target.");
  g->add_option("CORPUS", m->from, "corpora to merge")->required();
  g->add_option("--into", m->into, "the corpus to merge into (made if missing)")->required();
  g->callback([m] { setExitCode(merge(*m)); });
}

}  // namespace nncheck::cli
