// MLIR's part of a standalone reproducer (nncheck repro). Python driving MLIR's command-line
// tools, not C++ against MLIR's API: MLIR's maintainers reproduce with mlir-opt and a pass
// pipeline, and the script shows both. LLVM's opt and llc at the configuration's level stand in
// for the JIT's optimizing transformer and code generator (the same LLVM passes and level).
#include "mlir/mlir_reproducer.h"

#include <llvm/Config/llvm-config.h>

#include <filesystem>

#include "core/script_literal.h"
#include "mlir/translate.h"
#include "nncheck/error.h"
#include "nncheck/mlir.h"

namespace nncheck::mlir {

std::optional<ReproducerRecipe> reproducer(const std::string& configuration, const Model& model) {
  const Config config = Config::parse(configuration);
  const Program program = translate(model);
  const std::filesystem::path runnerUtils = NNCHECK_MLIR_RUNNER_UTILS;
  const std::string tools = (runnerUtils.parent_path().parent_path() / "bin").string();
  const std::string level = config.llvmOpt == 0 ? "-O0" : "-O3";
  std::string code = R"(import ctypes
import os
import subprocess
import tempfile

# The model (model.onnx) as TOSA, op by op with ONNX's semantics: the program nncheck's MLIR
# engine compiles.
PROGRAM = )";
  code += pythonTextLiteral(program.text, "    ") + "\n";
  code += pythonComment("The pass pipeline of " + config.key() + ".");
  code += "PIPELINE = " + pythonStringLiteral("builtin.module(" + config.pipeline() + ")") + "\n";
  code += "LLVM_LEVEL = \"" + level + "\"\n";
  code += "TOOLS = " + pythonStringLiteral(tools) + "\n";
  code += "RUNNER_UTILS = " + pythonStringLiteral(runnerUtils.string()) +
          "  # memrefCopy, which strided copies call\n";
  code += "# @forward's results: dtype and shape.\nRESULTS = [";
  for (const Port& o : program.outputs)
    code += "(\"" + std::string(dtypeName(o.dtype)) + "\", " + dimsLiteral(o.shape) + "), ";
  code += "]\n";
  code += R"(

def compile_forward(folder: str) -> ctypes.CDLL:
    """@forward as a shared library: mlir-opt, mlir-translate, opt, llc, and the linker."""
    with open(os.path.join(folder, "forward.mlir"), "w") as f:
        f.write(PROGRAM)
    steps = [
        [f"{TOOLS}/mlir-opt", f"--pass-pipeline={PIPELINE}", "forward.mlir", "-o", "lowered.mlir"],
        [f"{TOOLS}/mlir-translate", "--mlir-to-llvmir", "lowered.mlir", "-o", "forward.ll"],
        [f"{TOOLS}/opt", LLVM_LEVEL, "forward.ll", "-o", "forward.bc"],
        [f"{TOOLS}/llc", LLVM_LEVEL, "--relocation-model=pic", "-filetype=obj", "forward.bc",
         "-o", "forward.o"],
        ["cc", "-shared", "forward.o", RUNNER_UTILS,
         f"-Wl,-rpath,{os.path.dirname(RUNNER_UTILS)}", "-o", "forward.so"],
    ]
    for step in steps:
        done = subprocess.run(step, cwd=folder, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{os.path.basename(step[0])} failed: {done.stderr.strip()}")
    return ctypes.CDLL(os.path.join(folder, "forward.so"))


def descriptor(array):
    """A memref descriptor: allocated and aligned pointers, offset, sizes, strides (elements)."""
    words = [array.ctypes.data, array.ctypes.data, 0, *array.shape,
             *[s // array.itemsize for s in array.strides]]
    return (ctypes.c_int64 * len(words))(*words)


def read_result(words, dtype: str, shape: list):
    rank = len(shape)
    aligned, offset = words[1], words[2]
    sizes, strides = list(words[3:3 + rank]), list(words[3 + rank:3 + 2 * rank])
    if sizes != shape:
        raise RuntimeError(f"@forward returned sizes {sizes}, not {shape}")
    item = np.dtype(dtype).itemsize
    if 0 in sizes:
        return np.zeros(shape, dtype=dtype)
    span = offset + sum((n - 1) * s for n, s in zip(sizes, strides)) + 1
    flat = np.frombuffer((ctypes.c_uint8 * (span * item)).from_address(aligned), dtype=dtype)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=sizes,
                                           strides=[s * item for s in strides]).copy()


def run(model_path: str, feeds: dict) -> list:
    del model_path  # translated above
    with tempfile.TemporaryDirectory() as folder:
        forward = compile_forward(folder)
        # The compiled code may write into its arguments: give it copies.
        args = [np.ascontiguousarray(a).copy() for a in feeds.values()]
        descriptors = [descriptor(a) for a in args]
        words = sum(3 + 2 * len(shape) for _, shape in RESULTS)
        results = (ctypes.c_int64 * words)()
        forward._mlir_ciface_forward(ctypes.byref(results), *[ctypes.byref(d) for d in descriptors])
        outputs, at = [], 0
        for dtype, shape in RESULTS:
            outputs.append(read_result(results[at:at + 3 + 2 * len(shape)], dtype, shape))
            at += 3 + 2 * len(shape)
        return outputs
)";
  return ReproducerRecipe{
      .language = "python",
      .code = std::move(code),
      .requirements = "apt-get install mlir-19-tools llvm-19 gcc python3-numpy   # MLIR " +
                      std::string(LLVM_VERSION_STRING),
      .versions = "MLIR and LLVM " + std::string(LLVM_VERSION_STRING)};
}

}  // namespace nncheck::mlir
