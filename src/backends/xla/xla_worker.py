"""XLA on CPU through JAX as an nncheck engine, over the worker protocol.

JAX reads no ONNX: nncheck's host side translates each model to the JAX a user writes (a pure
function of its parameters and inputs, jax.numpy and lax) and sends it in the run's options. This
worker runs it as the configuration says and, when XLA compiles it, says which of XLA's HLO passes
changed the module (XLA dumps the module after a pass only when the pass changed it).

Configurations (`mode=NAME`):
  eager   op by op, under jax.disable_jit(): each primitive on its own, nothing across ops: the
          baseline
  jit     jax.jit as it ships: XLA's whole HLO pipeline, then LLVM at its default level
  jit-O0  jax.jit with XLA's LLVM back end at optimization level 0: the HLO passes as they ship,
          the generated code unoptimized
  jit-no-simplify  jax.jit with the HLO simplifiers off (algebraic simplification, CSE,
          constant folding, reshape motion): what fusion and code generation make of the graph
          as written

Every run compiles afresh (jax.clear_caches), and the dumps that say what fired live in this
worker's private temporary folder, emptied after each run.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import tempfile
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")  # one core, as campaigns
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special  # noqa: E402  (the source's erf)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
from jax import lax  # noqa: E402

from nncheck_engine import Engine, probed_ops, serve  # noqa: E402
from nncheck_engine.protocol import Run  # noqa: E402

jax.config.update("jax_enable_x64", True)  # ONNX's int64 and float64 stay 64-bit
VERSION = jax.__version__

MODES = ["jit", "eager", "jit-O0", "jit-no-simplify"]  # default first

# XLA's CPU HLO passes that --xla_disable_hlo_passes can switch off and that only optimize: with
# any of them off, XLA still compiles every module (the legalizing passes, layout assignment and
# copy insertion are left out). Named as XLA names them in its dumps and its flag.
HLO_PASSES = [
    "algsimp",
    "batch-dot-simplification",
    "conditional-to-select",
    "constant_folding",
    "cse",
    "dce",
    "dot-library-rewriter",
    "fusion",
    "gather_simplifier",
    "gemv-rewriter",
    "reshape-mover",
    "scatter_simplifier",
    "simplify-conditional",
    "simplify-sorts",
    "simplify-while-loops",
    "transpose-folding",
    "tree_reduction_rewriter",
    "tuple-simplifier",
    "while-loop-constant-sinking",
    "while-loop-invariant-code-motion",
    "zero_sized_hlo_elimination",
]
SIMPLIFIERS = ["algsimp", "constant_folding", "cse", "reshape-mover"]  # jit-no-simplify's
COMPILER_OPTIONS: dict[str, dict[str, Any]] = {
    "jit": {},
    "jit-O0": {"xla_backend_optimization_level": 0},
    "jit-no-simplify": {},
}
_DUMPS = pathlib.Path(tempfile.gettempdir()) / "xla_dumps"
# module_0003.jit_model.0012.simplification.after_algsimp.before_reshape-mover.txt
_FIRED = re.compile(r"\.after_(.+?)\.before_")


def mode_of(configuration: str) -> str:
    mode = configuration.removeprefix("mode=")
    if mode not in MODES:
        raise ValueError(f"no mode '{mode}' (modes: {', '.join(MODES)})")
    return mode


def disabled_passes(mode: str, disabled: list[str]) -> list[str]:
    off = SIMPLIFIERS if mode == "jit-no-simplify" else []
    return sorted(set(off) | {d for d in disabled if d in HLO_PASSES})


class Xla(Engine):
    name = "xla"
    version = VERSION
    description = (
        f"XLA on CPU through JAX {VERSION}: the model as JAX source; configurations mode="
        + "|".join(MODES)
    )
    configurations = [f"mode={m}" for m in MODES]
    baseline = "mode=eager"
    install = "scripts/install-deps.sh xla"
    # What the translation and JAX op by op take, probed at mode=eager: what the compiling modes
    # fail on among those is theirs to fix.
    capabilities = {
        "dtypes": [1, 6, 7, 9, 11],  # float32, int32, int64, bool, float64
        "opset": 17,
        # nncheck probe --backend xla --config mode=eager
        "ops": probed_ops(pathlib.Path(__file__).resolve().parent / "xla_capabilities.inc"),
        "weights_must_be_initializers": False,
        "shape_operands_must_be_initializers": True,
    }
    reproducer_requirements = f"pip install jax=={VERSION} jaxlib=={VERSION} numpy"
    start_seconds = 10  # importing jax and a first compile: about 1 s warm

    def optimizations(self, configuration: str) -> list[str]:
        mode = mode_of(configuration)
        if mode == "eager":
            return []
        return [p for p in HLO_PASSES if p not in disabled_passes(mode, [])]

    def reproducer(self, configuration: str) -> str:
        return reproducer_code(mode_of(configuration))

    def run_request(self, run: Run) -> tuple[dict[str, np.ndarray], list[str]]:
        mode = mode_of(run.configuration)
        program = run.options
        model = build_function(program)
        params = build_params(run.model, program)
        feeds = [jnp.asarray(np.array(run.inputs[n])) for n in program["inputs"]]
        jax.clear_caches()
        if mode == "eager":
            with jax.disable_jit():
                values = model(params, *feeds)
            fired: list[str] = []
        else:
            options = compiler_options(mode, list(run.disabled))
            options["xla_dump_to"] = str(_DUMPS)
            # Every pass: XLA then dumps after a pass only when it changed the module. (With a
            # narrower pattern it dumps before and after each matching pass, changed or not.)
            options["xla_dump_hlo_pass_re"] = ".*"
            try:
                compiled = jax.jit(model).lower(params, *feeds).compile(compiler_options=options)
                values = compiled(params, *feeds)
                fired = passes_that_fired(_DUMPS)
            finally:
                shutil.rmtree(_DUMPS, ignore_errors=True)
        outputs = {n: np.asarray(v) for n, v in zip(program["outputs"], values)}
        return outputs, fired


def compiler_options(mode: str, disabled: list[str]) -> dict[str, Any]:
    options = dict(COMPILER_OPTIONS[mode])
    off = disabled_passes(mode, disabled)
    if off:
        options["xla_disable_hlo_passes"] = ",".join(off)
    return options


def passes_that_fired(dumps: pathlib.Path) -> list[str]:
    """The passes after which XLA dumped the module: those that changed it."""
    names = {m.group(1) for f in os.listdir(dumps) if (m := _FIRED.search(f))}
    return sorted(names & set(HLO_PASSES))


def reproducer_code(mode: str) -> str:
    """What run_request does at `mode`, as an XLA maintainer reads it. The host puts the model
    before it: `model`, PARAMS (its initializers) and INPUTS (its arguments by graph input)."""
    if mode == "eager":
        body = "    with jax.disable_jit():  # eager: op by op\n        outputs = model(PARAMS, *args)"
    elif options := compiler_options(mode, []):
        body = (
            f"    compiled = jax.jit(model).lower(PARAMS, *args).compile(compiler_options={options!r})\n"
            "    outputs = compiled(PARAMS, *args)"
        )
    else:
        body = "    outputs = jax.jit(model)(PARAMS, *args)"
    return f"""

def run(model_path, feeds):  # JAX reads no ONNX: model above is the model
    args = [jnp.asarray(feeds[name]) for name in INPUTS]
{body}
    return [np.asarray(output) for output in outputs]
"""


def build_function(program: dict[str, Any]) -> Any:
    scope: dict[str, Any] = {"jax": jax, "jnp": jnp, "lax": lax}
    exec(compile(program["source"], "<nncheck model>", "exec"), scope)
    return scope["model"]


def build_params(model: bytes, program: dict[str, Any]) -> dict[str, Any]:
    """Each parameter the initializer it names."""
    initializers = {i.name: i for i in onnx.load_from_string(model).graph.initializer}
    return {
        name: jnp.asarray(np.array(onnx.numpy_helper.to_array(initializers[initializer])))
        for name, initializer in program["params"].items()
    }


if __name__ == "__main__":
    serve(Xla())
