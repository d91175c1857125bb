// PyTorch 2.15's torch.compile on CPU (Inductor, and the backends before it): an engine run by
// its Python worker (inductor_worker.py, installed beside this plug-in) in the virtual environment
// scripts/install-deps.sh makes from python/requirements/inductor.txt. PyTorch reads no ONNX:
// this side translates each model to the PyTorch Python a user writes (pytorch_source, the
// translation the torchscript engine shares) and sends it in the run's options; the worker
// compiles and runs it. What the engine is (configurations, passes) is the worker's to say.
#include <nlohmann/json.hpp>

#include "backends/engine_files.h"
#include "core/script_literal.h"
#include "nncheck/engine.h"
#include "nncheck/worker_engine.h"
#include "pytorch_source/translate.h"

namespace nncheck::inductor {
namespace {

constexpr const char* kInstall = "scripts/install-deps.sh inductor (of nncheck's source tree)";

void anchor() {}

// The run's options: {"buffers": {"w0": initializer, ...}, "inputs": [graph input, ...],
// "outputs": [graph output, ...], "source": "def forward(self, a0, ...):..."}, keys sorted as
// the protocol writes JSON. forward's arguments are the inputs in order, and it returns the
// outputs in order; each buffer holds the named initializer of the model sent beside.
std::string programOptions(const Model& model) {
  const pytorch::Script s = pytorch::translate(model, "inductor", pytorch::Dialect::Python);
  nlohmann::json buffers = nlohmann::json::object();
  for (const pytorch::Buffer& b : s.buffers) buffers[b.name] = b.initializer;
  return nlohmann::json{
      {"buffers", buffers}, {"inputs", s.inputs}, {"outputs", s.outputs}, {"source", s.source}}
      .dump();
}

// The host's part of a reproducer: the model as a PyTorch module, its buffers written out (the
// script reads no ONNX: PyTorch has no importer), and INPUTS, forward's arguments in order. The
// worker's part (its facts) compiles Model() as the configuration does and runs it.
std::string modelClass(const Model& model) {
  const pytorch::Script s = pytorch::translate(model, "inductor", pytorch::Dialect::Python);
  std::string code =
      "import torch\nfrom torch import Tensor\n\n\n"
      "# The ONNX model in PyTorch, written by nncheck op by op with ONNX's semantics.\n"
      "class Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n";
  for (const pytorch::Buffer& b : s.buffers)
    code.append(pythonComment("the initializer " + b.initializer, "        "))
        .append("        self.register_buffer(")
        .append(pythonStringLiteral(b.name))
        .append(", torch.from_numpy(")
        .append(pythonArrayLiteral(b.value, "            "))
        .append("))\n");
  code += "\n";
  for (size_t at = 0; at < s.source.size();) {
    const size_t end = s.source.find('\n', at);
    code.append("    ").append(s.source, at, end - at + 1);
    at = end == std::string::npos ? s.source.size() : end + 1;
  }
  return code + "\n\nINPUTS = " + pythonListLiteral(s.inputs) + "\n\n";
}

}  // namespace

NNCHECK_REGISTER_ENGINE(inductor) {
  WorkerCommand command;
  command.argv = {
      environmentPython("inductor", NNCHECK_PYTHON_DIR),
      engineFile(reinterpret_cast<const void*>(&anchor), "inductor/inductor_worker.py")};
  command.install = kInstall;
  command.options = programOptions;
  command.reproducerModel = modelClass;
  return workerEngine(
      std::move(command),
      {.name = "inductor",
       .description = "PyTorch 2.15's torch.compile on CPU, in a Python worker: the "
                      "model as PyTorch source; configurations mode=eager|"
                      "aot_eager|inductor|freezing|dynamic|max-autotune",
       .baseline = "mode=eager",
       .install = kInstall});
}

}  // namespace nncheck::inductor
