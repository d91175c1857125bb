// The engine registry, and loading engines from shared libraries.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string_view>

#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck {

namespace {
void requireFactory(const EngineInfo& info) {
  if (!info.make) throw Error("engine '" + info.name + "': no factory (EngineInfo::make)");
}

std::vector<std::string>& pluginFolders() {
  static std::vector<std::string> folders;
  return folders;
}

constexpr std::string_view kPluginPrefix = "libnncheck-engine-", kPluginSuffix = ".so";

// The engines whose plug-ins are in the folders, by name.
std::vector<std::string> pluginEngines() {
  std::set<std::string> out;
  for (const std::string& folder : pluginFolders()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
      const std::string file = entry.path().filename().string();
      if (file.size() > kPluginPrefix.size() + kPluginSuffix.size() &&
          file.starts_with(kPluginPrefix) && file.ends_with(kPluginSuffix))
        out.insert(file.substr(kPluginPrefix.size(),
                               file.size() - kPluginPrefix.size() - kPluginSuffix.size()));
    }
  }
  return {out.begin(), out.end()};
}

// Loads a built-in engine's plug-in from the first folder that has it (loading one twice is
// the loader's no-op). Unlike loadEngineLibrary, its engines record no library: they are part
// of nncheck, and a replay names them by --backend alone.
bool loadPluginOf(const std::string& engine) {
  if (engine.find('/') != std::string::npos) return false;  // a name, never a path
  for (const std::string& folder : pluginFolders()) {
    const std::string path =
        (std::filesystem::path(folder) / enginePluginFileName(engine)).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = ::dlerror();
      throw Error("engine '" + engine + "': its plug-in " + path +
                  " does not load: " + (why ? why : "unknown error"));
    }
    const std::vector<std::string> registered = engines().names();
    if (!std::binary_search(registered.begin(), registered.end(), engine))
      throw Error("engine '" + engine + "': its plug-in " + path +
                  " registers no engine of that name");
    return true;
  }
  return false;
}
}  // namespace

void addEnginePluginFolder(const std::string& folder) { pluginFolders().push_back(folder); }

std::string enginePluginFileName(const std::string& engine) {
  return std::string(kPluginPrefix) + engine + std::string(kPluginSuffix);
}

int& detail::pluginRegistrations() {
  static int count = 0;
  return count;
}

std::string& detail::loadingLibrary() {
  static std::string path;
  return path;
}

EngineRegistry::EngineRegistry()
    : Registry("engine",
               "a shared library of engines loads with --engine-lib or NNCHECK_ENGINE_LIBS",
               &requireFactory) {}

std::unique_ptr<Backend> EngineRegistry::make(const std::string& name,
                                              const std::string& configuration) const {
  std::unique_ptr<Backend> engine = at(name).make(configuration);
  if (!engine) throw Error("engine '" + name + "': its factory returned no engine");
  return engine;
}

std::vector<std::string> EngineRegistry::configurations(const std::string& name) const {
  const EngineInfo& e = at(name);
  std::vector<std::string> out = e.configurations ? e.configurations() : std::vector<std::string>{};
  if (out.empty()) out.push_back("");
  return out;
}

std::string EngineRegistry::key(const std::string& name, const std::string& configuration) const {
  const EngineInfo& e = at(name);
  return e.key ? e.key(configuration) : configuration;
}

Capabilities EngineRegistry::baseCapabilities(const std::string& name) const {
  const EngineInfo& e = at(name);
  if (e.baseCapabilities) return e.baseCapabilities();
  Capabilities caps = make(name, "")->capabilities();
  caps.ops.clear();
  caps.opWeights.clear();
  return caps;
}

EngineRegistry& engines() {
  static EngineRegistry* registry = [] {
    auto* r = new EngineRegistry;  // never destroyed: engines may register from other statics
    r->setOnDemand({.load = &loadPluginOf, .list = &pluginEngines});
    r->add({.name = "reference",
            .description = "nncheck's reference interpreter (the ONNX spec), no configurations",
            .make = [](const std::string& config) -> std::unique_ptr<Backend> {
              if (!config.empty())
                throw Error("--config " + config + ": the reference has no configurations");
              return std::make_unique<ReferenceBackend>();
            }});
    return r;
  }();
  return *registry;
}

void loadEngineLibrary(const std::string& path) {
  static std::set<std::string> loaded;
  std::error_code ec;
  const std::string key = std::filesystem::weakly_canonical(path, ec).string();
  if (loaded.count(key)) return;
  if (!std::filesystem::exists(path)) throw Error("--engine-lib " + path + ": no such file");
  const int before = detail::pluginRegistrations();
  // The library's registrations remember where they came from, for the commands that replay
  // their findings.
  struct Loading {
    explicit Loading(std::string p) { detail::loadingLibrary() = std::move(p); }
    ~Loading() { detail::loadingLibrary().clear(); }
  } loading(std::filesystem::absolute(path, ec).lexically_normal().string());
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw Error("--engine-lib " + path + ": cannot load it: " + (why ? why : "unknown error"));
  }
  loaded.insert(key);
  try {
    engines().names();
  } catch (const Error& e) {
    throw Error("--engine-lib " + path + ": " + e.what());
  }
  if (detail::pluginRegistrations() == before)
    throw Error("--engine-lib " + path +
                ": it registers no engine or oracle (use NNCHECK_REGISTER_ENGINE or "
                "NNCHECK_REGISTER_ORACLE in the library)");
}

void loadEngineLibrariesFromEnvironment() {
  const char* list = std::getenv("NNCHECK_ENGINE_LIBS");
  if (!list) return;
  std::string s(list);
  for (size_t from = 0; from <= s.size();) {
    size_t to = s.find(':', from);
    if (to == std::string::npos) to = s.size();
    if (to > from) loadEngineLibrary(s.substr(from, to - from));
    from = to + 1;
  }
}

}  // namespace nncheck
