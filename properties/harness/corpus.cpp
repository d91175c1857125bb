#include "nncheck/corpus.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/backend_test.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/shell_words.h"
#include "harness/case_files.h"
#include "harness/corpus_store.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "nncheck/variants.h"
#include "nncheck/worker_engine.h"
#include "ops/upgrade.h"
#include "render/picture.h"

namespace nncheck {
namespace fs = std::filesystem;

std::string contentHash(const TestCase& tc) {
  Model m = tc.model;
  m.graph.name.clear();  // the same graph found from two seeds is one failure
  uint64_t h = fnv1a(serializeModel(m));
  for (const auto& [name, t] : tc.inputs) h = fnv1a(serializeTensor(t, name), h);
  // A case without rewrites hashes as cases did before rewrites were part of one.
  if (!tc.rewrites.empty()) h = fnv1a(describeRewrites(tc.rewrites), h);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

std::map<std::string, std::string> outcomeNames(const std::map<std::string, Outcome>& m) {
  std::map<std::string, std::string> out;
  for (const auto& [config, o] : m) out[config] = std::string(outcomeName(o));
  return out;
}

}  // namespace

std::string caseRecordText(const TestCase& tc, const FailureInfo& info) {
  nlohmann::ordered_json j;
  j["seed"] = tc.seed;
  j["property"] = info.property;
  j["oracle"] = info.oracle;
  if (!tc.rewrites.empty()) {
    nlohmann::ordered_json rewrites = nlohmann::ordered_json::array();
    for (const Rewrite& r : tc.rewrites)
      rewrites.push_back({{"rule", r.rule}, {"at", r.at}, {"form", r.form}});
    j["rewrites"] = rewrites;
  }
  j["backend"] = info.backend;
  if (!info.engineLibrary.empty()) j["engine_library"] = info.engineLibrary;
  if (!info.engineWorker.empty()) j["engine_worker"] = info.engineWorker;
  j["configuration"] = info.configuration;
  j["failure_kind"] = std::string(outcomeName(info.kind));
  j["message"] = info.message;
  j["max_abs_error"] = info.maxAbsError;
  j["max_rel_error"] = info.maxRelError;
  j["tolerance"] = {{"rtol", info.tolerance.rtol}, {"atol", info.tolerance.atol}};
  j["estimated_float_error"] = info.estimatedError >= 0
                                   ? nlohmann::ordered_json(info.estimatedError)
                                   : nlohmann::ordered_json();
  j["signal"] = info.signal ? nlohmann::ordered_json(info.signal) : nlohmann::ordered_json();
  if (const auto& d = info.divergence)
    j["first_diverging_node"] = {{"node", d->name},
                                 {"op", d->opType},
                                 {"output", d->output},
                                 {"exposed", d->exposed},
                                 {"layout_differs", d->layoutDiffers},
                                 {"detail", d->detail}};
  else
    j["first_diverging_node"] = nullptr;
  j["differing_outputs"] = info.differingOutputs;
  j["ops"] = info.ops;
  j["pattern"] = info.pattern;
  j["triage"] = outcomeNames(info.triage);
  j["known_failures"] = outcomeNames(info.knownFailures);
  if (const auto& c = info.culprit)
    j["culprit"] = {{"needed", c->needed},
                    {"workaround", c->workaround},
                    {"workaround_passes", c->workaroundPasses},
                    {"runs", c->runs},
                    {"searched", c->searched}};
  else
    j["culprit"] = nullptr;
  if (!info.title.empty()) j["title"] = info.title;
  if (!info.upstream.empty()) j["upstream"] = info.upstream;
  j["cases_run_until_found"] = info.casesRun;
  j["seconds_run_until_found"] = info.secondsRun;
  j["nodes_before_shrinking"] = info.nodesBefore;
  j["nodes_after_shrinking"] = info.nodesAfter;
  j["shrink_steps"] = info.shrinkSteps;
  j["shrink_seconds"] = info.shrinkSeconds;
  j["nncheck_version"] = NNCHECK_VERSION;
  // Names in a model may be any bytes; invalid UTF-8 is replaced, not a reason to lose the case.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string writeCaseRecord(const fs::path& dir, const TestCase& tc, const FailureInfo& info,
                            const TensorMap& expected) {
  saveBackendTestCase(dir, tc.model, tc.inputs, expected);
  std::string text = caseRecordText(tc, info);
  writeFileAtomic(dir / "nncheck.json", text);
  return text;
}

namespace {

// The case folder's files: the backend-test layout with the reference's outputs, nncheck.json,
// and the picture.
void writeCase(const fs::path& tmp, const TestCase& tc, const FailureInfo& info) {
  TensorMap expected;
  try {
    expected = runReference(tc.model, tc.inputs);
  } catch (const Error&) {
    // Only an oracle without the reference (baseline, a user's) finds failures of models the
    // reference does not compute (a custom op, a dtype it lacks): saved without outputs.
    if (info.oracle == "reference") throw;
  }
  const std::string text = writeCaseRecord(tmp, tc, info, expected);
  // The picture is drawn from the record as written, as `nncheck show` draws it. A drawing
  // Graphviz cannot make costs the picture, not the case.
  CorpusCase saved;
  readCaseMetadata(text, tmp / "nncheck.json", saved);
  std::string svg;
  try {
    svg = drawModel(tc.model, PictureFormat::Svg, drawOptionsFor(saved));
  } catch (const Error&) {
    return;
  }
  writeFileAtomic(tmp / "model.svg", svg);
}

}  // namespace

std::string outcomesByConfiguration(const std::map<std::string, Outcome>& m) {
  std::string s;
  for (const auto& [config, o] : m)
    s += (s.empty() ? "" : "; ") + (config.empty() ? std::string("(default)") : config) + ": " +
         std::string(outcomeName(o));
  return s;
}

std::string campaignEngine(const std::string& property) {
  for (const char* prefix : {"fuzz-", "reduce-"})
    if (property.rfind(prefix, 0) == 0) return property.substr(std::string(prefix).size());
  return "";
}

// (nncheck/corpus.h)
std::string replayCommand(const CorpusCase& c, const std::string& engine) {
  if (c.dir.empty()) return "";
  const std::string e = engine.empty() ? campaignEngine(c.property) : engine;
  if (e.empty())
    return "<test binary> --gtest_filter=" + shellQuote(c.property.empty() ? "*" : c.property);
  std::string cmd = c.oracle == "reference" ? "nncheck run" : "nncheck corpus check";
  // The library or worker that serves the engine is this process's own (what the user named) or
  // the user's to supply: what a case records of one is never printed ready to run.
  if (!c.engineLibrary.empty()) {
    const std::string loaded = engines().library(e);
    cmd += " --engine-lib " +
           (loaded.empty() ? shellQuote("<the library of " + e + ">") : shellQuote(loaded));
  }
  if (!c.engineWorker.empty()) {
    const std::string serving = workerEngineCommand(e);
    cmd += " --engine-worker " +
           (serving.empty() ? shellQuote("<the command serving " + e + ">") : shellQuote(serving));
  }
  cmd += " --backend " + shellQuote(e);
  if (!c.configuration.empty()) cmd += " --config " + shellQuote(c.configuration);
  return cmd + " " + shellQuote(c.dir.string());
}

CorpusCase corpusRecord(const TestCase& tc, const FailureInfo& info) {
  CorpusCase c;
  readCaseMetadata(caseRecordText(tc, info), "nncheck.json", c);
  c.testCase = tc;
  return c;
}

FailureInfo recordFailure(const Verdict& verdict, const TestCase& minimized,
                          std::optional<Divergence> divergence) {
  FailureInfo info;
  info.kind = verdict.outcome;
  info.message = verdict.message;
  info.maxAbsError = verdict.maxAbsError;
  info.maxRelError = verdict.maxRelError;
  info.tolerance = verdict.tolerance;
  info.estimatedError = verdict.estimatedError;
  info.signal = verdict.signal;
  for (const Node& n : minimized.model.graph.nodes) info.ops.push_back(n.opType);
  info.pattern = failurePattern(minimized, verdict.outcome, divergence ? divergence->opType : "",
                                verdict.shapeOnly);
  if (verdict.outcome == Outcome::Error && divergence) {
    // An error after a node computed a wrong value is that node's mismatch, and one finding
    // with it: the pattern of the node's own sub-model.
    try {
      const TestCase sub = subModelFor(minimized, divergence->node,
                                       runReferenceAllValues(minimized.model, minimized.inputs));
      info.pattern =
          failurePattern(sub, Outcome::Mismatch, divergence->opType, divergence->layoutDiffers);
    } catch (const Error&) {  // the reference cannot run it: the error's own pattern stays
    }
  }
  info.divergence = std::move(divergence);
  info.differingOutputs = verdict.differingOutputs;
  info.nodesAfter = static_cast<int>(minimized.model.graph.nodes.size());
  return info;
}

std::string failurePattern(const TestCase& tc, Outcome kind, const std::string& divergingOp,
                           bool shapeOnly) {
  const Graph& g = tc.model.graph;
  std::map<std::string, std::string> producer;
  for (const ValueInfo& in : g.inputs) producer[in.name] = g.initializer(in.name) ? "w" : "x";
  for (const Initializer& w : g.initializers) producer[w.name] = "w";
  std::string s(outcomeName(kind));
  if (kind == Outcome::Mismatch && shapeOnly) s += " in shape";
  s += divergingOp.empty() ? "" : " at " + divergingOp;
  s += ":";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    s += " " + n.opType + "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (k) s += ",";
      s += n.inputs[k].empty() ? "-" : producer.count(n.inputs[k]) ? producer[n.inputs[k]] : "?";
    }
    s += ")";
    std::string node = "#";  // (not "#" + to_string: GCC 12 warns falsely, -Wrestrict)
    node += std::to_string(i);
    for (const std::string& out : n.outputs) producer[out] = node;
  }
  return s;
}

