// Engines by name: a registry of factories, so the command line, campaigns and probes drive any
// engine, built in or loaded from a user's shared library, without naming it in code.
//
//   // In the engine's own source file (a static library linked whole, or a shared library
//   // loaded with `nncheck --engine-lib libmyengine.so`):
//   NNCHECK_REGISTER_ENGINE(mycompiler) {
//     return {.name = "mycompiler",
//             .description = "my compiler, opt levels 0-3",
//             .make = [](const std::string& config) { return std::make_unique<MyCompiler>(config);
//             }, .configurations = [] { return std::vector<std::string>{"O0", "O3"}; }};
//   }
//
//   auto engine = nncheck::engines().make("mycompiler", "O3");   // throws nncheck::Error
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nncheck/backend.h"
#include "nncheck/registry.h"

namespace nncheck {

// The engine's part of a standalone reproducer (`nncheck repro`): how a script in the engine's
// own language runs a model with the engine alone, at one configuration. nncheck writes the rest
// (the inputs, the expected outputs and the comparison). `code` defines, with its imports:
// - python: `run(model_path: str, feeds: dict[str, numpy.ndarray]) -> list[numpy.ndarray]`,
//   the graph's outputs in order;
// - javascript: `async function run(modelPath, feeds)`, feeds by name as `{type, data, dims}`
//   (type as ONNX Runtime's Tensor names it: "float32", "int64", "bool"...; data a typed array),
//   returning the graph's outputs in order, each with `type`, `data` and `dims`.
// - c++: `std::vector<Tensor> run(const std::string& model_path, const std::vector<std::pair<
//   std::string, Tensor>>& feeds)`, with the script's `struct Tensor {std::string type;
//   std::vector<long long> dims; std::vector<double> values;}` and OUTPUT_NAMES (the graph's
//   outputs, in order) declared before it.
// Each raises (throws) where the engine fails; the Python and JavaScript scripts also define
// OUTPUT_NAMES, which run() may read.
struct ReproducerRecipe {
  std::string language;  // "python", "javascript" or "c++"
  std::string code;
  std::string requirements;  // what the script needs installed: "pip install tvm==0.27.0 ..."
  std::string versions;      // the engine's and its language's versions, as they are here
  std::string run{};         // how to run it from its folder; empty: python3 / node reproduce.*
};

struct EngineInfo {
  // Every member has a default, so designated initializers may leave any out.
  std::string name{};         // what --backend takes
  std::string description{};  // one line for `nncheck engines` and --help
  // Builds the engine for a configuration text ("" is the default); throws nncheck::Error
  // naming what is wrong with the text.
  std::function<std::unique_ptr<Backend>(const std::string& configuration)> make{};
  // Every configuration this machine can run, the default first; empty function: {""}.
  std::function<std::vector<std::string>()> configurations{};
  // The canonical text of a configuration, as `configurations` spells it (MLIR's "loops=affine"
  // is "fusion=on,canonicalize=on,loops=affine,llvm=O3"), so that a corpus records one name per
  // configuration whatever a user typed; throws like `make`. Empty function: the text as given.
  std::function<std::string(const std::string& configuration)> key{};
  // What probing starts from (dtypes, opset, weights); empty function: the engine's own
  // capabilities() with every op.
  std::function<Capabilities()> baseCapabilities{};
  // The configuration that optimizes least (torch: "level=eager"; OpenCV:
  // "target=cpu,fusion=off"): a failure that passes there belongs to the optimizations alone.
  // Empty: the engine has none such.
  std::string baseline{};
  // The configuration with the named optimizations (as Backend::optimizations names them)
  // switched off too, in its canonical text; throws nncheck::Error for a name the
  // configuration cannot switch off. Empty function: the engine switches none off, and no
  // culprit search runs (harness/culprit.h).
  std::function<std::string(const std::string& configuration,
                            const std::vector<std::string>& disabled)>
      withDisabled{};
  // What every configuration shares (LiteRT's conversion, IREE's importer): a failure at every
  // configuration is that stage's fault, one at some only is in what sets them apart. Empty
  // function, or "": none named.
  std::function<std::string()> sharedStage{};
  // How to install what the engine needs at run time, for the error that says it does not work
  // here (nncheck::SetUpError): "./scripts/install-deps.sh". Empty: nothing to say.
  std::string install{};
  // The engine's part of a standalone reproducer of `model` at a configuration (an engine that
  // translates a model into its own program may write that program in); empty function, or
  // nullopt: the engine has none, and `nncheck repro` says so.
  std::function<std::optional<ReproducerRecipe>(const std::string& configuration,
                                                const Model& model)>
      reproducer{};
};

class EngineRegistry : public Registry<EngineInfo> {
 public:
  EngineRegistry();

