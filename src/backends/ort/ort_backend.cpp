// The ONNX Runtime adapter: its own target (nncheck::ort), built when CMake finds Node.js and
// onnxruntime-node. The C++ side encodes a request for the Node.js worker (worker.js) and decodes
// its reply; ORT itself runs in the worker, a child of the engine's isolated process.
#include <algorithm>
#include <cstring>
#include <set>

#include "backends/engine_files.h"
#include "backends/worker_process.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/ort.h"
#include "ort/ort_rules.h"

namespace nncheck::ort {

namespace {

// A function's static, not a global: configurations are named during other files' static
// initialization (a test suite's corpus registration).
const std::vector<std::string>& levelNames() {
  static const std::vector<std::string> names = {"disabled", "basic", "extended", "all"};
  return names;
}

constexpr const char* kInstall =
    "scripts/install-deps.sh of nncheck's source tree (Node.js from Debian, and "
    "onnxruntime-node as its lock file pins it, from the npm registry into $NNCHECK_ORT_DIR, by "
    "default ~/.cache/nncheck/onnxruntime-node)";

std::string environmentOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

std::string nodeModulesFolder() {
  return environmentOr("NNCHECK_ORT_NODE_MODULES", NNCHECK_ORT_NODE_MODULES);
}
std::string nodeProgram() { return environmentOr("NNCHECK_NODE", NNCHECK_NODE_PROGRAM); }

std::string Config::describe() const {
  std::string s = levelNames()[static_cast<size_t>(level)];
  if (threads != 1) s += ", " + std::to_string(threads) + " threads";
  if (!disabled.empty()) {
    s += ", without ";
    for (size_t i = 0; i < disabled.size(); ++i) s += (i ? ", " : "") + disabled[i];
  }
  return s;
}

std::string Config::key() const {
  std::string s =
      "level=" + levelNames()[static_cast<size_t>(level)] + ",threads=" + std::to_string(threads);
  if (!disabled.empty()) s += ",disable=" + joinNames(disabled);
  return s;
}

Config Config::parse(const std::string& text) {
  Config c;
  const ConfigText t("ort", text,
                     "level=disabled|basic|extended|all, threads=N, disable=Name+Name");
  for (const ConfigText::Item& item : t.items()) {
    if (item.key == "level")
      c.level = static_cast<Level>(t.choice(item, levelNames()));
    else if (item.key == "threads")
      c.threads = t.count(item, 1, 256);
    else if (item.key == "disable")
      c.disabled = t.names(item);
    else
      t.reject(item);
  }
  return c;
}

std::vector<Config> configurations() {
  std::vector<Config> out;
  for (Level l : {Level::Disabled, Level::Basic, Level::Extended, Level::All})
    out.push_back({.level = l});
  return out;
}

// worker.js is installed beside this plug-in (engines/ort/worker.js).
WorkerProcess::Command workerCommand() {
  return {.argv = {nodeProgram(), "--no-warnings",
                   engineFile(reinterpret_cast<const void*>(&nodeProgram), "ort/worker.js")},
          .environment = {{"NNCHECK_ORT_NODE_MODULES", nodeModulesFolder()}},
          .install = kInstall};
}

struct Backend::Worker {
  WorkerProcess process{workerCommand()};
};

Backend::Backend(Config config) : config_(std::move(config)) {}
Backend::~Backend() = default;

std::string Backend::name() const { return "ort (" + config_.describe() + ")"; }

Capabilities Backend::baseCapabilities() {
  Capabilities caps;
  caps.dtypes = {DType::Float32, DType::Int64, DType::Bool};
  caps.opset = 17;
  caps.weightsMustBeInitializers = false;
  caps.shapeOperandsMustBeInitializers = false;  // its optimizer folds constants
  return caps;
}

Capabilities Backend::capabilities() const {
  static const std::vector<std::pair<std::string, double>> kProbed = {
#include "ort/ort_capabilities.inc"
  };
  return baseCapabilities().withProbedOps(kProbed);
}

namespace {

// What a request asks of the worker besides running the model at the configuration.
struct Asks {
  bool log = true;              // ORT's log of the transformers, on stderr
  bool optimizedModel = false;  // ORT's optimized model, attached to the reply
  bool run = true;              // run the model once the session is made
};

// The run of `model` at `c` (its level and threads; what it disables goes apart).
worker::Reply runOnWorker(WorkerProcess& w, const Model& model, const TensorMap& inputs,
                          const Config& c, std::string& log, Asks asks = {}) {
  std::vector<std::pair<std::string, const Tensor*>> feeds;
  for (const ValueInfo* in : model.graph.feedInputs()) {
    const Tensor& t = inputs.at(in->name);
    if (t.dtype() == DType::String || t.dtype() == DType::BFloat16 ||
        t.dtype() == DType::Complex64 || t.dtype() == DType::Complex128)
      throw Unsupported("engine", "ort: input '" + in->name + "' is " +
                                      std::string(dtypeName(t.dtype())) +
                                      ", which onnxruntime-node's tensors do not hold");
    feeds.emplace_back(in->name, &t);
  }
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  const worker::RunRequest request{
      .configuration = "level=" + levelNames()[static_cast<size_t>(c.level)] +
                       ",threads=" + std::to_string(c.threads),
      .disabled = c.disabled,
      .options = std::string("{\"log\":") + flag(asks.log) + ",\"optimized_model\":" +
                 flag(asks.optimizedModel) + ",\"skip_run\":" + flag(!asks.run) + "}"};
  return w.run(request, serializeModel(model), feeds, log);
}

// The graph transformers the log names ("GraphTransformer <Name> modified: 0|1 ..."), sorted and
// once each: all that ran, and those that changed the graph.
void readTransformers(const std::string& log, std::vector<std::string>& ran,
                      std::vector<std::string>& modified) {
  static const std::string kHead = "GraphTransformer ", kTail = " modified: ";
  std::set<std::string> all, changed;
  for (size_t at = log.find(kHead); at != std::string::npos; at = log.find(kHead, at)) {
    at += kHead.size();
    const size_t end = log.find(' ', at);
    if (end == std::string::npos || log.compare(end, kTail.size(), kTail) != 0) continue;
    const std::string name = log.substr(at, end - at);
    all.insert(name);
    if (log.compare(end + kTail.size(), 1, "1") == 0) changed.insert(name);
  }
  ran.assign(all.begin(), all.end());
  modified.assign(changed.begin(), changed.end());
}

// The worker's unsupported reply when ORT cannot make a session of the model.
constexpr std::string_view kNoSession = "session";

// Errors ORT raises while running a model it loaded, that are limits of its kernels for models
// the ONNX specification allows, each checked against the spec by hand: reported as Unsupported,
// not as bugs. Matched by a part of ORT's message that names the check.
struct KnownLimit {
  const char* message;  // a part of ORT's message
  const char* what;     // the limit, for the reason
};
constexpr KnownLimit kKnownLimits[] = {
    // LRN-13 takes (N x C x D1 x ... x Dk); ORT's kernel only rank 4.
    {"X_shape.NumDimensions() == 4 was false", "LRN of a rank other than 4"},
    // Pad-13's reflect mode on an axis of length 1: ONNX's reference (numpy's reflect) repeats
    // the one element; ORT refuses with this clear error.
    {"Pad reflect requires axis length >= 2", "reflect Pad of an axis of length 1"},
    // Pad-13's reflect mode padding an axis by as much as its length or more: ONNX's reference
    // (numpy's reflect) reflects again; ORT pads at most length - 1.
    {"exceeds maximum allowed", "reflect Pad by an axis's length or more"},
    // Pad-13 of a scalar with empty pads is the scalar (pads holds 2 x rank = 0 numbers).
    {"Input tensor has no dimensions", "Pad of a scalar"},
    // Conv-11's auto_pad SAME with dilations is defined (the padding of the dilated kernel).
    {"Dilation not supported for AutoPadType", "Conv with dilations and SAME padding"},
    // Pooling with auto_pad SAME where the stride passes the kernel, so the spec's total
    // padding, (output - 1) x stride + kernel - input, is negative: the output shape is still
    // ceil(input / stride).
    {"padding values must be non-negative", "SAME padding whose total is negative"},
    // ConvTranspose's output_padding must be below "the corresponding stride/dilation"
    // (read as either, as PyTorch does); ORT's CPU kernel takes it below the stride only, and
    // says so since microsoft/onnxruntime#29446 rather than read past its buffer.
    {") may be too large for stride (", "ConvTranspose's output_padding not below its stride"},
    // Resize-13 interpolates linearly or cubically in any rank; ORT's kernel only in ranks 2-5
    // (linear) or 2 and 4 (cubic), with the outer two scales 1 in rank 4 and 5.
    {"'Linear' mode only support", "linear Resize outside ranks 2-5 (outer scales 1)"},
    {"'Cubic' mode only support", "cubic Resize outside ranks 2 and 4 (outer scales 1)"},
};
// Not a limit: MaxPool with dilations and SAME padding pads for the undilated kernel, which
// either computes a wrong output shape or fails with "Calculated output dimension is negative"
// (examples/ort/corpus has the bug).

const KnownLimit* knownLimit(const std::string& message) {
  for (const KnownLimit& l : kKnownLimits)
    if (message.find(l.message) != std::string::npos) return &l;
  return nullptr;
}

}  // namespace

namespace {
struct Row {
  Level level;
  const char* name;
};

// ORT's graph transformers, each with the lowest level that runs it.
constexpr Row kTransformers[] = {
#include "ort/ort_optimizations.inc"
};

bool isRuleBased(const std::string& transformer) {
  return transformer.ends_with("_RuleBasedTransformer");
}
}  // namespace

std::vector<std::string> Backend::rulesFired(const Model& model, const TensorMap& inputs) {
  // One more session, at the level of the rule-based transformers that changed the graph, with
  // every other transformer off, that writes the model it optimized (ort_rules.h).
  Config alone = config_;
  alone.level =
      std::find(applied_.begin(), applied_.end(), "Level2_RuleBasedTransformer") != applied_.end()
          ? Level::Extended
          : Level::Basic;
  std::vector<std::string> others;
  for (const Row& r : kTransformers)
    if (r.level <= alone.level && !isRuleBased(r.name)) others.push_back(r.name);
  alone.disabled = mergeNames(alone.disabled, others);
  std::string ignoredLog;
  const worker::Reply reply = runOnWorker(worker_->process, model, inputs, alone, ignoredLog,
                                          {.log = false, .optimizedModel = true, .run = false});
  const auto optimizedModel = reply.attachments.find("optimized_model");
  if (reply.kind != worker::kOutputs || optimizedModel == reply.attachments.end()) return {};
  const std::string& optimized = optimizedModel->second;
  try {
    return rulesThatFired(model, parseModel(optimized, "ORT's optimized model"), alone.level);
  } catch (const Error&) {
    return {};  // a model our reader does not take: the rules stay unnamed for this case
  }
}

TensorMap Backend::run(const Model& model, const TensorMap& inputs) {
  applied_.clear();
  run_.clear();
  if (!worker_) worker_ = std::make_unique<Worker>();
  std::string log;
  worker::Reply reply = runOnWorker(worker_->process, model, inputs, config_, log);
  readTransformers(log, run_, applied_);
  if (std::any_of(applied_.begin(), applied_.end(), isRuleBased))
    applied_ = mergeNames(applied_, rulesFired(model, inputs));
  const bool noSession = reply.kind == worker::kUnsupported && reply.category == kNoSession;
  if (noSession) {
    if (config_.level != Level::Disabled) {
      // A model ORT takes unoptimized but not at this level: its optimizer broke the model.
      Config plain = config_;
      plain.level = Level::Disabled;
      std::string ignored;
      const worker::Reply again = runOnWorker(worker_->process, model, inputs, plain, ignored);
      if (again.kind != worker::kUnsupported || again.category != kNoSession)
        throw Error(
            "ort: the session fails to load only when optimized (it loads at level "
            "disabled): " +
            reply.message);
    }
    throw Unsupported("engine", "ort: " + reply.message);
  }
  if (reply.kind == worker::kError) {
    if (const KnownLimit* limit = knownLimit(reply.message))
      throw Unsupported("engine", std::string("ort: ") + limit->what + ": " + reply.message);
    throw Error("ort: " + reply.message);
  }
  if (reply.kind != worker::kOutputs) throw Error("ort: " + reply.message);
  return std::move(reply.outputs);
}

std::vector<std::string> Backend::optimizationsApplied() const { return applied_; }

std::vector<std::string> Backend::optimizations() const {
  return mergeNames(namesAtLevel(kTransformers, config_), rewriteRules(config_));
}

NNCHECK_REGISTER_ENGINE(ort) {
  return configuredEngine<Backend, Config>(
      {.name = "ort",
       .description = "ONNX Runtime 1.30 (onnxruntime-node, in a Node.js worker); configurations "
                      "level=disabled|basic|extended|all, threads=N, disable=Optimizer+Optimizer",
       .baseline = "level=disabled,threads=1",
       .withDisabled =
           [](const std::string& config, const std::vector<std::string>& names) {
             Config c = Config::parse(config);
             c.disabled = mergeNames(c.disabled, names);
             return c.key();
           },
       .install = kInstall,
       .reproducer =
           [](const std::string& config, const Model&) {
             Config c = Config::parse(config);
             c.disabled.clear();  // the worker's configurations switch nothing off
             WorkerProcess process(workerCommand());
             std::optional<ReproducerRecipe> recipe =
                 worker::reproducerAt(process.facts(), c.key());
             process.stop();
             return recipe;
           }},
      &configurations);
}

}  // namespace nncheck::ort
