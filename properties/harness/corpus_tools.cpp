#include "harness/corpus_tools.h"

#include <map>
#include <optional>

#include "core/backend_test.h"
#include "core/files.h"
#include "harness/case_files.h"
#include "harness/conformance.h"
#include "harness/corpus_store.h"
#include "harness/probe.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/oracle.h"

namespace nncheck {
namespace fs = std::filesystem;
namespace {

// A case as merging sees it: where it is, where it goes, what it is deduplicated on.
struct MergeCandidate {
  fs::path dir;
  fs::path relative;  // <property>/<hash>, below its corpus
  std::string key;    // <property> + pattern, or the relative folder for a case without one
  std::optional<Outcome> kind;
  std::map<std::string, Outcome> marks;  // its known failures
};

MergeCandidate candidate(const fs::path& corpus, const fs::path& dir) {
  const CorpusCase c = loadCorpusCase(dir);
  MergeCandidate m{dir, dir.lexically_relative(corpus), "", c.kind, c.knownFailures};
  m.key = c.pattern.empty() ? m.relative.string()
                            : m.relative.parent_path().string() + "\n" + c.pattern;
  return m;
}

std::vector<MergeCandidate> candidatesOf(const fs::path& corpus, MergeResult& r) {
  const CaseScan scan = scanBackendTestCases(corpus);
  r.skipped.insert(r.skipped.end(), scan.leftOut.begin(), scan.leftOut.end());
  std::vector<MergeCandidate> out;
  for (const fs::path& dir : scan.cases) out.push_back(candidate(corpus, dir));
  return out;
}

// The files a case folder is made of: the backend-test layout, its record and its picture.
bool isCaseFile(const fs::path& relative) {
  return isBackendTestFile(relative) || relative == "nncheck.json" || relative == "model.svg";
}

// Copies the files of a case folder's layout into `to`; anything else (a link, a file or
// folder of another name) is left behind and listed in `skipped`. Links are never followed, and
// a folder is made only for a file copied into it.
void copyCaseFiles(const fs::path& from, const fs::path& to, std::vector<std::string>& skipped) {
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path relative = it->path().lexically_relative(from);
    const fs::file_type type = it->symlink_status().type();
    if (type == fs::file_type::directory && !relative.has_parent_path()) continue;  // data sets
    if (type == fs::file_type::regular && isCaseFile(relative)) {
      fs::create_directories((to / relative).parent_path());
      writeFileAtomic(to / relative, readFile(it->path(), Links::Refuse));
      continue;
    }
    if (type == fs::file_type::directory) it.disable_recursion_pending();
    skipped.push_back(it->path().string() + (type == fs::file_type::symlink
                                                 ? ": a symbolic link, not copied"
                                                 : ": not a file of a case, not copied"));
  }
}

// Copies a case folder atomically: false when the target holds a case already (another merge
// into the same corpus saved it first).
bool copyCase(const fs::path& from, const fs::path& to, std::vector<std::string>& skipped) {
  try {
    return publishCase(to, [&](const fs::path& tmp) { copyCaseFiles(from, tmp, skipped); });
  } catch (const fs::filesystem_error& e) {
    throw Error(to.string() + ": cannot copy the case from " + from.string() + ": " +
                e.code().message());
  }
}

// Whether one of two folders is the other or inside it.
bool overlap(const fs::path& a, const fs::path& b) {
  auto full = [](const fs::path& p) {
    std::error_code ec;
    fs::path f = fs::weakly_canonical(p, ec);
    return f.has_filename() ? f : f.parent_path();  // "corpus/" is "corpus"
  };
  auto within = [](const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (const fs::path& part : outer)
      if (i == inner.end() || *i++ != part) return false;
    return true;
  };
  const fs::path x = full(a), y = full(b);
  return within(x, y) || within(y, x);
}

}  // namespace

MergeResult mergeCorpora(const std::vector<fs::path>& from, const fs::path& into) {
  for (const fs::path& source : from) {
    std::error_code ec;
    if (!fs::is_directory(source, ec)) throw Error(source.string() + ": no such corpus folder");
    if (fs::equivalent(source, into, ec))
      throw Error(source.string() + ": is the corpus merged into; name it only after --into");
    if (overlap(source, into))
      throw Error(source.string() + " and " + into.string() +
                  " overlap (one holds the other): merging would copy the cases again");
  }
  MergeResult r;
  std::map<std::string, MergeCandidate> kept;  // key -> the case already in `into`
  for (MergeCandidate& c : candidatesOf(into, r)) kept.emplace(c.key, std::move(c));
  std::map<std::string, MergeCandidate> chosen;  // key -> the source case to copy
  // key -> every known-failure mark of the key's cases, so that none is lost with a duplicate
  std::map<std::string, std::map<std::string, Outcome>> marks;
  for (const fs::path& source : from)
    for (MergeCandidate& c : candidatesOf(source, r)) {
      marks[c.key].insert(c.marks.begin(), c.marks.end());
      if (kept.count(c.key)) {
        ++r.duplicates;
        continue;
      }
      auto [at, fresh] = chosen.try_emplace(c.key, c);
      if (fresh) continue;
      ++r.duplicates;
      if (c.marks.size() > at->second.marks.size()) at->second = std::move(c);
    }
  for (const auto& [key, c] : chosen) {
    const fs::path target = into / c.relative;
    if (!copyCase(c.dir, target, r.skipped)) {
      // The same folder name is the same content: a duplicate, unless its record says
      // otherwise (a hand-edited pattern or kind), which is for a person to settle.
      const MergeCandidate there = candidate(into, target);
      if (there.key != c.key || there.kind != c.kind) {
        r.conflicts.push_back(target.string() + " records another pattern or kind than " +
                              c.dir.string() + "; neither changed (nor its marks merged)");
        continue;
      }
      ++r.duplicates;
    } else {
      ++r.copied;
    }
    if (addKnownFailures(target, marks[key])) ++r.marked;
  }
  for (const auto& [key, c] : kept)
    if (auto m = marks.find(key); m != marks.end() && addKnownFailures(c.dir, m->second))
      ++r.marked;
  return r;
}

