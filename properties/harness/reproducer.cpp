#include "harness/reproducer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/markdown.h"
#include "core/script_literal.h"
#include "harness/culprit.h"
#include "harness/root_cause.h"
#include "nncheck/error.h"
#include "ops/op_docs.h"
#include "render/picture.h"

namespace nncheck {

namespace {

bool isPython(const ReproducerRecipe& r) { return r.language == "python"; }

// The lines of `text`, each prefixed.
std::string prefixed(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out += prefix + line;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

// The first line of a message, with the next non-empty one when the first only introduces it
// ("torchscript (freeze): " and the error on the line after).
std::string firstLine(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (line.empty()) continue;
    out += (out.empty() ? "" : " ") + line;
    if (out.back() != ':') break;
  }
  return out;
}

const Node* failingNode(const Reproduction& r) {
  return rootNode(r.saved.info, r.saved.testCase.model.graph);
}

std::string opsetOf(const Model& m) {
  for (const auto& [domain, version] : m.opsets)
    if (domain.empty() || domain == "ai.onnx") return std::to_string(version);
  return "?";
}

// "fails at a, b; passes at c" from the triage run now, and where that puts the fault.
std::string configurationsText(const Reproduction& r) {
  std::string fails, passes;
  for (const auto& [configuration, outcome] : r.triage) {
    std::string& list = isFailure(outcome) ? fails : outcome == Outcome::Pass ? passes : fails;
    list += (list.empty() ? "" : ", ") + configuration;
    if (outcome != Outcome::Pass) list += " (" + std::string(outcomeName(outcome)) + ")";
  }
  const std::string failing = "fails at " + (fails.empty() ? "none" : fails);
  if (!r.triaged) return failing + "; not run at the other configurations (--no-triage)";
  const std::string stage = faultStage(r.triage, r.baseline, r.sharedStage);
  return failing + "; passes at " + (passes.empty() ? "none" : passes) +
         (stage.empty() ? "" : ": " + stage);
}

std::string culpritText(const Reproduction& r) {
  const std::optional<Culprit>& c = r.saved.info.culprit;
  if (!c) return "";
  std::string text = describeCulprit(*c);
  if (c->workaroundPasses && !c->workaround.empty())
    text += "; workaround: the configuration " + c->workaround;
  return text;
}

// The recorded failure's first line. A script reproduces where the engine optimizes least and
// still fails, so the record may come from another configuration: it then says which.
std::string whatGoesWrong(const Reproduction& r) {
  const std::string message = firstLine(r.saved.info.message);
  if (r.found.empty() || r.found == r.configuration) return message;
  return "(as recorded at " + r.found + ") " + message;
}

// What every script says at its head, as plain lines.
std::string headText(const Reproduction& r) {
  const FailureInfo& info = r.saved.info;
  std::string s = issueTitle(r) + "\n";
  s += r.recipe.versions + "; configuration " + r.configuration + "\n";
  if (!info.upstream.empty()) s += "Upstream: " + info.upstream + "\n";
  s += "\n" + specCitation(r);
  s += "\nWhat goes wrong: " + whatGoesWrong(r) + "\n";
  if (info.divergence)
    s += "  first diverging node: " + firstLine(info.divergence->describe()) + "\n";
  s += "Configurations: " + configurationsText(r) + "\n";
  if (const std::string culprit = culpritText(r); !culprit.empty())
    s += "Culprit: " + culprit + "\n";
  s += "\nThe model (model.onnx, beside this script):\n";
  s += prefixed(drawModel(r.saved.testCase.model, PictureFormat::Text), "  ");
  s += "\nNeeds: " + r.recipe.requirements + "\n";
  s += "Run: " + reproducerRunLine(r.recipe) +
       "   (exits 1 while the bug is there, 0 once it is fixed)\n";
  s += "Written by: " + r.command + "\n";
  return s;
}

// The graph's outputs in order, with the reference's values; an output the reference did not
// keep is an error naming it.
std::vector<std::pair<std::string, const Tensor*>> expectedOutputs(const Reproduction& r) {
  std::vector<std::pair<std::string, const Tensor*>> out;
  for (const ValueInfo& o : r.saved.testCase.model.graph.outputs) {
    const auto it = r.expected.find(o.name);
    if (it == r.expected.end())
      throw Error(r.saved.dir.string() + ": no expected value of the output '" + o.name +
                  "' (the case holds no reference outputs: saved by another oracle?)");
    out.emplace_back(o.name, &it->second);
  }
  return out;
}

std::vector<std::pair<std::string, const Tensor*>> feeds(const Reproduction& r) {
  std::vector<std::pair<std::string, const Tensor*>> out;
  for (const ValueInfo* in : r.saved.testCase.model.graph.feedInputs()) {
    const auto it = r.saved.testCase.inputs.find(in->name);
    if (it == r.saved.testCase.inputs.end())
      throw Error(r.saved.dir.string() + ": no value for the model's input '" + in->name + "'");
    out.emplace_back(in->name, &it->second);
  }
  return out;
}

std::string toleranceLine(const Reproduction& r, const char* format) {
  char buf[96];
  std::snprintf(buf, sizeof buf, format, r.saved.info.tolerance.rtol, r.saved.info.tolerance.atol);
  return buf;
}

std::string pythonScript(const Reproduction& r) {
  // Line 2 is nncheck's own: Python reads an encoding declaration from line 1 or 2, and one
  // from the case ("coding: utf-7") would change how the rest reads.
  std::string s = "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n";
  s += pythonComment(headText(r));
  s += "import os\nimport sys\n\nimport numpy as np\n\n";
  s += "# --- the engine, alone ---\n" + r.recipe.code;
  if (!s.empty() && s.back() != '\n') s += "\n";
  s += "\n# --- the case ---\n";
  s += "MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), \"model.onnx\")\n";
  s += "FEEDS = {\n";
  for (const auto& [name, t] : feeds(r))
    s += "    " + pythonStringLiteral(name) + ": " + pythonArrayLiteral(*t, "        ") + ",\n";
  s += "}\n# The ONNX reference's outputs (nncheck's interpreter), in the graph's order.\n";
  s += "EXPECTED = [\n";
  for (const auto& [name, t] : expectedOutputs(r))
    s += "    (" + pythonStringLiteral(name) + ", " + pythonArrayLiteral(*t, "        ") + "),\n";
  s += "]\nOUTPUT_NAMES = [name for name, _ in EXPECTED]\n";
  s += toleranceLine(r, "RTOL, ATOL = %.17g, %.17g\n");
  s += R"(

def differs(got, want):
    """None when `got` is `want` within the tolerance (NaN where NaN), else how it differs."""
    got = np.asarray(got)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "fc":
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.abs(g - w) <= ATOL + RTOL * np.abs(w)) | (np.isnan(g) & np.isnan(w))
    else:
        same = got == want
    bad = np.flatnonzero(~np.asarray(same).reshape(-1))
    if bad.size == 0:
        return None
    at = np.unravel_index(bad[0], want.shape)
    return (f"{bad.size} of {want.size} elements differ beyond rtol={RTOL} atol={ATOL}; "
            f"first at {[int(i) for i in at]}: got {got[at]}, expected {want[at]}")


def main():
    try:
        outputs = run(MODEL, FEEDS)
    except Exception as e:  # the engine fails on a valid model
        print(f"FAILS: the engine raised {type(e).__name__}: {e}")
        return 1
    if len(outputs) != len(EXPECTED):
        print(f"FAILS: {len(outputs)} outputs, expected {len(EXPECTED)}")
        return 1
    failed = False
    for (name, want), got in zip(EXPECTED, outputs):
        got = np.asarray(got)
        why = differs(got, want)
        print(f"output {name}: {'MISMATCH: ' + why if why else 'OK'}")
        if want.size <= 32:
            print(f"  expected {want.dtype}{list(want.shape)}: {want.reshape(-1).tolist()}")
            print(f"  got      {got.dtype}{list(got.shape)}: {got.reshape(-1).tolist()}")
        failed = failed or why is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
)";
  return s;
}

