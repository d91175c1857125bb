// A campaign over every core: workers forked from this process, each a campaign over a disjoint
// slice of the cases, merged into one CampaignStats (nncheck/campaign.h, runCampaignJobs).
// Processes, not threads: each worker forks isolated engine processes of its own, and the
// generator's learned weights and coverage guide are per process.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "harness/case_files.h"
#include "nncheck/campaign.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string jsonText(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json outcomeCounts(const std::map<Outcome, int64_t>& m) {
  json j = json::object();
  for (const auto& [kind, n] : m) j[std::string(outcomeName(kind))] = n;
  return j;
}

void addOutcomeCounts(const json& j, std::map<Outcome, int64_t>& into) {
  for (const auto& [name, n] : j.items())
    if (std::optional<Outcome> o = outcomeFromName(name)) into[*o] += n.get<int64_t>();
}

template <class Map>
void addCounts(const json& j, Map& into) {
  for (const auto& [name, n] : j.items()) into[name] += n.template get<int64_t>();
}

// The counts a worker's progress lines and its results both carry, and their sum.
json caseCounts(const CampaignStats& s) {
  return {{"cases", s.cases},         {"planned", s.plannedCases},
          {"passed", s.passed},       {"unsupported", s.unsupported},
          {"nonfinite", s.nonfinite}, {"failures", outcomeCounts(s.failures)}};
}

void addCaseCounts(const json& j, CampaignStats& into) {
  into.cases += j["cases"].get<int64_t>();
  into.plannedCases += j["planned"].get<int64_t>();
  into.passed += j["passed"].get<int64_t>();
  into.unsupported += j["unsupported"].get<int64_t>();
  into.nonfinite += j["nonfinite"].get<int64_t>();
  addOutcomeCounts(j["failures"], into.failures);
}

// --- what a worker reports as it goes: one line of JSON each time its campaign reports ---

std::string progressLine(const CampaignStats& s) {
  json j = caseCounts(s);
  j["patterns"] = json::array();
  for (const Finding& f : s.findings) j["patterns"].push_back(f.info.pattern);
  j["activity"] = s.activity;
  return jsonText(j) + "\n";
}

// The sums of the workers' latest lines; a finding there is known by its pattern alone.
CampaignStats progressSums(const std::vector<json>& latest) {
  CampaignStats s;
  std::set<std::string> patterns;
  for (const json& j : latest) {
    if (j.is_null()) continue;
    addCaseCounts(j, s);
    for (const auto& p : j["patterns"]) patterns.insert(p.get<std::string>());
    const std::string activity = j["activity"].get<std::string>();
    if (!activity.empty() && s.activity.empty()) s.activity = activity;
  }
  for (const std::string& p : patterns) {
    Finding f;
    f.info.pattern = p;
    s.findings.push_back(std::move(f));
  }
  return s;
}

// --- what a worker hands back at its end: a folder, stats.json and a case per finding ---

void writeResults(const fs::path& dir, const CampaignStats& s) {
  json timeline = json::array();
  for (const CampaignSample& t : s.timeline)
    timeline.push_back({t.seconds, t.cases, t.passed, t.unsupported, t.nonfinite, t.failures});
  json findings = json::array();
  for (size_t k = 0; k < s.findings.size(); ++k) {
    const Finding& f = s.findings[k];
    const std::string folder = "finding-" + std::to_string(k);
    fs::create_directories(dir / folder);
    writeCaseRecord(dir / folder, f.minimized, f.info);
    findings.push_back({{"folder", folder},
                        {"dir", f.dir.string()},
                        {"from_corpus", f.fromCorpus},
                        {"hits", f.hits},
                        {"save_error", f.saveError}});
  }
  json j = caseCounts(s);
  j.update(json{
      {"unconfirmed", s.unconfirmed},
      {"repeats", s.repeats},
      {"rejected_ops", s.rejectedOps},
      {"op_cases", s.opCases},
      {"timeline", timeline},
      {"seconds", s.seconds},
      {"shrink_seconds", s.shrinkSeconds},
      {"coverage", {s.coverage.features, s.coverage.kept, s.coverage.mutants, s.coverage.fresh}},
      {"unreached_functions", s.unreachedFunctions},
      {"optimizations", s.optimizations},
      {"optimization_cases", s.optimizationCases},
      {"rewrite_cases", s.rewriteCases},
      {"unreadable_corpus_cases", s.unreadableCorpusCases},
      {"findings", findings}});
  writeFileAtomic(dir / "stats.json", jsonText(j));
}

