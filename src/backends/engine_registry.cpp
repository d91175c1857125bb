// The engine registry, and loading engines from shared libraries.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck {

namespace {
void requireFactory(const EngineInfo& info) {
  if (!info.make) throw Error("engine '" + info.name + "': no factory (EngineInfo::make)");
}
}  // namespace

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
