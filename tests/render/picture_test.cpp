// Pictures of models: the DOT text says what the issue asks a drawing to show (ops with their
// non-default attributes, dtypes and shapes on edges, inputs apart from initializers, small
// initializers by value, bodies as clusters, the diverging node highlighted, notes on values),
// and Graphviz renders it to SVG and PNG, the same bytes each time.
#include "render/picture.h"

#include <gtest/gtest.h>

#include <sstream>

#include "nncheck/error.h"
#include "nncheck/generator.h"
#include "render/dot.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::f32;

// x[1,2,5,5] -> Conv(w[3,2,3,3], b[3], pads 1, group 1 said explicitly) -> Relu -> y.
Model convRelu() {
  Model m;
  m.opsets = {{"", 13}};
  m.graph.name = "conv_relu";
  m.graph.inputs = {f32("x", {1, 2, 5, 5})};
  m.graph.initializers = {{"w", Tensor(DType::Float32, {3, 2, 3, 3}), ""},
                          {"b", Tensor::fromVector<float>({3}, {0.5f, -1, 2}), ""}};
  Node conv = Node::make("Conv", {"x", "w", "b"}, {"c"}, "conv");
  conv.attributes = {Attribute::ofInts("pads", {1, 1, 1, 1}), Attribute::ofInt("group", 1)};
  m.graph.nodes = {conv, Node::make("Relu", {"c"}, {"y"}, "relu")};
  m.graph.outputs = {f32("y", {1, 3, 5, 5})};
  return m;
}

using testing::has;

TEST(Picture, DotShowsOpsNonDefaultAttributesTypesAndInputsApartFromInitializers) {
  const std::string dot = drawModel(convRelu(), PictureFormat::Dot);
  EXPECT_TRUE(has(dot, "label=\"Conv 'conv'\\npads=[1, 1, 1, 1]\"")) << dot;
  EXPECT_FALSE(has(dot, "group=1")) << "a default attribute is not drawn";
  EXPECT_TRUE(has(dot, "label=\"float32[1, 2, 5, 5]\"")) << "x's edge carries its type";
  EXPECT_TRUE(has(dot, "label=\"float32[1, 3, 5, 5]\"")) << "c's edge, by our rules";
  EXPECT_TRUE(has(dot, "shape=ellipse, style=filled, fillcolor=\"#dbe9f6\", label=\"x\\n"))
      << "the graph input";
  EXPECT_TRUE(has(dot,
                  "shape=box, style=filled, fillcolor=\"#eeeeee\", fontsize=9, "
                  "label=\"w\\nfloat32[3, 2, 3, 3]\""))
      << "a large initializer by type";
  EXPECT_TRUE(has(dot, "shape=note")) << "a small initializer by value";
  EXPECT_TRUE(has(dot, "label=\"b = ")) << dot;
  EXPECT_FALSE(has(dot, "#f4a6a6")) << "nothing highlighted unless asked";
}

TEST(Picture, TheDivergingNodeIsHighlightedAndValuesCarryTheirNotes) {
  DrawOptions o;
  o.highlightOutput = "c";
  o.notes = {{"c", "max abs error 0.5 at [0, 1, 2, 2]"}, {"y", "expected [1,3,5,5]"}};
  const std::string dot = drawModel(convRelu(), PictureFormat::Dot, o);
  const size_t conv = dot.find("Conv 'conv'");
  const size_t red = dot.find("#f4a6a6");
  ASSERT_NE(red, std::string::npos) << dot;
  EXPECT_EQ(dot.rfind('\n', conv), dot.rfind('\n', red)) << "the Conv's line is the red one";
  EXPECT_TRUE(has(dot, "float32[1, 3, 5, 5]\\nmax abs error 0.5 at [0, 1, 2, 2]")) << dot;
  EXPECT_TRUE(has(dot, "fillcolor=\"#f4cccc\", label=\"y\\nfloat32[1, 3, 5, 5]\\nexpected")) << dot;

  // A long note is broken at spaces into lines of about 60 characters.
  o.notes = {{"c", std::string(70, 'a') + " " + std::string(10, 'b') + " c"}};
  EXPECT_TRUE(has(drawModel(convRelu(), PictureFormat::Dot, o),
                  std::string(70, 'a') + "\\n" + std::string(10, 'b') + " c\""));
}

