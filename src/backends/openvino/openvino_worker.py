"""OpenVINO on CPU as an nncheck engine, over the worker protocol.

OpenVINO reads the ONNX bytes itself (its ONNX frontend: its conversion faults are OpenVINO's),
compiles the model for the CPU plugin and runs it. Its pass manager's profile
(OV_ENABLE_PROFILE_PASS) marks each transformation that changed the model with "+": those are
the transformations this worker names as applied. A release build cannot switch one off
(OV_CPU_DISABLE needs a debug build), so they are reach only; what can be switched is snippets
(the CPU plugin's JIT of fused elementwise subgraphs), named "snippets" when the compiled model
holds a Subgraph node.

Configurations (`mode=NAME`), each on one thread in one stream:
  accuracy      EXECUTION_MODE_HINT=ACCURACY: the baseline
  performance   EXECUTION_MODE_HINT=PERFORMANCE with float32 kept (on a CPU with bfloat16,
                PERFORMANCE alone computes in bfloat16, which is a precision, not a bug)
  performance-no-snippets  the same with snippets off (SNIPPETS_MODE=DISABLE)
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import re
import sys
import tempfile
from typing import Any

os.environ["OV_ENABLE_PROFILE_PASS"] = "true"  # read when a pass manager runs: set before import

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import openvino as ov  # noqa: E402

from nncheck_engine import Engine, Unsupported, probed_ops, serve  # noqa: E402

VERSION = ov.get_version().split("-")[0]
EACH_RUN = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "ENABLE_CPU_PINNING": False}
ACCURACY = {"EXECUTION_MODE_HINT": "ACCURACY"}
PERFORMANCE = {"EXECUTION_MODE_HINT": "PERFORMANCE", "INFERENCE_PRECISION_HINT": "f32"}
NO_SNIPPETS = {"SNIPPETS_MODE": "DISABLE"}
MODES: dict[str, dict[str, Any]] = {  # the default first
    "accuracy": ACCURACY,
    "performance": PERFORMANCE,
    "performance-no-snippets": PERFORMANCE | NO_SNIPPETS,
}
SNIPPETS = "snippets"
# "                         ov::pass::NopElimination                        0ms +"
_PASS = re.compile(r"^ {2,}(\S+) +\d+ms ([+-])$", re.M)
# What OpenVINO says of an op its ONNX frontend has no conversion for, and of a limit it states
# ("Non-constant training_mode input is not supported.", "CPU plug-in doesn't support Unsqueeze
# operation with dynamic rank."): limits, not bugs.
_NO_CONVERSION = re.compile(r"No conversion rule found for operations: *([^\n]*)")
_STATED_LIMIT = re.compile(r"^.*(?:is not supported|doesn't support).*$", re.M)
_NAME = re.compile(r"\w+")
_LIBC = ctypes.CDLL(None)


def mode_of(configuration: str) -> str:
    mode = configuration.removeprefix("mode=")
    if mode not in MODES:
        raise ValueError(f"no mode '{mode}' (modes: {', '.join(MODES)})")
    return mode


def properties(mode: str, disabled: list[str]) -> dict[str, Any]:
    props = EACH_RUN | MODES[mode]
    if SNIPPETS in disabled:
        props |= NO_SNIPPETS
    return props


def compile_profiled(core: ov.Core, model: bytes, props: dict[str, Any]) -> tuple[Any, str]:
    """The compiled model and the pass manager's profile, which OpenVINO prints to standard
    output (the SDK points that at stderr): caught in a file for the length of the compile."""
    with tempfile.TemporaryFile() as profile:
        sys.stdout.flush()
        _LIBC.fflush(None)
        saved = os.dup(1)
        os.dup2(profile.fileno(), 1)
        try:
            compiled = core.compile_model(core.read_model(model), "CPU", props)
        finally:
            _LIBC.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        profile.seek(0)
        return compiled, profile.read().decode(errors="replace")


def passes(profile: str, mark: str = "") -> set[str]:
    """The transformations the profile lists (those marked `mark`, if given), by their class
    names: "ov::pass::NopElimination" is NopElimination, as a configuration can spell it."""
    return {
        name.rsplit("::", 1)[-1]
        for name, m in _PASS.findall(profile)
        if (not mark or m == mark) and _NAME.fullmatch(name.rsplit("::", 1)[-1])
    }


class OpenVino(Engine):
    name = "openvino"
    version = VERSION
    description = (
        f"OpenVINO {VERSION} on CPU: its ONNX frontend and CPU plugin; configurations mode="
        + "|".join(MODES)
    )
    configurations = [f"mode={m}" for m in MODES]
    baseline = "mode=accuracy"
    install = "scripts/install-deps.sh openvino"
    reproducer_requirements = f"pip install openvino=={VERSION} numpy"
    capabilities = {
        # float32, int32, bool. The CPU plugin computes float64 as float32 and int64 as int32
        # (stated limits: its documented inference precisions), so values of those types are
        # not generated; int64 stays where ONNX requires it (shapes, indices).
        "dtypes": [1, 6, 9],
        "opset": 17,
        # nncheck probe --backend openvino
        "ops": probed_ops(pathlib.Path(__file__).resolve().parent / "openvino_capabilities.inc"),
        "weights_must_be_initializers": False,
        "shape_operands_must_be_initializers": False,
    }

    def __init__(self) -> None:
        self.core = ov.Core()
        # The transformations each mode may apply: those its pipeline runs, less those that
        # say they changed even a lone Relu (bookkeeping that marks every model changed).
        self.passes: dict[str, list[str]] = {}
        for mode in MODES:
            _, profile = compile_profiled(self.core, lone_relu(), properties(mode, []))
            self.passes[mode] = sorted(passes(profile) - passes(profile, "+"))

    def optimizations(self, configuration: str) -> list[str]:
        return [] if "SNIPPETS_MODE" in MODES[mode_of(configuration)] else [SNIPPETS]

    def fixed_optimizations(self, configuration: str) -> list[str]:
        return self.passes[mode_of(configuration)]

    def compile(self, model, configuration, disabled):  # type: ignore[no-untyped-def]
        mode = mode_of(configuration)
        try:
            compiled, profile = compile_profiled(self.core, model, properties(mode, disabled))
        except RuntimeError as e:
            if m := _NO_CONVERSION.search(str(e)):
                raise Unsupported("op", f"no conversion in OpenVINO's ONNX frontend: {m.group(1)}")
            if m := _STATED_LIMIT.search(str(e)):
                raise Unsupported("limit", m.group(0).strip()) from None
            raise
        applied = sorted(passes(profile, "+") & set(self.passes[mode]))
        if SNIPPETS not in disabled and "SNIPPETS_MODE" not in MODES[mode]:
            if any(layer_type(op) == "Subgraph" for op in compiled.get_runtime_model().get_ops()):
                applied.append(SNIPPETS)
        return model, compiled, applied

    def execute(self, compiled, inputs):  # type: ignore[no-untyped-def]
        model, network, applied = compiled
        return run_compiled(model, network, inputs), applied

    def reproducer(self, configuration: str) -> str:
        props = properties(mode_of(configuration), [])
        return f"""import numpy as np
