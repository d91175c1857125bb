// One attribute of a node drawn from its op's spec, as the generator draws every attribute of a
// new node and a mutation redraws one attribute of a node in place.
//
//   if (auto a = gen::drawAttribute(rng, *spec.attrSpec("mode"), node, rank0, cfg.dtypes))
//     node.attributes.push_back(*a);
#pragma once

#include <optional>
#include <vector>

#include "core/rng.h"
#include "ops/op_spec.h"

namespace nncheck::gen {

// nullopt when the spec has nothing to draw for an input 0 of rank `rank0` (an axis of a
// scalar, a per-spatial-axis list without spatial axes, a list with no sampling rule).
// `node` is the node as drawn so far, which AttrSampling::Custom reads.
std::optional<Attribute> drawAttribute(Rng& rng, const ops::AttrSpec& a, const Node& node,
                                       int64_t rank0, const std::vector<DType>& dtypes);

}  // namespace nncheck::gen