namespace {

// Removes the temporary folders (<hash>.tmp.<pid>) that saves of processes no longer running
// left behind when they were killed.
void sweepStaleTemporaries(const fs::path& folder) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const size_t at = name.rfind(".tmp.");
    if (at == std::string::npos) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + at + 5, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code removeError;
      fs::remove_all(it->path(), removeError);
    }
  }
}

// Writes into a corpus never go through a link in it (a property folder or .patterns linked
// elsewhere by whoever made the corpus): an error naming the link instead.
void refuseLink(const fs::path& p) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(p, ec)))
    throw Error(p.string() +
                ": is a symbolic link; nncheck writes nothing through a link in a "
                "corpus");
}

// The claim file of a pattern in a corpus folder: <folder>/.patterns/<hash of the pattern>,
// holding the pattern and the name of the case folder that holds it.
fs::path claimFile(const fs::path& folder, const std::string& pattern) {
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(fnv1a(pattern)));
  return folder / ".patterns" / name;
}

std::string claimText(const std::string& pattern, const fs::path& dir) {
  return pattern + "\n" + dir.filename().string() + "\n";
}

// Claims the pattern for the case `dir`, exclusively across processes: false when a claim exists.
bool claimPattern(const fs::path& claim, const std::string& pattern, const fs::path& dir) {
  std::error_code ec;
  refuseLink(claim.parent_path());
  fs::create_directories(claim.parent_path(), ec);
  if (ec) throw Error(claim.parent_path().string() + ": cannot create the folder: " + ec.message());
  const int fd = ::open(claim.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw Error(claim.string() + ": cannot claim the pattern: " + std::strerror(errno));
  }
  const std::string text = claimText(pattern, dir);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw Error(claim.string() + ": cannot write the claim");
  return true;
}

