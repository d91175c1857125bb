// nncheck show: a picture of a model file or a saved case (render/picture.h), on standard
// output or into a file.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "core/backend_test.h"
#include "core/files.h"
#include "harness/corpus_store.h"
#include "nncheck/corpus.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "render/picture.h"

namespace nncheck::cli {
namespace {

namespace fs = std::filesystem;

struct ShowOptions {
  std::string path;
  std::string format;  // empty: from -o's extension, else svg
  std::string out;
};

// The format asked for, else the output file's extension when it names one, else svg.
PictureFormat formatFor(const ShowOptions& o) {
  if (!o.format.empty()) return pictureFormat(o.format);
  const std::string ext = fs::path(o.out).extension().string();
  for (PictureFormat f :
       {PictureFormat::Svg, PictureFormat::Png, PictureFormat::Dot, PictureFormat::Text})
    if (ext == "." + std::string(pictureFormatName(f))) return f;
  return ext == ".txt" ? PictureFormat::Text : PictureFormat::Svg;
}

int show(const ShowOptions& o) {
  try {
    const PictureFormat format = formatFor(o);
    const fs::path p(o.path);
    std::error_code ec;
    Model model;
    DrawOptions drawing;
    if (fs::is_directory(p, ec)) {
      if (!isCaseFolder(p)) throw Error(p.string() + ": a folder without model.onnx is not a case");
      const CorpusCase c = loadCorpusCase(p);  // a case folder: its failure is highlighted
      model = c.testCase.model;
      drawing = drawOptionsFor(c);
    } else if (fs::exists(p, ec)) {
      model = loadModel(p);
    } else {
      throw Error(p.string() + ": no such model file or case folder");
    }
    const std::string picture = drawModel(model, format, drawing);
    if (!o.out.empty()) {
      writeOutputFile(o.out, picture);
      return 0;
    }
    if (format == PictureFormat::Png && ::isatty(STDOUT_FILENO))
      throw Error("a PNG is not written to a terminal: give -o FILE");
    std::fwrite(picture.data(), 1, picture.size(), stdout);
    std::fflush(stdout);
    if (std::ferror(stdout)) throw Error("cannot write the picture to standard output");
  } catch (const Error& e) {
    std::cerr << "nncheck show: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace

void addShowCommand(CLI::App& app) {
  auto o = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand(
      "show",
      "Draw a model (an .onnx file) or a saved case (a folder with model.onnx; its first "
      "diverging node highlighted and its differing outputs noted from nncheck.json) with "
      "Graphviz.");
  cmd->add_option("model", o->path, "the .onnx file or case folder")->required();
  cmd->add_option("--format", o->format,
                  "svg, png, dot (Graphviz's source) or text (default: from -o's extension, "
                  "else svg)");
  cmd->add_option("-o,--output", o->out, "the file to write (default: standard output)");
  cmd->callback([o] { setExitCode(show(*o)); });
}

}  // namespace nncheck::cli