// A worker's counts added into `into`; its timeline and findings are returned apart, to merge.
void readResults(const fs::path& dir, CampaignStats& into, std::vector<CampaignSample>& timeline,
                 std::vector<Finding>& findings) {
  const json j = json::parse(readFile(dir / "stats.json"));
  addCaseCounts(j, into);
  into.unconfirmed += j["unconfirmed"].get<int64_t>();
  into.repeats += j["repeats"].get<int64_t>();
  addCounts(j["rejected_ops"], into.rejectedOps);
  addCounts(j["op_cases"], into.opCases);
  addCounts(j["optimization_cases"], into.optimizationCases);
  addCounts(j["rewrite_cases"], into.rewriteCases);
  for (const auto& t : j["timeline"])
    timeline.push_back({t[0].get<double>(), t[1].get<int64_t>(), t[2].get<int64_t>(),
                        t[3].get<int64_t>(), t[4].get<int64_t>(), t[5].get<int64_t>()});
  into.seconds = std::max(into.seconds, j["seconds"].get<double>());
  into.shrinkSeconds += j["shrink_seconds"].get<double>();
  const json& c = j["coverage"];
  into.coverage.features = std::max(into.coverage.features, c[0].get<int64_t>());
  into.coverage.kept += c[1].get<int64_t>();
  into.coverage.mutants += c[2].get<int64_t>();
  into.coverage.fresh += c[3].get<int64_t>();
  if (into.unreachedFunctions.empty())
    into.unreachedFunctions = j["unreached_functions"].get<std::string>();
  for (const auto& name : j["optimizations"]) into.optimizations.push_back(name);
  for (const auto& file : j["unreadable_corpus_cases"])  // each worker read the same corpus
    if (std::find(into.unreadableCorpusCases.begin(), into.unreadableCorpusCases.end(), file) ==
        into.unreadableCorpusCases.end())
      into.unreadableCorpusCases.push_back(file);
  for (const auto& f : j["findings"]) {
    const CorpusCase saved = loadCorpusCase(dir / f["folder"].get<std::string>());
    Finding finding;
    finding.info = saved.info;
    finding.minimized = saved.testCase;
    finding.dir = f["dir"].get<std::string>();
    finding.fromCorpus = f["from_corpus"].get<bool>();
    finding.hits = f["hits"].get<int>();
    finding.saveError = f["save_error"].get<std::string>();
    findings.push_back(std::move(finding));
  }
}

// The workers' timelines as one: at each time a worker sampled, the sum of every worker's
// latest sample by then.
std::vector<CampaignSample> mergeTimelines(const std::vector<std::vector<CampaignSample>>& all) {
  std::set<double> times;
  for (const auto& t : all)
    for (const CampaignSample& s : t) times.insert(s.seconds);
  std::vector<CampaignSample> out;
  for (double at : times) {
    CampaignSample sum;
    sum.seconds = at;
    for (const auto& t : all) {
      auto later = std::upper_bound(
          t.begin(), t.end(), at, [](double x, const CampaignSample& s) { return x < s.seconds; });
      if (later == t.begin()) continue;
      const CampaignSample& s = *std::prev(later);
      sum.cases += s.cases;
      sum.passed += s.passed;
      sum.unsupported += s.unsupported;
      sum.nonfinite += s.nonfinite;
      sum.failures += s.failures;
    }
    out.push_back(sum);
  }
  return out;
}