// The case of `folder` a claim names, when it is there; else any case there with the pattern
// other than `except` (claims written before they named their case), else none.
std::optional<fs::path> holderOf(const fs::path& claim, const fs::path& folder,
                                 const std::string& pattern, const fs::path& except) {
  std::string text;
  try {
    text = readFile(claim, Links::Refuse, 1 << 20);
  } catch (const Error&) {  // unreadable: as stale as a claim without its case
  }
  const size_t line = text.find('\n');
  if (line != std::string::npos && text.compare(0, line, pattern) == 0) {
    std::string name = text.substr(line + 1);
    if (!name.empty() && name.back() == '\n') name.pop_back();
    if (!name.empty() && name.find('/') == std::string::npos && name != "." && name != ".." &&
        isCaseFolder(folder / name))
      return folder / name;
  }
  for (const fs::path& c : corpusCaseDirs(folder)) {
    if (c == except) continue;
    try {
      if (loadCorpusCase(c).pattern == pattern) return c;
    } catch (const std::exception&) {  // an unreadable case holds no pattern
    }
  }
  return std::nullopt;
}

// Holds an exclusive lock on <folder>/.patterns/.lock while it lives (released by the kernel
// if the process dies), so that taking over a stale claim is one process's act.
class ClaimsLock {
 public:
  explicit ClaimsLock(const fs::path& claims) {
    const fs::path file = claims / ".lock";
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) throw Error(file.string() + ": cannot open the lock: " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        const int err = errno;
        ::close(fd_);
        throw Error(file.string() + ": cannot lock: " + std::strerror(err));
      }
  }
  ~ClaimsLock() { ::close(fd_); }
  ClaimsLock(const ClaimsLock&) = delete;
  ClaimsLock& operator=(const ClaimsLock&) = delete;

 private:
  int fd_;
};

