#include "jax_source/translate.h"

#include "jax_source/emit.h"
#include "nncheck/error.h"

namespace nncheck::jax {

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

std::string JaxEmit::dtypeName(DType t) const {
  switch (t) {
    case DType::Int32:
      return "jnp.int32";
    case DType::Int64:
      return "jnp.int64";
    case DType::Float32:
      return "jnp.float32";
    case DType::Float64:
      return "jnp.float64";
    case DType::Bool:
      return "jnp.bool_";
    default:
      unsupported("dtype " + std::string(nncheck::dtypeName(t)) + " is not translated");
  }
}

bool JaxEmit::isFloat(size_t i) const {
  return dtype(i) == DType::Float32 || dtype(i) == DType::Float64;
}

void assignAsInteger(JaxEmit& e, size_t k, const std::string& f64, DType t) {
  if (t == DType::Bool) {
    e.assign(k, "(" + f64 + ") != 0.0");
    return;
  }
  if (t != DType::Int64 && t != DType::Int32) throw Error("assignAsInteger: not an integer type");
  const std::string hi = t == DType::Int64 ? "9223372036854775807" : "2147483647";
  const std::string lo = "-" + hi + " - 1";
  const std::string v = e.let("jnp.nan_to_num(" + f64 + ", nan=0.0)");
  e.assign(k, "jnp.where(" + v + " >= " + hi + ".0, " + hi + ", jnp.where(" + v + " <= -" + hi +
                  ".0, " + lo + ", " + v + ".astype(" + e.dtypeName(t) + ")))");
}

Program translate(const Model& model, const std::string& engine) {
  PythonBody b = translateToPython(model, engine, emitters(), "params['", "']",
                                   [](const Emitter& emitter, PythonSite site) {
                                     JaxEmit e(std::move(site));
                                     emitter(e);
                                   });
  Program p{.source = "def model(params",
            .params = std::move(b.weights),
            .inputs = std::move(b.inputs),
            .outputs = std::move(b.outputs)};
  for (size_t i = 0; i < p.inputs.size(); ++i) p.source.append(", a").append(std::to_string(i));
  p.source += "):\n";
  for (const std::string& l : b.lines) p.source += "    " + l + "\n";
  std::string ret;
  for (const std::string& r : b.returned) ret += r + ", ";
  p.source += "    return (" + ret + ")\n";
  return p;
}

}  // namespace nncheck::jax