import openvino as ov


def run(model_path, feeds):
    compiled = ov.Core().compile_model(model_path, "CPU", {props!r})
    # Inputs by name; by position if OpenVINO renamed one (a graph input that is a graph
    # output as is takes the output's name).
    names = [next((n for n in feeds if n in i.get_names()), None) for i in compiled.inputs]
    if None in names:
        names = list(feeds)
    results = compiled.create_infer_request().infer([feeds[n] for n in names])
    return [np.array(results[output]) for output in compiled.outputs]
"""


def run_compiled(model: bytes, compiled: Any, inputs: dict[str, np.ndarray]) -> dict[str, Any]:
    """The graph's outputs by name."""
    graph = onnx.load_from_string(model).graph
    initializers = {i.name for i in graph.initializer}
    feeds = [i.name for i in graph.input if i.name not in initializers]
    ports = match_ports(compiled.inputs, feeds)
    results = compiled.create_infer_request().infer({k: inputs[ports[k]] for k in ports})
    outputs = match_ports(compiled.outputs, [o.name for o in graph.output])
    # Copied: the results are the request's memory.
    return {name: np.array(results[compiled.outputs[k]]) for k, name in outputs.items()}


def match_ports(ports: Any, names: list[str]) -> dict[int, str]:
    """Which graph value each of the compiled model's inputs or outputs is: by the tensor names
    OpenVINO keeps, else by order among those left. OpenVINO drops a graph input no output
    needs (Dropout's ratio), and may rename one (a graph input that is a graph output as is,
    after Dropout, takes the output's name)."""
    matched: dict[int, str] = {}
    for k, port in enumerate(ports):
        for name in names:
            if name in port.get_names() and name not in matched.values():
                matched[k] = name
                break
    left = [name for name in names if name not in matched.values()]
    unmatched = [k for k in range(len(ports)) if k not in matched]
    if len(unmatched) > len(left):
        raise RuntimeError(
            f"the compiled model's {len(ports)} inputs or outputs are not the graph's: "
            f"{[sorted(p.get_names()) for p in ports]} for {names}"
        )
    matched.update(zip(unmatched, left))
    return matched


def layer_type(op: Any) -> str:
    info = op.get_rt_info()
    return str(info["layerType"].astype(str)) if "layerType" in info else ""


def lone_relu() -> bytes:
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    graph = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    return onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", 17)]
    ).SerializeToString()


if __name__ == "__main__":
    serve(OpenVino())