// Removes a saved case so that a kill at any moment leaves the whole case or none of it: the
// folder is renamed to a temporary first (swept by the next save if the removal is cut short).
void removeCase(const fs::path& dir) {
  fs::path doomed = dir;
  doomed += ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(doomed, ec);
  fs::rename(dir, doomed, ec);
  if (!ec) fs::remove_all(doomed, ec);  // best effort: a leftover temporary is no case
}

}  // namespace

Model loadSoundCaseModel(const fs::path& caseDir, std::string* upgraded) {
  Model m = loadCaseModel(caseDir);
  const std::string said = ops::upgradeOldOpset(m);
  if (upgraded) *upgraded = said;
  try {
    checkStructure(m);
  } catch (const Unsupported&) {
    throw;  // an opset nncheck does not know: skipped, not invalid
  } catch (const Error& e) {
    throw Error((caseDir / "model.onnx").string() + ": not a valid model: " + e.what());
  }
  return m;
}

bool publishCase(const fs::path& dir, const std::function<void(const fs::path&)>& fill) {
  refuseLink(dir.parent_path());
  refuseLink(dir);
  if (isCaseFolder(dir)) return false;
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec)
    throw Error(dir.parent_path().string() + ": cannot create the corpus folder: " + ec.message());
  sweepStaleTemporaries(dir.parent_path());
  fs::path tmp = dir;
  tmp += ".tmp." + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  try {
    fill(tmp);
  } catch (...) {  // nothing half-saved is left behind
    fs::remove_all(tmp, ec);
    throw;
  }
  // Another process saving the same case (a campaign of the same seed on this corpus) may have
  // put it there first, or be removing it as a duplicate of its pattern: a folder there that is
  // no case is one being removed (or made), so the rename is tried again while it goes.
  // (Judged once per attempt: the other process may remove its copy right after it is seen.)
  constexpr int kTries = 200;  // 5 ms apart: a second for the other process's remove_all
  for (int attempt = 1;; ++attempt) {
    fs::rename(tmp, dir, ec);
    if (!ec) break;
    const bool taken = ec == std::errc::directory_not_empty || ec == std::errc::file_exists;
    const bool sameCaseThere = taken && isCaseFolder(dir);
    if (sameCaseThere || !taken || attempt == kTries) {
      std::error_code removeError;
      fs::remove_all(tmp, removeError);
      if (sameCaseThere) return false;  // another process put the same case there first
      throw Error(dir.string() + ": cannot move the case into place: " + ec.message());
    }
    ::usleep(5000);
  }
  syncPath(dir.parent_path());  // the case's name reaches the disk too
  return true;
}

fs::path saveFailure(const fs::path& corpus, const std::string& property, const TestCase& tc,
                     const FailureInfo& info) {
  const fs::path dir = corpus / property / contentHash(tc);
  publishCase(dir, [&](const fs::path& tmp) { writeCase(tmp, tc, info); });
  return dir;
}

