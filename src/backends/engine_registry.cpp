// The engine registry, and loading engines from shared libraries.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"

namespace nncheck {

void EngineRegistry::add(EngineInfo info) {
  if (info.name.empty()) throw Error("engine registry: an engine has no name");
  if (!info.make) throw Error("engine '" + info.name + "': no factory (EngineInfo::make)");
  if (engines_.count(info.name)) throw Error("engine '" + info.name + "' is registered twice");
  const std::string name = info.name;
  engines_.emplace(name, std::move(info));
}

void EngineRegistry::addAtStartup(EngineInfo (*describe)()) noexcept {
  try {
    add(describe());
  } catch (const std::exception& e) {
    try {
      startupErrors_.push_back(e.what());
    } catch (...) {  // out of memory at startup: nothing to report with
    }
  }
}

void EngineRegistry::throwStartupErrors() const {
  if (startupErrors_.empty()) return;
  std::string all;
  for (const std::string& e : startupErrors_) all += (all.empty() ? "" : "; ") + e;
  throw Error("engine registry: " + all);
}

const EngineInfo& EngineRegistry::at(const std::string& name) const {
  throwStartupErrors();
  auto it = engines_.find(name);
  if (it != engines_.end()) return it->second;
  std::string known;
  for (const auto& [n, e] : engines_) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown engine '" + name + "' (registered: " + known +
              "; a shared library of engines loads with --engine-lib or NNCHECK_ENGINE_LIBS)");
}

std::vector<std::string> EngineRegistry::names() const {
  throwStartupErrors();
  std::vector<std::string> out;
  for (const auto& [n, e] : engines_) out.push_back(n);
  return out;
}

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
  const size_t before = engines().names().size();
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
  if (engines().names().size() == before)
    throw Error("--engine-lib " + path +
                ": it registers no engine (use NNCHECK_REGISTER_ENGINE in the library)");
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