std::string javascriptScript(const Reproduction& r) {
  std::string s = "#!/usr/bin/env node\n";
  s += javascriptComment(headText(r));
  s += "'use strict';\nconst path = require('path');\n\n";
  s += "// --- the engine, alone ---\n" + r.recipe.code;
  if (!s.empty() && s.back() != '\n') s += "\n";
  s += "\n// --- the case ---\n";
  s += "const MODEL = path.join(__dirname, 'model.onnx');\n";
  // Computed keys: a plain key "__proto__" would set the object's prototype, not a feed.
  s += "const FEEDS = {\n";
  for (const auto& [name, t] : feeds(r))
    s += "  [" + javascriptStringLiteral(name) + "]: " + javascriptTensorLiteral(*t, "      ") +
         ",\n";
  s += "};\n// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.\n";
  s += "const EXPECTED = [\n";
  for (const auto& [name, t] : expectedOutputs(r))
    s += "  [" + javascriptStringLiteral(name) + ", " + javascriptTensorLiteral(*t, "      ") +
         "],\n";
  s += "];\nconst OUTPUT_NAMES = EXPECTED.map(([name]) => name);\n";
  s += toleranceLine(r, "const RTOL = %.17g, ATOL = %.17g;\n");
  s += R"(
// A tensor's elements as numbers (float16 from its bits) or bigints.
function values(t) {
  if (t.type !== 'float16') return Array.from(t.data);
  return Array.from(t.data, (h) => {
    const e = (h >> 10) & 0x1f, m = h & 0x3ff, sign = h & 0x8000 ? -1 : 1;
    if (e === 0) return sign * m * 2 ** -24;
    if (e === 31) return m ? NaN : sign * Infinity;
    return sign * (1 + m / 1024) * 2 ** (e - 15);
  });
}

// null when `got` is `want` within the tolerance (NaN where NaN), else how it differs.
function differs(got, want) {
  const dims = Array.from(got.dims, Number);
  if (got.type !== want.type) return `type ${got.type}, expected ${want.type}`;
  if (dims.join() !== want.dims.join()) return `shape [${dims}], expected [${want.dims}]`;
  const g = values(got), w = values(want);
  const float = ['float16', 'float32', 'float64'].includes(want.type);
  const bad = [];
  for (let i = 0; i < w.length; ++i) {
    const same = g[i] === w[i] || (float && (Math.abs(g[i] - w[i]) <= ATOL + RTOL * Math.abs(w[i]) ||
                                             (Number.isNaN(g[i]) && Number.isNaN(w[i]))));
    if (!same) bad.push(i);
  }
  if (!bad.length) return null;
  return `${bad.length} of ${w.length} elements differ beyond rtol=${RTOL} atol=${ATOL}; ` +
         `first at flat index ${bad[0]}: got ${g[bad[0]]}, expected ${w[bad[0]]}`;
}

(async () => {
  let outputs;
  try {
    outputs = await run(MODEL, FEEDS);
  } catch (e) {  // the engine fails on a valid model
    console.log(`FAILS: the engine threw ${e && e.message || e}`);
    process.exit(1);
  }
  if (outputs.length !== EXPECTED.length) {
    console.log(`FAILS: ${outputs.length} outputs, expected ${EXPECTED.length}`);
    process.exit(1);
  }
  let failed = false;
  EXPECTED.forEach(([name, want], k) => {
    const got = outputs[k];
    const why = differs(got, want);
    console.log(`output ${name}: ${why ? 'MISMATCH: ' + why : 'OK'}`);
    if (want.data.length <= 32) {
      console.log(`  expected ${want.type}[${want.dims}]: ${values(want).join(', ')}`);
      console.log(`  got      ${got.type}[${Array.from(got.dims, Number)}]: ${values(got).join(', ')}`);
    }
    failed = failed || why !== null;
  });
  process.exit(failed ? 1 : 0);
})();
)";
  return s;
}

