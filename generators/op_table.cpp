#include "generators/op_table.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "nncheck/error.h"
#include "ops/infer.h"

namespace nncheck::gen {
namespace {

DType fromTypeString(const std::string& s) {
  static const std::vector<std::pair<std::string, DType>> table = {
      {"tensor(float)", DType::Float32},   {"tensor(double)", DType::Float64},
      {"tensor(float16)", DType::Float16}, {"tensor(int8)", DType::Int8},
      {"tensor(uint8)", DType::UInt8},     {"tensor(int32)", DType::Int32},
      {"tensor(int64)", DType::Int64},     {"tensor(bool)", DType::Bool}};
  for (const auto& [name, t] : table)
    if (name == s) return t;
  return DType::Undefined;
}

// What ONNX's schema says of an op at an opset, which the table needs per model: looked up once
// per (op, opset), since a schema lookup and its type strings cost as much as a small model.
struct SchemaFacts {
  std::vector<std::string> knownAttributes;
  std::vector<std::string> onnxTypeParams;     // per spec input
  std::vector<size_t> firstInputOfTypeVar;     // per spec type variable: it decides the role
  std::vector<std::vector<DType>> onnxDTypes;  // per type variable: spec's dtypes ONNX allows
  // Per required output whose dtype no input decides (Shape's int64, DynamicQuantizeLinear's
  // uint8, Cast's): the dtypes ONNX allows it. A generator needs one of each among its dtypes.
  std::vector<std::vector<DType>> freeOutputDTypes;
};

// The dtypes of a formal parameter's type string (a type parameter or a fixed "tensor(int64)").
std::vector<DType> dtypesOfTypeStr(const onnx::OpSchema& schema, const std::string& typeStr) {
  std::vector<DType> out;
  for (const auto& tc : schema.typeConstraintParams())
    if (tc.type_param_str == typeStr)
      for (const auto& t : tc.allowed_type_strs) out.push_back(fromTypeString(t));
  if (out.empty()) out.push_back(fromTypeString(typeStr));
  return out;
}

// Null when ONNX has no schema of the op at the opset that the spec implements.
const SchemaFacts* schemaFacts(const ops::OpSpec& spec, int64_t opset) {
  static std::mutex mutex;
  static std::map<std::pair<const ops::OpSpec*, int64_t>, std::optional<SchemaFacts>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = cache.try_emplace({&spec, opset});
  if (fresh) {
    const auto* schema = onnx::OpSchemaRegistry::Schema(spec.type, static_cast<int>(opset), "");
    if (schema && schema->SinceVersion() >= spec.minVersion) {
      SchemaFacts f;
      for (const auto& [name, attr] : schema->attributes()) f.knownAttributes.push_back(name);
      const auto& formals = schema->inputs();
      for (size_t i = 0; i < spec.inputs.size(); ++i)
        f.onnxTypeParams.push_back(formals[std::min(i, formals.size() - 1)].GetTypeStr());
      for (const auto& tv : spec.typeVars) {
        size_t first = 0;
        while (spec.inputs[first].typeVar != tv.name) ++first;
        const auto theirs =
            dtypesOfTypeStr(*schema, formals[std::min(first, formals.size() - 1)].GetTypeStr());
        f.firstInputOfTypeVar.push_back(first);
        f.onnxDTypes.emplace_back();
        for (DType d : tv.allowed)
          if (std::find(theirs.begin(), theirs.end(), d) != theirs.end())
            f.onnxDTypes.back().push_back(d);
      }
      for (const auto& out : schema->outputs()) {
        if (out.GetOption() == onnx::OpSchema::Optional) continue;
        const bool bound = std::any_of(formals.begin(), formals.end(), [&](const auto& in) {
          return in.GetTypeStr() == out.GetTypeStr();
        });
        if (!bound) f.freeOutputDTypes.push_back(dtypesOfTypeStr(*schema, out.GetTypeStr()));
      }
      it->second = std::move(f);
    }
  }
  return it->second ? &*it->second : nullptr;
}

}  // namespace

size_t OpEntry::typeVarIndex(size_t input) const {
  const std::string& name = spec->inputSpec(input).typeVar;
  for (size_t t = 0; t < spec->typeVars.size(); ++t)
    if (spec->typeVars[t].name == name) return t;
  throw std::logic_error(spec->type + ": input names an undeclared type variable");
}

bool OpEntry::knowsAttribute(const std::string& name) const {
  return std::find(knownAttributes.begin(), knownAttributes.end(), name) != knownAttributes.end();
}

const std::vector<DType>& OpEntry::dtypesOfInput(size_t i) const {
  return typeVarDTypes[typeVarIndex(i)];
}

std::vector<OpEntry> buildOpTable(const GeneratorConfig& cfg) {
  if (cfg.nodes < 1 || cfg.nodes > kMaxGeneratedNodes)
    throw Error("generator: --nodes must be from 1 to " + std::to_string(kMaxGeneratedNodes) +
                ", got " + std::to_string(cfg.nodes) +
                " (growth slows with size: a model of 1,000 nodes takes seconds)");
  if (cfg.opset < 13 || cfg.opset > 17)
    throw Error("generator: opset " + std::to_string(cfg.opset) +
                " is outside the supported 13..17");
  if (cfg.maxRank < 1 || cfg.maxRank > 6) throw Error("generator: max rank must be within 1..6");
  if (cfg.minDim < 1 || cfg.maxDim < cfg.minDim)
    throw Error("generator: input dims range [" + std::to_string(cfg.minDim) + ", " +
                std::to_string(cfg.maxDim) + "] is empty or below 1");
  if (cfg.maxElements < 1) throw Error("generator: max elements must be at least 1");
  if (cfg.dtypes.empty()) throw Error("generator: no dtypes allowed");
  for (DType t : cfg.dtypes)
    if (!isComputeDType(t))
      throw Error("generator: dtype " + std::string(dtypeName(t)) +
                  " is not one the reference computes on");
  const auto& reg = ops::Registry::instance();
  for (const auto* list : {&cfg.ops, &cfg.denyOps})
    for (const std::string& op : *list)
      if (!reg.find(op)) throw Error("generator: unknown op '" + op + "' (not in the op library)");
  for (const auto& [op, w] : cfg.opWeights) {
    if (!reg.find(op)) throw Error("generator: weight given for unknown op '" + op + "'");
    if (!(w >= 0 && std::isfinite(w)))
      throw Error("generator: the weight of op '" + op + "' is " + std::to_string(w) +
                  ", not a finite non-negative number");
  }
  for (const auto& [pair, w] : cfg.pairWeights) {
    const std::string name = pair.first + ">" + pair.second;
    for (const std::string& op : {pair.first, pair.second})
      if (!reg.find(op))
        throw Error("generator: pair weight " + name + " names unknown op '" + op + "'");
    if (!(w >= 0 && std::isfinite(w)))
      throw Error("generator: pair weight " + name + " is not a finite non-negative number");
  }
  for (const auto& [name, share] : {std::pair{"seed share", cfg.seedShare},
                                    {"backward probability", cfg.backwardProbability},
                                    {"solver share", cfg.solverShare},
                                    {"constant share", cfg.constantShare},
                                    {"block share", cfg.blockShare}})
    if (!(share >= 0 && share <= 1))
      throw Error(std::string("generator: the ") + name + " must be within [0, 1]");

  std::vector<OpEntry> table;
  for (const auto& specPtr : reg.all()) {
    const ops::OpSpec& spec = *specPtr;
    if (!cfg.ops.empty() && std::find(cfg.ops.begin(), cfg.ops.end(), spec.type) == cfg.ops.end())
      continue;
    if (std::find(cfg.denyOps.begin(), cfg.denyOps.end(), spec.type) != cfg.denyOps.end()) continue;
    if (!spec.notGeneratedWhy.empty()) continue;
    if (hasSubgraphs(spec) && !cfg.controlFlow) continue;
    const SchemaFacts* facts = schemaFacts(spec, cfg.opset);
    if (!facts) continue;
    OpEntry e;
    e.spec = &spec;
    auto w = cfg.opWeights.find(spec.type);
    e.weight = w == cfg.opWeights.end() ? 1.0 : w->second;
    if (e.weight == 0) continue;
    e.knownAttributes = facts->knownAttributes;
    e.onnxTypeParams = facts->onnxTypeParams;
    e.typeVarDTypes.resize(spec.typeVars.size());
    bool usable = true;
    for (size_t t = 0; t < spec.typeVars.size() && usable; ++t) {
      const size_t first = facts->firstInputOfTypeVar[t];
      const bool data = spec.inputs[first].role == ops::InputRole::Data &&
                        spec.inputs[first].domain != ops::ValueDomain::Indices;
      for (DType d : facts->onnxDTypes[t])
        if (!data || std::find(cfg.dtypes.begin(), cfg.dtypes.end(), d) != cfg.dtypes.end())
          e.typeVarDTypes[t].push_back(d);
      usable = !e.typeVarDTypes[t].empty();
    }
    for (const auto& allowed : facts->freeOutputDTypes)
      usable = usable && std::any_of(allowed.begin(), allowed.end(), [&](DType d) {
                 return std::find(cfg.dtypes.begin(), cfg.dtypes.end(), d) != cfg.dtypes.end();
               });
    if (usable) table.push_back(std::move(e));
  }
  if (table.empty())
    throw Error("generator: no op is usable with the allowed ops, dtypes and opset");
  return table;
}

}  // namespace nncheck::gen
