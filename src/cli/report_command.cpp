// nncheck report: the HTML report of a corpus (nncheck/report.h).
#include <iostream>

#include "cli/commands.h"
#include "nncheck/error.h"
#include "nncheck/report.h"

namespace nncheck::cli {

void addReportCommand(CLI::App& app) {
  struct Options {
    std::string corpus = "nncheck-corpus";
    std::string out = "nncheck-report.html";
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page on a corpus: its cases by kind and op, and every case "
      "with its picture, pattern, figures, triage and the command that replays it.");
  cmd->add_option("CORPUS", o->corpus, "the corpus folder")->capture_default_str();
  cmd->add_option("-o,--output", o->out, "the page to write")->capture_default_str();
  cmd->callback([o] {
    try {
      const CampaignReport r = corpusReport(o->corpus);
      writeReport(o->out, r);
      std::cout << "report: " << o->out << " (" << r.failures.size() << " cases)\n";
      setExitCode(0);
    } catch (const Error& e) {
      std::cerr << "nncheck report: error: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

}  // namespace nncheck::cli
