// The ONNX Runtime adapter: its own target (nncheck::ort), built when CMake finds Node.js and
// onnxruntime-node. The C++ side encodes a request for the Node.js worker (worker.js) and decodes
// its reply; ORT itself runs in the worker, a child of the engine's isolated process.
#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/ort.h"
#include "ort/node_worker.h"

#ifndef NNCHECK_ORT_WORKER_SCRIPT
#error "NNCHECK_ORT_WORKER_SCRIPT must name worker.js"
#endif

namespace nncheck::ort {

namespace {

constexpr const char* kLevels[] = {"disabled", "basic", "extended", "all"};

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
  std::string s = kLevels[static_cast<int>(level)];
  if (threads != 1) s += ", " + std::to_string(threads) + " threads";
  if (!disabled.empty()) {
    s += ", without ";
    for (size_t i = 0; i < disabled.size(); ++i) s += (i ? ", " : "") + disabled[i];
  }
  return s;
}

std::string Config::key() const {
  std::string s = std::string("level=") + kLevels[static_cast<int>(level)] +
                  ",threads=" + std::to_string(threads);
  if (!disabled.empty()) {
    s += ",disable=";
    for (size_t i = 0; i < disabled.size(); ++i) s += (i ? "+" : "") + disabled[i];
  }
  return s;
}

Config Config::parse(const std::string& text) {
  Config c;
  std::stringstream items(text);
  std::string item;
  const auto bad = [&](const std::string& why) {
    return Error("ort configuration '" + text + "': cannot read '" + item + "' (" + why + ")");
  };
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "level") {
      const auto* it = std::find(std::begin(kLevels), std::end(kLevels), value);
      if (it == std::end(kLevels)) throw bad("expected level=disabled|basic|extended|all");
      c.level = static_cast<Level>(it - std::begin(kLevels));
    } else if (key == "threads") {
      if (value.empty() || value.size() > 3 ||
          !std::all_of(value.begin(), value.end(),
                       [](char ch) { return ch >= '0' && ch <= '9'; }) ||
          std::stoi(value) < 1 || std::stoi(value) > 256)
        throw bad("expected threads=N, N from 1 to 256");
      c.threads = std::stoi(value);
    } else if (key == "disable") {
      if (value.empty()) throw bad("expected disable=Name+Name, ORT's optimizer names");
      std::set<std::string> names;
      std::stringstream list(value);
      std::string name;
      while (std::getline(list, name, '+')) {
        if (name.empty() || !std::all_of(name.begin(), name.end(), [](char ch) {
              return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
            }))
          throw bad("expected disable=Name+Name, ORT's optimizer names");
        names.insert(name);
      }
      c.disabled.assign(names.begin(), names.end());
    } else {
      throw bad("expected level=disabled|basic|extended|all, threads=N, disable=Name+Name");
    }
  }
  return c;
}

std::vector<Config> configurations() {
  std::vector<Config> out;
  for (Level l : {Level::Disabled, Level::Basic, Level::Extended, Level::All})
    out.push_back({.level = l});
  return out;
}

struct Backend::Worker {
  NodeWorker process{nodeProgram(),
                     NNCHECK_ORT_WORKER_SCRIPT,
                     {{"NNCHECK_ORT_NODE_MODULES", nodeModulesFolder()}}};
};

Backend::Backend(Config config) : config_(std::move(config)) {}
Backend::~Backend() = default;

std::string Backend::name() const { return "ort (" + config_.describe() + ")"; }

Capabilities Backend::baseCapabilities() {
  Capabilities caps;
  caps.dtypes = {DType::Float32, DType::Int64, DType::Bool};
  caps.opset = 17;
  caps.weightsMustBeInitializers = false;
  return caps;
}

Capabilities Backend::capabilities() const {
  static const std::vector<std::pair<std::string, double>> kProbed = {
#include "ort/ort_capabilities.inc"
  };
  return baseCapabilities().withProbedOps(kProbed);
}

