#include "backends/worker_protocol.h"

#include <nlohmann/json.hpp>

#include "nncheck/error.h"
#include "nncheck/test_case.h"

namespace nncheck::worker {

namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A message's json part, parsed; an error naming `who` when it is no JSON object.
json takeJson(wire::Reader& in, const char* what) {
  const std::string_view text = in.bytes();
  try {
    json j = json::parse(text);
    if (!j.is_object()) throw Error("not a JSON object");
    return j;
  } catch (const std::exception& e) {
    throw Error(in.who() + ": the " + what + " is not a JSON object: " + e.what());
  }
}

template <class T>
T field(const json& j, const char* key, const std::string& who, T otherwise = T()) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return otherwise;
  try {
    return it->get<T>();
  } catch (const json::exception& e) {
    throw Error(who + ": '" + key + "' is of another type than the protocol says: " + e.what());
  }
}

char takeKind(wire::Reader& in) { return in.get<char>(); }

json capabilitiesJson(const Capabilities& c) {
  json dtypes = json::array(), ops = json::object();
  for (DType d : c.dtypes) dtypes.push_back(static_cast<int>(d));
  for (const std::string& op : c.ops) {
    const auto w = c.opWeights.find(op);
    ops[op] = w == c.opWeights.end() ? 100 : static_cast<int>(w->second * 100 + 0.5);
  }
  return json{{"dtypes", dtypes},
              {"opset", c.opset},
              {"ops", ops},
              {"shape_operands_must_be_initializers", c.shapeOperandsMustBeInitializers},
              {"weights_must_be_initializers", c.weightsMustBeInitializers}};
}

Capabilities readCapabilities(const json& j, const std::string& who) {
  Capabilities c;
  for (int code : field<std::vector<int>>(j, "dtypes", who)) {
    if (!isKnownDType(code) || code == 0)
      throw Error(who + ": its capabilities name the ONNX data type " + std::to_string(code) +
                  ", which nncheck does not generate");
    c.dtypes.push_back(static_cast<DType>(code));
  }
  c.opset = field<int64_t>(j, "opset", who, c.opset);
  for (const auto& [op, percent] : field<std::map<std::string, int>>(j, "ops", who)) {
    if (percent < 0 || percent > 100)
      throw Error(who + ": its capabilities weigh op '" + op + "' " + std::to_string(percent) +
                  "%, outside 0-100");
    c.ops.push_back(op);
    c.opWeights[op] = percent / 100.0;
  }
  c.weightsMustBeInitializers =
      field<bool>(j, "weights_must_be_initializers", who, c.weightsMustBeInitializers);
  c.shapeOperandsMustBeInitializers =
      field<bool>(j, "shape_operands_must_be_initializers", who, c.shapeOperandsMustBeInitializers);
  return c;
}

// What a worker's facts may name: an engine has a few configurations, each a process and a
// worker of their own in a campaign, and its names are printed and matched.
constexpr size_t kMaxConfigurations = 32;
constexpr size_t kMaxOptimizations = 1024;  // per configuration, of each kind
constexpr size_t kMaxNameBytes = 256;

void checkName(const std::string& name, const char* what, const std::string& who) {
  if (name.size() > kMaxNameBytes || printable(name) != name)
    throw Error(who + ": its facts name " + what + " '" + printable(name.substr(0, 80)) +
                (name.size() > 80 ? "..." : "") + "': at most " + std::to_string(kMaxNameBytes) +
                " bytes, with no control or invisible character");
}

void checkBounds(const Facts& f, const std::string& who) {
  if (f.configurations.size() > kMaxConfigurations)
    throw Error(who + ": its facts name " + std::to_string(f.configurations.size()) +
                " configurations; an engine may have at most " +
                std::to_string(kMaxConfigurations) + " (each runs in processes of its own)");
  for (const std::string& c : f.configurations) checkName(c, "the configuration", who);
  for (const auto* kind : {&f.optimizations, &f.unreported, &f.fixed}) {
    if (kind->size() > kMaxConfigurations)
      throw Error(who + ": its facts list optimizations of " + std::to_string(kind->size()) +
                  " configurations; an engine may have at most " +
                  std::to_string(kMaxConfigurations));
    for (const auto& [configuration, names] : *kind) {
      checkName(configuration, "the configuration", who);
      if (names.size() > kMaxOptimizations)
        throw Error(who + ": its facts name " + std::to_string(names.size()) +
                    " optimizations of configuration '" + configuration + "'; at most " +
                    std::to_string(kMaxOptimizations));
      for (const std::string& n : names) checkName(n, "the optimization", who);
    }
  }
}

}  // namespace

