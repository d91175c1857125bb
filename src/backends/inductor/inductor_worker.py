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
import tempfile
from typing import Any, Callable

# Before torch is imported: its caches read these once.
_CACHE = pathlib.Path(tempfile.gettempdir()) / "torchinductor"
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(_CACHE))
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # compile in this process, one core
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
from torch import Tensor  # noqa: E402  (the source's annotations)
from torch._dynamo.utils import counters  # noqa: E402
from torch.fx.passes.graph_transform_observer import GraphTransformObserver  # noqa: E402

from nncheck_engine import Engine, serve  # noqa: E402
from nncheck_engine.protocol import Run  # noqa: E402

torch.set_num_threads(1)
VERSION = torch.__version__.split("+")[0]  # PyPI's version, without the wheel's CUDA tag
# This CPU's vector ISAs (from /proc/cpuinfo) are taken as buildable, as in fbcode, rather than
# proved by compiling a probe per ISA and loading it in a child Python: that proof cost a fresh
# worker 9 s of its first compile (2.5 s without), and a fresh process judges every failure.
inductor_config.cpp.vec_isa_ok = True

MODES = ["eager", "aot_eager", "inductor", "freezing", "dynamic", "max-autotune"]
INDUCTOR_MODES = {"inductor", "freezing", "dynamic", "max-autotune"}

# Inductor's FX graph passes, by the names GraphTransformObserver gives them (the names
# config.disabled_passes switches off): those that may rewrite an inference graph on CPU. The
# unnamed pattern-matcher passes (joint-graph, post-grad and freezing patterns: constant and
# binary folding, MKLDNN fusions) share the name "pattern_matcher"; "pass_pattern_i" holds the
# i-th of the joint-graph and post-grad pattern sets.
GRAPH_PASSES = [
    # before AOTAutograd
    "efficient_conv_bn_eval_pass",
    "fuse_conv_bn",
    "group_batch_fusion_passes",
    "linear_permute_fusion",
    "permute_linear_fusion",
    "permute_matmul_fusion",
    "remove_identity",
    # on the joint (here: inference) graph, and after it
    "constant_fold_uniform_value",
    "pass_pattern_0",
    "pass_pattern_1",
    "pass_pattern_2",
    "pattern_matcher",
    "reinplace_inplaceable_ops",
    "remove_noop_ops",
    "reorder_for_locality",
]
# Inductor's switches whose effect no pass reports: flipped off for the culprit search.
SWITCHES: dict[str, dict[str, Any]] = {
    "fusion": {"max_fusion_size": 1},  # the scheduler fuses no two nodes
    "vectorization": {"cpp.simdlen": 1},  # no vector ISA has width 1: scalar C++ kernels
}


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
    if exc[0] is None and _fingerprint(self) != before:
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
    configurations = [f"mode={m}" for m in ["inductor"] + [m for m in MODES if m != "inductor"]]
    baseline = "mode=eager"
    install = "scripts/install-deps.sh inductor"
    capabilities = {
        "dtypes": [1, 7, 9],  # float32, int64, bool
        "opset": 17,
        "weights_must_be_initializers": False,
        "shape_operands_must_be_initializers": True,
    }
    reproducer_requirements = f"pip install torch=={VERSION} numpy"
    restart_every = 200  # compiled modules and kernels stay loaded in the process
    start_seconds = 60  # import and a first compile: 5 s, 20 s from a cold disk

    def optimizations(self, configuration: str) -> list[str]:
        return GRAPH_PASSES if mode_of(configuration) in INDUCTOR_MODES else []

    def unreported_optimizations(self, configuration: str) -> list[str]:
        return list(SWITCHES) if mode_of(configuration) in INDUCTOR_MODES else []

    def reproducer(self, configuration: str) -> str:
        return reproducer_code(mode_of(configuration))

    def run_request(self, run: Run) -> tuple[dict[str, np.ndarray], list[str]]:
        mode = mode_of(run.configuration)
        program = run.options
        module = build_module(run.model, program)
        feeds = [torch.from_numpy(np.array(run.inputs[n])) for n in program["inputs"]]
        torch._dynamo.reset()
        counters.clear()
        _fired.clear()
        with torch.no_grad(), inductor_config.patch(config_of(mode, run.disabled)):
            compiled = compile_module(module, mode)
            values = compiled(*feeds)
        outputs = {n: v.numpy() for n, v in zip(program["outputs"], values)}
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