namespace {

void putU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

void putBytes(std::string& out, const std::string& bytes) {
  putU32(out, static_cast<uint32_t>(bytes.size()));
  out += bytes;
}

// What a reply holds, read with bounds checks: a short reply is the worker's fault, named.
struct ReplyReader {
  const std::string& s;
  size_t at = 0;
  void need(size_t n) const {
    if (at + n > s.size()) throw Error("ort: the worker's reply is cut short");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, s.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  std::string bytes() {
    const uint32_t n = get<uint32_t>();
    need(n);
    std::string out = s.substr(at, n);
    at += n;
    return out;
  }
};

std::string encodeRequest(const Model& model, const TensorMap& inputs, const Config& c) {
  std::string options = std::string("{\"level\":\"") + kLevels[static_cast<int>(c.level)] +
                        "\",\"intraOpThreads\":" + std::to_string(c.threads) +
                        ",\"log\":true,\"disabled\":[";
  for (size_t i = 0; i < c.disabled.size(); ++i)
    options += (i ? ",\"" : "\"") + c.disabled[i] + "\"";
  options += "]}";
  std::string out;
  putBytes(out, serializeModel(model));
  putBytes(out, options);
  const std::vector<const ValueInfo*> feeds = model.graph.feedInputs();
  putU32(out, static_cast<uint32_t>(feeds.size()));
  for (const ValueInfo* in : feeds) {
    const Tensor& t = inputs.at(in->name);
    if (t.dtype() == DType::String || t.dtype() == DType::BFloat16 ||
        t.dtype() == DType::Complex64 || t.dtype() == DType::Complex128)
      throw Unsupported("engine", "ort: input '" + in->name + "' is " +
                                      std::string(dtypeName(t.dtype())) +
                                      ", which onnxruntime-node's tensors do not hold");
    putBytes(out, in->name);
    const int32_t code = static_cast<int32_t>(t.dtype());
    out.append(reinterpret_cast<const char*>(&code), 4);
    putU32(out, static_cast<uint32_t>(t.shape().size()));
    for (int64_t d : t.shape()) out.append(reinterpret_cast<const char*>(&d), 8);
    putBytes(out, std::string(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size()));
  }
  return out;
}

Tensor decodeTensor(ReplyReader& r, std::string& name) {
  name = r.bytes();
  const int32_t code = r.get<int32_t>();
  if (!isKnownDType(code)) throw Error("ort: output '" + name + "' has an unknown type");
  const uint32_t rank = r.get<uint32_t>();
  if (rank > 64) throw Error("ort: output '" + name + "' has rank " + std::to_string(rank));
  Shape shape;
  for (uint32_t i = 0; i < rank; ++i) shape.push_back(r.get<int64_t>());
  const std::string data = r.bytes();
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d))
      throw Error("ort: output '" + name + "' has an impossible shape");
    count *= d;
  }
  const DType dtype = static_cast<DType>(code);
  if (static_cast<size_t>(count) * dtypeSize(dtype) != data.size())
    throw Error("ort: output '" + name + "' holds " + std::to_string(data.size()) + " bytes for " +
                std::to_string(count) + " elements");
  Tensor t(dtype, shape);
  if (!data.empty()) std::memcpy(t.bytes().data(), data.data(), data.size());
  return t;
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

enum Status : uint8_t { kOutputs = 0, kNoSession = 1, kRunFailed = 2 };

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
    // MaxPool-12 and AveragePool-19 with dilations and auto_pad SAME: ORT pads for the undilated
    // kernel, and the output it then computes is negative; it says so.
    {"Calculated output dimension is negative", "pooling with dilations and SAME padding"},
};

const KnownLimit* knownLimit(const std::string& message) {
  for (const KnownLimit& l : kKnownLimits)
    if (message.find(l.message) != std::string::npos) return &l;
  return nullptr;
}

}  // namespace

