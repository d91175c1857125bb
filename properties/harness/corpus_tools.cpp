#include "nncheck/corpus_tools.h"

#include <unistd.h>

#include <map>
#include <optional>

#include "nncheck/conformance.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

namespace nncheck {
namespace fs = std::filesystem;
namespace {

// A case as merging sees it: where it is, where it goes, what it is deduplicated on.
struct MergeCandidate {
  fs::path dir;
  fs::path relative;  // <property>/<hash>, below its corpus
  std::string key;    // <property> + pattern, or the relative folder for a case without one
  std::map<std::string, Outcome> marks;  // its known failures
};

std::vector<MergeCandidate> candidatesOf(const fs::path& corpus) {
  std::vector<MergeCandidate> out;
  for (const fs::path& dir : corpusCaseDirs(corpus)) {
    const CorpusCase c = loadCorpusCase(dir);
    MergeCandidate m{dir, dir.lexically_relative(corpus), "", c.knownFailures};
    m.key = c.pattern.empty() ? m.relative.string()
                              : m.relative.parent_path().string() + "\n" + c.pattern;
    out.push_back(std::move(m));
  }
  return out;
}

// Copies a case folder: every file written and synced under a temporary name, then renamed.
void copyCaseAtomic(const fs::path& from, const fs::path& to) {
  fs::path tmp = to;
  tmp += ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(from)) {
      const fs::path target = tmp / e.path().lexically_relative(from);
      if (e.is_directory())
        fs::create_directories(target);
      else if (e.is_regular_file())
        writeFileAtomic(target, readFile(e.path()));
    }
    fs::create_directories(to.parent_path());
    fs::rename(tmp, to);
    syncPath(to.parent_path());
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw Error(to.string() + ": cannot copy the case from " + from.string() + ": " +
                e.code().message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace

MergeResult mergeCorpora(const std::vector<fs::path>& from, const fs::path& into) {
  for (const fs::path& source : from) {
    std::error_code ec;
    if (!fs::is_directory(source, ec)) throw Error(source.string() + ": no such corpus folder");
    if (fs::equivalent(source, into, ec))
      throw Error(source.string() + ": is the corpus merged into; name it only after --into");
  }
  MergeResult r;
  std::map<std::string, MergeCandidate> kept;  // key -> the case already in `into`
  for (MergeCandidate& c : candidatesOf(into)) kept.emplace(c.key, std::move(c));
  std::map<std::string, MergeCandidate> chosen;  // key -> the source case to copy
  // key -> every known-failure mark of the key's cases, so that none is lost with a duplicate
  std::map<std::string, std::map<std::string, Outcome>> marks;
  for (const fs::path& source : from)
    for (MergeCandidate& c : candidatesOf(source)) {
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
    std::error_code ec;
    if (fs::exists(target / "model.onnx", ec)) {  // the same content, saved there already
      ++r.duplicates;
    } else {
      copyCaseAtomic(c.dir, target);
      ++r.copied;
    }
    if (addKnownFailures(target, marks[key])) ++r.marked;
  }
  for (const auto& [key, c] : kept)
    if (auto m = marks.find(key); m != marks.end() && addKnownFailures(c.dir, m->second))
      ++r.marked;
  return r;
}

CorpusCheck checkCorpus(const fs::path& corpus, const std::vector<CampaignEngine>& engines,
                        const std::string& engineName, std::chrono::milliseconds timeout,
                        const std::function<void(const CaseCheck&)>& onCase) {
  std::error_code ec;
  if (!fs::is_directory(corpus, ec)) throw Error(corpus.string() + ": no such corpus folder");
  std::vector<Isolated> isolatedEngines;
  for (const CampaignEngine& e : engines) isolatedEngines.push_back(isolated(*e.backend, timeout));
  CorpusCheck out;
  for (const fs::path& dir : corpusCaseDirs(corpus)) {
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
    if (c) {
      const CaseResult reference = runTestCase(dir);
      if (reference.outcome != Outcome::Pass)
        differs("the reference no longer computes the saved outputs: " + reference.message);
      const bool otherEngine = c->property.rfind("fuzz-", 0) == 0 && !engineName.empty() &&
                               c->property != "fuzz-" + engineName;
      for (size_t e = 0; e < engines.size() && !otherEngine; ++e) {
        const std::string& config = engines[e].configuration;
        std::optional<Outcome> recorded;
        if (auto t = c->triage.find(config); t != c->triage.end())
          recorded = t->second;
        else if (config == c->configuration && c->kind)
          recorded = *c->kind;
        if (!recorded) continue;
        const Verdict v =
            judge([&](const TestCase& tc) { assertMatchesReference(isolatedEngines[e], tc); },
                  c->testCase);
        const std::string at =
            " at " + (config.empty() ? std::string("its configuration") : config);
        if (v.outcome == *recorded)
          check.detail += (check.detail.empty() ? "" : "; ") + std::string(outcomeName(v.outcome)) +
                          at + ", as recorded";
        else
          differs(std::string(outcomeName(v.outcome)) + at + ", recorded " +
                  std::string(outcomeName(*recorded)));
      }
      ++(check.ok ? out.ok : out.changed);
    }
    if (onCase) onCase(check);
    out.cases.push_back(std::move(check));
  }
  return out;
}

}  // namespace nncheck