std::string canonicalJson(std::string_view text) {
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw Error("not an object");
    return dump(j);
  } catch (const std::exception& e) {
    throw Error("worker protocol: '" + std::string(text) + "' is not a JSON object: " + e.what());
  }
}

std::string helloBody() {
  std::string body(1, kHello);
  wire::putBytes(body, dump(json{{"protocol", kProtocolVersion}}));
  return body;
}

Facts readFacts(std::string_view body, const std::string& who) {
  wire::Reader in(body, who);
  if (body.empty() || body[0] != kFacts)
    throw Error(who + ": answered hello with what is not the facts of an engine (the worker " +
                "protocol, version " + std::to_string(kProtocolVersion) + ", starts with 'F')");
  takeKind(in);
  const json j = takeJson(in, "facts");
  Facts f;
  f.protocol = field<int>(j, "protocol", who, 0);
  if (f.protocol != kProtocolVersion)
    throw Error(who + ": speaks the worker protocol version " + std::to_string(f.protocol) +
                "; this nncheck speaks version " + std::to_string(kProtocolVersion));
  f.name = field<std::string>(j, "name", who);
  if (f.name.empty()) throw Error(who + ": its facts name no engine ('name')");
  if (!isEngineName(f.name))
    throw Error(who + ": its facts name the engine '" + printable(f.name) +
                "', which is no plain name (at most 64 letters, digits, '_', '-' and '.', not "
                "starting with '.'): it names folders");
  f.version = field<std::string>(j, "version", who);
  f.description = field<std::string>(j, "description", who);
  f.configurations = field<std::vector<std::string>>(j, "configurations", who, {""});
  if (f.configurations.empty()) f.configurations = {""};
  f.baseline = field<std::string>(j, "baseline", who);
  f.optimizations = field<std::map<std::string, std::vector<std::string>>>(j, "optimizations", who);
  f.unreported = field<std::map<std::string, std::vector<std::string>>>(
      j, "unreported_optimizations", who, {});
  f.fixed =
      field<std::map<std::string, std::vector<std::string>>>(j, "fixed_optimizations", who, {});
  f.install = field<std::string>(j, "install", who);
  f.sharedStage = field<std::string>(j, "shared_stage", who, "");
  f.capabilities = readCapabilities(field<json>(j, "capabilities", who, json::object()), who);
  f.restartEvery = field<int>(j, "restart_every", who, 0);
  f.startSeconds = field<int>(j, "start_seconds", who, 0);
  f.freshForks = field<bool>(j, "fresh_forks", who, false);
  if (const json r = field<json>(j, "reproducer", who, json::object()); !r.empty()) {
    f.reproducer.language = field<std::string>(r, "language", who);
    if (f.reproducer.language != "python" && f.reproducer.language != "javascript")
      throw Error(who + ": its reproducer is in '" + f.reproducer.language +
                  "'; nncheck writes reproducers in python and javascript");
    f.reproducer.runtime = field<std::string>(r, "runtime", who);
    f.reproducer.requirements = field<std::string>(r, "requirements", who);
    f.reproducer.code = field<std::map<std::string, std::string>>(r, "configurations", who);
  }
  checkBounds(f, who);
  if (f.restartEvery < 0)
    throw Error(who + ": 'restart_every' is " + std::to_string(f.restartEvery) +
                ": expected a count of runs, or 0 for never");
  if (f.startSeconds < 0 || f.startSeconds > 600)
    throw Error(who + ": 'start_seconds' is " + std::to_string(f.startSeconds) +
                ": expected 0 to 600 seconds");
  return f;
}

std::optional<ReproducerRecipe> reproducerAt(const Facts& f, const std::string& configuration) {
  const auto code = f.reproducer.code.find(configuration);
  if (code == f.reproducer.code.end()) return std::nullopt;
  return ReproducerRecipe{.language = f.reproducer.language,
                          .code = code->second,
                          .requirements = f.reproducer.requirements,
                          .versions = f.name + " " + f.version + ", " + f.reproducer.runtime};
}