SavedPattern savePatternOnce(const fs::path& corpus, const std::string& property,
                             const TestCase& tc, const FailureInfo& info) {
  const fs::path folder = corpus / property;
  const fs::path dir = folder / contentHash(tc);
  // The case first, its claim after: a process killed in between leaves a case without a claim
  // (found by the next campaign's scan of the corpus), never a claim without its case.
  const bool made = publishCase(dir, [&](const fs::path& tmp) { writeCase(tmp, tc, info); });
  const fs::path claim = claimFile(folder, info.pattern);
  if (claimPattern(claim, info.pattern, dir)) return {dir, made};
  ClaimsLock lock(claim.parent_path());
  if (std::optional<fs::path> holder = holderOf(claim, folder, info.pattern, dir)) {
    if (*holder == dir) return {dir, made};
    if (made) removeCase(dir);  // another campaign saved the pattern first
    return {*holder, false};
  }
  // A stale claim (its case was removed, or a save was killed before this order was kept):
  // this case takes it over.
  writeFileAtomic(claim, claimText(info.pattern, dir));
  return {dir, made};
}

fs::path replacePatternCase(const fs::path& corpus, const std::string& property, const TestCase& tc,
                            const FailureInfo& info, const fs::path& replaced) {
  const fs::path dir = saveFailure(corpus, property, tc, info);
  if (dir == replaced) return dir;
  // The new case first, the claim next, the old case last: a kill in between leaves two cases
  // of the pattern, never a claim without its case.
  const fs::path claim = claimFile(corpus / property, info.pattern);
  {
    ClaimsLock lock(claim.parent_path());
    writeFileAtomic(claim, claimText(info.pattern, dir));
  }
  removeCase(replaced);
  return dir;
}

// What nncheck writes is a few kilobytes: far past that is not its metadata.
constexpr uintmax_t kMaxMetadataBytes = 1 << 20;