// One finding per pattern, in the order of the cases that found them, hits summed. The first
// finding of a pattern in case order speaks for it, whichever worker was first in time, so the
// same seed gives the same summary: when another worker saved the pattern (it got there first
// in time), the corpus is made to hold the first finding's case instead, and the pattern is new.
std::vector<Finding> mergeFindings(std::vector<Finding> all, const CampaignOptions& o) {
  std::stable_sort(all.begin(), all.end(), [](const Finding& a, const Finding& b) {
    return a.info.casesRun < b.info.casesRun;
  });
  std::vector<Finding> out;
  std::map<std::string, size_t> byPattern;
  std::vector<std::optional<fs::path>> savedBy;  // by out's index: a case this campaign saved
  for (Finding& f : all) {
    const bool saved = !f.fromCorpus && !f.dir.empty();
    auto [at, first] = byPattern.emplace(f.info.pattern, out.size());
    if (first) {
      savedBy.push_back(saved ? std::optional(f.dir) : std::nullopt);
      out.push_back(std::move(f));
      continue;
    }
    out[at->second].hits += f.hits;
    if (saved) savedBy[at->second] = f.dir;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    Finding& f = out[k];
    if (!savedBy[k]) continue;  // in the corpus before, or not saved
    f.fromCorpus = false;
    f.dir = *savedBy[k];
    if (savedBy[k]->filename() == contentHash(f.minimized)) continue;
    try {
      f.dir = replacePatternCase(o.corpus, o.property, f.minimized, f.info, *savedBy[k]);
    } catch (const Error& e) {  // the pattern stays saved, by the other worker's case
      f.saveError = e.what();
    }
  }
  return out;
}

void writeAll(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the campaign that merges is gone: nothing to report to
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void runWorker(const std::vector<CampaignEngine>& engines, const CampaignOptions& o,
                            int fd, const fs::path& dir) {
  int status = 0;
  try {
    const CampaignStats s =
        runCampaign(engines, o, [&](const CampaignStats& now) { writeAll(fd, progressLine(now)); });
    writeResults(dir, s);
  } catch (const std::exception& e) {
    try {
      writeFileAtomic(dir / "error.txt", e.what());
    } catch (...) {
    }
    status = 1;
  }
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(status);  // the campaign that forked it owns everything else
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  int status = 0;
};

// Kills and reaps the workers still running when the merging campaign leaves early.
struct Workers {
  std::vector<Worker> list;
  fs::path results;
  ~Workers() {
    for (Worker& w : list) {
      if (w.fd >= 0) ::close(w.fd);
      if (w.pid > 0) {
        ::kill(w.pid, SIGKILL);
        ::waitpid(w.pid, nullptr, 0);
      }
    }
    std::error_code ec;
    if (!results.empty()) fs::remove_all(results, ec);
  }
};

// The results folders of campaigns killed before they removed them (nncheck-jobs-<pid>-*, their
// pid gone).
void sweepResultsOfKilledCampaigns() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("nncheck-jobs-")) continue;
    const long pid = std::strtol(name.c_str() + 13, nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      fs::remove_all(e.path(), ec);
  }
}

}  // namespace