CorpusCheck checkCorpus(const fs::path& corpus, const CorpusCheckOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(corpus, ec)) throw Error(corpus.string() + ": no such corpus folder");
  if (!o.oracle.empty()) (void)oracles().at(o.oracle);  // an unknown name fails before any case
  std::vector<Isolated> isolatedEngines;
  for (const CampaignEngine& e : o.engines)
    isolatedEngines.push_back(isolated(*e.backend, o.timeout));
  std::optional<Isolated> baseline;
  if (o.baseline.backend) baseline.emplace(*o.baseline.backend, o.timeout);
  for (const Isolated& e : isolatedEngines) checkEngineSetUp(e);
  if (baseline) checkEngineSetUp(*baseline);
  CorpusCheck out;
  CaseScan scan = scanBackendTestCases(corpus);
  out.leftOut = std::move(scan.leftOut);
  for (const fs::path& dir : scan.cases) {
    CaseCheck check{dir, true, ""};
    auto differs = [&](const std::string& what) {
      check.ok = false;
      check.detail += (check.detail.empty() ? "" : "; ") + what;
    };
    std::optional<CorpusCase> c;
    try {
      c = loadCorpusCase(dir);
    } catch (const std::exception& e) {
      check.ok = false;
      check.detail = std::string("does not load: ") + e.what();
      ++out.broken;
    }
    // The oracle that judges it: a case naming one no library registered, or one this engine
    // cannot serve, is reported and counted as not loading, and the other cases still run.
    const OracleInfo* oracle = nullptr;
    const std::string ranOn = c ? campaignEngine(c->property) : "";
    const bool otherEngine = !ranOn.empty() && !o.engineName.empty() && ranOn != o.engineName;
    if (c) try {
        oracle = &oracles().at(o.oracle.empty() ? c->oracle : o.oracle);
        if (oracle->needsBaseline && !baseline && !o.engines.empty() && !otherEngine)
          throw Error("judged by the oracle '" + oracle->name +
                      "', which needs the engine's baseline configuration, and the engine names "
                      "none");
      } catch (const Error& e) {
        check.ok = false;
        check.detail = (dir / "nncheck.json").string() + ": cannot be judged: " + e.what();
        ++out.broken;
        c.reset();
      }
    if (c) {
      const CaseResult reference = runTestCase(dir);
      const bool savedWithoutOutputs =
          reference.outcome == Outcome::Unsupported && c->oracle != "reference";
      if (reference.outcome != Outcome::Pass && !savedWithoutOutputs)
        differs("the reference no longer computes the saved outputs: " + reference.message);
      auto recordedAt = [&](const std::string& config) -> std::optional<Outcome> {
        if (auto t = c->triage.find(config); t != c->triage.end()) return t->second;
        if (config == c->configuration && c->kind) return *c->kind;
        return std::nullopt;
      };
      bool anyRecorded = false;
      for (const CampaignEngine& e : o.engines)
        anyRecorded |= recordedAt(e.configuration).has_value();
      // Nothing recorded for any configuration given (the case names its configuration otherwise):
      // the engine still runs it, on each, and says so, rather than checking the reference alone.
      check.unrecorded = !anyRecorded && !o.engines.empty() && !otherEngine;
      for (size_t e = 0; e < o.engines.size() && !otherEngine; ++e) {
        const std::string& config = o.engines[e].configuration;
        const std::optional<Outcome> recorded = recordedAt(config);
        if (!recorded && !check.unrecorded) continue;
        const Verdict v =
            judgeWith(*oracle, {isolatedEngines[e], baseline ? &*baseline : nullptr}, c->testCase);
        const std::string at =
            " at " + (config.empty() ? std::string("its configuration") : config);
        if (!recorded)
          check.detail += (check.detail.empty() ? "" : "; ") + std::string(outcomeName(v.outcome)) +
                          at + " (no outcome recorded there)";
        else if (v.outcome == *recorded)
          check.detail += (check.detail.empty() ? "" : "; ") + std::string(outcomeName(v.outcome)) +
                          at + ", as recorded";
        else
          differs(std::string(outcomeName(v.outcome)) + at + ", recorded " +
                  std::string(outcomeName(*recorded)));
      }
      if (check.unrecorded) {
        std::string recorded = c->kind
                                   ? std::string(outcomeName(*c->kind)) + " at " +
                                         (c->configuration.empty() ? std::string("no configuration")
                                                                   : "'" + c->configuration + "'")
                                   : std::string("nothing");
        check.detail += "; recorded: " + recorded;
      }
      ++(check.ok ? out.ok : out.changed);
      if (check.ok && check.unrecorded) ++out.unrecorded;
    }
    if (o.onCase) o.onCase(check);
    out.cases.push_back(std::move(check));
  }
  return out;
}

}  // namespace nncheck
