#include "cli/root_causes.h"

#include <cstdio>

#include "cli/campaign_engines.h"
#include "cli/engines.h"
#include "core/shell_words.h"
#include "harness/root_cause.h"

namespace nncheck::cli {

void printFindingsByRootCause(const std::vector<Finding>& findings,
                              const CampaignEngines& engines) {
  std::vector<std::string> causes;
  for (const Finding& f : findings) causes.push_back(rootCause(f.info, f.minimized.model));
  const std::vector<RootCauseGroup> groups = groupByRootCause(causes);
  enum Status { New, Seen, Known };
  auto statusOf = [&](const RootCauseGroup& g) {
    Status s = Seen;
    for (size_t i : g.members) {
      if (findings[i].known) return Known;
      if (!findings[i].fromCorpus) s = New;
    }
    return s;
  };
  int count[3] = {0, 0, 0};
  for (const RootCauseGroup& g : groups) ++count[statusOf(g)];
  std::printf("root causes: %zu (%d new, %d in the corpus before, %d known bugs)\n", groups.size(),
              count[New], count[Seen], count[Known]);
  auto hitsOf = [&](const RootCauseGroup& g) {
    int hits = 0;
    for (size_t i : g.members) hits += findings[i].hits;
    return hits;
  };
  if (count[Known]) std::printf("\nknown bugs (not saved):\n");
  for (const RootCauseGroup& g : groups) {
    if (statusOf(g) != Known) continue;
    const KnownBug* bug = nullptr;
    for (size_t i : g.members)
      if (findings[i].known) bug = &*findings[i].known;
    std::printf("  %s: %zu pattern%s, %d hits; known as %s%s%s%s%s\n",
                printable(g.rootCause).c_str(), g.members.size(), g.members.size() == 1 ? "" : "s",
                hitsOf(g), printable(bug->dir.string()).c_str(), bug->title.empty() ? "" : ", ",
                printable(bug->title).c_str(),
                bug->upstream.empty() ? "" : ", upstream: ", printable(bug->upstream).c_str());
  }
  for (Status status : {Seen, New}) {
    int n = 0;
    for (const RootCauseGroup& g : groups) {
      if (statusOf(g) != status) continue;
      std::printf("\n%s root cause %d: %s (%zu pattern%s, %d hits)\n",
                  status == New ? "new" : "seen before,", ++n, printable(g.rootCause).c_str(),
                  g.members.size(), g.members.size() == 1 ? "" : "s", hitsOf(g));
      std::printf("  #  kind     nodes     hits  pattern\n");
      for (size_t i : g.members) printFinding(i, findings[i], engines);
      const Finding& first = findings[g.members.front()];
      if (!first.dir.empty())
        std::printf("  report it: nncheck repro %s\n",
                    printable(shellQuote(first.dir.string())).c_str());
    }
  }
  if (!groups.empty() && count[New] == 0)
    std::printf("\nno new root cause: every failure is a known bug or was in the corpus before\n");
}

}  // namespace nncheck::cli