CampaignStats runCampaignJobs(const std::vector<CampaignEngine>& engines, const CampaignOptions& o,
                              int jobs, const std::function<void(const CampaignStats&)>& progress) {
  if (jobs < 1 || jobs > 1024)
    throw Error("campaign: " + std::to_string(jobs) + " jobs: expected 1 to 1024");
  if (jobs == 1) return runCampaign(engines, o, progress);
  checkCampaign(engines, o);  // once, here, rather than once in each worker
  Workers workers;
  sweepResultsOfKilledCampaigns();
  std::string folder =
      (fs::temp_directory_path() / ("nncheck-jobs-" + std::to_string(::getpid()) + "-XXXXXX"))
          .string();
  if (!::mkdtemp(folder.data()))
    throw Error("campaign: cannot make a folder for its workers in " +
                fs::temp_directory_path().string() + ": " + std::strerror(errno));
  workers.results = folder;
  std::fflush(nullptr);  // what is buffered is written once, not once per worker
  const pid_t parent = ::getpid();
  for (int j = 0; j < jobs; ++j) {
    const fs::path dir = workers.results / ("job-" + std::to_string(j));
    fs::create_directory(dir);
    int pipeEnds[2];
    if (::pipe2(pipeEnds, O_CLOEXEC) != 0)
      throw Error("campaign: pipe: " + std::string(std::strerror(errno)));
    // The shard's cases i taken in turn: worker j runs those with i / shardCount mod jobs = j.
    CampaignOptions oj = o;
    oj.shardIndex = o.shardIndex + j * o.shardCount;
    oj.shardCount = o.shardCount * jobs;
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(pipeEnds[0]);
      ::close(pipeEnds[1]);
      throw Error("campaign: cannot start worker " + std::to_string(j + 1) + ": " +
                  std::strerror(errno));
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives the campaign it is part of
      if (::getppid() != parent) ::_exit(1);
      ::close(pipeEnds[0]);
      for (const Worker& w : workers.list) ::close(w.fd);
      workers.list.clear();
      workers.results.clear();
      runWorker(engines, oj, pipeEnds[1], dir);
    }
    ::close(pipeEnds[1]);
    workers.list.push_back({pid, pipeEnds[0], {}, 0});
  }

  // Progress: the workers' latest counts, summed, as they come.
  std::vector<json> latest(workers.list.size());
  for (size_t open = workers.list.size(); open > 0;) {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t j = 0; j < workers.list.size(); ++j)
      if (workers.list[j].fd >= 0) {
        fds.push_back({workers.list[j].fd, POLLIN, 0});
        which.push_back(j);
      }
    if (::poll(fds.data(), fds.size(), 500) < 0 && errno != EINTR)
      throw Error("campaign: poll: " + std::string(std::strerror(errno)));
    bool heard = false;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = workers.list[which[k]];
      char buf[65536];
      const ssize_t n = ::read(w.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(w.fd);
        w.fd = -1;
        --open;
        continue;
      }
      w.buffer.append(buf, static_cast<size_t>(n));
      for (size_t end; (end = w.buffer.find('\n')) != std::string::npos;) {
        try {
          latest[which[k]] = json::parse(w.buffer.substr(0, end));
        } catch (const json::exception& e) {
          throw Error("campaign: worker " + std::to_string(which[k] + 1) +
                      " reported what is not its progress: " + e.what());
        }
        w.buffer.erase(0, end + 1);
        heard = true;
      }
    }
    if (heard && progress) progress(progressSums(latest));
  }
  for (Worker& w : workers.list) {
    ::waitpid(w.pid, &w.status, 0);
    w.pid = -1;
  }

  CampaignStats merged;
  std::vector<std::vector<CampaignSample>> timelines;
  std::vector<Finding> findings;
  std::string failed;
  for (size_t j = 0; j < workers.list.size(); ++j) {
    const fs::path dir = workers.results / ("job-" + std::to_string(j));
    const int status = workers.list[j].status;
    std::string why;
    if (WIFSIGNALED(status))
      why = std::string("was killed by signal ") + strsignal(WTERMSIG(status));
    else if (fs::exists(dir / "error.txt"))
      why = readFile(dir / "error.txt");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(dir / "stats.json"))
      why = "ended without its results";
    if (!why.empty()) {
      failed += (failed.empty() ? "" : "; ") +
                ("worker " + std::to_string(j + 1) + " of " + std::to_string(jobs) + ": " + why);
      continue;
    }
    timelines.emplace_back();
    try {
      readResults(dir, merged, timelines.back(), findings);
    } catch (const json::exception& e) {
      throw Error("campaign: worker " + std::to_string(j + 1) + "'s results in " + dir.string() +
                  ": " + e.what());
    }
  }
  if (!failed.empty())
    throw Error("campaign: " + failed + " (what the workers saved is in the corpus)");
  std::sort(merged.optimizations.begin(), merged.optimizations.end());
  merged.optimizations.erase(std::unique(merged.optimizations.begin(), merged.optimizations.end()),
                             merged.optimizations.end());
  merged.timeline = mergeTimelines(timelines);
  merged.findings = mergeFindings(std::move(findings), o);
  return merged;
}

}  // namespace nncheck
