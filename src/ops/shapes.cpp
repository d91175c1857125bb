#include "nncheck/shapes.h"

#include "ops/infer.h"

namespace nncheck {

std::map<std::string, ValueFacts> inferShapes(const Model& model) {
  std::map<std::string, ValueFacts> out;
  for (const auto& [name, f] : ops::inferStaticModel(model, "static shape inference")) {
    if (!f.present) continue;
    ValueFacts& v = out[name];
    v.dtype = f.dtype;
    v.shape = f.shape;
    if (f.value) v.value = *f.value;
  }
  return out;
}

}  // namespace nncheck
