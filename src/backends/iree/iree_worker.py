"""IREE on CPU as an nncheck engine, over the worker protocol.

A model is imported by IREE's ONNX importer (the importer and its torch-mlir conversions are
IREE's, so their faults are too), compiled in process for llvm-cpu by the configuration's
optimization level and switches, and run by IREE's runtime on its single-threaded local-sync
driver. The compiler's pass manager prints the IR after each pass that changed it: those passes
are named as applied (reach, since a pass cannot be switched off alone), less those that change
even a lone Relu (the lowering every model goes through). What can be switched off is the
compiler's optimization switches: searched for a failure's culprit, never named as applied.

Configurations (`opt=LEVEL`): O0 (the baseline), O1, O2, O3 as --iree-opt-level sets them, and
O3+opt-in, which adds every opt-in fusion, tiling and LLVM loop switch (OPT_IN).
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re
import tempfile
from typing import Any

import numpy as np
import onnx
import iree.runtime as rt
from iree.compiler import ir
from iree.compiler.api import ctypes_dl as compiler
from iree.compiler.extras import onnx_importer

from nncheck_engine import Engine, Unsupported, probed_ops, serve

VERSION = importlib.metadata.version("iree-base-compiler")
TARGET = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
]
# The switches each level turns on (compiler/src/iree/compiler/Pipelines/Options.cpp,
# Codegen/Utils/CodegenOptions.cpp): name -> (flag, the lowest level it is on at).
SWITCHES: dict[str, tuple[str, int]] = {
    "const-eval": ("--iree-opt-const-eval", 0),
    "const-expr-hoisting": ("--iree-opt-const-expr-hoisting", 0),
    "fuse-multi-use": ("--iree-dispatch-creation-fuse-multi-use", 0),
    "outer-dim-concat": ("--iree-opt-outer-dim-concat", 1),
    "strip-assertions": ("--iree-opt-strip-assertions", 1),
    "generalize-matmul": ("--iree-opt-generalize-matmul", 2),
    "aggressive-fusion": ("--iree-dispatch-creation-enable-aggressive-fusion", 2),
    "reassociate-fp-reductions": ("--iree-llvmcpu-reassociate-fp-reductions", 2),
    "aggressive-transpose-propagation": ("--iree-opt-aggressively-propagate-transposes", 3),
}
# Off at every level: on only in O3+opt-in.
OPT_IN: dict[str, str] = {
    "data-tiling": "--iree-opt-data-tiling",
    "split-reduction": "--iree-dispatch-creation-enable-split-reduction",
    "pad-handling": "--iree-flow-enable-pad-handling",
    "fuse-padding-into-consumers": "--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops",
    "aggressive-reshape-movement": "--iree-dispatch-creation-enable-aggressive-reshape-movement",
    "im2col": "--iree-global-opt-use-im2col-for-convs",
    "propagate-transposes-through-conv": "--iree-global-opt-propagate-transposes-through-conv",
    "sink-transpose-through-pad": "--iree-global-opt-enable-sink-transpose-through-pad",
    "llvm-loop-vectorization": "--iree-llvmcpu-loop-vectorization",
    "llvm-slp-vectorization": "--iree-llvmcpu-slp-vectorization",
    "llvm-loop-unrolling": "--iree-llvmcpu-loop-unrolling",
}
LEVELS = ["O0", "O1", "O2", "O3", "O3+opt-in"]
# "// -----// IR Dump After CSEPass (cse) ('util.func' operation: @main) //----- //", or
# "// -----// IR Dump After DecomposeComplexOps: torch-decompose-complex-ops{...} //----- //"
_DUMP = re.compile(r"^// -----// IR Dump After (\w+)[ :]", re.M)
# An ONNX op the importer's conversions lack: "failed to legalize operation 'torch.operator'
# that was explicitly marked illegal" names it as `torch.operator "onnx.X"` beside it. A torch
# op it converted to that has no lowering for these operands (a ReduceSum's axes as a graph
# input: "failed to legalize operation 'torch.aten.sum.dim_IntList'") is a limit too.
_NO_CONVERSION = re.compile(r"failed to legalize operation 'torch\.operator'")
_ONNX_OP = re.compile(r'torch\.operator "onnx\.(\w+)"')
_NO_LOWERING = re.compile(r"failed to legalize operation '(torch\.[\w.]+)'")
_STATED_LIMIT = re.compile(r"^.*error: .*(?:unimplemented|not supported|unsupported).*$", re.M)

# The passes named as applied when they change the model: IREE's passes that changed some of
# 170 of ONNX's node tests at O0 or O3+opt-in but leave a lone Relu as it was (the others are
# the lowering every model goes through). Measured with iree-compile's
# --mlir-print-ir-after-change; by class name, with the argument the pass manager knows it by.
# (Two upstream arith passes changed some too, but the compiler library does not register them
# by name, so they cannot be printed alone.)
PASSES: dict[str, str] = {
    "AddFastMathFlagsPass": "iree-codegen-add-fast-math-flags",
    "AnnotateDataTilingHintsPass": "iree-dispatch-creation-annotate-data-tiling-hints",
    "AutomaticReferenceCountingPass": "iree-stream-automatic-reference-counting",
    "BubbleUpExpandShapesPass": "iree-dispatch-creation-bubble-up-expand-shapes",
    "BufferizeCopyOnlyDispatchesPass": "iree-codegen-bufferize-copy-only-dispatches",
    "CPULowerToUKernelsPass": "iree-codegen-cpu-lower-to-ukernels",
    "CanonicalizePass": "iree-flow-canonicalize",
    "CaptureDynamicDimsPass": "iree-flow-capture-dynamic-dims",
    "ConcretizePadResultShapePass": "iree-codegen-concretize-pad-result-shape",
    "ConvertConv2DToImg2ColPass": "iree-global-opt-convert-conv2d-to-img2col",
    "ConvertEncodingToFlowPass": "iree-dispatch-creation-convert-encoding-to-flow",
    "ConvertLinalgToLoopsPass": "convert-linalg-to-loops",
    "ConvertTMTensorToLinalgExtPass": "torch-iree-tm-tensor-to-linalg-ext",
    "ConvertTorchToArith": "convert-torch-to-arith",
    "ConvertTorchToTMTensor": "convert-torch-to-tmtensor",
    "ConvertTorchToTensor": "convert-torch-to-tensor",
    "ConvertTorchUnstructuredToLinalgExtPass": "torch-iree-torch-unstructured-to-linalg-ext",
    "DecomposeConcatPass": "iree-global-opt-decompose-concat",
    "DecomposeConvolutionToLowerDimOpsPass": "iree-codegen-decompose-convolution-to-lower-dim-ops",
    "DeduplicateExecutablesPass": "iree-flow-deduplicate-executables",
    "DropCompilerHintsPass": "iree-util-drop-compiler-hints",
    "DropVectorUnitDimsPass": "iree-codegen-drop-vector-unit-dims",
    "ElementwiseOpFusionPass": "iree-dispatch-creation-elementwise-op-fusion",
    "ElideAsyncCopiesPass": "iree-stream-elide-async-copies",
    "ElideRedundantCommandsPass": "iree-hal-elide-redundant-commands",
    "EmplaceAllocationsPass": "iree-stream-emplace-allocations",
    "EmulateNarrowTypePass": "iree-codegen-emulate-narrow-type",
    "EncodeDeviceTensorsPass": "iree-stream-encode-device-tensors",
    "EraseUnusedLinalgOperandsPass": "iree-global-opt-erase-unused-linalg-operands",
    "ExpandTensorShapesPass": "iree-global-opt-expand-tensor-shapes",
    "FoldMemRefAliasOpsPass": "fold-memref-alias-ops",
    "FoldReshapesIntoTensorBarriersPass": "iree-dispatch-creation-fold-reshapes-into-tensor-barriers",
    "FoldTensorExtractOpPass": "iree-codegen-fold-tensor-extract-op",
    "FoldUnitExtentDimsPass": "iree-dispatch-creation-fold-unit-extent-dims",
    "ForallToForPass": "iree-codegen-forall-to-for",
    "FormScalarDispatchesPass": "iree-dispatch-creation-form-scalar-dispatches",
    "FormSplitReductionDispatchesPass": "iree-dispatch-creation-form-split-reduction-dispatches",
    "FuseEncodingOpsIntoDispatchRegionsPass": "iree-dispatch-creation-fuse-encoding-ops-into-dispatch-regions-pass",
    "FuseMultiUseElementwiseProducerPass": "iree-dispatch-creation-fuse-multi-use-elementwise-producer",
    "FuseQuantizedOps": "torch-fuse-quantized-ops",
    "FuseTensorPadWithConsumerPass": "iree-codegen-fuse-tensor-pad-with-consumer",
    "FusionPreprocessingPass": "iree-dispatch-creation-fusion-preprocessing",
    "GeneralizeLinalgNamedOpsPass": "iree-global-opt-generalize-linalg-named-ops",
    "HoistEncodingOpsPass": "iree-dispatch-creation-hoist-encoding-ops",
    "HoistIntoGlobalsPass": "iree-util-hoist-into-globals",
    "HoistUniformScalarComputePass": "iree-dispatch-creation-hoist-uniform-scalar-compute",
    "IREEExpandStridedMetadataPass": "iree-codegen-expand-strided-metadata",
    "InitializeEmptyTensorsPass": "iree-flow-initialize-empty-tensors",
    "InsertBatchDimForBatchlessConvPass": "iree-codegen-insert-batch-dim-for-batchless-conv",
    "JitGlobalsPass": "iree-consteval-jit-globals",
    "LLVMCPULinkExecutablesPass": "iree-llvmcpu-link-executables",
    "LLVMCPUPeelPass": "iree-llvmcpu-peel",
    "LLVMCPUSynchronizeSymbolVisibilityPass": "iree-llvmcpu-synchronize-symbol-visibility",
    "LLVMCPUTilePass": "iree-llvmcpu-tile",
    "LLVMCPUVectorShapeCastLoweringPass": "iree-llvmcpu-vector-shape-cast-lowering",
    "LLVMCPUVectorTransposeLoweringPass": "iree-llvmcpu-vector-transpose-lowering",
    "LLVMCPUVirtualVectorLoweringPass": "iree-llvmcpu-virtual-vector-lowering",
    "LayoutSlicesPass": "iree-stream-layout-slices",
    "LinkAllExecutablesPass": "iree-hal-link-all-executables",
    "LinkTargetExecutablesPass": "iree-hal-link-target-executables",
    "LowerUKernelOpsToCallsPass": "iree-codegen-lower-ukernel-ops-to-calls",
    "MaterializeBuiltinsPass": "iree-stream-materialize-builtins",
    "MaterializeCopyOnWritePass": "iree-stream-materialize-copy-on-write",
    "MaterializeDeviceEncodingPass": "iree-codegen-materialize-device-encoding",
    "MaterializeEncodingsPass": "iree-stream-materialize-encodings",
    "MathTransformPass": "iree-codegen-math-transform",
    "MemrefCopyToLinalgPass": "iree-codegen-memrefcopy-to-linalg",
    "OptimizeIntArithmeticPass": "iree-util-optimize-int-arithmetic",
    "OptimizeTensorInsertExtractSlicesPass": "iree-codegen-optimize-tensor-insert-extract-slices",
    "OptimizeVectorTransferPass": "iree-codegen-optimize-vector-transfer",
    "PackConstantsPass": "iree-stream-pack-constants",
    "PropagateLinalgTransposePass": "iree-global-opt-propagate-linalg-transpose",
    "RaiseSpecialOpsPass": "iree-global-opt-raise-special-ops",
    "RematerializeParallelOpsPass": "iree-codegen-rematerialize-parallel-ops",
    "RemoveSingleIterationLoopPass": "iree-codegen-remove-single-iteration-loop",
    "ScalarizeShapes": "torch-scalarize-shapes",
    "ScheduleConcurrencyPass": "iree-stream-schedule-concurrency",
    "SetEncodingPass": "iree-dispatch-creation-set-encoding",
    "SetSplitReductionSizesPass": "iree-dispatch-creation-set-split-reduction-sizes",
    "SinkReshapesPass": "iree-dispatch-creation-sink-reshapes",
    "SpecializeEncodingsPass": "iree-stream-specialize-encodings",
    "StripDebugOpsPass": "iree-util-strip-debug-ops",
    "SyncInitializersPass": "iree-stream-sync-initializers",
    "TensorPadToTensorInsertSlicePass": "iree-dispatch-creation-tensor-pad-to-tensor-insert-slice",
    "TensorToVectorVectorizePadPass": "iree-codegen-vectorize-tensor-pad",
    "TransposeGenericOpsPass": "iree-dispatch-creation-transpose-generic-ops",
    "TypePropagationPass": "iree-codegen-type-propagation",
    "WrapEntryPointsPass": "iree-abi-wrap-entry-points",
}

compiler._initializeGlobalCL(
    "nncheck",
    # The IR after each of PASSES that changed it, for its header: printing after every pass
    # would double the compile's time.
    "--mlir-print-ir-after=" + ",".join(PASSES.values()),
    "--mlir-print-ir-after-change",
    "--mlir-disable-threading",  # one core, and the same pass order every time
)


def level_of(configuration: str) -> str:
    level = configuration.removeprefix("opt=")
    if level not in LEVELS:
        raise ValueError(f"no level '{level}' (levels: {', '.join(LEVELS)})")
    return level


def switches(level: str) -> list[str]:
    """The switches on at `level`, each of which `disabled` can switch off."""
    rank = LEVELS.index(level)
    on = [name for name, (_, lowest) in SWITCHES.items() if rank >= lowest]
    return on + (list(OPT_IN) if level == "O3+opt-in" else [])


def flags(level: str, disabled: list[str]) -> list[str]:
    """iree-compile's flags for `level` with the switches in `disabled` off. Each switch is set
    explicitly: in process, with the pass manager's options read from the global command line,
    a session's --iree-opt-level does not reach the switches it derives (CompilerDriver.cpp
    applies the level's defaults to the global options only)."""
    on = set(switches(level)) - set(disabled)
    flag_of = {name: flag for name, (flag, _) in SWITCHES.items()} | OPT_IN
    return (
        TARGET
        + [f"--iree-opt-level={level.split('+')[0]}"]
        + [f"{flag}={str(name in on).lower()}" for name, flag in flag_of.items()]
    )


