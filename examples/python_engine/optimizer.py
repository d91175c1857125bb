"""A small ONNX graph optimizer in Python: the compiler that examples/python_engine/engine.py puts
under nncheck. It knows nothing of nncheck: three passes rewrite a model, then onnx's reference
evaluator runs it. NNCHECK_EXAMPLE_BUG=1 plants a bug in CancelNegPair: it then also cancels
Neg(Abs(x)), as if Abs were Neg.

    outputs, applied = optimizer.run(onnx.load("model.onnx"), {"x": x}, disabled=[])
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

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


def run(
    model: onnx.ModelProto, inputs: dict[str, np.ndarray], disabled: list[str] | None = None
) -> tuple[list[np.ndarray], list[str]]:
    """Optimizes `model` in place with every pass but the `disabled` ones, each to a fixed point,
    and runs it: its outputs in order, and the passes that changed it."""
    applied = []
    for name, rewrite in PASSES.items():
        if name in (disabled or []):
            continue
        changed = False
        while rewrite(model.graph):
            changed = True
        if changed:
            applied.append(name)
    outputs = ReferenceEvaluator(model).run(None, inputs)
    return [np.asarray(v) for v in outputs], applied
