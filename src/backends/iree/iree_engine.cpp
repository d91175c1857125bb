// IREE 3.13 on CPU: an engine run by its Python worker (iree_worker.py, installed beside
// this plug-in) in the virtual environment scripts/install-deps.sh makes from
// python/requirements/iree.txt. IREE imports the ONNX bytes itself; what the engine is
// (configurations, switches, passes, accepted ops) is the worker's to say.
#include "backends/engine_files.h"
#include "nncheck/engine.h"
#include "nncheck/worker_engine.h"

namespace nncheck::iree {
namespace {

constexpr const char* kInstall = "scripts/install-deps.sh iree (of nncheck's source tree)";

void anchor() {}

}  // namespace

NNCHECK_REGISTER_ENGINE(iree) {
  WorkerCommand command;
  command.argv = {environmentPython("iree", NNCHECK_PYTHON_DIR),
                  engineFile(reinterpret_cast<const void*>(&anchor), "iree/iree_worker.py")};
  command.install = kInstall;
  return workerEngine(std::move(command),
                      {.name = "iree",
                       .description = "IREE 3.13 on CPU, in a Python worker: its ONNX importer, "
                                      "llvm-cpu and runtime; configurations "
                                      "opt=O0|O1|O2|O3|O3+opt-in",
                       .baseline = "opt=O0",
                       .install = kInstall});
}

}  // namespace nncheck::iree
