// The engine registry, and loading engines from shared libraries.
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "backends/child_stderr.h"
#include "backends/engine_files.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "nncheck/test_case.h"

namespace nncheck {

std::vector<std::string>& enginePluginFolders() {
  static std::vector<std::string> folders;
  return folders;
}

namespace {
void requireFactory(const EngineInfo& info) {
  if (!isEngineName(info.name))
    throw Error("engine '" + printable(info.name) +
                "': not a name an engine may have (at most 64 letters, digits, '_', '-' and "
                "'.', not starting with '.')");
  if (!info.make) throw Error("engine '" + info.name + "': no factory (EngineInfo::make)");
}

constexpr std::string_view kPluginPrefix = "libnncheck-engine-", kPluginSuffix = ".so";

// The engines whose plug-ins are in the folders, by name, with the file of each (the first
// folder's). Only regular files count, links to them included: a folder, a FIFO or a dangling
// link named like a plug-in is none.
std::map<std::string, std::string> pluginEngines() {
  std::map<std::string, std::string> out;
  for (const std::string& folder : enginePluginFolders()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
      const std::string file = entry.path().filename().string();
      if (file.size() <= kPluginPrefix.size() + kPluginSuffix.size() ||
          !file.starts_with(kPluginPrefix) || !file.ends_with(kPluginSuffix))
        continue;
      const std::string name = file.substr(
          kPluginPrefix.size(), file.size() - kPluginPrefix.size() - kPluginSuffix.size());
      std::error_code typeError;
      if (isEngineName(name) && std::filesystem::is_regular_file(entry.path(), typeError))
        out.emplace(name, entry.path().string());
    }
  }
  return out;
}

// Loads the library at `file` in a forked child first, so that one whose initializers crash,
// abort, hang or end the process is an error naming it (`what`) rather than the end of this
// process. A library that merely fails to load passes: dlopen here then says why.
void tryLoadingInAChild(const std::string& file, const std::string& what) {
  constexpr std::chrono::seconds kLoadTime{60};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(what + ": cannot try loading it: pipe: " + std::strerror(errno));
  // What it says while loading, it says once, when loaded for real; its stderr is kept for why
  // it died (a sanitizer catches a crash's signal and exits with 1).
  ChildStderr stderrOf(64 * 1024);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(what + ": cannot try loading it: fork: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDOUT_FILENO);
    if (stderrOf.writeEnd() >= 0) ::dup2(stderrOf.writeEnd(), STDERR_FILENO);
    const char loaded = ::dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL) ? 'Y' : 'N';
    (void)!::write(fds[1], &loaded, 1);
    ::_exit(0);
  }
  ::close(fds[1]);
  stderrOf.started();
  char answer = 0;
  pollfd p{fds[0], POLLIN, 0};
  int ready;
  while ((ready = ::poll(&p, 1, static_cast<int>(kLoadTime.count() * 1000))) < 0 &&
         errno == EINTR) {
  }
  if (ready == 1)
    while (::read(fds[0], &answer, 1) < 0 && errno == EINTR) {
    }
  ::close(fds[0]);
  if (ready != 1) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string err = stderrOf.take();
  if (answer == 'Y' || answer == 'N') return;
  if (ready != 1)
    throw Error(what + ": does not finish loading within " + std::to_string(kLoadTime.count()) +
                " s (its initializers hang)");
  const int signal = WIFSIGNALED(status) ? WTERMSIG(status) : signalCaughtBySanitizer(err);
  if (signal)
    throw Error(what + ": crashes while loading (signal " + std::to_string(signal) + ", " +
                strsignal(signal) + "); it is no library nncheck can load");
  throw Error(what + ": ends the process while loading (exit status " +
              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + stderrDetail(err) +
              "); it is no library nncheck can load");
}

// Loads a built-in engine's plug-in from the first folder that has it (loading one twice is
// the loader's no-op). Unlike loadEngineLibrary, its engines record no library: they are part
// of nncheck, and a replay names them by --backend alone.
bool loadPluginOf(const std::string& engine) {
  if (!isEngineName(engine)) return false;  // a name, never a path
  const std::map<std::string, std::string> plugins = pluginEngines();
  const auto it = plugins.find(engine);
  if (it == plugins.end()) return false;
  const std::string& path = it->second;
  const std::string what = "engine '" + engine + "': its plug-in " + path;
  tryLoadingInAChild(path, what);
  if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    const char* why = ::dlerror();
    throw Error(what + " does not load: " + (why ? why : "unknown error"));
  }
  const std::vector<std::string> registered = engines().names();
  if (!std::binary_search(registered.begin(), registered.end(), engine))
    throw Error(what + " registers no engine of that name");
  return true;
}

// Loads a library of engines or oracles named by `source` (--engine-lib, NNCHECK_ENGINE_LIBS).
void loadLibrary(const std::string& path, const std::string& source) {
  static std::set<std::string> loaded;
  const std::string what = source + " " + path;
  std::error_code ec;
  // By its absolute path: dlopen searches the library path for a name without a '/', and would
  // load another file of that name, or none, whatever is in this folder.
  const std::filesystem::path file = std::filesystem::absolute(path, ec).lexically_normal();
  struct stat st {};
  if (ec || ::stat(file.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw Error(what + ": no such file");
    throw Error(what + ": cannot read it: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    throw Error(what + ": not a regular file (a folder, FIFO, device or socket); name the " +
                "shared library itself");
  const std::string key = std::filesystem::weakly_canonical(file, ec).string();
  if (loaded.count(key)) return;
  tryLoadingInAChild(file.string(), what);
  const int before = detail::pluginRegistrations();
  // The library's registrations remember where they came from, for the commands that replay
  // their findings.
  struct Loading {
    explicit Loading(std::string p) { detail::loadingLibrary() = std::move(p); }
    ~Loading() { detail::loadingLibrary().clear(); }
  } loading(file.string());
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw Error(what + ": cannot load it: " + (why ? why : "unknown error"));
  }
  loaded.insert(key);
  try {
    engines().names();
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  if (detail::pluginRegistrations() == before)
    throw Error(what +
                ": it registers no engine or oracle (use NNCHECK_REGISTER_ENGINE or "
                "NNCHECK_REGISTER_ORACLE in the library)");
}
}  // namespace

// A plug-in file named otherwise is no engine either (it would print escapes to the terminal or
// be no name --backend can take).
bool isEngineName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '_' || c == '-' || c == '.';
         });
}

void addEnginePluginFolder(const std::string& folder) { enginePluginFolders().push_back(folder); }

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

void loadEngineLibrary(const std::string& path) { loadLibrary(path, "--engine-lib"); }

void loadEngineLibrariesFromEnvironment() {
  const char* list = std::getenv("NNCHECK_ENGINE_LIBS");
  if (!list) return;
  std::string s(list);
  for (size_t from = 0; from <= s.size();) {
    size_t to = s.find(':', from);
    if (to == std::string::npos) to = s.size();
    if (to > from) loadLibrary(s.substr(from, to - from), "NNCHECK_ENGINE_LIBS:");
    from = to + 1;
  }
}

}  // namespace nncheck
