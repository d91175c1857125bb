// nncheck report: the HTML report of a corpus (harness/report.h).
#include <iostream>

#include "cli/commands.h"
#include "core/files.h"
#include "harness/report.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/test_case.h"

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
      "with its picture, pattern, figures, triage and the command that replays it. Exit 1 when "
      "a case could not be read (the page is written without it).");
  cmd->add_option("CORPUS", o->corpus, "the corpus folder")->capture_default_str();
  cmd->add_option("-o,--output", o->out, "the page to write")->capture_default_str();
  cmd->callback([o] {
    try {
      checkOutputFile(o->out);  // before the corpus is read and drawn
      const CampaignReport r = corpusReport(o->corpus);
      writeReport(o->out, r);
      sayLeftOut("report", r.leftOut);
      for (const std::string& why : r.unreadable)
        std::cerr << "nncheck report: unreadable, left out: " << printable(why) << "\n";
      std::cout << "report: " << o->out << " (" << r.failures.size() << " cases";
      if (!r.unreadable.empty()) std::cout << "; " << r.unreadable.size() << " unreadable";
      std::cout << ")\n";
      setExitCode(r.unreadable.empty() ? 0 : 1);
    } catch (const Error& e) {
      std::cerr << "nncheck report: error: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

}  // namespace nncheck::cli
