#include "backends/engine_files.h"

#include <dlfcn.h>

#include <filesystem>

#include "nncheck/error.h"

#ifndef NNCHECK_BUILD_ENGINES_DIR
#error "NNCHECK_BUILD_ENGINES_DIR must name the build's engines folder"
#endif

namespace nncheck {

std::string engineFile(const void* code, const std::string& relative) {
  namespace fs = std::filesystem;
  std::vector<fs::path> folders;
  Dl_info info{};
  if (code && ::dladdr(code, &info) != 0 && info.dli_fname) {
    std::error_code ec;
    const fs::path object = fs::canonical(info.dli_fname, ec);
    if (!ec) folders.push_back(object.parent_path());
  }
  for (const std::string& f : enginePluginFolders()) folders.emplace_back(f);
  folders.emplace_back(NNCHECK_BUILD_ENGINES_DIR);
  std::string looked;
  for (const fs::path& folder : folders) {
    std::error_code ec;
    if (fs::exists(folder / relative, ec)) return (folder / relative).lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + folder.string();
  }
  throw Error("cannot find " + relative + " of nncheck's engines (looked in " + looked +
              "): build nncheck, or install it, with its engines");
}

std::string pythonSdkFolder() {
  static const char here = 0;
  const std::string init = engineFile(&here, "python/nncheck_engine/__init__.py");
  return std::filesystem::path(init).parent_path().parent_path().string();
}

}  // namespace nncheck