  std::unique_ptr<Backend> make(const std::string& name, const std::string& configuration) const;
  std::vector<std::string> configurations(const std::string& name) const;
  std::string key(const std::string& name, const std::string& configuration) const;
  Capabilities baseCapabilities(const std::string& name) const;
};

// The process's registry: "reference", every engine linked in or loaded, and the built-in
// engines' plug-ins, each loaded the first time its name is asked for.
EngineRegistry& engines();

// What an engine's name may be, in the registry and in a worker's facts: a plain name, since it
// names folders (a corpus's fuzz-<name>, a plug-in's known bugs) and a plug-in file: at most 64
// letters, digits, '_', '-' and '.', not starting with '.'.
bool isEngineName(std::string_view name);

// The nncheck program's built-in engines are plug-ins, libnncheck-engine-NAME.so, so that a
// command that drives no engine loads none of their libraries (libtorch, MLIR, OpenCV). The
// registry looks for an unknown name in these folders, in the order added, and loads it there
// (a plug-in that does not load is an error naming its file and the loader's reason). The
// program adds its own folder; a test binary linking the engines it uses adds none.
void addEnginePluginFolder(const std::string& folder);
// The file a built-in engine's plug-in has in those folders.
std::string enginePluginFileName(const std::string& engine);

// Loads a shared library whose engines (and oracles, nncheck/oracle.h) register themselves with
// NNCHECK_REGISTER_ENGINE (NNCHECK_REGISTER_ORACLE). It
// uses the nncheck it is loaded into (the program exports its symbols): build it against the
// same nncheck headers, and do not link nncheck's libraries into it. Throws nncheck::Error
// naming the path and what is wrong (the loader's message, nothing registered, a name taken).
// Loading the same path twice is a no-op.
void loadEngineLibrary(const std::string& path);

// The libraries named by NNCHECK_ENGINE_LIBS (separated by ':'), each loaded once.
void loadEngineLibrariesFromEnvironment();

// The keys of an engine's configurations (each with a key() that its parse() reads back), as
// EngineInfo::configurations gives them.
template <class Config>
std::vector<std::string> configurationKeys(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const Config& c : configs) out.push_back(c.key());
  return out;
}

// A configuration text, "key=value,key=value", read item by item. Each reading either returns
// the value or throws nncheck::Error naming the engine, the whole text, the item, and what the
// engine expects there, so every engine words its errors alike.
//   ConfigText text("ort", "level=all,threads=2", "level=disabled|all, threads=N");
//   for (const ConfigText::Item& item : text.items())
//     if (item.key == "threads") c.threads = text.count(item, 1, 256);
//     else text.reject(item);
class ConfigText {
 public:
  struct Item {
    std::string key, value, text;  // text: the item as written, "threads=2"
  };
  ConfigText(std::string engine, std::string text, std::string expected);
  const std::vector<Item>& items() const { return items_; }
  [[noreturn]] void reject(const Item& item, const std::string& expected = "") const;
  bool onOff(const Item& item) const;  // on | off
  // The index of the value among the choices.
  size_t choice(const Item& item, const std::vector<std::string>& choices) const;
  int count(const Item& item, int lo, int hi) const;  // a decimal integer in [lo, hi]
  // A '+'-separated list of names (letters, digits, '_', '-', '.'), sorted, each once.
  std::vector<std::string> names(const Item& item) const;

 private:
  std::string engine_, text_, expected_;
  std::vector<Item> items_;
};

// The names as a configuration's key spells a list: sorted, each once, '+'-separated.
std::string joinNames(const std::vector<std::string>& names);
// The union of two lists of names, sorted, each once.
std::vector<std::string> mergeNames(std::vector<std::string> names,
                                    const std::vector<std::string>& more);

// The EngineInfo fields an engine with a Config type (Config::parse(text), key()) and a Backend
// built from a Config fill alike: make, key, configurations and baseCapabilities. The rest
// (name, description, baseline, withDisabled) comes in `info`.
//   NNCHECK_REGISTER_ENGINE(ort) {
//     return configuredEngine<Backend, Config>({.name = "ort", ...}, &configurations);
//   }
template <class EngineBackend, class Config>
EngineInfo configuredEngine(EngineInfo info, std::vector<Config> (*configs)()) {
  info.make = [](const std::string& text) -> std::unique_ptr<Backend> {
    return std::make_unique<EngineBackend>(Config::parse(text));
  };
  info.key = [](const std::string& text) { return Config::parse(text).key(); };
  info.configurations = [configs] { return configurationKeys(configs()); };
  info.baseCapabilities = &EngineBackend::baseCapabilities;
  return info;
}

namespace detail {
struct EngineRegistration {
  explicit EngineRegistration(EngineInfo (*describe)()) { engines().addAtStartup(describe); }
};
}  // namespace detail

}  // namespace nncheck

// Registers an engine at static initialization; the body returns its EngineInfo.
#define NNCHECK_REGISTER_ENGINE(id)                                                    \
  static ::nncheck::EngineInfo nncheck_engine_info_##id();                             \
  static const ::nncheck::detail::EngineRegistration nncheck_engine_registration_##id{ \
      &nncheck_engine_info_##id};                                                      \
  static ::nncheck::EngineInfo nncheck_engine_info_##id()
