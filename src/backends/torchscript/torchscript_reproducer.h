// TorchScript's part of a standalone reproducer (EngineInfo::reproducer): a C++ run() against
// libtorch alone that defines the model as nncheck's TorchScript translation (with its
// initializers as buffers) and runs it as the configuration's level does.
//
//   std::optional<nncheck::ReproducerRecipe> r = nncheck::torchscript::reproducer("level=nnc", m);
#pragma once

#include <optional>
#include <string>

#include "nncheck/engine.h"

namespace nncheck::torchscript {

std::optional<ReproducerRecipe> reproducer(const std::string& configuration, const Model& model);

}  // namespace nncheck::torchscript