void readCaseMetadata(const std::string& text, const fs::path& meta, CorpusCase& c) {
  // What nncheck writes is a few kilobytes and a few levels deep: anything far past that is not
  // its metadata, and is refused before it costs memory or stack.
  constexpr int kMaxDepth = 16;
  if (text.size() > kMaxMetadataBytes)
    throw Error(meta.string() + ": " + std::to_string(text.size()) +
                " bytes, more than the 1 MiB nncheck metadata may take");
  // One outcome name, checked: a typo in a hand-edited known_failures must not pass silently.
  auto outcome = [&](const std::string& field, const std::string& name) {
    std::optional<Outcome> o = outcomeFromName(name);
    if (!o || *o == Outcome::Pass || *o == Outcome::Unsupported)
      throw Error(meta.string() + ": " + field + " = \"" + name +
                  "\": expected mismatch, crash, hang, error or nonfinite");
    return *o;
  };
  try {
    auto j = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t, auto&) {
      if (depth > kMaxDepth)
        throw Error(meta.string() + ": nested deeper than " + std::to_string(kMaxDepth) +
                    " levels: not nncheck metadata");
      return true;
    });
    if (j.contains("seed") && !j["seed"].is_number_unsigned())
      throw Error(meta.string() + ": seed = " + j["seed"].dump() +
                  ": expected a whole number from 0 to 2^64-1");
    c.testCase.seed = j.value("seed", uint64_t{0});
    if (j.contains("rewrites")) {
      const auto& rs = j["rewrites"];
      auto bad = [&](const std::string& why) {
        return Error(meta.string() + ": rewrites: " + why);
      };
      if (!rs.is_array()) throw bad("expected a list of {\"rule\", \"at\", \"form\"}");
      for (const auto& r : rs) {
        if (!r.is_object() || !r.contains("rule") || !r["rule"].is_string() || !r.contains("at") ||
            !r["at"].is_string() || !r.contains("form") || !r["form"].is_number_unsigned() ||
            r["form"].get<uint64_t>() > 1000)
          throw bad(r.dump() + ": expected {\"rule\": name, \"at\": value, \"form\": 0..1000}");
        const std::string rule = r["rule"].get<std::string>();
        const auto& rules = rewriteRules();
        if (std::none_of(rules.begin(), rules.end(),
                         [&](const RewriteRule& k) { return k.name == rule; }))
          throw bad("'" + rule + "' is no rule of nncheck's rewrite table");
        c.testCase.rewrites.push_back(
            {rule, r["at"].get<std::string>(), static_cast<int64_t>(r["form"].get<uint64_t>())});
      }
    }
    // The record, whole, as the campaign had it (the fields of CorpusCase are read from it).
    FailureInfo& info = c.info;
    if (j.contains("failure_kind") && j["failure_kind"].is_string())
      c.kind = info.kind = outcome("failure_kind", j["failure_kind"].get<std::string>());
    for (const auto& [config, kind] :
         j.value("known_failures", std::map<std::string, std::string>{}))
      info.knownFailures[config] = outcome("known_failures[\"" + config + "\"]", kind);
    for (const auto& [config, kind] : j.value("triage", std::map<std::string, std::string>{})) {
      std::optional<Outcome> o = outcomeFromName(kind);
      if (!o)
        throw Error(meta.string() + ": triage[\"" + config + "\"] = \"" + kind +
                    "\": not an outcome");
      info.triage[config] = *o;
    }
    info.pattern = j.value("pattern", std::string());
    if (j.contains("culprit") && j["culprit"].is_object()) {
      const auto& cj = j["culprit"];
      Culprit culprit;
      if (!cj.contains("needed") || !cj["needed"].is_array())
        throw Error(meta.string() + ": culprit.needed: expected a list of optimization names");
      for (const auto& name : cj["needed"]) {
        if (!name.is_string())
          throw Error(meta.string() + ": culprit.needed holds " + name.dump() +
                      ": expected an optimization's name");
        culprit.needed.push_back(name.get<std::string>());
      }
      if (cj.contains("workaround") && cj["workaround"].is_string())
        culprit.workaround = cj["workaround"].get<std::string>();
      culprit.workaroundPasses = cj.value("workaround_passes", false);
      const double searched =
          cj.contains("searched") && cj["searched"].is_number() ? cj["searched"].get<double>() : 0;
      culprit.searched = searched >= 0 && searched <= 1e6 ? static_cast<int>(searched) : 0;
      info.culprit = std::move(culprit);
    }
    auto text = [&](const char* field) {
      return j.contains(field) && j[field].is_string() ? j[field].get<std::string>() : "";
    };
    auto number = [&](const char* field, double otherwise) {
      return j.contains(field) && j[field].is_number() ? j[field].get<double>() : otherwise;
    };
    info.property = text("property");
    if (const std::string oracle = text("oracle"); !oracle.empty()) info.oracle = oracle;
    info.backend = text("backend");
    info.engineLibrary = text("engine_library");
    info.engineWorker = text("engine_worker");
    info.configuration = text("configuration");
    info.message = text("message");
    info.title = text("title");
    info.upstream = text("upstream");
    // JSON has no infinity: an error figure written as null was not finite.
    auto figure = [&](const char* field) {
      return j.contains(field) && j[field].is_null() ? std::numeric_limits<double>::infinity()
                                                     : number(field, 0);
    };
    info.maxAbsError = figure("max_abs_error");
    info.maxRelError = figure("max_rel_error");
    info.estimatedError = number("estimated_float_error", -1);
    if (j.contains("tolerance") && j["tolerance"].is_object()) {
      const auto& t = j["tolerance"];
      info.tolerance.rtol = t.value("rtol", info.tolerance.rtol);
      info.tolerance.atol = t.value("atol", info.tolerance.atol);
    }
    // Small counts; a number out of int's range in a hand-edited file reads as not recorded.
    auto count = [&](const char* field) {
      const double v = number(field, 0);
      return v >= 0 && v <= 1e9 ? static_cast<int>(v) : 0;
    };
    info.signal = count("signal");
    info.nodesBefore = count("nodes_before_shrinking");
    info.nodesAfter = count("nodes_after_shrinking");
    info.shrinkSteps = count("shrink_steps");
    info.shrinkSeconds = number("shrink_seconds", 0);
    info.secondsRun = number("seconds_run_until_found", 0);
    const double casesRun = number("cases_run_until_found", 0);
    info.casesRun = casesRun >= 0 && casesRun <= 9e18 ? static_cast<int64_t>(casesRun) : 0;
    info.ops = j.value("ops", std::vector<std::string>{});
    if (j.contains("first_diverging_node") && j["first_diverging_node"].is_object()) {
      const auto& d = j["first_diverging_node"];
      Divergence& divergence = info.divergence.emplace();
      divergence.name = d.value("node", std::string());
      divergence.opType = d.value("op", std::string());
      divergence.output = d.value("output", std::string());
      divergence.detail = d.value("detail", std::string());
      divergence.exposed = d.value("exposed", true);
      divergence.layoutDiffers = d.value("layout_differs", false);
    }
    info.differingOutputs = j.value("differing_outputs", std::map<std::string, std::string>{});
    // The flat fields tools read.
    c.property = info.property;
    c.oracle = info.oracle;
    c.backend = info.backend;
    c.engineLibrary = info.engineLibrary;
    c.engineWorker = info.engineWorker;
    c.configuration = info.configuration;
    c.message = info.message;
    c.maxAbsError = info.maxAbsError;
    c.maxRelError = info.maxRelError;
    c.estimatedError = info.estimatedError;
    c.signal = info.signal;
    c.triage = info.triage;
    c.nodesBefore = info.nodesBefore;
    c.nodesAfter = info.nodesAfter;
    c.knownFailures = info.knownFailures;
    c.pattern = info.pattern;
    if (info.divergence) {
      c.divergingOp = info.divergence->opType;
      c.divergingOutput = info.divergence->output;
      c.divergenceDetail = info.divergence->detail;
    }
    c.differingOutputs = info.differingOutputs;
    c.ops = info.ops;
    c.culprit = info.culprit;
  } catch (const nlohmann::json::exception& e) {
    throw Error(meta.string() + ": not valid nncheck metadata: " + e.what());
  }
}

