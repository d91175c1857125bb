#include "cli/campaign_engines.h"

#include <algorithm>
#include <cstdio>

#include "core/shell_words.h"
#include "harness/corpus_store.h"
#include "harness/culprit.h"
#include "harness/root_cause.h"
#include "nncheck/corpus.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/oracle.h"

namespace nncheck::cli {

CampaignEngines makeCampaignEngines(const CampaignEngineOptions& o, bool anyOracle) {
  CampaignEngines e;
  // (Loads the engine libraries first, whose oracles --oracle may name.)
  std::vector<std::string> configs = engineConfigurations(o.selection);
  if (!o.configs.empty()) configs = o.configs;
  if (configs.empty()) configs = {""};
  bool needsBaseline = anyOracle;
  if (!o.oracle.empty()) {
    try {
      needsBaseline = oracles().at(o.oracle).needsBaseline;
    } catch (const Error& e) {
      throw Error(std::string("--oracle ") + e.what());
    }
  }
  const EngineInfo& info = engines().at(o.selection.backend);
  if (needsBaseline && !info.baseline.empty()) {
    const std::string base = engines().key(o.selection.backend, info.baseline);
    e.owned.push_back(makeEngine(o.selection, base));
    e.baselineEngine = {base, e.owned.back().get()};
    // The baseline against itself tests nothing.
    auto isBase = [&](const std::string& c) {
      return engines().key(o.selection.backend, c) == base;
    };
    if (!o.configs.empty() && !o.oracle.empty() &&
        std::any_of(configs.begin(), configs.end(), isBase))
      throw Error("--config " + base + ": the baseline configuration, which --oracle " + o.oracle +
                  " compares every configuration with");
    if (!anyOracle) std::erase_if(configs, isBase);
  } else if (needsBaseline && !o.oracle.empty()) {
    throw Error("--oracle " + o.oracle + ": engine '" + o.selection.backend +
                "' names no baseline configuration to compare with");
  }
  if (configs.empty())
    throw Error("--oracle " + o.oracle + ": engine '" + o.selection.backend +
                "' has no configuration but its baseline to compare with it");
  for (std::string& c : configs) {
    e.owned.push_back(makeEngine(o.selection, c));
    c = engines().key(o.selection.backend, c);  // as the corpus and the baseline name it
    e.list.push_back({c.empty() ? o.selection.backend : c, e.owned.back().get()});
  }
  if (std::find(configs.begin(), configs.end(), info.baseline) != configs.end())
    e.baseline = info.baseline;
  if (info.sharedStage) e.sharedStage = info.sharedStage();
  if (info.withDisabled) {
    e.without.configuration = info.withDisabled;
    e.without.make = [selection = o.selection](const std::string& config) {
      return makeEngine(selection, config);
    };
  }
  return e;
}

void addOracleOption(CLI::App* cmd, std::string& oracle, const std::string& help) {
  std::string names;
  for (const std::string& n : oracles().names()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("--oracle", oracle,
                  "what cases are judged against (" + names +
                      "; `nncheck oracles` describes them, --engine-lib loads more); " + help);
}

void addCampaignEngineOptions(CLI::App* cmd, CampaignEngineOptions& o,
                              const std::string& defaultBackend) {
  addEngineSelection(cmd, o.selection, defaultBackend);
  cmd->add_option(
         "--config", o.configs,
         "engine configuration, repeatable (e.g. opencv: fusion=on|off,target=cpu|opencl); "
         "fuzz runs cases on each in turn, reduce on the first; every one triages each "
         "failure; default: all this machine has")
      ->allow_extra_args(false);  // one value each time: the case after it stays positional
  cmd->add_option("--timeout", o.timeout, "seconds per engine run before it counts as a hang")
      ->capture_default_str();
}

void printFinding(size_t i, const Finding& f, const CampaignEngines& engines) {
  // Everything here may come from a model or a corpus (names, messages, paths): printed through
  // printable(), so that terminal escapes in them reach no terminal.
  auto p = [](const std::string& text) { return printable(text); };
  std::printf("%3zu  %-8s %3d -> %-3d %5d  %s\n", i + 1,
              std::string(outcomeName(f.info.kind)).c_str(), f.info.nodesBefore, f.info.nodesAfter,
              f.hits, p(f.info.pattern).c_str());
  if (f.info.casesRun > 0)  // (reduce is given its case)
    std::printf("       found after %lld cases, %.1f s\n", static_cast<long long>(f.info.casesRun),
                f.info.secondsRun);
  const std::string diverging = f.info.divergence ? f.info.divergence->describe() : "";
  if (!diverging.empty())
    std::printf("       first diverging node: %s\n",
                p(diverging.substr(0, diverging.find('\n'))).c_str());
  std::printf("       configurations: %s\n", p(outcomesByConfiguration(f.info.triage)).c_str());
  if (f.timeBoxEnded)
    std::printf(
        "       the time box ended before its triage or its culprit search: "
        "`nncheck reduce` finishes them\n");
  if (const auto& c = f.info.culprit) {
    std::printf("       culprit: %s\n", p(describeCulprit(*c)).c_str());
    if (c->workaroundPasses && !c->workaround.empty())
      std::printf("       workaround: --config %s\n", p(shellQuote(c->workaround)).c_str());
  }
  if (const std::string stage = faultStage(f.info.triage, engines.baseline, engines.sharedStage);
      !stage.empty())
    std::printf("       %s\n", p(stage).c_str());
  if (f.fromCorpus)
    std::printf("       already in the corpus%s%s\n", f.dir.empty() ? "" : ": ",
                p(f.dir.string()).c_str());
  else if (!f.dir.empty())
    std::printf("       saved: %s\n", p(f.dir.string()).c_str());
  if (!f.dir.empty()) {
    CorpusCase saved = corpusRecord(f.minimized, f.info);
    saved.dir = f.dir;
    std::printf("       replay: %s\n", p(replayCommand(saved)).c_str());
  }
}

}  // namespace nncheck::cli
