"""PyTorch's torch.compile on CPU as an nncheck engine, over the worker protocol.

PyTorch reads no ONNX: nncheck's host side translates each model to the PyTorch a user writes (a
module's `forward`, its initializers as buffers) and sends it in the run's options. This worker
builds the module, compiles it as the configuration says, runs it without gradients, and says
which of Inductor's graph passes changed the graph.

Configurations (`mode=NAME`):
  eager         the module called as it is, op by op: the baseline
  aot_eager     Dynamo's graph through AOTAutograd's decompositions, run eagerly
  inductor      torch.compile as it ships (backend "inductor")
  freezing      Inductor with freezing: buffers become constants, folded and prepacked
  dynamic       Inductor with dynamic=True: shapes symbolic from the first compile
  max-autotune  mode "max-autotune-no-cudagraphs": Inductor's templates tried against ATen

Every case is compiled afresh: Dynamo is reset before each run, the FX graph cache is off, and
Inductor's on-disk caches live in this worker's private temporary folder.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile
from typing import Any, Callable

# Before torch is imported: its caches read these once.
# The one Inductor uses, which each run empties: this worker's own unless the environment says.
_OWN_CACHE = pathlib.Path(tempfile.gettempdir()) / "torchinductor"
_CACHE = pathlib.Path(os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(_OWN_CACHE)))
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # compile in this process, one core
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Inductor probes each vector ISA the CPU names by compiling and loading a kernel (12 s), once a
# process since the probes' cache is this worker's; Debian 12's g++ 12 builds every x86 ISA Inductor
# knows, so the CPU's flags decide alone, as Inductor's own switch says.
os.environ.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
import torch._inductor.cpp_builder as cpp_builder  # noqa: E402
from torch._inductor import metrics  # noqa: E402
from torch import Tensor  # noqa: E402  (the source's annotations)
from torch.fx.passes.graph_transform_observer import GraphTransformObserver  # noqa: E402

from nncheck_engine import Engine, probed_ops, serve  # noqa: E402
from nncheck_engine.protocol import Run  # noqa: E402

torch.set_num_threads(1)


# Inductor links its C++ kernels with -ltorch_cpu and puts Python's LIBDIR (/usr/lib/<triplet> on
# Debian) before torch's own lib folder. Where a distribution's libtorch lives there (Debian's
# libtorch-dev, which the torch engine uses), the kernels link against it instead, lose the Sleef
# symbols, and fail to load: every vector ISA then fails its probe (13 s a process) and Inductor
# writes scalar kernels only. Without that folder the linker still searches it, after torch's.
def _python_related_args_without_foreign_libtorch() -> tuple[list[str], list[str]]:
    include_dirs, lib_dirs = _python_related_args()  # torch's own lib folder is never among these
    return include_dirs, [d for d in lib_dirs if not (pathlib.Path(d) / "libtorch_cpu.so").exists()]


_python_related_args = cpp_builder._get_python_related_args
cpp_builder._get_python_related_args = _python_related_args_without_foreign_libtorch
VERSION = torch.__version__.split("+")[0]  # PyPI's version, without the wheel's CUDA tag

MODES = ["inductor", "eager", "aot_eager", "freezing", "dynamic", "max-autotune"]  # default first
INDUCTOR_MODES = {"inductor", "freezing", "dynamic", "max-autotune"}

# Inductor's FX graph passes that config.disabled_passes switches off: those run through
# GraphTransformObserver.apply_graph_pass or apply_gm_pass (a pass run in a plain `with` block of
# the observer, as the pattern sets of freezing and the pre-grad fusions are, cannot be), and that
# may rewrite an inference graph on CPU. "pass_pattern_i" is the i-th pattern set of the joint
# graph and of the post-grad passes.
GRAPH_PASSES = [
    "apply_gumbel_max_trick_pass",
    "constant_fold_uniform_value",
    "efficient_conv_bn_eval_pass",
    "group_batch_fusion_passes",
    "pass_pattern_0",
    "pass_pattern_1",
    "pass_pattern_2",
    "reinplace_inplaceable_ops",
    "remove_noop_ops",
    "reorder_for_locality",
]
# Inductor's switches, flipped off for the culprit search. Only vectorization reports its effect
# (Inductor counts the vector kernels it writes); the others are unreported.
SWITCHES: dict[str, dict[str, Any]] = {
    "fusion": {"max_fusion_size": 1},  # the scheduler fuses no two nodes
    "vectorization": {"cpp.simdlen": 1},  # no vector ISA has width 1: scalar C++ kernels
    "weight_prepack": {"cpp.weight_prepack": False},  # freezing's MKL/oneDNN weight packing
}
REPORTED_SWITCHES = ["vectorization"]


def mode_of(configuration: str) -> str:
    mode = configuration.removeprefix("mode=")
    if mode not in MODES:
        raise ValueError(f"no mode '{mode}' (modes: {', '.join(MODES)})")
    return mode


# --- which graph passes changed the graph ---------------------------------------------------------
# Inductor runs its FX passes under GraphTransformObserver, by name; the names are what
# config.disabled_passes switches off. A pass "applied" when the graph differs after it.

_fired: list[str] = []
_open: list[tuple[Any, ...]] = []
_enter: Callable[..., Any] = GraphTransformObserver.__enter__
_exit: Callable[..., Any] = GraphTransformObserver.__exit__


def _fingerprint(observer: GraphTransformObserver) -> tuple[Any, ...]:
    graph = getattr(observer.gm, "graph", observer.gm)
    return tuple((n.op, str(n.target), repr(n.args), repr(n.kwargs)) for n in graph.nodes)


def _observed_enter(self: GraphTransformObserver) -> GraphTransformObserver:
    _open.append(_fingerprint(self))
    return _enter(self)


def _observed_exit(self: GraphTransformObserver, *exc: Any) -> None:
    _exit(self, *exc)
    before = _open.pop()
    if exc[0] is None and self.passname in GRAPH_PASSES and _fingerprint(self) != before:
        _fired.append(self.passname)


GraphTransformObserver.__enter__ = _observed_enter  # type: ignore[method-assign]
GraphTransformObserver.__exit__ = _observed_exit  # type: ignore[method-assign]


class Inductor(Engine):
    name = "inductor"
    version = VERSION
    description = (
        f"PyTorch {VERSION}'s torch.compile on CPU: the model as PyTorch source; "
        "configurations mode=" + "|".join(MODES)
    )
    configurations = [f"mode={m}" for m in MODES]
    baseline = "mode=eager"
    install = "scripts/install-deps.sh inductor"
    # What the translation and eager PyTorch take, probed at mode=eager: what the compiling modes
    # fail on among those is theirs to fix.
    capabilities = {
        "dtypes": [1, 7, 9],  # float32, int64, bool
        "opset": 17,
        # nncheck probe --backend inductor --config mode=eager
        "ops": probed_ops(pathlib.Path(__file__).resolve().parent / "inductor_capabilities.inc"),
        "weights_must_be_initializers": False,
        "shape_operands_must_be_initializers": True,
    }
    reproducer_requirements = f"pip install torch=={VERSION} numpy"
    # Never: a restart inside an engine process would charge the next case with the start-up.
    # Memory grows by about 0.2 MiB a compile (measured over 120), and the kernels on disk are
    # removed after each run.
    restart_every = 0
    start_seconds = 60  # import and a first compile: 5 s, 20 s from a cold disk

    def optimizations(self, configuration: str) -> list[str]:
        return GRAPH_PASSES + REPORTED_SWITCHES if mode_of(configuration) in INDUCTOR_MODES else []

    def unreported_optimizations(self, configuration: str) -> list[str]:
        mode = mode_of(configuration)
        if mode not in INDUCTOR_MODES:
            return []
        return [
            s
            for s in SWITCHES
            if s not in REPORTED_SWITCHES and (s != "weight_prepack" or mode == "freezing")
        ]

    def reproducer(self, configuration: str) -> str:
        return reproducer_code(mode_of(configuration))

    def run_request(self, run: Run) -> tuple[dict[str, np.ndarray], list[str]]:
        mode = mode_of(run.configuration)
        program = run.options
        module = build_module(run.model, program)
        feeds = [torch.from_numpy(np.array(run.inputs[n])) for n in program["inputs"]]
        torch._dynamo.reset()
        _fired.clear()
        metrics.reset()
        try:
            with torch.no_grad(), inductor_config.patch(config_of(mode, run.disabled)):
                compiled = compile_module(module, mode)
                values = compiled(*feeds)
        finally:
            # Its kernels, loaded already, are no other case's: the disk cache stays one case's.
            shutil.rmtree(_CACHE, ignore_errors=True)
        outputs = {n: v.numpy() for n, v in zip(program["outputs"], values)}
        if metrics.generated_cpp_vec_kernel_count > 0:
            _fired.append("vectorization")
        return outputs, sorted(set(_fired))


def reproducer_code(mode: str) -> str:
    """What run_request does at `mode`, as a PyTorch maintainer reads it. The host puts the
    model before it: class Model, and INPUTS (forward's arguments by graph input)."""
    args = ", ".join(f"{k}={v!r}" for k, v in COMPILE_ARGS.get(mode, {}).items())
    compiled = f"torch.compile(model, {args})" if args else "model  # eager: not compiled"
    freezing = "    torch._inductor.config.freezing = True\n" if mode == "freezing" else ""
    return f"""

def run(model_path, feeds):  # PyTorch reads no ONNX: Model above is the model
{freezing}    model = Model().eval()
    compiled = {compiled}
    with torch.no_grad():
        outputs = compiled(*[torch.from_numpy(feeds[name]) for name in INPUTS])
    return [output.numpy() for output in outputs]
"""


def config_of(mode: str, disabled: list[str]) -> dict[str, Any]:
    """Inductor's config for a run: freezing as the mode says, the disabled passes and switches
    off."""
    config: dict[str, Any] = {
        "freezing": mode == "freezing",
        "disabled_passes": ",".join(d.upper() for d in disabled if d in GRAPH_PASSES),
    }
    for d in disabled:
        config.update(SWITCHES.get(d, {}))
    return config


# torch.compile's arguments per mode (eager: not compiled). fullgraph: a graph break is an error,
# never a silent fall back to eager for part of the model.
COMPILE_ARGS: dict[str, dict[str, Any]] = {
    "aot_eager": {"backend": "aot_eager", "fullgraph": True},
    "inductor": {"backend": "inductor", "fullgraph": True},
    "freezing": {"backend": "inductor", "fullgraph": True},
    "dynamic": {"backend": "inductor", "fullgraph": True, "dynamic": True},
    "max-autotune": {"mode": "max-autotune-no-cudagraphs", "fullgraph": True},
}


def compile_module(module: torch.nn.Module, mode: str) -> Callable[..., Any]:
    return torch.compile(module, **COMPILE_ARGS[mode]) if mode in COMPILE_ARGS else module


def build_module(model: bytes, program: dict[str, Any]) -> torch.nn.Module:
    """The translated forward as an nn.Module, each buffer the initializer it names."""
    scope: dict[str, Any] = {"torch": torch, "Tensor": Tensor}
    exec(compile(program["source"], "<nncheck model>", "exec"), scope)
    module_type = type("Model", (torch.nn.Module,), {"forward": scope["forward"]})
    module = module_type()
    initializers = {i.name: i for i in onnx.load_from_string(model).graph.initializer}
    for buffer, initializer in program["buffers"].items():
        value = onnx.numpy_helper.to_array(initializers[initializer])
        module.register_buffer(buffer, torch.from_numpy(np.array(value)))
    return module.eval()


if __name__ == "__main__":
    serve(Inductor())
