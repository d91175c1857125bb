"""TVM's own floor for nncheck's rate: compile and run saved cases (ONNX backend-test folders, as
`nncheck gen` writes them) in one process, exactly as the tvm worker does at a pipeline, with
nothing of nncheck around it. Prints cases per second.

    ~/.cache/nncheck/python/tvm/bin/python bench/tvm/floor.py pipeline=zero /tmp/cases/*
"""

from __future__ import annotations

import pathlib
import sys
import time

import onnx
from onnx import numpy_helper

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "src" / "backends" / "tvm"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from tvm_worker import Tvm  # noqa: E402


def main() -> None:
    configuration, folders = sys.argv[1], [pathlib.Path(p) for p in sys.argv[2:]]
    engine = Tvm()
    cases = []
    for folder in folders:
        model = (folder / "model.onnx").read_bytes()
        graph = onnx.load_from_string(model).graph
        feeds = [i.name for i in graph.input if i.name not in {t.name for t in graph.initializer}]
        arrays = [
            numpy_helper.to_array(onnx.load_tensor(str(p)))
            for p in sorted((folder / "test_data_set_0").glob("input_*.pb"), key=lambda p: int(p.stem[6:]))
        ]
        cases.append((model, dict(zip(feeds, arrays))))
    start, failed = time.perf_counter(), 0
    for model, inputs in cases:
        try:
            engine.run(model, inputs, configuration, [])
        except Exception:  # a case TVM fails on still took its time
            failed += 1
    seconds = time.perf_counter() - start
    print(f"{len(cases)} cases ({failed} failed) in {seconds:.1f} s: {len(cases) / seconds:.2f} cases/s")


if __name__ == "__main__":
    main()