std::string cppScript(const Reproduction& r) {
  std::string s = cppComment(headText(r));
  s += R"(#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// A tensor: its ONNX type name, dims, and values.
struct Tensor {
  std::string type;
  std::vector<long long> dims;
  std::vector<double> values;
};

// --- the case ---
)";
  s += "static const std::string MODEL = std::string(__FILE__).substr(0, std::string(__FILE__)"
       ".rfind('/') + 1) + \"model.onnx\";\n";
  s += "static const std::vector<std::pair<std::string, Tensor>> FEEDS = {\n";
  for (const auto& [name, t] : feeds(r))
    s += "    {" + cppStringLiteral(name) + ", " + cppTensorLiteral(*t, "        ") + "},\n";
  s += "};\n// The ONNX reference's outputs (nncheck's interpreter), in the graph's order.\n";
  s += "static const std::vector<std::pair<std::string, Tensor>> EXPECTED = {\n";
  std::string names;
  for (const auto& [name, t] : expectedOutputs(r)) {
    s += "    {" + cppStringLiteral(name) + ", " + cppTensorLiteral(*t, "        ") + "},\n";
    names += (names.empty() ? "" : ", ") + cppStringLiteral(name);
  }
  s += "};\nstatic const std::vector<std::string> OUTPUT_NAMES = {" + names + "};\n";
  s += toleranceLine(r, "static const double RTOL = %.17g, ATOL = %.17g;\n");
  s += "\n// --- the engine, alone ---\n" + r.recipe.code;
  if (s.back() != '\n') s += "\n";
  s += R"(
