"""A Python engine's own floor for nncheck's rate: the run requests a campaign sent its worker,
recorded by the SDK (NNCHECK_WORKER_RECORD=DIR), run again in one process exactly as the worker
runs them, with nothing of nncheck around: no protocol, no host, no reference, no comparison.
Prints requests per second; nncheck's rate on the same campaign over this is its share of the
floor.

    NNCHECK_WORKER_RECORD=/tmp/rec nncheck fuzz --backend xla --config mode=jit --cases 300 --jobs 1
    ~/.cache/nncheck/python/xla/bin/python bench/worker_floor.py \\
        build/engines/xla/xla_worker.py /tmp/rec/run-*.bin
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
from nncheck_engine import Engine  # noqa: E402
from nncheck_engine.protocol import read_run  # noqa: E402


def load_engine(worker: pathlib.Path) -> Engine:
    """The worker module's engine: its one Engine subclass, made as its __main__ would."""
    spec = importlib.util.spec_from_file_location(worker.stem, worker)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{worker}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    engines = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, Engine) and v is not Engine]
    if len(engines) != 1:
        raise SystemExit(f"{worker}: {len(engines)} Engine classes, not one")
    return engines[0]()


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    engine = load_engine(pathlib.Path(sys.argv[1]))
    runs = [read_run(pathlib.Path(p).read_bytes()) for p in sys.argv[2:]]
    try:  # the first compile's one-time loading is no request's
        engine.run_request(runs[0])
    except Exception:  # nor is a first request the engine fails on
        pass
    start, failed = time.perf_counter(), 0
    for run in runs:
        try:
            engine.run_request(run)
        except Exception:  # a request the engine fails on still took its time
            failed += 1
    seconds = time.perf_counter() - start
    print(f"{len(runs)} requests ({failed} failed) in {seconds:.1f} s: "
          f"{len(runs) / seconds:.2f} requests/s")


if __name__ == "__main__":
    main()