DrawOptions drawOptionsFor(const CorpusCase& c) {
  DrawOptions o;
  o.highlightOutput = c.divergingOutput;
  for (const auto& [name, how] : c.differingOutputs) o.notes[name] = how;
  if (!c.divergingOutput.empty() && !c.divergenceDetail.empty())
    o.notes[c.divergingOutput] = c.divergenceDetail;
  return o;
}

CorpusCase loadCorpusCase(const fs::path& caseDir) {
  CorpusCase c;
  c.dir = caseDir;
  TestCase& tc = c.testCase;
  tc.model = loadSoundCaseModel(caseDir, &c.upgraded);
  tc.inputs = loadTestDataSet(tc.model, caseDir / "test_data_set_0").inputs;
  const fs::path meta = caseDir / "nncheck.json";
  std::error_code ec;
  // Absent is a case without a record; anything else there (a link, even a dangling one, a
  // FIFO, a folder) makes the case unreadable, so that its marks are never silently lost.
  if (fs::symlink_status(meta, ec).type() == fs::file_type::not_found) return c;
  readCaseMetadata(readFile(meta, Links::Refuse, static_cast<int64_t>(kMaxMetadataBytes)), meta, c);
  return c;
}

TestCase loadCase(const fs::path& caseDir) { return loadCorpusCase(caseDir).testCase; }

bool addKnownFailures(const fs::path& caseDir, const std::map<std::string, Outcome>& marks) {
  const CorpusCase c = loadCorpusCase(caseDir);  // checks the record before it is changed
  std::map<std::string, Outcome> all = c.knownFailures;
  for (const auto& [config, kind] : marks) all.emplace(config, kind);
  if (all == c.knownFailures) return false;
  // Only the marks change: every other field stays as the campaign that saved the case wrote it.
  const fs::path meta = caseDir / "nncheck.json";
  std::error_code ec;
  nlohmann::ordered_json j = fs::exists(meta, ec)
                                 ? nlohmann::ordered_json::parse(readFile(meta, Links::Refuse))
                                 : nlohmann::ordered_json::object();
  j["known_failures"] = outcomeNames(all);
  writeFileAtomic(meta, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return true;
}

std::vector<fs::path> corpusCaseDirs(const fs::path& corpus) {
  return findBackendTestCases(corpus);
}

std::vector<CorpusCase> loadCorpus(const fs::path& corpus) {
  std::vector<CorpusCase> out;
  for (const fs::path& dir : corpusCaseDirs(corpus)) out.push_back(loadCorpusCase(dir));
  return out;
}

std::set<std::string> opsWithKnownFailures(const fs::path& corpus,
                                           const std::string& configuration) {
  std::set<std::string> ops;
  for (const CorpusCase& c : loadCorpus(corpus)) {
    if (c.knownFailures.empty()) continue;
    if (!configuration.empty() && !c.knownFailures.count(configuration)) continue;
    if (!c.divergingOp.empty())
      ops.insert(c.divergingOp);
    else
      ops.insert(c.ops.begin(), c.ops.end());
  }
  return ops;
}

}  // namespace nncheck