TEST(Picture, NestedGraphsAreClustersThatCaptureByDashedEdges) {
  GeneratorConfig cfg;
  cfg.controlFlow = true;
  cfg.nodes = 12;
  int drawn = 0;
  for (uint64_t seed = 1; seed <= 40 && drawn < 3; ++seed) {
    const TestCase tc = makeTestCase(cfg, seed);
    size_t bodies = 0;
    for (const Node& n : tc.model.graph.nodes) bodies += n.subgraphs().size();
    if (bodies == 0) continue;
    ++drawn;
    const std::string dot = drawModel(tc.model, PictureFormat::Dot);
    size_t clusters = 0;
    for (size_t at = dot.find("subgraph cluster_"); at != std::string::npos;
         at = dot.find("subgraph cluster_", at + 1))
      ++clusters;
    EXPECT_EQ(clusters, bodies) << "seed " << seed;
    EXPECT_TRUE(has(dot, "arrowhead=empty")) << "body outputs go to their node";
    // A capture's edge is written outside every cluster: inside one it would make its tail a
    // member, and a node in two clusters made Graphviz's dot free memory twice (seed 21).
    int depth = 0;
    std::istringstream lines(dot);
    for (std::string line; std::getline(lines, line);) {
      if (has(line, "subgraph cluster_")) ++depth;
      if (line.find_first_not_of(' ') != std::string::npos &&
          line[line.find_first_not_of(' ')] == '}')
        --depth;
      if (has(line, "style=dashed]")) {
        EXPECT_EQ(depth, 0) << "seed " << seed << ": " << line;
      }
    }
    const std::string svg = drawModel(tc.model, PictureFormat::Svg);
    EXPECT_TRUE(has(svg, "<svg")) << "seed " << seed;
  }
  EXPECT_EQ(drawn, 3);
}

TEST(Picture, SvgAndPngAreRenderedTheSameEachTime) {
  const std::string svg = drawModel(convRelu(), PictureFormat::Svg);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << svg.substr(0, 80);
  EXPECT_TRUE(has(svg, "<svg")) << svg.substr(0, 200);
  EXPECT_TRUE(has(svg, "Conv &#39;conv&#39;") || has(svg, "Conv 'conv'")) << svg;
  EXPECT_EQ(drawModel(convRelu(), PictureFormat::Svg), svg);
  const std::string png = drawModel(convRelu(), PictureFormat::Png);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(drawModel(convRelu(), PictureFormat::Png), png);
  EXPECT_TRUE(has(drawModel(convRelu(), PictureFormat::Text), "Conv"));
}

TEST(Picture, AnUnknownFormatOrBrokenDotIsAnErrorNamingIt) {
  try {
    pictureFormat("jpeg");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "'jpeg'")) << e.what();
  }
  EXPECT_EQ(pictureFormat("png"), PictureFormat::Png);
  try {
    render::renderDot("digraph { a -> ", "svg");
    FAIL() << "rendered";
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "syntax error")) << "Graphviz's own message, not on stderr";
  }
  EXPECT_THROW(render::renderDot("digraph { a -> b }", "no-such-format"), Error);
}

TEST(Picture, LargeDrawingsAreLaidOutWithLimitedWorkAndTheLargestRefused) {
  // Graphviz's layout time grows far faster than the drawing: a 6,000-node case hung `show`
  // and the whole report. Past 1,000 boxes no picture is made; past 250 the layout's searches
  // are cut short.
  EXPECT_NE(drawModel(testing::negChain(600), PictureFormat::Svg).find("<svg"), std::string::npos);
  try {
    drawModel(testing::negChain(1200), PictureFormat::Svg);
    ADD_FAILURE() << "drawn";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the drawing has 1202 boxes, more than the 1000"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(drawModel(testing::negChain(1200), PictureFormat::Png), Error);
  // DOT and text are only written, never laid out: no limit.
  EXPECT_NE(drawModel(testing::negChain(1200), PictureFormat::Dot).find("digraph"),
            std::string::npos);
}

}  // namespace
}  // namespace nncheck
