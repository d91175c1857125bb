// OpenCV's part of a standalone reproducer (EngineInfo::reproducer): a C++ run() that drives
// OpenCV DNN alone at a configuration.
//
//   std::optional<nncheck::ReproducerRecipe> r = nncheck::opencv::reproducer("fusion=off", m);
#pragma once

#include <optional>
#include <string>

#include "nncheck/engine.h"

namespace nncheck::opencv {

std::optional<ReproducerRecipe> reproducer(const std::string& configuration, const Model& model);

}  // namespace nncheck::opencv
