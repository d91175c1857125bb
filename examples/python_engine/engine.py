"""A small ONNX graph optimizer in Python, put under nncheck with its Python SDK.

Three passes rewrite the model (configuration O1; O0 runs none), then onnx's reference evaluator
runs it. NNCHECK_EXAMPLE_BUG=1 plants a bug in CancelNegPair: it then also cancels Neg(Abs(x)),
as if Abs were Neg. nncheck finds it and shrinks it to the two nodes:

    nncheck fuzz --engine-worker 'python3 examples/python_engine/engine.py'
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from nncheck_engine import Engine, Unsupported, serve

BUGGY = os.environ.get("NNCHECK_EXAMPLE_BUG") == "1"


def rename_uses(graph: onnx.GraphProto, old: str, new: str) -> None:
    """Every use of the value `old` reads `new` instead (a graph output keeps its name)."""
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new
    for out in graph.output:
        if out.name == old:
            keep = onnx.helper.make_node("Identity", [new], [old])
            graph.node.append(keep)


def producers(graph: onnx.GraphProto) -> dict[str, onnx.NodeProto]:
    return {out: node for node in graph.node for out in node.output}


def remove_identity(graph: onnx.GraphProto) -> bool:
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        if node.op_type == "Identity" and node.output[0] not in outputs:
            graph.node.remove(node)
            rename_uses(graph, node.output[0], node.input[0])
            return True
    return False


def fuse_relu_pair(graph: onnx.GraphProto) -> bool:
    """Relu(Relu(x)) is Relu(x)."""
    made = producers(graph)
    for node in graph.node:
        first = made.get(node.input[0]) if node.op_type == "Relu" else None
        if first is not None and first.op_type == "Relu":
            node.input[0] = first.input[0]
            return True
    return False


def cancel_neg_pair(graph: onnx.GraphProto) -> bool:
    """Neg(Neg(x)) is x."""
    made = producers(graph)
    cancels = {"Neg", "Abs"} if BUGGY else {"Neg"}
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        inner = made.get(node.input[0]) if node.op_type == "Neg" else None
        if inner is not None and inner.op_type in cancels and node.output[0] not in outputs:
            graph.node.remove(node)
            rename_uses(graph, node.output[0], inner.input[0])
            return True
    return False


PASSES: dict[str, Callable[[onnx.GraphProto], bool]] = {
    "CancelNegPair": cancel_neg_pair,
    "FuseReluPair": fuse_relu_pair,
    "RemoveIdentity": remove_identity,
}


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

    def optimizations(self, configuration: str) -> list[str]:
        return sorted(PASSES) if configuration == "O1" else []

    def run(self, model, inputs, configuration, disabled):  # type: ignore[no-untyped-def]
        proto = onnx.load_from_string(model)
        for node in proto.graph.node:
            if node.op_type not in self.capabilities["ops"]:
                raise Unsupported("op", f"no {node.op_type}")
        applied = []
        for name, rewrite in PASSES.items():
            if configuration != "O1" or name in disabled:
                continue
            changed = False
            while rewrite(proto.graph):  # to a fixed point
                changed = True
            if changed:
                applied.append(name)
        outputs = ReferenceEvaluator(proto).run(None, inputs)
        names = [o.name for o in proto.graph.output]
        return {n: np.asarray(v) for n, v in zip(names, outputs)}, applied


if __name__ == "__main__":
    serve(ExampleOptimizer())
