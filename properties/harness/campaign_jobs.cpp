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

#include "core/deadline.h"
#include "harness/case_files.h"
#include "harness/corpus_store.h"
#include "harness/probe.h"
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

// --- what a worker hands back at its end: its counts and maps, and each finding whole (its
// record as nncheck.json holds it, its model and inputs), sent over its pipe, so that no file
// is needed (a full TMPDIR cost a campaign its summary) and none is left behind ---

json::binary_t binary(const std::string& bytes) {
  return json::binary_t(std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

std::string bytesOf(const json& j) {
  const json::binary_t& b = j.get_binary();
  return std::string(b.begin(), b.end());
}

json resultsOf(const CampaignStats& s) {
  json timeline = json::array();
  for (const CampaignSample& t : s.timeline)
    timeline.push_back({t.seconds, t.cases, t.passed, t.unsupported, t.nonfinite, t.failures});
  json findings = json::array();
  for (const Finding& f : s.findings) {
    json inputs = json::array();
    for (const auto& [name, t] : f.minimized.inputs)
      inputs.push_back({name, binary(serializeTensor(t, name))});
    findings.push_back({{"record", caseRecordText(f.minimized, f.info)},
                        {"model", binary(serializeModel(f.minimized.model))},
                        {"inputs", inputs},
                        {"dir", f.dir.string()},
                        {"from_corpus", f.fromCorpus},
                        {"hits", f.hits},
                        {"save_error", f.saveError}});
    if (const auto& k = f.known)
      findings.back()["known"] = {{"dir", k->dir.string()},
                                  {"root_cause", k->rootCause},
                                  {"title", k->title},
                                  {"upstream", k->upstream}};
  }
  json j = caseCounts(s);
  j.update(json{
      {"unconfirmed", s.unconfirmed},
      {"repeats", s.repeats},
      {"recognised", s.recognised},
      {"after_failure_judged", s.afterFailureJudged},
      {"after_failure_fresh", s.afterFailureFresh},
      {"interrupted", s.interrupted},
      {"rejected_ops", s.rejectedOps},
      {"op_cases", s.opCases},
      {"timeline", timeline},
      {"seconds", s.seconds},
      {"shrink_seconds", s.shrinkSeconds},
      {"after_failure_spent", s.afterFailureSpent},
      {"coverage", {s.coverage.features, s.coverage.kept, s.coverage.mutants, s.coverage.fresh}},
      {"unreached_functions", s.unreachedFunctions},
      {"optimizations", s.optimizations},
      {"optimization_cases", s.optimizationCases},
      {"rewrite_cases", s.rewriteCases},
      {"unreadable_corpus_cases", s.unreadableCorpusCases},
      {"findings", findings}});
  return j;
}

// A worker's results added into `into`; its timeline and findings are returned apart, to merge.
void addResults(const json& j, const std::string& worker, CampaignStats& into,
                std::vector<CampaignSample>& timeline, std::vector<Finding>& findings) {
  addCaseCounts(j, into);
  into.unconfirmed += j["unconfirmed"].get<int64_t>();
  into.repeats += j["repeats"].get<int64_t>();
  into.recognised += j["recognised"].get<int64_t>();
  into.afterFailureJudged += j["after_failure_judged"].get<int64_t>();
  into.afterFailureFresh += j["after_failure_fresh"].get<int64_t>();
  into.interrupted = into.interrupted || j["interrupted"].get<bool>();
  addCounts(j["rejected_ops"], into.rejectedOps);
  addCounts(j["op_cases"], into.opCases);
  addCounts(j["optimization_cases"], into.optimizationCases);
  addCounts(j["rewrite_cases"], into.rewriteCases);
  for (const auto& t : j["timeline"])
    timeline.push_back({t[0].get<double>(), t[1].get<int64_t>(), t[2].get<int64_t>(),
                        t[3].get<int64_t>(), t[4].get<int64_t>(), t[5].get<int64_t>()});
  into.seconds = std::max(into.seconds, j["seconds"].get<double>());
  into.shrinkSeconds += j["shrink_seconds"].get<double>();
  for (const auto& [step, seconds] : j["after_failure_spent"].items())
    into.afterFailureSpent[step] += seconds.get<double>();
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
    const std::string origin = worker + "'s finding " + std::to_string(findings.size() + 1);
    CorpusCase saved;
    readCaseMetadata(f["record"].get<std::string>(), origin, saved);
    Finding finding;
    finding.info = saved.info;
    finding.minimized = saved.testCase;  // its seed and rewrites
    finding.minimized.model = parseModel(bytesOf(f["model"]), origin);
    for (const auto& in : f["inputs"])
      finding.minimized.inputs[in[0].get<std::string>()] = parseTensor(bytesOf(in[1]), origin);
    finding.dir = f["dir"].get<std::string>();
    finding.fromCorpus = f["from_corpus"].get<bool>();
    finding.hits = f["hits"].get<int>();
    finding.saveError = f["save_error"].get<std::string>();
    if (f.contains("known")) {
      const json& k = f["known"];
      finding.known = KnownBug{k["dir"].get<std::string>(), k["root_cause"].get<std::string>(),
                               k["title"].get<std::string>(), k["upstream"].get<std::string>()};
    }
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

// --- the pipe from a worker: framed messages, a u64 length then a kind and its payload ---

constexpr char kProgress = 'P', kResults = 'R', kFailed = 'F';

// Writes a message; false when the campaign that merges is gone (nothing to report to).
bool sendMessage(int fd, char kind, const std::string& payload) {
  std::string head(8, '\0');
  const uint64_t n = payload.size() + 1;
  std::memcpy(head.data(), &n, 8);
  head += kind;
  for (const std::string* part : {static_cast<const std::string*>(&head), &payload})
    for (size_t done = 0; done < part->size();) {
      const ssize_t k = ::write(fd, part->data() + done, part->size() - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      done += static_cast<size_t>(k);
    }
  return true;
}

// The whole messages at the front of `buffer`, taken out of it.
std::vector<std::string> takeMessages(std::string& buffer) {
  std::vector<std::string> out;
  size_t at = 0;
  for (uint64_t n; buffer.size() - at >= 8;) {
    std::memcpy(&n, buffer.data() + at, 8);
    if (n == 0 || buffer.size() - at - 8 < n) break;
    out.push_back(buffer.substr(at + 8, n));
    at += 8 + n;
  }
  buffer.erase(0, at);
  return out;
}

// Whether the campaign that forked this worker asked it to stop (closed its end of the pipe,
// or is gone).
bool stopAsked(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

[[noreturn]] void runWorker(const std::vector<CampaignEngine>& engines, CampaignOptions o, int fd,
                            int stopFd) {
  int status = 0;
  const std::function<bool()> stop = o.stop;
  o.stop = [&] { return stopAsked(stopFd) || (stop && stop()); };
  try {
    const CampaignStats s = runCampaign(engines, o, [&](const CampaignStats& now) {
      sendMessage(fd, kProgress, progressLine(now));
    });
    if (!sendMessage(fd, kResults, [&] {
          const std::vector<uint8_t> cbor = json::to_cbor(resultsOf(s));
          return std::string(cbor.begin(), cbor.end());
        }()))
      status = 1;
  } catch (const std::exception& e) {
    sendMessage(fd, kFailed, e.what());
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
  std::optional<json> results;
  std::string failure;  // what it said when its campaign failed
};

// Kills and reaps the workers still running when the merging campaign leaves early.
struct Workers {
  std::vector<Worker> list;
  int stopFd = -1;  // the write end of the pipe whose closing asks the workers to stop
  ~Workers() {
    if (stopFd >= 0) ::close(stopFd);
    for (Worker& w : list) {
      if (w.fd >= 0) ::close(w.fd);
      if (w.pid > 0) {
        ::kill(w.pid, SIGKILL);
        ::waitpid(w.pid, nullptr, 0);
      }
    }
  }
};

// Why worker j (from 1) of `jobs` brought back no results, and what it had done by its last
// report.
std::string lostWorker(size_t j, int jobs, const Worker& w, const json& latest) {
  std::string why;
  if (WIFSIGNALED(w.status))
    why = std::string("was killed by signal ") + std::to_string(WTERMSIG(w.status)) + " (" +
          strsignal(WTERMSIG(w.status)) + ")";
  else if (!w.failure.empty())
    why = "failed: " + w.failure;
  else
    why = "ended without its results (exit status " +
          std::to_string(WIFEXITED(w.status) ? WEXITSTATUS(w.status) : -1) + ")";
  const int64_t cases = latest.is_null() ? 0 : latest["cases"].get<int64_t>();
  return "worker " + std::to_string(j) + " of " + std::to_string(jobs) + " " + why + " after " +
         std::to_string(cases) + " cases; its counts are not in the summary, and the findings it " +
         "saved are in the corpus";
}

}  // namespace

CampaignStats runCampaignJobs(const std::vector<CampaignEngine>& engines, const CampaignOptions& o,
                              int jobs, const std::function<void(const CampaignStats&)>& progress) {
  if (jobs < 1 || jobs > 1024)
    throw Error("campaign: " + std::to_string(jobs) + " jobs: expected 1 to 1024");
  if (jobs == 1) return runCampaign(engines, o, progress);
  // Once, here, rather than once in each worker: a broken set-up is this process's error.
  checkCampaign(engines, o);
  const auto start = std::chrono::steady_clock::now();
  if (o.checkSetUp) {
    // As a campaign's own start-up: the time box and an interrupt end it, and nothing runs.
    try {
      const Deadline box(std::chrono::steady_clock::now() +
                             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(std::min(o.seconds, 1e9))),
                         Deadline::Interrupt::Ends);
      for (const CampaignEngine& e : engines) checkEngineSetUp(isolated(*e.backend, o.timeout));
      if (o.baseline.backend) checkEngineSetUp(isolated(*o.baseline.backend, o.timeout));
    } catch (const DeadlineExceeded&) {
      CampaignStats none;
      none.interrupted = interruptRequested() || (o.stop && o.stop());
      none.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return none;
    }
  }
  Workers workers;
  int stopPipe[2];
  if (::pipe2(stopPipe, O_CLOEXEC) != 0)
    throw Error("campaign: pipe: " + std::string(std::strerror(errno)));
  workers.stopFd = stopPipe[1];
  std::fflush(nullptr);  // what is buffered is written once, not once per worker
  const pid_t parent = ::getpid();
  for (int j = 0; j < jobs; ++j) {
    int pipeEnds[2];
    if (::pipe2(pipeEnds, O_CLOEXEC) != 0) {
      ::close(stopPipe[0]);
      throw Error("campaign: pipe: " + std::string(std::strerror(errno)));
    }
    // The shard's cases i taken in turn: worker j runs those with i / shardCount mod jobs = j.
    CampaignOptions oj = o;
    oj.checkSetUp = false;
    oj.shardIndex = o.shardIndex + j * o.shardCount;
    oj.shardCount = o.shardCount * jobs;
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(pipeEnds[0]);
      ::close(pipeEnds[1]);
      ::close(stopPipe[0]);
      throw Error("campaign: cannot start worker " + std::to_string(j + 1) + ": " +
                  std::strerror(errno));
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives the campaign it is part of
      if (::getppid() != parent) ::_exit(1);
      ::close(pipeEnds[0]);
      ::close(workers.stopFd);
      workers.stopFd = -1;
      for (const Worker& w : workers.list) ::close(w.fd);
      workers.list.clear();
      runWorker(engines, oj, pipeEnds[1], stopPipe[0]);
    }
    ::close(pipeEnds[1]);
    Worker started;
    started.pid = pid;
    started.fd = pipeEnds[0];
    workers.list.push_back(std::move(started));
  }
  ::close(stopPipe[0]);

  // Progress: the workers' latest counts, summed, as they come; then each one's results.
  std::vector<json> latest(workers.list.size());
  for (size_t open = workers.list.size(); open > 0;) {
    if (workers.stopFd >= 0 && o.stop && o.stop()) {
      ::close(workers.stopFd);  // each worker stops after its case in progress, and reports
      workers.stopFd = -1;
    }
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    for (size_t j = 0; j < workers.list.size(); ++j)
      if (workers.list[j].fd >= 0) {
        fds.push_back({workers.list[j].fd, POLLIN, 0});
        which.push_back(j);
      }
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR)
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
      for (const std::string& m : takeMessages(w.buffer)) {
        const std::string payload = m.substr(1);
        try {
          if (m[0] == kProgress) {
            latest[which[k]] = json::parse(payload);
            heard = true;
          } else if (m[0] == kResults) {
            w.results = json::from_cbor(payload);
          } else if (m[0] == kFailed) {
            w.failure = payload;
          }
        } catch (const json::exception& e) {
          w.failure = "it reported what is not a campaign's: " + std::string(e.what());
        }
      }
    }
    if (heard && progress) progress(progressSums(latest));
  }
  for (Worker& w : workers.list) {
    ::waitpid(w.pid, &w.status, 0);
    w.pid = -1;
  }

  // The workers that brought back their results are merged; one that did not (killed, failed)
  // is named, and the others' summary stands.
  CampaignStats merged;
  std::vector<std::vector<CampaignSample>> timelines;
  std::vector<Finding> findings;
  for (size_t j = 0; j < workers.list.size(); ++j) {
    Worker& w = workers.list[j];
    const std::string name = "worker " + std::to_string(j + 1);
    if (w.results) {
      timelines.emplace_back();
      try {
        addResults(*w.results, name, merged, timelines.back(), findings);
        continue;
      } catch (const std::exception& e) {
        timelines.pop_back();
        w.failure = "its results do not read: " + std::string(e.what());
      }
    }
    merged.lostWorkers.push_back(lostWorker(j + 1, jobs, w, latest[j]));
  }
  if (timelines.empty()) {
    std::string all;
    for (const std::string& lost : merged.lostWorkers) all += (all.empty() ? "" : "; ") + lost;
    throw Error("campaign: every worker was lost: " + all);
  }
  std::sort(merged.optimizations.begin(), merged.optimizations.end());
  merged.optimizations.erase(std::unique(merged.optimizations.begin(), merged.optimizations.end()),
                             merged.optimizations.end());
  merged.timeline = mergeTimelines(timelines);
  merged.findings = mergeFindings(std::move(findings), o);
  return merged;
}

}  // namespace nncheck