def import_onnx(model: onnx.ModelProto) -> bytes:
    """The model as torch-mlir's ONNX dialect, in MLIR bytecode: what iree-import-onnx makes."""
    info = onnx_importer.ModelInfo(model)
    module = info.create_module(context=ir.Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    return module.get_asm(binary=True)


def compile_logged(source: bytes, compile_flags: list[str]) -> tuple[bytes | None, str]:
    """The VM module (None when the compile failed) and what the compiler printed to stderr:
    its diagnostics and the IR after each pass that changed it, caught in a file for the
    length of the compile."""
    with tempfile.TemporaryFile() as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            with compiler.Session() as session:
                session.set_flags(*compile_flags)
                with session.invocation() as invocation, compiler.Source.wrap_buffer(
                    session, source
                ) as wrapped:
                    invocation.enable_console_diagnostics()
                    ok = invocation.parse_source(wrapped) and invocation.execute()
                    module = None
                    if ok:
                        output = compiler.Output.open_membuffer()
                        invocation.output_vm_bytecode(output)
                        module = bytes(output.map_memory())
                        output.close()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        return module, log.read().decode(errors="replace")


def passes(log: str) -> set[str]:
    return set(_DUMP.findall(log))


class Iree(Engine):
    name = "iree"
    version = VERSION
    description = (
        f"IREE {VERSION} on CPU: its ONNX importer, llvm-cpu, the local-sync runtime; "
        "configurations opt=" + "|".join(LEVELS)
    )
    configurations = [f"opt={level}" for level in LEVELS]
    baseline = "opt=O0"
    install = "scripts/install-deps.sh iree"
    reproducer_requirements = (
        f"pip install iree-base-compiler[onnx]=={VERSION} iree-base-runtime=={VERSION} numpy"
    )
    capabilities = {
        # float32, int32, int64, bool. IREE demotes float64 to float32 by default, and then
        # reads a float64 argument's bytes as float32 (iree-org/iree#24180, open); keeping
        # float64 instead makes host code the VM cannot run.
        "dtypes": [1, 6, 7, 9],
        "opset": 17,
        # nncheck probe --backend iree --per-op 2
        "ops": probed_ops(pathlib.Path(__file__).resolve().parent / "iree_capabilities.inc"),
        "weights_must_be_initializers": False,
        # IREE's ONNX importer types a value whose rank ONNX's shape inference cannot give (an
        # Unsqueeze's output when its axes are computed) as a scalar, and compiles on from
        # there: an internal error, or a crash, wherever it flows (in the corpus). Computed
        # shape operands would meet it in most models, so they stay constants.
        "shape_operands_must_be_initializers": True,
    }

    def fixed_optimizations(self, configuration: str) -> list[str]:
        level_of(configuration)
        return list(PASSES)

    def unreported_optimizations(self, configuration: str) -> list[str]:
        return switches(level_of(configuration))

    def compile(self, model, configuration, disabled):  # type: ignore[no-untyped-def]
        level = level_of(configuration)
        # As iree-import-onnx does: shapes inferred with data propagation.
        proto = onnx.shape_inference.infer_shapes(onnx.load_from_string(model), data_prop=True)
        module, log = compile_logged(import_onnx(proto), flags(level, disabled))
        if module is None:
            raise failure(log)
        return module, proto.graph, sorted(passes(log) & set(PASSES))

    def execute(self, compiled, inputs):  # type: ignore[no-untyped-def]
        module, graph, applied = compiled
        return run_module(module, graph, inputs), applied

    def reproducer(self, configuration: str) -> str:
        compile_flags = flags(level_of(configuration), [])
        return f"""import subprocess
import sys
import tempfile

import numpy as np
import onnx
import iree.compiler
import iree.runtime as rt


def run(model_path, feeds):
    mlir = tempfile.NamedTemporaryFile(suffix=".mlir").name  # iree-import-onnx's output
    subprocess.run(
        [sys.executable, "-m", "iree.compiler.tools.import_onnx", model_path, "-o", mlir],
        check=True,
    )
    vmfb = iree.compiler.compile_file(mlir, extra_args={compile_flags!r})
    context = rt.SystemContext(config=rt.Config("local-sync"))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
    graph = onnx.load(model_path).graph
    function = context.modules.module[graph.name]
    results = function(*[feeds[i.name] for i in graph.input if i.name in feeds])
    results = results if isinstance(results, tuple) else (results,)
    return [np.asarray(r.to_host()) for r in results]
"""


def failure(log: str) -> Exception:
    """What a failed compile says: an op the importer's conversions lack or a limit IREE states
    is Unsupported; anything else is IREE's error."""
    diagnostics = "\n".join(line for line in log.splitlines() if "error: " in line)
    if _NO_CONVERSION.search(log):
        ops = sorted(set(_ONNX_OP.findall(diagnostics))) or sorted(set(_ONNX_OP.findall(log)))
        return Unsupported("op", f"no conversion in IREE's ONNX importer for {', '.join(ops)}")
    if m := _NO_LOWERING.search(diagnostics):
        return Unsupported("limit", f"no lowering in IREE for {m.group(1)}")
    if m := _STATED_LIMIT.search(diagnostics):
        return Unsupported("limit", m.group(0).strip())
    return RuntimeError(f"IREE failed to compile the model:\n{diagnostics or log[-4000:]}")


def run_module(module: bytes, graph: Any, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The graph's outputs by name, from the VM module's function (named after the graph)."""
    context = rt.SystemContext(config=rt.Config("local-sync"))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, module))
    function = context.modules.module[graph.name]
    initializers = {i.name for i in graph.initializer}
    feeds = [inputs[i.name] for i in graph.input if i.name not in initializers]
    results = function(*feeds)
    results = results if isinstance(results, tuple) else (results,)
    if len(results) != len(graph.output):
        raise RuntimeError(f"the module returned {len(results)} values for {len(graph.output)} outputs")
    return {o.name: as_declared(np.asarray(r.to_host()), o) for o, r in zip(graph.output, results)}


def as_declared(value: np.ndarray, output: Any) -> np.ndarray:
    """`value` as the output's declared type: IREE's tensors are signless, so a uint8 output
    comes back as int8 of the same bits."""
    declared = onnx.helper.tensor_dtype_to_np_dtype(output.type.tensor_type.elem_type)
    if value.dtype == declared:
        return value
    if value.dtype.kind in "iu" and declared.kind in "iu" and value.dtype.itemsize == declared.itemsize:
        return value.view(declared)
    return value


if __name__ == "__main__":
    serve(Iree())
