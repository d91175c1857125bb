// A worker's engine: the facts it gives become an EngineInfo and a Backend; each run is one
// request on a worker started lazily in the engine's process (worker_process.h), one for every
// configuration of its command there.
#include "nncheck/worker_engine.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "backends/engine_files.h"
#include "backends/process_tree.h"
#include "backends/worker_process.h"
#include "core/shell_words.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/reference.h"

namespace nncheck {

namespace {

constexpr std::string_view kDisable = "disable=";

// This process's facts of each worker command line: a worker is asked once.
std::map<std::string, worker::Facts>& factsByLine() {
  static std::map<std::string, worker::Facts> facts;
  return facts;
}

// How a worker is started: its command, with nncheck's Python SDK first on its PYTHONPATH (the
// command's own environment, set after, may replace it).
WorkerProcess::Command processCommand(const WorkerCommand& c) {
  std::string path = pythonSdkFolder();
  if (const char* p = std::getenv("PYTHONPATH"); p && *p) path += std::string(":") + p;
  WorkerProcess::Command process{c.argv, {{"PYTHONPATH", path}}, c.install};
  process.environment.insert(process.environment.end(), c.environment.begin(), c.environment.end());
  return process;
}

const worker::Facts& factsOf(const WorkerCommand& command) {
  const std::string line = command.line();
  auto it = factsByLine().find(line);
  if (it != factsByLine().end()) return it->second;
  WorkerProcess w(processCommand(command));
  worker::Facts facts = w.facts();
  w.stop();
  return factsByLine().emplace(line, std::move(facts)).first->second;
}

// A configuration text: the worker's own configuration, and what ",disable=A+B" switches off.
struct Configured {
  std::string configuration;
  std::vector<std::string> disabled;
};

Configured readConfiguration(const worker::Facts& f, const std::string& who,
                             const std::string& text) {
  Configured c;
  size_t at = text.rfind(kDisable);
  while (at != std::string::npos && at != 0 && text[at - 1] != ',')
    at = text.rfind(kDisable, at - 1);
  c.configuration = at == std::string::npos ? text : text.substr(0, at ? at - 1 : 0);
  if (at != std::string::npos) {
    const ConfigText t(f.name, text.substr(at),
                       "the worker's configuration, then ',disable=Name+Name' last");
    if (t.items().size() != 1) t.reject(t.items().back());
    c.disabled = t.names(t.items().front());
  }
  if (c.configuration.empty()) c.configuration = f.configurations.front();
  bool known = false;
  std::string all;
  for (const std::string& k : f.configurations) {
    known = known || k == c.configuration;
    all += (all.empty() ? "'" : ", '") + k + "'";
  }
  if (!known)
    throw Error(f.name + " (" + who + "): no configuration '" + c.configuration +
                "' (its configurations: " + all + ")");
  const auto names = [&](const std::map<std::string, std::vector<std::string>>& m,
                         const std::string& d) {
    const auto it = m.find(c.configuration);
    return it != m.end() && std::find(it->second.begin(), it->second.end(), d) != it->second.end();
  };
  for (const std::string& d : c.disabled) {
    if (names(f.fixed, d))
      throw Error(f.name + " (" + who + "): configuration '" + c.configuration +
                  "' cannot switch off '" + d + "' (the engine names it as applied only)");
    if (!names(f.optimizations, d) && !names(f.unreported, d))
      throw Error(f.name + " (" + who + "): configuration '" + c.configuration +
                  "' names no optimization '" + d + "' to switch off");
  }
  return c;
}

std::string keyOf(const Configured& c) {
  if (c.disabled.empty()) return c.configuration;
  return (c.configuration.empty() ? "" : c.configuration + ",") + std::string(kDisable) +
         joinNames(c.disabled);
}

// The last lines of a worker's trace, for an error's message.
std::string traceTail(const std::string& trace) {
  std::string t = trace;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t.empty()) return t;
  size_t from = t.size();
  for (int lines = 0; lines < 3 && from != std::string::npos && from > 0; ++lines)
    from = t.rfind('\n', from - 1);
  std::string tail(1, '\n');
  tail += from == std::string::npos ? t : t.substr(from + 1);
  return tail;
}

std::map<std::string, std::string>& commandOfEngine() {
  static std::map<std::string, std::string> commands;
  return commands;
}

}  // namespace

