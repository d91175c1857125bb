// TVM 0.27 (Relax) on CPU: an engine run by its Python worker (tvm_worker.py, installed beside
// this plug-in) in the virtual environment scripts/install-deps.sh makes from
// python/requirements/tvm.txt. What it is (configurations, passes, accepted ops) is the worker's
// to say; this file only says where the worker is.
#include "backends/engine_files.h"
#include "nncheck/engine.h"
#include "nncheck/worker_engine.h"

namespace nncheck::tvm {
namespace {

constexpr const char* kInstall = "scripts/install-deps.sh tvm (of nncheck's source tree)";

void anchor() {}

}  // namespace

NNCHECK_REGISTER_ENGINE(tvm) {
  WorkerCommand command;
  command.argv = {environmentPython("tvm", NNCHECK_PYTHON_DIR),
                  engineFile(reinterpret_cast<const void*>(&anchor), "tvm/tvm_worker.py")};
  command.install = kInstall;
  return workerEngine(std::move(command),
                      {.name = "tvm",
                       .description = "TVM 0.27 (Relax) on CPU, in a Python worker: ONNX frontend, "
                                      "llvm, virtual machine; configurations "
                                      "pipeline=zero|full|default",
                       .baseline = "pipeline=default",
                       .install = kInstall});
}

}  // namespace nncheck::tvm
