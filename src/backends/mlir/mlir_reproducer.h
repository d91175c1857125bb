// MLIR's part of a standalone reproducer (EngineInfo::reproducer): a Python run() that compiles
// the model's TOSA program with MLIR's and LLVM's own tools (mlir-opt with the configuration's
// pass pipeline, mlir-translate, opt, llc) and calls @forward through its C interface.
//
//   std::optional<nncheck::ReproducerRecipe> r = nncheck::mlir::reproducer("loops=affine", m);
#pragma once

#include <optional>
#include <string>

#include "nncheck/engine.h"

namespace nncheck::mlir {

std::optional<ReproducerRecipe> reproducer(const std::string& configuration, const Model& model);

}  // namespace nncheck::mlir
