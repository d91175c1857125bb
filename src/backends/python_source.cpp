#include "backends/python_source.h"

#include <cmath>
#include <cstdio>

#include "nncheck/error.h"

namespace nncheck {

PythonEmit::PythonEmit(PythonSite site)
    : NodeReading(site.node, site.opset, std::move(site.inFacts), std::move(site.outFacts),
                  site.engine),
      in_(std::move(site.in)),
      outNames_(std::move(site.outNames)),
      lines_(site.lines),
      temps_(site.temps) {}

const std::string& PythonEmit::in(size_t i) const {
  if (!has(i)) unsupported("input " + std::to_string(i) + " is absent");
  return in_[i];
}

const ops::InputFacts& PythonEmit::facts(size_t i) const {
  if (!has(i)) unsupported("input " + std::to_string(i) + " is absent");
  return inputFacts()[i];
}

void PythonEmit::assign(size_t k, const std::string& expr) {
  lines_.push_back(out(k) + " = " + expr);
}

std::string PythonEmit::let(const std::string& expr) {
  const std::string name = "_t" + std::to_string(temps_++);
  lines_.push_back(name + " = " + expr);
  return name;
}

PythonNaming::PythonNaming(const Model& model, const std::string& engine, std::string weightBefore,
                           std::string weightAfter)
    : model_(model), engine_(engine), facts_(ops::inferStaticModel(model, engine)) {
  const Graph& g = model.graph;
  for (const ValueInfo* in : g.feedInputs()) {
    expr_[in->name] = std::string("a").append(std::to_string(body_.inputs.size()));
    body_.inputs.push_back(in->name);
  }
  for (const Initializer& w : g.initializers) {
    if (expr_.count(w.name)) continue;  // a graph input's default: the input wins
    const std::string name = std::string("w").append(std::to_string(body_.weights.size()));
    expr_[w.name] = weightBefore + name + weightAfter;
    body_.weights.push_back({name, w.name, w.value});
  }
}

PythonSite PythonNaming::site(const Node& n, std::vector<ops::InputFacts> inFacts,
                              std::vector<ops::InputFacts> outFacts) {
  std::vector<std::string> in;
  for (const std::string& v : n.inputs) in.push_back(v.empty() ? "" : expr_.at(v));
  std::vector<std::string> outNames;
  for (const std::string& v : n.outputs) {
    // Appended, not concatenated: GCC 12 warns -Wrestrict on "v" + string here.
    outNames.push_back(v.empty() ? "_unused" : std::string("v").append(std::to_string(values_++)));
    if (!v.empty()) expr_[v] = outNames.back();
  }
  return PythonSite{n,
                    model_.defaultOpset(),
                    std::move(in),
                    std::move(inFacts),
                    std::move(outFacts),
                    std::move(outNames),
                    body_.lines,
                    temps_,
                    engine_};
}

PythonBody PythonNaming::finish() {
  for (const ValueInfo& o : model_.graph.outputs) {
    body_.outputs.push_back(o.name);
    body_.returned.push_back(expr_.at(o.name));
  }
  return std::move(body_);
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

std::string pyTuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  // Appended, not concatenated: GCC 12 warns -Wrestrict on "(" + string.
  if (v.size() == 1) return s.append(std::to_string(v[0])).append(",)");
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ")";
}

}  // namespace nncheck
