// LiteRT on CPU, from ONNX by onnx2tf: an engine run by its Python worker (litert_worker.py,
// installed beside this plug-in) in the virtual environment scripts/install-deps.sh makes from
// python/requirements/litert.txt. The conversion is part of the engine, shared by every
// configuration (the interpreter's kernels); what the engine is (configurations, switches,
// accepted ops) is the worker's to say.
#include "backends/engine_files.h"
#include "nncheck/engine.h"
#include "nncheck/worker_engine.h"

namespace nncheck::litert {
namespace {

constexpr const char* kInstall = "scripts/install-deps.sh litert (of nncheck's source tree)";

void anchor() {}

}  // namespace

NNCHECK_REGISTER_ENGINE(litert) {
  WorkerCommand command;
  command.argv = {environmentPython("litert", NNCHECK_PYTHON_DIR),
                  engineFile(reinterpret_cast<const void*>(&anchor), "litert/litert_worker.py")};
  command.install = kInstall;
  return workerEngine(std::move(command),
                      {.name = "litert",
                       .description = "LiteRT 2.3 on CPU, in a Python worker: converted from ONNX "
                                      "by onnx2tf and TensorFlow's TFLite converter; "
                                      "configurations kernels=xnnpack|builtin|reference",
                       .baseline = "kernels=reference",
                       .install = kInstall});
}

}  // namespace nncheck::litert
