"""An engine for nncheck's tests whose state breaks it: ONNX's reference evaluator, until its
process has run a Tanh; every later run of that process adds 1 to each float output. Its facts
say `fresh_forks` unless its argument is `no-forks`. Each start of its program appends
"worker" or, when it serves runs from fresh forks, "forks" to the file NNCHECK_TEST_STARTS.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from nncheck_engine import Engine, serve


class Damaged(Engine):
    name = "damaged"
    fresh_forks = "no-forks" not in sys.argv[1:]

    def __init__(self) -> None:
        self.ran_tanh = False

    def run(self, model: bytes, inputs: dict[str, np.ndarray], configuration: str,
            disabled: list[str]) -> tuple[dict[str, Any], list[str]]:
        proto = onnx.load_from_string(model)
        got = ReferenceEvaluator(proto).run(None, inputs)
        outputs = {o.name: np.asarray(v) for o, v in zip(proto.graph.output, got)}
        if self.ran_tanh:
            outputs = {k: v + 1 if v.dtype == np.float32 else v for k, v in outputs.items()}
        self.ran_tanh = self.ran_tanh or any(n.op_type == "Tanh" for n in proto.graph.node)
        return outputs, []


if __name__ == "__main__":
    if starts := os.environ.get("NNCHECK_TEST_STARTS"):
        with open(starts, "a") as f:
            f.write(("forks" if os.environ.get("NNCHECK_WORKER_FRESH_FORKS") == "1" else "worker")
                    + "\n")
    serve(Damaged())