WorkerCommand WorkerCommand::parse(const std::string& commandLine) {
  WorkerCommand c;
  c.argv = splitShellWords(commandLine);
  if (c.argv.empty())
    throw Error("worker command: empty (name the program that serves the engine)");
  // The worker runs in a folder of its own: a word naming a file here, by a relative path, is
  // made absolute.
  for (std::string& word : c.argv) {
    std::error_code ec;
    if (!word.empty() && word[0] != '/' && word[0] != '-' &&
        (word.find('/') != std::string::npos || &word != &c.argv.front()) &&
        std::filesystem::is_regular_file(word, ec))
      word = std::filesystem::absolute(word, ec).lexically_normal().string();
  }
  return c;
}

std::string WorkerCommand::line() const { return shellLine(argv); }

namespace {

// A worker program running, and the runs it served. Every configuration of one command line in a
// process shares it: a request names its configuration, so the engine at another configuration
// (a failure's triage, its culprit search) costs no second start of the program.
struct Running {
  std::unique_ptr<WorkerProcess> process;  // started in the engine's process, at its first run
  int runs = 0;                            // on this process
};

std::shared_ptr<Running> runningFor(const WorkerCommand& command) {
  static std::map<std::string, std::weak_ptr<Running>> running;
  std::string key = command.line();  // and the environment it is started with
  for (const auto& [name, value] : command.environment) key += '\0' + name + '=' + value;
  std::weak_ptr<Running>& slot = running[key];
  std::shared_ptr<Running> r = slot.lock();
  if (!r) slot = r = std::make_shared<Running>();
  return r;
}

}  // namespace

struct WorkerBackend::State {
  WorkerCommand command;
  std::string who;
  const worker::Facts* facts = nullptr;
  Configured configured;
  std::shared_ptr<Running> running;  // at the first run: the one of its command line
};

WorkerBackend::WorkerBackend(WorkerCommand command, const std::string& configuration)
    : state_(std::make_unique<State>()) {
  state_->command = std::move(command);
  state_->who = WorkerProcess::describe(state_->command.argv);
  state_->facts = &factsOf(state_->command);
  state_->configured = readConfiguration(*state_->facts, state_->who, configuration);
}

WorkerBackend::~WorkerBackend() = default;

std::string WorkerBackend::name() const {
  const std::string key = keyOf(state_->configured);
  return state_->facts->name + (key.empty() ? "" : " (" + key + ")");
}

Capabilities WorkerBackend::capabilities() const { return state_->facts->capabilities; }

std::chrono::milliseconds WorkerBackend::startTime() const {
  return std::chrono::seconds(state_->facts->startSeconds);
}

namespace {

// Those of a configuration's optimizations not switched off.
std::vector<std::string> notDisabled(const std::map<std::string, std::vector<std::string>>& all,
                                     const Configured& configured) {
  const auto it = all.find(configured.configuration);
  if (it == all.end()) return {};
  std::vector<std::string> out;
  for (const std::string& o : it->second)
    if (std::find(configured.disabled.begin(), configured.disabled.end(), o) ==
        configured.disabled.end())
      out.push_back(o);
  return out;
}

}  // namespace

