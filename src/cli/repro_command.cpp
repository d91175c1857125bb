// nncheck repro CASE: a saved failure as an upstream report (harness/reproducer.h) — a standalone
// script in the engine's own language and an issue draft, written beside the case (or into -o),
// after running the case on every configuration of the engine now (or where it was found alone:
// --no-triage).
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/engines.h"
#include "core/backend_test.h"
#include "core/deadline.h"
#include "core/files.h"
#include "core/shell_words.h"
#include "harness/conformance.h"
#include "harness/corpus_store.h"
#include "harness/probe.h"
#include "harness/reproducer.h"
#include "nncheck/corpus.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/isolation.h"
#include "nncheck/onnx_io.h"
#include "render/picture.h"

namespace nncheck::cli {
namespace {

namespace fs = std::filesystem;

struct ReproOptions {
  std::string caseDir;
  EngineSelection engine;
  std::string config;  // default: the configuration the case failed in
  std::string out;     // default: the case's folder
  double timeout = 60;
  bool noTriage = false;  // run the case at the reproducing configuration alone
};

// "Debian GNU/Linux 12 (bookworm), Linux 6.1.0 x86_64".
std::string operatingSystem() {
  std::string name = "Linux";
  std::ifstream release("/etc/os-release");
  for (std::string line; std::getline(release, line);)
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      name = line.substr(12);
      if (name.size() >= 2 && name.front() == '"') name = name.substr(1, name.size() - 2);
    }
  struct utsname u {};
  if (::uname(&u) == 0) name += std::string(", ") + u.sysname + " " + u.release + " " + u.machine;
  return name;
}

// The engine the case ran on, as --backend names it: a campaign's from its property, else the
// first word of the name the engine gave itself ("ort (level=basic,threads=1)").
std::string engineOf(const CorpusCase& c) {
  if (std::string e = campaignEngine(c.property); !e.empty()) return e;
  return c.backend.substr(0, c.backend.find(' '));
}

int repro(ReproOptions o) {
  const fs::path dir = o.caseDir;
  Reproduction r;
  ActualResult actual;
  try {
    r.saved = loadCorpusCase(dir);
    if (!r.saved.kind)
      throw Error(dir.string() + ": no nncheck.json: a reproducer needs a recorded failure");
    if (o.engine.backend.empty()) o.engine.backend = engineOf(r.saved);
    if (o.engine.backend.empty() || o.engine.backend == "reference")
      throw Error(dir.string() + ": the record names no engine; say which with --backend");
    const TestDataSet data = loadTestDataSet(r.saved.testCase.model, testDataSetDirs(dir).at(0));
    r.expected = data.outputs;
    r.engine = o.engine.backend;
    const std::vector<std::string> configurations = engineConfigurations(o.engine);
    const EngineInfo& info = engines().at(r.engine);
    r.baseline = info.baseline;
    r.sharedStage = info.sharedStage ? info.sharedStage() : "";
    if (!info.reproducer) throw Error(r.engine + " writes no standalone reproducer");
    const std::string recorded = info.key ? info.key(r.saved.configuration) : r.saved.configuration;
    // Every configuration now, judged against the saved outputs (as `nncheck run` does).
    const auto limit = timeLimitFromSeconds("--timeout", o.timeout);
    ConformanceOptions judged;
    judged.tolerance = r.saved.info.tolerance;
    const std::string chosen = o.config.empty() ? "" : info.key ? info.key(o.config) : o.config;
    std::vector<std::string> all;
    if (o.noTriage) {
      all = {chosen.empty() ? recorded : chosen};
    } else {
      all = configurations;
      if (std::find(all.begin(), all.end(), recorded) == all.end()) all.push_back(recorded);
      if (!chosen.empty() && std::find(all.begin(), all.end(), chosen) == all.end())
        all.push_back(chosen);
    }
    r.triaged = !o.noTriage;
    std::map<std::string, CaseResult> results;
    for (const std::string& configuration : all) {
      std::unique_ptr<Backend> engine = makeEngine(o.engine, configuration);
      const Isolated isolated(*engine, limit);
      checkEngineSetUp(isolated);
      judged.engine = &isolated;
      results[configuration] = runTestCase(dir, judged);
      r.triage[configuration] = results[configuration].outcome;
    }
    // Reproduced where the engine optimizes least and still fails, which is what its maintainers
    // look at first; else where it was found.
    r.found = recorded;
    r.configuration = recorded;
    if (!chosen.empty())
      r.configuration = chosen;
    else if (const auto b = r.triage.find(info.baseline);
             !info.baseline.empty() && b != r.triage.end() && isFailure(b->second))
      r.configuration = info.baseline;
    std::optional<ReproducerRecipe> recipe =
        info.reproducer(r.configuration, r.saved.testCase.model);
    if (!recipe)
      throw Error(r.engine + " writes no standalone reproducer at its configuration " +
                  r.configuration);
    r.recipe = std::move(*recipe);
    // The case as it was named: a corpus in a repository is named from its root.
    r.command = "nncheck repro " + shellQuote(dir.lexically_normal().string()) + " --backend " +
                shellQuote(r.engine) +
                (o.config.empty() ? "" : " --config " + shellQuote(r.configuration));
    const CaseResult& result = results.at(r.configuration);
    actual.outcome = result.outcome;
    actual.outputs = result.outputs;
    actual.message = result.message;
  } catch (const SetUpError& e) {
    return reportSetUpError("repro", e, o.engine.backend);
  } catch (const std::exception& e) {
    std::cerr << "nncheck repro: error: " << printable(e.what()) << "\n";
    return 2;
  }
  const fs::path out = o.out.empty() ? dir : fs::path(o.out);
  const std::string script = reproducerFileName(r.recipe);
  try {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) throw Error(out.string() + ": cannot make the folder: " + ec.message());
    writeFileAtomic(out / script, reproducerScript(r));
    fs::permissions(out / script, fs::perms::owner_exec | fs::perms::group_exec,
                    fs::perm_options::add, ec);
    writeFileAtomic(out / "issue.md", issueDraft(r, actual, operatingSystem()));
    if (!fs::equivalent(out, dir, ec))
      writeFileAtomic(out / "model.onnx", serializeModel(r.saved.testCase.model));
    if (!fs::exists(out / "model.svg", ec)) try {  // the picture the draft shows
        writeFileAtomic(out / "model.svg", drawModel(r.saved.testCase.model, PictureFormat::Svg,
                                                     drawOptionsFor(r.saved)));
      } catch (const Error&) {  // a model Graphviz cannot draw goes without
      }
  } catch (const std::exception& e) {
    std::cerr << "nncheck repro: error: " << printable(e.what())
              << " (-o DIR writes the reproducer elsewhere)\n";
    return 1;
  }
  std::printf("%s\n", printable(issueTitle(r)).c_str());
  std::printf("  at %s, now: %s\n", printable(r.configuration).c_str(),
              std::string(outcomeName(actual.outcome)).c_str());
  std::printf("  reproducer: %s\n", printable((out / script).string()).c_str());
  std::printf("  issue draft: %s\n", printable((out / "issue.md").string()).c_str());
  std::printf("  run it: cd %s && %s   (needs: %s)\n", printable(shellQuote(out.string())).c_str(),
              printable(reproducerRunLine(r.recipe)).c_str(),
              printable(r.recipe.requirements).c_str());
  if (actual.outcome == Outcome::Pass)
    std::printf("  the case passes at %s now: the bug may be fixed\n",
                printable(r.configuration).c_str());
  return 0;
}

}  // namespace

void addReproCommand(CLI::App& app) {
  auto o = std::make_shared<ReproOptions>();
  CLI::App* cmd = app.add_subcommand(
      "repro",
      "Write a standalone reproducer (a script in the engine's own language using only the "
      "engine and the case's model.onnx, exiting 1 while the bug is there) and an issue draft "
      "(issue.md) for a saved failure, after running it on every configuration of the engine.");
  cmd->add_option("CASE", o->caseDir, "the saved case's folder")->required();
  addEngineSelection(cmd, o->engine, "");
  cmd->add_option("--config", o->config,
                  "the configuration to reproduce at (default: the one the case failed in)");
  cmd->add_option("-o,--out", o->out,
                  "the folder to write into (default: the case's own; elsewhere, model.onnx and "
                  "model.svg are written too)");
  cmd->add_option("--timeout", o->timeout, "seconds per engine run before it counts as a hang")
      ->capture_default_str();
  cmd->add_flag("--no-triage", o->noTriage,
                "run the case at the configuration it reproduces at alone, not at every "
                "configuration (quicker for an engine that compiles slowly; the draft then says "
                "nothing of where it passes)");
  cmd->callback([o] { setExitCode(repro(*o)); });
}

}  // namespace nncheck::cli
