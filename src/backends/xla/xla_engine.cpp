// XLA on CPU through JAX 0.10.2: an engine run by its Python worker (xla_worker.py, installed
// beside this plug-in) in the virtual environment scripts/install-deps.sh makes from
// python/requirements/xla.txt. JAX reads no ONNX: this side translates each model to the JAX a
// user writes (jax_source) and sends it in the run's options; the worker runs it op by op or
// compiles it with jax.jit. What the engine is (configurations, passes) is the worker's to say.
#include <nlohmann/json.hpp>

#include "backends/engine_files.h"
#include "core/script_literal.h"
#include "jax_source/translate.h"
#include "nncheck/engine.h"
#include "nncheck/worker_engine.h"

namespace nncheck::xla {
namespace {

constexpr const char* kInstall = "scripts/install-deps.sh xla (of nncheck's source tree)";

void anchor() {}

// The run's options: {"inputs": [graph input, ...], "outputs": [graph output, ...], "params":
// {"w0": initializer, ...}, "source": "def model(params, a0, ...):..."}, keys sorted as the
// protocol writes JSON. model's arguments after params are the inputs in order, and it returns
// the outputs in order; each parameter is the named initializer of the model sent beside.
std::string programOptions(const Model& model) {
  const jax::Program p = jax::translate(model, "xla");
  nlohmann::json params = nlohmann::json::object();
  for (const PythonWeight& w : p.params) params[w.name] = w.initializer;
  return nlohmann::json{
      {"inputs", p.inputs}, {"outputs", p.outputs}, {"params", params}, {"source", p.source}}
      .dump();
}

// The host's part of a reproducer: the model as a JAX function, PARAMS written out (the script
// reads no ONNX: JAX has no importer), and INPUTS, its arguments after PARAMS in order. The
// worker's part (its facts) runs it as the configuration does.
std::string modelFunction(const Model& model) {
  const jax::Program p = jax::translate(model, "xla");
  std::string code =
      "import jax\nimport jax.numpy as jnp\nimport jax.scipy.special\nimport numpy as np\n"
      "from jax import lax\n\njax.config.update(\"jax_enable_x64\", True)  # ONNX's int64 and "
      "float64\n\n\n# The ONNX model in JAX, written by nncheck op by op with ONNX's semantics.\n" +
      p.source + "\n\nPARAMS = {\n";
  for (const PythonWeight& w : p.params)
    code.append(pythonComment("the initializer " + w.initializer, "    "))
        .append("    ")
        .append(pythonStringLiteral(w.name))
        .append(": jnp.asarray(")
        .append(pythonArrayLiteral(w.value, "        "))
        .append("),\n");
  return code + "}\nINPUTS = " + pythonListLiteral(p.inputs) + "\n\n";
}

}  // namespace

NNCHECK_REGISTER_ENGINE(xla) {
  WorkerCommand command;
  command.argv = {environmentPython("xla", NNCHECK_PYTHON_DIR),
                  engineFile(reinterpret_cast<const void*>(&anchor), "xla/xla_worker.py")};
  command.install = kInstall;
  command.options = programOptions;
  command.reproducerModel = modelFunction;
  return workerEngine(
      std::move(command),
      {.name = "xla",
       .description = "XLA on CPU through JAX 0.10.2, in a Python worker: the model as JAX "
                      "source; configurations mode=jit|eager|jit-O0|jit-no-simplify",
       .baseline = "mode=eager",
       .install = kInstall});
}

}  // namespace nncheck::xla
