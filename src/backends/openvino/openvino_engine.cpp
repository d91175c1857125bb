// OpenVINO 2026.4 on CPU: an engine run by its Python worker (openvino_worker.py, installed beside
// this plug-in) in the virtual environment scripts/install-deps.sh makes from
// python/requirements/openvino.txt. OpenVINO reads the ONNX bytes itself; what the engine is
// (configurations, transformations, accepted ops) is the worker's to say.
#include "backends/engine_files.h"
#include "nncheck/engine.h"
#include "nncheck/worker_engine.h"

namespace nncheck::openvino {
namespace {

constexpr const char* kInstall = "scripts/install-deps.sh openvino (of nncheck's source tree)";

void anchor() {}

}  // namespace

NNCHECK_REGISTER_ENGINE(openvino) {
  WorkerCommand command;
  command.argv = {
      environmentPython("openvino", NNCHECK_PYTHON_DIR),
      engineFile(reinterpret_cast<const void*>(&anchor), "openvino/openvino_worker.py")};
  command.install = kInstall;
  return workerEngine(std::move(command),
                      {.name = "openvino",
                       .description = "OpenVINO 2026.4 on CPU, in a Python worker: its ONNX "
                                      "frontend and CPU plugin; configurations "
                                      "mode=accuracy|performance|performance-no-snippets",
                       .baseline = "mode=accuracy",
                       .install = kInstall});
}

}  // namespace nncheck::openvino
