"""TVM 0.27 (Relax) on CPU as an nncheck engine, over the worker protocol.

A model is imported by TVM's ONNX frontend (its translation faults are TVM's), decomposed for
inference, optimized by the configuration's pipeline one pass at a time (a pass "applied" when
the module differs after it), compiled for `llvm` by tvm.compile's default build pipeline, and
run on Relax's virtual machine.

Pipelines (configuration `pipeline=NAME`):
  default  nothing before tvm.compile's default build pipeline, which on CPU only legalizes and
           lowers (relax/pipeline.py default_build_pipeline): the baseline
  zero     TVM's zero pipeline (relax/pipeline.py zero_pipeline): LegalizeOps,
           AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR
  full     the cleanups TVM's frontends and pipelines run (CanonicalizeBindings,
           EliminateCommonSubexpr, DeadCodeElimination), then the CPU backend's own pipeline
           (relax/backend/cpu_generic: DispatchSampling, DispatchSortScan, then the zero
           pipeline's passes), which relax.get_default_pipeline gives for llvm
"""

from __future__ import annotations

import inspect
import pathlib
import re
from typing import Any, Callable

import numpy as np
import onnx
import tvm
import tvm_ffi
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

from nncheck_engine import Engine, Unsupported, probed_ops, serve

Pass = tuple[str, Callable[[], Any], bool]  # name, the pass, whether it is an optimization

LEGALIZE: list[Pass] = [
    ("LegalizeOps", relax.transform.LegalizeOps, False),
    ("AnnotateTIROpPattern", relax.transform.AnnotateTIROpPattern, False),
    ("FoldConstant", relax.transform.FoldConstant, True),
    ("FuseOps", relax.transform.FuseOps, True),
    ("FuseTIR", relax.transform.FuseTIR, True),
]
PIPELINES: dict[str, list[Pass]] = {
    "default": [],
    "zero": LEGALIZE,
    "full": [
        ("CanonicalizeBindings", relax.transform.CanonicalizeBindings, True),
        ("EliminateCommonSubexpr", relax.transform.EliminateCommonSubexpr, True),
        ("DeadCodeElimination", relax.transform.DeadCodeElimination, True),
        ("DispatchSampling", relax.backend.DispatchSampling, False),
        ("DispatchSortScan", relax.backend.DispatchSortScan, False),
    ]
    + LEGALIZE,
}

HERE = pathlib.Path(__file__).resolve().parent
STATED_LIMIT = re.compile(r"are supported|is supported|not supported|cannot handle")


class Tvm(Engine):
    name = "tvm"
    version = tvm.__version__
    description = (
        f"TVM {tvm.__version__} (Relax) on CPU: ONNX frontend, llvm, virtual machine; "
        "configurations pipeline=default|zero|full"
    )
    configurations = ["pipeline=zero", "pipeline=full", "pipeline=default"]
    baseline = "pipeline=default"
    install = "scripts/install-deps.sh tvm"
    reproducer_requirements = (
        f"pip install apache-tvm=={tvm.__version__} onnx=={onnx.__version__} numpy"
    )

    def __init__(self) -> None:
        ops = probed_ops(HERE / "tvm_capabilities.inc")  # nncheck probe --backend tvm
        self.capabilities = {
            "dtypes": [1, 7, 9],  # float32, int64, bool
            "opset": 17,
            "ops": ops,
            "weights_must_be_initializers": False,
            "shape_operands_must_be_initializers": True,
        }
        self.target = tvm.target.Target("llvm")
        self.device = tvm.cpu()

    def optimizations(self, configuration: str) -> list[str]:
        return [name for name, _, optimizes in PIPELINES[pipeline_of(configuration)] if optimizes]

    def compile(self, model, configuration, disabled):  # type: ignore[no-untyped-def]
        proto = onnx.load_from_string(model)
        try:
            mod = from_onnx(proto, opset=proto.opset_import[0].version)
        except tvm.error.OpNotImplemented as e:
            raise Unsupported("op", str(e).strip().splitlines()[-1]) from None
        except (AssertionError, ValueError) as e:
            # A limit the frontend states ("Only resize1d/resize2d/resize3d are supported",
            # "cannot handle ShapeExpr inputs") is no bug; any other failure to import is.
            if STATED_LIMIT.search(str(e)):
                raise Unsupported("frontend", str(e).strip().splitlines()[-1]) from None
            raise
        mod = relax.transform.DecomposeOpsForInference()(mod)
        applied = []
        with self.target:
            for name, make, optimizes in PIPELINES[pipeline_of(configuration)]:
                if optimizes and name in disabled:
                    continue
                after = make()(mod)
                if optimizes and not tvm_ffi.structural_equal(mod, after):
                    applied.append(name)
                mod = after
        executable = tvm.compile(mod, target=self.target)
        vm = relax.VirtualMachine(executable, self.device)
        graph = ([i.name for i in proto.graph.input], [o.name for o in proto.graph.output])
        return vm, graph, applied

    def execute(self, compiled, inputs):  # type: ignore[no-untyped-def]
        vm, (graph_inputs, outputs), applied = compiled
        names = [n for n in graph_inputs if n in inputs]
        result = vm["main"](*[tvm.runtime.tensor(inputs[n], self.device) for n in names])
        values = flatten(result)
        if len(values) != len(outputs):
            raise RuntimeError(f"the module returned {len(values)} values for {len(outputs)} outputs")
        return dict(zip(outputs, values)), applied


    def reproducer(self, configuration: str) -> str:
        """What `run` does at `configuration`, as a script a TVM maintainer reads: the frontend,
        the pipeline's passes in order, tvm.compile and the VM."""
        passes = "".join(
            f"            {module_of(name)}.{name}(),\n"
            for name, _, _ in PIPELINES[pipeline_of(configuration)]
        )
        pipeline = f"[\n{passes}        ]" if passes else "[]"
        return f'''from typing import Any

import onnx
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def run(model_path, feeds):
    model = onnx.load(model_path)
    mod = from_onnx(model, opset=model.opset_import[0].version)
    mod = relax.transform.DecomposeOpsForInference()(mod)
    target = tvm.target.Target("llvm")
    with target:
        for p in {pipeline}:  # {configuration}
            mod = p(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    names = [i.name for i in model.graph.input if i.name in feeds]
    return flatten(vm["main"](*[tvm.runtime.tensor(feeds[n], tvm.cpu()) for n in names]))


{inspect.getsource(flatten)}'''


def module_of(name: str) -> str:
    """Where a pass of the pipelines is, as a script imports it."""
    return "relax.backend" if name.startswith("Dispatch") else "relax.transform"


def pipeline_of(configuration: str) -> str:
    name = configuration.removeprefix("pipeline=")
    if name not in PIPELINES:
        raise ValueError(f"no pipeline '{name}' (pipelines: {', '.join(PIPELINES)})")
    return name


def flatten(value: Any) -> list[np.ndarray]:
    """The VM's result as arrays: a tensor, a shape (ONNX Shape's int64 tensor), or a tuple of
    them (nested)."""
    if isinstance(value, tvm.runtime.Tensor):
        return [value.numpy()]
    if isinstance(value, tvm.runtime.ShapeTuple):
        return [np.array(list(value), dtype=np.int64)]
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__"):
        return [a for v in value for a in flatten(v)]
    return [np.asarray(value)]


if __name__ == "__main__":
    serve(Tvm())
