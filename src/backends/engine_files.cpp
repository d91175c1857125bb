#include "backends/engine_files.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "nncheck/error.h"

#ifndef NNCHECK_BUILD_ENGINES_DIR
#error "NNCHECK_BUILD_ENGINES_DIR must name the build's engines folder"
#endif

namespace nncheck {

namespace {

namespace fs = std::filesystem;

// Where an engine's files may be, in the order they are looked in.
std::vector<fs::path> engineFolders(const void* code) {
  std::vector<fs::path> folders;
  Dl_info info{};
  if (code && ::dladdr(code, &info) != 0 && info.dli_fname) {
    std::error_code ec;
    const fs::path object = fs::canonical(info.dli_fname, ec);
    if (!ec) folders.push_back(object.parent_path());
  }
  for (const std::string& f : enginePluginFolders()) folders.emplace_back(f);
  folders.emplace_back(NNCHECK_BUILD_ENGINES_DIR);
  return folders;
}

}  // namespace

std::string engineFile(const void* code, const std::string& relative) {
  std::string looked;
  for (const fs::path& folder : engineFolders(code)) {
    std::error_code ec;
    if (fs::exists(folder / relative, ec)) return (folder / relative).lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + folder.string();
  }
  throw Error("cannot find " + relative + " of nncheck's engines (looked in " + looked +
              "): build nncheck, or install it, with its engines");
}

std::string engineKnownBugs(const std::string& engine) {
  static const char here = 0;
  for (const fs::path& folder : engineFolders(&here)) {
    std::error_code ec;
    if (fs::is_directory(folder / engine / "known", ec))
      return (folder / engine / "known").lexically_normal().string();
  }
  return "";
}

std::string pythonSdkFolder() {
  static const char here = 0;
  const std::string init = engineFile(&here, "python/nncheck_engine/__init__.py");
  return std::filesystem::path(init).parent_path().parent_path().string();
}

std::string environmentPython(const std::string& environment, const std::string& builtDir) {
  const char* dir = std::getenv("NNCHECK_PYTHON_DIR");
  return (dir && *dir ? std::string(dir) : builtDir) + "/" + environment + "/bin/python";
}

}  // namespace nncheck
