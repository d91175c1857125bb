// Pictures of models, for people: a Graphviz drawing (SVG or PNG, laid out in process by
// Debian's libgvc), its DOT source, or the text printer's listing. The drawing shows each op with
// its non-default attributes, dtypes and shapes on the edges, graph inputs apart from
// initializers (small ones by value), and nested graphs as clusters; a failing case's first
// diverging node is highlighted and values can carry notes (error figures).
//
//   std::string svg = nncheck::drawModel(tc.model, nncheck::PictureFormat::Svg);
//   nncheck::DrawOptions o{.highlightOutput = "y3", .notes = {{"y3", "max |error| 0.5"}}};
//   std::string dot = nncheck::drawModel(tc.model, nncheck::PictureFormat::Dot, o);
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "nncheck/graph.h"

namespace nncheck {

enum class PictureFormat { Svg, Png, Dot, Text };

// "svg", "png", "dot" or "text"; anything else is an nncheck::Error naming it and the choices.
PictureFormat pictureFormat(std::string_view name);
std::string_view pictureFormatName(PictureFormat f);

struct DrawOptions {
  // The node computing this value (the first diverging node's output) is highlighted.
  std::string highlightOutput;
  // Value name -> a line drawn under the value (on the edge or the graph output that shows it).
  std::map<std::string, std::string> notes;
};

// The picture's bytes. Throws nncheck::Error when Graphviz cannot lay the drawing out.
std::string drawModel(const Model& model, PictureFormat format, const DrawOptions& options = {});

}  // namespace nncheck
