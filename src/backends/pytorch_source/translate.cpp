#include "pytorch_source/translate.h"

#include <cmath>
#include <cstdio>

#include "nncheck/error.h"
#include "pytorch_source/emit.h"

namespace nncheck::pytorch {

NodeEmit::NodeEmit(const Node& node, int64_t opset, std::vector<std::string> in,
                   std::vector<ops::InputFacts> facts, std::vector<ops::InputFacts> outs,
                   std::vector<std::string> outNames, std::vector<std::string>& lines, int& temps,
                   const std::string& engine, Dialect dialect)
    : NodeReading(node, opset, std::move(facts), std::move(outs), engine),
      in_(std::move(in)),
      outNames_(std::move(outNames)),
      lines_(lines),
      temps_(temps),
      dialect_(dialect) {}

const std::string& NodeEmit::in(size_t i) const {
  if (!has(i)) unsupported("input " + std::to_string(i) + " is absent");
  return in_[i];
}

const ops::InputFacts& NodeEmit::facts(size_t i) const {
  if (!has(i)) unsupported("input " + std::to_string(i) + " is absent");
  return inputFacts()[i];
}

void NodeEmit::assign(size_t k, const std::string& expr) {
  lines_.push_back(out(k) + " = " + expr);
}

std::string NodeEmit::let(const std::string& expr) {
  const std::string name = "_t" + std::to_string(temps_++);
  lines_.push_back(name + " = " + expr);
  return name;
}

const EmitterTable& emitters() {
  static const EmitterTable table = [] {
    EmitterTable t;
    addElementwiseEmitters(t);
    addNeuralEmitters(t);
    addShapeEmitters(t);
    return t;
  }();
  return table;
}

std::string pyFloat(double v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string pyInts(const std::vector<int64_t>& v) {
  if (v.empty()) return "[]";  // typed by the parameter it is passed to
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string NodeEmit::torchType(DType t) const {
  const bool py = dialect_ == Dialect::Python;
  switch (t) {
    case DType::Int32:
      return py ? "torch.int32" : "3";
    case DType::Int64:
      return py ? "torch.int64" : "4";
    case DType::Float32:
      return py ? "torch.float32" : "6";
    case DType::Float64:
      return py ? "torch.float64" : "7";
    case DType::Bool:
      return py ? "torch.bool" : "11";
    default:
      throw Unsupported(
          "dtype", "PyTorch source: dtype " + std::string(dtypeName(t)) + " is not translated");
  }
}

std::string NodeEmit::functional(const std::string& name) const {
  return (dialect_ == Dialect::Python ? "torch.nn.functional." : "torch.") + name;
}

void assignAsInteger(NodeEmit& e, size_t k, const std::string& f64, DType t) {
  if (t == DType::Bool) {
    e.assign(k, "torch.ne(" + f64 + ", 0.0)");
    return;
  }
  if (t != DType::Int64 && t != DType::Int32) throw Error("assignAsInteger: not an integer type");
  const std::string hi = t == DType::Int64 ? "9223372036854775807" : "2147483647";
  const std::string lo = "(-" + hi + " - 1)";  // the literal itself would overflow
  const std::string v = e.let("torch.nan_to_num(" + f64 + ", 0.0)");
  e.assign(k, "torch.where(" + v + " >= " + hi + ".0, " + hi + ", torch.where(" + v + " <= -" + hi +
                  ".0, " + lo + ", " + v + ".to(" + e.torchType(t) + ")))");
}

Script translate(const Model& model, const std::string& engine, Dialect dialect) {
  const Graph& g = model.graph;
  const std::map<std::string, ops::InputFacts> facts = ops::inferStaticModel(model, engine);
  Script s;
  std::map<std::string, std::string> expr;  // ONNX value -> TorchScript expression
  std::string params;
  for (const ValueInfo* in : g.feedInputs()) {
    const std::string name = std::string("a").append(std::to_string(s.inputs.size()));
    expr[in->name] = name;
    s.inputs.push_back(in->name);
    params += ", " + name + ": Tensor";
  }
  for (const Initializer& w : g.initializers) {
    if (expr.count(w.name)) continue;  // a graph input's default: the input wins
    const std::string name = std::string("w").append(std::to_string(s.buffers.size()));
    expr[w.name] = "self." + name;
    s.buffers.push_back({name, w.name, w.value});
  }
  std::vector<std::string> lines;
  int temps = 0, values = 0;
  forEachNodeToTranslate(
      g, facts, emitters(), engine,
      [&](const Node& n, const Emitter& emitter, const std::vector<ops::InputFacts>& inFacts,
          const std::vector<ops::InputFacts>& outFacts) {
        std::vector<std::string> in;
        for (const std::string& v : n.inputs) in.push_back(v.empty() ? "" : expr.at(v));
        std::vector<std::string> outNames;
        for (const std::string& v : n.outputs) {
          // Appended, not concatenated: GCC 12 warns -Wrestrict on "v" + string here.
          outNames.push_back(v.empty() ? "_unused"
                                       : std::string("v").append(std::to_string(values++)));
          if (!v.empty()) expr[v] = outNames.back();
        }
        NodeEmit emit(n, model.defaultOpset(), in, inFacts, outFacts, outNames, lines, temps,
                      engine, dialect);
        emitter(emit);
      });
  std::string ret;
  for (const ValueInfo& o : g.outputs) {
    s.outputs.push_back(o.name);
    ret += expr.at(o.name) + ", ";
  }
  s.source = "def forward(self";  // appended, not concatenated: GCC 12 warns -Wrestrict
  s.source += params;
  s.source += "):\n";
  for (const std::string& l : lines) s.source += "    " + l + "\n";
  s.source += "    return (" + ret + ")\n";
  return s;
}

}  // namespace nncheck::pytorch
