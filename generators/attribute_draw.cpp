#include "generators/attribute_draw.h"

namespace nncheck::gen {

std::optional<Attribute> drawAttribute(Rng& rng, const ops::AttrSpec& a, const Node& node,
                                       int64_t rank0, const std::vector<DType>& dtypes) {
  using ops::AttrSampling;
  const int64_t spatial = std::max<int64_t>(0, rank0 - 2);
  Attribute v;
  v.name = a.name;
  v.kind = a.kind;
  switch (a.sampling) {
    case AttrSampling::Axis:
      if (rank0 == 0) return std::nullopt;
      v.i = rng.uniform(-rank0, rank0 - 1);
      break;
    case AttrSampling::AxisInclusive:
      v.i = rng.uniform(-rank0, rank0);
      break;
    case AttrSampling::Permutation:
      for (int64_t i = 0; i < rank0; ++i) v.ints.push_back(i);
      rng.shuffle(v.ints);
      break;
    case AttrSampling::AxesSubset:
      v.ints = ops::drawAxesSubset(rng, rank0);
      break;
    case AttrSampling::DType:
      v.i = static_cast<int64_t>(rng.pick(dtypes));
      break;
    case AttrSampling::Custom:
      if (!a.draw) return std::nullopt;
      if (auto drawn = a.draw(rng, node)) {
        v = std::move(*drawn);
        v.name = a.name;
        break;
      }
      return std::nullopt;
    case AttrSampling::Range:
    case AttrSampling::Never:
      if (a.kind == Attribute::Kind::String) {
        const auto& strings = a.choices.empty() ? a.samples : a.choices;
        if (strings.empty()) return std::nullopt;
        v.s = rng.pick(strings);
      } else if (a.kind == Attribute::Kind::Float) {
        v.f = static_cast<float>(rng.real(a.flo, a.fhi));
      } else if (a.kind == Attribute::Kind::Int) {
        v.i = a.intChoices.empty() ? (rng.chance(0.5) ? a.lo : rng.uniform(a.lo, a.hi))
                                   : rng.pick(a.intChoices);
      } else if (a.kind == Attribute::Kind::Ints && a.perSpatialAxis > 0) {
        if (spatial == 0) return std::nullopt;
        for (int64_t i = 0; i < spatial * a.perSpatialAxis; ++i)
          v.ints.push_back(rng.chance(0.5) ? a.lo : rng.uniform(a.lo, a.hi));
      } else {
        return std::nullopt;  // lists without a sampling rule stay unset
      }
      break;
  }
  if (v.kind == Attribute::Kind::Ints && v.ints.empty()) return std::nullopt;  // ONNX rejects
  return v;
}

}  // namespace nncheck::gen