std::string factsBody(const Facts& f) {
  std::string body(1, kFacts);
  json j{{"protocol", f.protocol},
         {"name", f.name},
         {"version", f.version},
         {"description", f.description},
         {"configurations", f.configurations},
         {"baseline", f.baseline},
         {"optimizations", f.optimizations},
         {"unreported_optimizations", f.unreported},
         {"fixed_optimizations", f.fixed},
         {"install", f.install},
         {"capabilities", capabilitiesJson(f.capabilities)},
         {"restart_every", f.restartEvery},
         {"start_seconds", f.startSeconds}};
  if (!f.sharedStage.empty()) j["shared_stage"] = f.sharedStage;
  if (f.freshForks) j["fresh_forks"] = true;
  if (!f.reproducer.language.empty())
    j["reproducer"] = {{"language", f.reproducer.language},
                       {"runtime", f.reproducer.runtime},
                       {"requirements", f.reproducer.requirements},
                       {"configurations", f.reproducer.code}};
  wire::putBytes(body, dump(j));
  return body;
}

void putRun(wire::Message& m, const RunRequest& r, const std::string& model,
            const std::vector<std::pair<std::string, const Tensor*>>& inputs) {
  std::string head(1, kRun);
  wire::putBytes(head, dump(json{{"configuration", r.configuration},
                                 {"disabled", r.disabled},
                                 {"options", json::parse(canonicalJson(r.options))}}));
  wire::putU64(head, model.size());
  m.own(std::move(head));
  m.view(model.data(), model.size());
  std::string count;
  wire::putU64(count, inputs.size());
  m.own(std::move(count));
  for (const auto& [name, t] : inputs) wire::putTensor(m, name, *t);
}

Run takeRun(wire::Reader& in) {
  if (takeKind(in) != kRun) throw Error(in.who() + ": a request that is no run");
  const json j = takeJson(in, "run request");
  Run run;
  run.request.configuration = field<std::string>(j, "configuration", in.who());
  run.request.disabled = field<std::vector<std::string>>(j, "disabled", in.who());
  run.request.options = dump(j.value("options", json::object()));
  run.model = std::string(in.bytes());
  for (uint64_t n = in.get<uint64_t>(); n > 0; --n) {
    std::string name;
    Tensor t = wire::takeTensor(in, name);
    run.inputs.emplace_back(std::move(name), std::move(t));
  }
  return run;
}

Reply takeReply(wire::Reader& in) {
  Reply r;
  r.kind = static_cast<Kind>(takeKind(in));
  switch (r.kind) {
    case kOutputs: {
      const json j = takeJson(in, "outputs' header");
      r.applied = field<std::vector<std::string>>(j, "applied", in.who());
      for (uint64_t n = in.get<uint64_t>(); n > 0; --n) {
        std::string name;
        Tensor t = wire::takeTensor(in, name);
        r.outputs[name] = std::move(t);
      }
      for (uint64_t n = in.get<uint64_t>(); n > 0; --n) {
        std::string name(in.bytes());
        r.attachments[name] = std::string(in.bytes());
      }
      break;
    }
    case kUnsupported: {
      const json j = takeJson(in, "unsupported reply");
      r.category = field<std::string>(j, "category", in.who());
      r.message = field<std::string>(j, "message", in.who());
      break;
    }
    case kError: {
      const json j = takeJson(in, "error reply");
      r.message = field<std::string>(j, "message", in.who());
      r.trace = field<std::string>(j, "trace", in.who());
      break;
    }
    default:
      throw Error(in.who() + ": replied with a message of kind " +
                  std::to_string(static_cast<int>(static_cast<unsigned char>(r.kind))) +
                  ", which the worker protocol has not (outputs 'O', unsupported 'U', error 'E')");
  }
  if (in.left() > 0) throw Error(in.who() + ": a reply holds bytes past its end");
  return r;
}

void putReply(wire::Message& m, const Reply& r) {
  std::string head(1, r.kind);
  switch (r.kind) {
    case kOutputs: {
      wire::putBytes(head, dump(json{{"applied", r.applied}}));
      wire::putU64(head, r.outputs.size());
      m.own(std::move(head));
      for (const auto& [name, t] : r.outputs) wire::putTensor(m, name, t);
      std::string tail;
      wire::putU64(tail, r.attachments.size());
      for (const auto& [name, bytes] : r.attachments) {
        wire::putBytes(tail, name);
        wire::putBytes(tail, bytes);
      }
      m.own(std::move(tail));
      return;
    }
    case kUnsupported:
      wire::putBytes(head, dump(json{{"category", r.category}, {"message", r.message}}));
      break;
    case kError:
      wire::putBytes(head, dump(json{{"message", r.message}, {"trace", r.trace}}));
      break;
    default:
      throw Error("worker protocol: no reply of kind '" + std::string(1, r.kind) + "'");
  }
  m.own(std::move(head));
}

}  // namespace nncheck::worker
