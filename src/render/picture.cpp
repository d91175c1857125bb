#include "render/picture.h"

#include <graphviz/gvc.h>

#if defined(__has_include)
#if __has_include(<sanitizer/lsan_interface.h>)
#include <sanitizer/lsan_interface.h>
#endif
#endif

#include <mutex>

#include "nncheck/error.h"
#include "nncheck/test_case.h"
#include "render/dot.h"

namespace nncheck {
namespace render {

namespace {

// Graphviz and the font libraries under it keep caches for the life of the process, which
// LeakSanitizer would report at exit in sanitized builds: they are not nncheck's to free.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NNCHECK_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define NNCHECK_LSAN 1
#endif
struct LeaksNotOurs {
#ifdef NNCHECK_LSAN
  LeaksNotOurs() { __lsan_disable(); }
  ~LeaksNotOurs() { __lsan_enable(); }
#endif
};

// One context for the process: Graphviz 2.42 frees font names a fresh context still reads
// (a use-after-free in libgvc's text measuring, found by AddressSanitizer).
GVC_t* context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

// What Graphviz would print on stderr goes into the error instead.
std::string* graphvizMessages = nullptr;

int collect(char* message) {
  if (graphvizMessages) *graphvizMessages += message;
  return 0;
}

// Graphviz's dot layout grows much faster than the drawing: a random 1,000-box graph takes 80 s
// at full quality and 5 s under the work limits below, a 6,000-node model hung `nncheck show`.
// Past kMostBoxes a picture is refused (the callers fall back to "no picture" with the
// reason); past kBoxesAtFullQuality the layout's searches are cut short (nslimit, nslimit1 and
// mclimit scale its network-simplex and crossing-minimization passes), which keeps the drawing
// readable and its time within seconds. Smaller drawings, every shrunk case, keep the full
// layout.
constexpr int kMostBoxes = 1000;
constexpr int kBoxesAtFullQuality = 250;

void limitLayoutWork(Agraph_t* g) {
  const int boxes = agnnodes(g);
  if (boxes > kMostBoxes)
    throw Error("the drawing has " + std::to_string(boxes) + " boxes, more than the " +
                std::to_string(kMostBoxes) +
                " nncheck lays out (Graphviz's layout time grows too fast past that)");
  if (boxes <= kBoxesAtFullQuality) return;
  for (const auto& [name, value] :
       {std::pair{"nslimit", "0.5"}, {"nslimit1", "0.5"}, {"mclimit", "0.1"}, {"searchsize", "10"}})
    agsafeset(g, const_cast<char*>(name), const_cast<char*>(value), const_cast<char*>(""));
}

}  // namespace

std::string renderDot(const std::string& dot, const std::string& format) {
  // Graphviz keeps global state: one drawing at a time.
  static std::mutex busy;
  std::lock_guard<std::mutex> lock(busy);
  std::string messages;
  graphvizMessages = &messages;
  agseterrf(collect);
  struct Detach {
    ~Detach() { graphvizMessages = nullptr; }
  } detach;
  [[maybe_unused]] LeaksNotOurs notOurs;
  GVC_t* gvc = context();
  if (!gvc) throw Error("graphviz: no context (is libgvc's plugin configuration installed?)");
  Agraph_t* g = agmemread(dot.c_str());
  if (!g) {
    throw Error("graphviz could not read the drawing's DOT text (" + messages + ")");
  }
  std::string out;
  std::string failure;
  try {
    limitLayoutWork(g);
  } catch (const Error&) {
    agclose(g);
    throw;
  }
  if (gvLayout(gvc, g, "dot") != 0) {
    failure = "graphviz could not lay the drawing out with 'dot'";
  } else {
    char* data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc, g, format.c_str(), &data, &length) != 0 || !data)
      failure = "graphviz has no renderer for '" + format + "'";
    else
      out.assign(data, length);
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  while (!messages.empty() && messages.back() == '\n') messages.pop_back();
  if (!failure.empty()) throw Error(failure + (messages.empty() ? "" : " (" + messages + ")"));
  return out;
}

}  // namespace render

PictureFormat pictureFormat(std::string_view name) {
  for (PictureFormat f :
       {PictureFormat::Svg, PictureFormat::Png, PictureFormat::Dot, PictureFormat::Text})
    if (name == pictureFormatName(f)) return f;
  throw Error("picture format '" + std::string(name) + "' is not one of svg, png, dot, text");
}

std::string_view pictureFormatName(PictureFormat f) {
  switch (f) {
    case PictureFormat::Svg:
      return "svg";
    case PictureFormat::Png:
      return "png";
    case PictureFormat::Dot:
      return "dot";
    case PictureFormat::Text:
      return "text";
  }
  return "?";
}

std::string drawModel(const Model& model, PictureFormat format, const DrawOptions& options) {
  switch (format) {
    case PictureFormat::Text:
      return modelToText(model);
    case PictureFormat::Dot:
      return render::modelToDot(model, options);
    case PictureFormat::Svg:
    case PictureFormat::Png:
      return render::renderDot(render::modelToDot(model, options),
                               std::string(pictureFormatName(format)));
  }
  return {};
}

}  // namespace nncheck
