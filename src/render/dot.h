// The one writer of DOT, Graphviz's language, for models (render/picture.h draws from it). Same
// model, same text: ids are positional, so drawings of a case are byte-identical run to run.
//
//   std::string dot = render::modelToDot(model, {.highlightOutput = "y"});
#pragma once

#include <string>

#include "render/picture.h"

namespace nncheck::render {

std::string modelToDot(const Model& model, const DrawOptions& options);

// Lays DOT out with Graphviz's dot engine and renders it as `format` ("svg", "png").
std::string renderDot(const std::string& dot, const std::string& format);

}  // namespace nncheck::render