TensorMap Backend::run(const Model& model, const TensorMap& inputs) {
  applied_.clear();
  run_.clear();
  if (!worker_) worker_ = std::make_unique<Worker>();
  std::string log;
  const std::string reply = worker_->process.call(encodeRequest(model, inputs, config_), log);
  readTransformers(log, run_, applied_);
  ReplyReader r{reply};
  const uint8_t status = r.get<uint8_t>();
  if (status == kNoSession) {
    const std::string message = r.bytes();
    if (config_.level != Level::Disabled) {
      // A model ORT takes unoptimized but not at this level: its optimizer broke the model.
      Config plain = config_;
      plain.level = Level::Disabled;
      std::string ignored;
      ReplyReader again{worker_->process.call(encodeRequest(model, inputs, plain), ignored)};
      if (again.get<uint8_t>() != kNoSession)
        throw Error(
            "ort: the session fails to load only when optimized (it loads at level "
            "disabled): " +
            message);
    }
    throw Unsupported("engine", "ort: " + message);
  }
  if (status == kRunFailed) {
    const std::string message = r.bytes();
    if (const KnownLimit* limit = knownLimit(message))
      throw Unsupported("engine", std::string("ort: ") + limit->what + ": " + message);
    throw Error("ort: " + message);
  }
  if (status != kOutputs) throw Error("ort: the worker's reply has an unknown status");
  TensorMap out;
  const uint32_t n = r.get<uint32_t>();
  for (uint32_t i = 0; i < n; ++i) {
    std::string name;
    Tensor t = decodeTensor(r, name);
    out[name] = std::move(t);
  }
  return out;
}

std::vector<std::string> Backend::optimizationsApplied() const { return applied_; }

namespace {
struct Row {
  Level level;
  const char* name;
};

// The rows of a table at or below `level`, less those disabled, sorted.
template <size_t N>
std::vector<std::string> rowsAt(const Row (&table)[N], const Config& config) {
  std::vector<std::string> out;
  for (const Row& r : table)
    if (r.level <= config.level &&
        !std::binary_search(config.disabled.begin(), config.disabled.end(), r.name))
      out.push_back(r.name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}
}  // namespace

std::vector<std::string> Backend::unreportedOptimizations() const {
  // ORT 1.30's GenerateRewriteRules (onnxruntime/core/optimizer/graph_transformer_utils.cc): the
  // rules of Level1_RuleBasedTransformer (basic) and Level2_RuleBasedTransformer (extended).
  static const Row kRules[] = {
      {Level::Basic, "EliminateIdentity"},
      {Level::Basic, "EliminateSlice"},
      {Level::Basic, "UnsqueezeElimination"},
      {Level::Basic, "EliminateDropout"},
      {Level::Basic, "ExpandElimination"},
      {Level::Basic, "CastElimination"},
      {Level::Basic, "PreShapeNodeElimination"},
      {Level::Basic, "NoopElimination"},
      {Level::Basic, "DivMulFusion"},
      {Level::Basic, "FuseReluClip"},
      {Level::Basic, "GemmSumFusion"},
      {Level::Basic, "GemmTransposeFusion"},
      {Level::Basic, "NotWhereFusion"},
      {Level::Basic, "ConvAddFusion"},
      {Level::Basic, "ConvMulFusion"},
      {Level::Basic, "ConvBNFusion"},
      {Level::Basic, "PadFusion"},
      {Level::Basic, "MatmulBNFusion"},
      {Level::Basic, "LabelEncoderFusion"},
      {Level::Extended, "ClipQuantFusion"},
      {Level::Extended, "ReluQuantFusion"},
  };
  return rowsAt(kRules, config_);
}

std::vector<std::string> Backend::optimizations() const {
  static const Row kTable[] = {
#include "ort/ort_optimizations.inc"
  };
  return rowsAt(kTable, config_);
}

NNCHECK_REGISTER_ENGINE(ort) {
  return {.name = "ort",
          .description =
              "ONNX Runtime 1.30 (onnxruntime-node, in a Node.js worker); configurations "
              "level=disabled|basic|extended|all, threads=N, disable=Optimizer+Optimizer",
          .make = [](const std::string& config) -> std::unique_ptr<nncheck::Backend> {
            return std::make_unique<Backend>(Config::parse(config));
          },
          .configurations = [] { return configurationKeys(configurations()); },
          .key = [](const std::string& config) { return Config::parse(config).key(); },
          .baseCapabilities = &Backend::baseCapabilities,
          .baseline = "level=disabled,threads=1",
          .withDisabled =
              [](const std::string& config, const std::vector<std::string>& names) {
                Config c = Config::parse(config);
                std::set<std::string> all(c.disabled.begin(), c.disabled.end());
                all.insert(names.begin(), names.end());
                c.disabled.assign(all.begin(), all.end());
                return c.key();
              }};
}

}  // namespace nncheck::ort