// An empty string when `got` is `want` within the tolerance (NaN where NaN), else how it differs.
static std::string differs(const Tensor& got, const Tensor& want) {
  auto dims = [](const std::vector<long long>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
  };
  if (got.type != want.type) return "type " + got.type + ", expected " + want.type;
  if (got.dims != want.dims) return "shape " + dims(got.dims) + ", expected " + dims(want.dims);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.values.size(); ++i) {
    const double g = got.values[i], w = want.values[i];
    const bool same = g == w || std::fabs(g - w) <= ATOL + RTOL * std::fabs(w) ||
                      (std::isnan(g) && std::isnan(w));
    if (!same && bad++ == 0) first = i;
  }
  if (!bad) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, " of %zu elements differ; first at flat index %zu: got %.9g, expected %.9g",
                want.values.size(), first, got.values[first], want.values[first]);
  return std::to_string(bad) + buf;
}

static void print(const char* what, const Tensor& t) {
  std::printf("  %s %s:", what, t.type.c_str());
  for (double v : t.values) std::printf(" %.9g", v);
  std::printf("\n");
}

int main() {
  std::vector<Tensor> outputs;
  try {
    outputs = run(MODEL, FEEDS);
  } catch (const std::exception& e) {  // the engine fails on a valid model
    std::printf("FAILS: the engine threw: %s\n", e.what());
    return 1;
  }
  if (outputs.size() != EXPECTED.size()) {
    std::printf("FAILS: %zu outputs, expected %zu\n", outputs.size(), EXPECTED.size());
    return 1;
  }
  bool failed = false;
  for (size_t k = 0; k < EXPECTED.size(); ++k) {
    const std::string why = differs(outputs[k], EXPECTED[k].second);
    std::printf("output %s: %s%s\n", EXPECTED[k].first.c_str(), why.empty() ? "OK" : "MISMATCH: ",
                why.c_str());
    if (EXPECTED[k].second.values.size() <= 32) {
      print("expected", EXPECTED[k].second);
      print("got     ", outputs[k]);
    }
    failed = failed || !why.empty();
  }
  return failed ? 1 : 0;
}
)";
  return s;
}

// A tensor for people: its type and shape, and its values when few.
std::string tensorText(const Tensor& t) {
  std::string s = std::string(dtypeName(t.dtype())) + dimsLiteral(t.shape());
  if (t.size() > 64) return s + " (" + std::to_string(t.size()) + " values; in the script)";
  s += ": [";
  for (int64_t i = 0; i < t.size(); ++i) {
    if (i) s += ", ";
    if (t.dtype() == DType::String)
      s += "\"" + printable(t.strings()[i]) + "\"";
    else if (isFloatDType(t.dtype()))
      s += floatLiteral(t.toDouble(i), t.dtype());
    else
      s += std::to_string(t.toInt64(i));
  }
  return s + "]";
}

}  // namespace

std::string reproducerRunLine(const ReproducerRecipe& r) {
  if (!r.run.empty()) return r.run;
  return isPython(r) ? "python3 reproduce.py" : "node reproduce.js";
}

std::string reproducerFileName(const ReproducerRecipe& recipe) {
  if (recipe.language == "c++") return "reproduce.cpp";
  return isPython(recipe) ? "reproduce.py" : "reproduce.js";
}

std::string issueTitle(const Reproduction& r) {
  const FailureInfo& info = r.saved.info;
  const size_t space = r.recipe.versions.find(',');
  const std::string engine = r.recipe.versions.substr(0, space);  // "ort 1.30.0"
  std::string what;
  const Node* node = failingNode(r);
  const std::string op = node ? node->opType : "a model";
  switch (info.kind) {
    case Outcome::Mismatch:
      what = (info.divergence && info.divergence->layoutDiffers) ||
                     info.pattern.find("mismatch in shape") != std::string::npos
                 ? op + " returns an output of the wrong shape or type"
                 : op + " returns wrong values";
      break;
    case Outcome::Error:
      what = op + " fails on a valid model";
      break;
    case Outcome::Crash:
      what = op + " crashes the process";
      break;
    case Outcome::Hang:
      what = op + " does not finish";
      break;
    case Outcome::NonFinite:
      what = op + " returns NaN or infinity";
      break;
    default:
      what = op + ": " + std::string(outcomeName(info.kind));
  }
  if (node) {
    std::string attributes;
    for (const std::string& a : nonDefaultAttributes(*node))
      attributes += (attributes.empty() ? "" : ", ") + a;
    if (!attributes.empty()) what += " (with " + attributes + ")";
  }
  if (info.culprit && !info.culprit->needed.empty()) {
    std::string needed;
    for (const std::string& n : info.culprit->needed) needed += (needed.empty() ? "" : " + ") + n;
    what += " after " + needed;
  }
  return engine + ": " + what + (info.title.empty() ? "" : " — " + info.title);
}