std::vector<std::string> WorkerBackend::optimizations() const {
  std::vector<std::string> all = notDisabled(state_->facts->optimizations, state_->configured);
  if (const auto it = state_->facts->fixed.find(state_->configured.configuration);
      it != state_->facts->fixed.end())
    all.insert(all.end(), it->second.begin(), it->second.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

std::vector<std::string> WorkerBackend::unreportedOptimizations() const {
  return notDisabled(state_->facts->unreported, state_->configured);
}

std::unique_ptr<WorkerBackend> WorkerBackend::servedByFreshForks() const {
  if (!state_->facts->freshForks) return nullptr;
  WorkerCommand command = state_->command;
  command.environment.emplace_back("NNCHECK_WORKER_FRESH_FORKS", "1");
  return std::make_unique<WorkerBackend>(std::move(command), keyOf(state_->configured));
}

TensorMap WorkerBackend::run(const Model& model, const TensorMap& inputs) {
  applied_.clear();
  State& s = *state_;
  // First, so that a model the host side refuses starts no worker.
  worker::RunRequest request{.configuration = s.configured.configuration,
                             .disabled = s.configured.disabled};
  if (s.command.options) request.options = s.command.options(model);
  if (!s.running) s.running = runningFor(s.command);
  Running& r = *s.running;
  if (r.process && s.facts->restartEvery > 0 && r.runs >= s.facts->restartEvery) r.process.reset();
  if (!r.process) {
    r.runs = 0;
    r.process = std::make_unique<WorkerProcess>(processCommand(s.command));
  }
  ++r.runs;
  std::vector<std::pair<std::string, const Tensor*>> feeds;
  for (const ValueInfo* in : model.graph.feedInputs()) {
    const auto it = inputs.find(in->name);
    if (it == inputs.end())
      throw Error(name() + ": no value for the model's input '" + in->name + "'");
    feeds.emplace_back(in->name, &it->second);
  }
  std::string log;
  worker::Reply reply = r.process->run(request, serializeModel(model), feeds, log);
  applied_ = reply.applied;
  if (reply.kind == worker::kUnsupported)
    throw Unsupported("engine", name() + ": " + reply.category + ": " + reply.message);
  // The worker allocates within the memory limit (the kernel holds it to it): a failed
  // allocation is the case's size, not the engine's bug.
  if (reply.kind == worker::kError && saysOutOfMemory(reply.message + "\n" + reply.trace))
    throw Unsupported("memory", name() + ": could not allocate within the memory limit of " +
                                    std::to_string(memoryLimit() >> 20) +
                                    " MiB (--memory-limit): " + reply.message);
  if (reply.kind == worker::kError)
    throw Error(name() + ": " + reply.message + traceTail(reply.trace));
  return std::move(reply.outputs);
}

EngineInfo workerEngine(WorkerCommand command, EngineInfo fixed) {
  // Facts are read at first need (each of these is asked later, once the engine is used), so
  // that registering a built-in worker engine starts no worker.
  const std::string who = WorkerProcess::describe(command.argv);
  const auto facts = [command]() -> const worker::Facts& { return factsOf(command); };
  fixed.make = [command](const std::string& config) -> std::unique_ptr<Backend> {
    return std::make_unique<WorkerBackend>(command, config);
  };
  fixed.configurations = [facts] { return facts().configurations; };
  fixed.key = [facts, who](const std::string& text) {
    return keyOf(readConfiguration(facts(), who, text));
  };
  // What probing starts from: the capabilities less the ops the worker listed.
  fixed.baseCapabilities = [facts] {
    Capabilities c = facts().capabilities;
    c.ops.clear();
    c.opWeights.clear();
    return c;
  };
  fixed.withDisabled = [facts, who](const std::string& text,
                                    const std::vector<std::string>& names) {
    Configured c = readConfiguration(facts(), who, text);
    c.disabled = mergeNames(c.disabled, names);
    return keyOf(readConfiguration(facts(), who, keyOf(c)));
  };
  fixed.sharedStage = [facts] { return facts().sharedStage; };
  fixed.reproducer = [facts, who, prefix = command.reproducerModel](const std::string& text,
                                                                    const Model& model) {
    std::optional<ReproducerRecipe> r =
        worker::reproducerAt(facts(), readConfiguration(facts(), who, text).configuration);
    if (r && prefix) r->code = prefix(model) + r->code;
    return r;
  };
  return fixed;
}

std::string addWorkerEngine(const std::string& commandLine) {
  WorkerCommand command = WorkerCommand::parse(commandLine);
  const std::string line = command.line();
  for (const auto& [engine, cmd] : commandOfEngine())
    if (cmd == line) return engine;
  const worker::Facts& f = factsOf(command);
  const std::string who = WorkerProcess::describe(command.argv);
  EngineInfo info = workerEngine(
      command, {.name = f.name,
                .description = f.description.empty() ? "an engine served by " + who
                                                     : f.description + " (served by " + who + ")",
                .baseline = f.baseline,
                .install = f.install});
  engines().add(std::move(info), who);
  commandOfEngine()[f.name] = line;
  return f.name;
}

std::string workerEngineCommand(const std::string& engine) {
  const auto it = commandOfEngine().find(engine);
  return it == commandOfEngine().end() ? "" : it->second;
}

}  // namespace nncheck
