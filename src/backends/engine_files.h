// Files an engine needs at run time besides its code (a worker's script, the Python SDK): they
// are installed with the plug-ins, in <plug-in folder>/<engine>/ and <plug-in folder>/python/,
// and found relative to the code that asks, so that a build or an installation works wherever it
// is moved.
//
//   std::string script = engineFile(&someFunctionOfMine, "ort/worker.js");   // throws Error
#pragma once

#include <string>
#include <vector>

namespace nncheck {

// The folders addEnginePluginFolder added (nncheck/engine.h), in order.
std::vector<std::string>& enginePluginFolders();

// The file at `relative` in the first folder that has it: the folder of the shared object (or
// program) holding `code`, the plug-in folders (nncheck/engine.h), then this build's engines
// folder. Throws nncheck::Error naming every place looked in.
std::string engineFile(const void* code, const std::string& relative);

// The corpus of known bugs shipped with an engine (by its registered name): its example's
// corpus, installed beside its plug-in as <engine>/known/. Empty when it has none.
std::string engineKnownBugs(const std::string& engine);

// The folder of nncheck's Python SDK (python/nncheck_engine), for a worker's PYTHONPATH.
std::string pythonSdkFolder();

// The Python of an engine's environment (scripts/install-deps.sh <environment>):
// $NNCHECK_PYTHON_DIR/<environment>/bin/python, else under `builtDir`, the folder the build found.
std::string environmentPython(const std::string& environment, const std::string& builtDir);

}  // namespace nncheck