std::string specCitation(const Reproduction& r) {
  const Node* node = failingNode(r);
  if (!node) return "";
  const Model& m = r.saved.testCase.model;
  int64_t opset = 17;
  for (const auto& [domain, version] : m.opsets)
    if (domain == node->domain || (node->domain.empty() && domain == "ai.onnx")) opset = version;
  const std::optional<ops::OpDoc> doc = ops::onnxOpDoc(node->opType, node->domain, opset);
  if (!doc)
    return "The ONNX specification has no " + node->opType + " at opset " + opsetOf(m) + ".\n";
  std::string s = "The ONNX specification, " + node->opType + "-" +
                  std::to_string(doc->sinceVersion) + " (" + doc->url + "):\n";
  s += prefixed(doc->summary, "  | ");
  for (const std::string& a : nonDefaultAttributes(*node)) {
    const auto it = doc->attributes.find(a);
    const Attribute* set = node->attribute(a);
    s += "  " + (set ? attributeToString(*set) : a) + ": " +
         (it == doc->attributes.end() ? "(not in the schema)" : it->second) + "\n";
  }
  return s;
}

std::string reproducerScript(const Reproduction& r) {
  if (isPython(r.recipe)) return pythonScript(r);
  if (r.recipe.language == "javascript") return javascriptScript(r);
  if (r.recipe.language == "c++") return cppScript(r);
  throw Error(r.engine + ": its reproducer is in '" + r.recipe.language +
              "'; nncheck writes python and javascript");
}

std::string issueDraft(const Reproduction& r, const ActualResult& actual, const std::string& os) {
  // What the case holds (its title, names, messages) is the case's, never Markdown: it goes
  // through core/markdown.h's writers, which show it as it is.
  const FailureInfo& info = r.saved.info;
  std::string s = "# " + markdownText(issueTitle(r)) + "\n\n";
  s += "- **Versions**: " + markdownText(r.recipe.versions + "; " + os) + "\n";
  s += "- **Configuration**: " + markdownCode(r.configuration) + "\n";
  if (!info.upstream.empty()) s += "- **Upstream**: " + markdownCode(info.upstream) + "\n";
  s += "\n## What happens\n\n" + markdownText(whatGoesWrong(r)) + "\n";
  if (info.divergence)
    s += "\nThe first node whose output differs: " +
         markdownText(firstLine(info.divergence->describe())) + "\n";
  s += "\n## The model\n\n" +
       markdownBlock(drawModel(r.saved.testCase.model, PictureFormat::Text), "text") +
       "\n![the model](model.svg)\n";
  std::string inputs;
  for (const auto& [name, t] : feeds(r)) inputs += name + " = " + tensorText(*t) + "\n";
  s += "\n## Inputs\n\n" + markdownBlock(inputs, "text");
  s += "\n## Expected and actual\n\n";
  s += "Expected is ONNX's reference (nncheck's interpreter); actual is the engine at " +
       markdownCode(r.configuration) + ", run now: " + std::string(outcomeName(actual.outcome)) +
       ".\n\n";
  std::string outputs;
  for (const auto& [name, want] : expectedOutputs(r)) {
    outputs += name + " expected " + tensorText(*want) + "\n";
    const auto got = actual.outputs.find(name);
    outputs += std::string(name.size(), ' ') + " actual   " +
               (got != actual.outputs.end() ? tensorText(got->second) : "(none)") + "\n";
  }
  s += markdownBlock(outputs, "text");
  if (!actual.message.empty() && actual.outcome != Outcome::Mismatch)
    s += "\nThe engine says:\n\n" + markdownBlock(actual.message, "text");
  s += "\n## Configurations\n\n" + markdownText(configurationsText(r)) + ".\n";
  if (const std::string culprit = culpritText(r); !culprit.empty())
    s += "\n## Culprit optimizations and workaround\n\n" + markdownText(culprit) + ".\n";
  s += "\n## Specification\n\n" + markdownBlock(specCitation(r), "text");
  s += "\n## Reproduce\n\n" +
       markdownBlock(r.recipe.requirements + "\n" + reproducerRunLine(r.recipe) +
                         "   # exits 1 while the bug is there",
                     "sh");
  s += "\n" + markdownCode(reproducerFileName(r.recipe)) + " and " + markdownCode("model.onnx") +
       " are beside this draft; the script uses only the engine.\n\n";
  s += "_Written by " + markdownCode(r.command) + "._\n";
  return s;
}

}  // namespace nncheck
