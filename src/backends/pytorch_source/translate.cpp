#include "pytorch_source/translate.h"

#include "nncheck/error.h"
#include "pytorch_source/emit.h"

namespace nncheck::pytorch {

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
  PythonBody b = translateToPython(model, engine, emitters(), "self.", "",
                                   [dialect](const Emitter& emitter, PythonSite site) {
                                     NodeEmit e(std::move(site), dialect);
                                     emitter(e);
                                   });
  Script s{.source = "def forward(self",
           .buffers = std::move(b.weights),
           .inputs = std::move(b.inputs),
           .outputs = std::move(b.outputs)};
  for (size_t i = 0; i < s.inputs.size(); ++i)
    s.source.append(", a").append(std::to_string(i)).append(": Tensor");
  s.source += "):\n";
  for (const std::string& l : b.lines) s.source += "    " + l + "\n";
  std::string ret;
  for (const std::string& r : b.returned) ret += r + ", ";
  s.source += "    return (" + ret + ")\n";
  return s;
}

}  // namespace nncheck::pytorch
