"""The example optimizer (optimizer.py) put under nncheck with its Python SDK: configuration O1 runs
its three passes, O0 none. With NNCHECK_EXAMPLE_BUG=1 its CancelNegPair is buggy; nncheck finds
it and shrinks it to the two nodes, and `nncheck repro` writes a script using optimizer.py alone:

    nncheck fuzz --engine-worker 'python3 examples/python_engine/engine.py'
"""

from __future__ import annotations

import pathlib

import numpy as np
import onnx

import optimizer
from nncheck_engine import Engine, Unsupported, serve

HERE = pathlib.Path(__file__).resolve().parent


class ExampleOptimizer(Engine):
    name = "pyopt"
    version = "1.0"
    description = "the Python SDK's example optimizer (examples/python_engine), O0 and O1"
    configurations = ["O1", "O0"]
    baseline = "O0"
    capabilities = {
        "dtypes": [1],
        "ops": {op: 100 for op in ["Abs", "Add", "Identity", "Mul", "Neg", "Relu", "Sigmoid"]},
    }
    reproducer_requirements = f"pip install onnx numpy; optimizer.py from {HERE}"

    def optimizations(self, configuration: str) -> list[str]:
        return sorted(optimizer.PASSES) if configuration == "O1" else []

    def run(self, model, inputs, configuration, disabled):  # type: ignore[no-untyped-def]
        proto = onnx.load_from_string(model)
        for node in proto.graph.node:
            if node.op_type not in self.capabilities["ops"]:
                raise Unsupported("op", f"no {node.op_type}")
        off = list(optimizer.PASSES) if configuration != "O1" else list(disabled)
        outputs, applied = optimizer.run(proto, inputs, off)
        names = [o.name for o in proto.graph.output]
        return {n: np.asarray(v) for n, v in zip(names, outputs)}, applied

    def reproducer(self, configuration: str) -> str:
        off = "list(optimizer.PASSES)" if configuration != "O1" else "[]"
        return f"""import sys

import onnx

sys.path.insert(0, {str(HERE)!r})  # where optimizer.py is
import optimizer  # noqa: E402


def run(model_path, feeds):
    outputs, _ = optimizer.run(onnx.load(model_path), feeds, disabled={off})  # {configuration}
    return outputs
"""


if __name__ == "__main__":
    serve(ExampleOptimizer())
