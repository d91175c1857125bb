// libFuzzer: corpus folders built from the input (a real case's files, any bytes, links out of
// the corpus and into it, FIFOs, folders where files belong, temporaries of killed saves) fed to
// what `nncheck corpus list|check|merge` and `nncheck report` run: the scan, the case reader,
// the check against the reference, the merge and the report's reading. Every tree must end in
// results or nncheck::Error, never a crash or a hang, and a merge must copy only regular files of
// the layout: nothing a link points to reaches the merged corpus.
#include <fuzzer/FuzzedDataProvider.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/backend_test.h"
#include "core/files.h"
#include "harness/corpus_store.h"
#include "harness/corpus_tools.h"
#include "harness/report.h"
#include "nncheck/corpus.h"
#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"

namespace {

namespace fs = std::filesystem;

// What the secret file outside the corpus holds: no file of a merged corpus may contain it.
constexpr const char* kSecret = "NNCHECK-FUZZ-SECRET-7f3a";

struct Workspace {
  fs::path root, source, into, outside;
  std::vector<std::string> caseFiles;  // the bytes of a real saved case's files, by kind below
  std::vector<fs::path> caseNames;     // model.onnx, nncheck.json, test_data_set_0/input_0.pb, ...
};

Workspace& workspace() {
  static Workspace w = [] {
    Workspace w;
    std::string pattern = (fs::temp_directory_path() / "nncheck_corpus_fuzz_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) std::abort();
    w.root = pattern;
    w.source = w.root / "source";
    w.into = w.root / "into";
    w.outside = w.root / "outside";
    // A real case, as a campaign saves it: small, so the reference checks it in microseconds.
    nncheck::GeneratorConfig g;
    g.nodes = 2;
    nncheck::FailureInfo info;
    info.pattern = "fuzz pattern";
    const fs::path saved = nncheck::saveFailure(w.root / "template", "fuzz-reference",
                                                nncheck::makeTestCase(g, 1), info);
    for (const auto& e : fs::recursive_directory_iterator(saved))
      if (e.is_regular_file()) {
        w.caseNames.push_back(e.path().lexically_relative(saved));
        w.caseFiles.push_back(nncheck::readFile(e.path()));
      }
    // Models built from the input may be slow to run: a bounded check, not a hang.
    nncheck::setReferenceTimeLimit(std::chrono::milliseconds(100));
    return w;
  }();
  return w;
}

// Where entries go: mostly inside a few case folders (so that a real case and a link or FIFO
// beside its files meet often), now and then anywhere down to five folders deep.
const char* const kCaseFolders[] = {"fuzz-reference/0123456789abcdef",
                                    "fuzz-reference/fedcba9876543210", "S.T/0000000000000001",
                                    "loose"};
const char* const kInside[] = {"", "", "test_data_set_0", "test_data_set_1", "sub"};
const char* const kFolders[] = {
    "fuzz-reference",  "S.T",       "0123456789abcdef", "case",       "test_data_set_0",
    "test_data_set_1", ".patterns", "x.tmp.1",          "model.onnx", "deep"};
const char* const kFiles[] = {"model.onnx",  "nncheck.json", "model.svg", "input_0.pb",
                              "output_0.pb", "notes.txt",    "input_1.pb"};

fs::path pickDir(FuzzedDataProvider& in, const fs::path& base) {
  if (in.ConsumeIntegralInRange(0, 7) > 0)
    return base / in.PickValueInArray(kCaseFolders) / in.PickValueInArray(kInside);
  fs::path p = base;
  const int depth = in.ConsumeIntegralInRange(0, 5);
  for (int i = 0; i < depth; ++i) p /= in.PickValueInArray(kFolders);
  return p;
}

// Writes a file of the tree, unless something other than a regular file is there: a write
// would block on a FIFO or go through a link.
void writeBytes(const fs::path& file, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  const fs::file_status st = fs::symlink_status(file, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) return;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// Builds a tree below w.source from the input.
void buildTree(FuzzedDataProvider& in, const Workspace& w) {
  std::error_code ec;
  for (int step = 0; step < 24 && in.remaining_bytes() > 0; ++step) {
    const fs::path dir = pickDir(in, w.source);
    const fs::path file = dir / in.PickValueInArray(kFiles);
    switch (in.ConsumeIntegralInRange(0, 7)) {
      case 0:  // a whole real case
        for (size_t i = 0; i < w.caseNames.size(); ++i)
          writeBytes(dir / w.caseNames[i], w.caseFiles[i]);
        break;
      case 1: {  // one real file, possibly under another name
        const size_t i = in.ConsumeIntegralInRange<size_t>(0, w.caseFiles.size() - 1);
        writeBytes(in.ConsumeBool() ? dir / w.caseNames[i] : file, w.caseFiles[i]);
        break;
      }
      case 2:  // any bytes
        writeBytes(file, in.ConsumeRandomLengthString(512));
        break;
      case 3: {  // a real file with bytes spliced in (records and tensors near the real ones)
        const size_t i = in.ConsumeIntegralInRange<size_t>(0, w.caseFiles.size() - 1);
        std::string bytes = w.caseFiles[i];
        const size_t at = in.ConsumeIntegralInRange<size_t>(0, bytes.size());
        bytes.replace(at, in.ConsumeIntegralInRange<size_t>(0, 16),
                      in.ConsumeRandomLengthString(64));
        writeBytes(dir / w.caseNames[i], bytes);
        break;
      }
      case 4: {  // a link: out of the corpus, into it, to a device, dangling or to itself
        fs::create_directories(dir, ec);
        const fs::path targets[] = {
            w.outside / "secret", w.outside / "folder", "/dev/zero", w.source, dir / "gone", file};
        fs::create_symlink(targets[in.ConsumeIntegralInRange(0, 5)], file, ec);
        break;
      }
      case 5:  // a FIFO where a file belongs
        fs::create_directories(dir, ec);
        ::mkfifo(file.c_str(), 0600);
        break;
      case 6:  // a folder where a file belongs
        fs::create_directories(file, ec);
        break;
      case 7:  // a file removed
        fs::remove_all(file, ec);
        break;
    }
  }
}

bool holdsSecret(const fs::path& file) {
  try {
    return nncheck::readFile(file, nncheck::Links::Refuse).find(kSecret) != std::string::npos;
  } catch (const nncheck::Error&) {
    return false;
  }
}

// What a merge may leave: folders and regular files of cases' layouts, none holding the secret.
void checkMerged(const fs::path& into) {
  std::error_code ec;
  if (!fs::exists(into, ec)) return;
  for (auto it = fs::recursive_directory_iterator(into, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::file_type type = it->symlink_status().type();
    if (type == fs::file_type::directory) continue;
    if (type != fs::file_type::regular) __builtin_trap();  // a link or FIFO was copied
    if (holdsSecret(it->path())) __builtin_trap();         // a link was followed
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Workspace& w = workspace();
  std::error_code ec;
  fs::remove_all(w.source, ec);
  fs::remove_all(w.into, ec);
  fs::create_directories(w.source, ec);
  // Outside the corpus, made afresh: the tree's own building may write through its links.
  fs::remove_all(w.outside, ec);
  fs::create_directories(w.outside / "folder", ec);
  std::ofstream(w.outside / "secret") << kSecret;
  std::ofstream(w.outside / "folder" / "model.onnx") << kSecret;
  FuzzedDataProvider in(data, size);
  buildTree(in, w);

  // Only nncheck::Error is an answer: anything else escaping (std::filesystem_error, say) ends
  // the run as a finding, as does a merged corpus that breaks checkMerged's rules.
  // corpus list
  for (const fs::path& dir : nncheck::scanBackendTestCases(w.source).cases) {
    try {
      (void)nncheck::loadCorpusCase(dir);
    } catch (const nncheck::Error&) {
    }
  }
  // corpus check without an engine, and report's reading
  try {
    (void)nncheck::checkCorpus(w.source);
    (void)nncheck::corpusReport(w.source);
  } catch (const nncheck::Error&) {
  }
  // corpus merge: into a fresh corpus, then again (everything a duplicate)
  try {
    (void)nncheck::mergeCorpora({w.source}, w.into);
    (void)nncheck::mergeCorpora({w.source}, w.into);
  } catch (const nncheck::Error&) {
  }
  checkMerged(w.into);
  return 0;
}
