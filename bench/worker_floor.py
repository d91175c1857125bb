"""A Python engine's own floor for nncheck's rate: the run requests a campaign sent its worker,
recorded by the SDK (NNCHECK_WORKER_RECORD=DIR), run again in one process exactly as the worker
runs them, with nothing of nncheck around: no protocol, no host, no reference, no comparison.
Prints requests per second; nncheck's rate on the same campaign over this is its share of the
floor. A request that crashes the engine (a signal ends the process) is counted as failed and
the replay goes on in a new process from the next one, each process's first request run once
untimed (the engine's start and first compile are no request's).

    NNCHECK_WORKER_RECORD=/tmp/rec nncheck fuzz --backend xla --config mode=jit --cases 300 --jobs 1
    ~/.cache/nncheck/python/xla/bin/python bench/worker_floor.py \\
        build/engines/xla/xla_worker.py /tmp/rec/run-*.bin
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
from nncheck_engine import Engine  # noqa: E402
from nncheck_engine.protocol import read_run  # noqa: E402

CHILD = "--from"  # worker_floor.py --from K WORKER RUNS...: replays RUNS[K:], one line each


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


def replay(worker: pathlib.Path, paths: list[str], start: int) -> None:
    """Runs the requests from `start` on, printing after each "index seconds failed" (1 or 0)."""
    # The lines on the real standard output; what the engine prints (TVM's warnings) to stderr.
    lines = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    engine = load_engine(worker)
    runs = [read_run(pathlib.Path(p).read_bytes()) for p in paths]
    try:  # the first compile's one-time loading is no request's
        engine.run_request(runs[start])
    except Exception:  # nor is a first request the engine fails on
        pass
    for i in range(start, len(runs)):
        began = time.perf_counter()
        failed = 0
        try:
            engine.run_request(runs[i])
        except Exception:  # a request the engine fails on still took its time
            failed = 1
        print(f"{i} {time.perf_counter() - began} {failed}", file=lines, flush=True)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == CHILD:
        replay(pathlib.Path(sys.argv[3]), sys.argv[4:], int(sys.argv[2]))
        return
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    worker, paths = sys.argv[1], sys.argv[2:]
    seconds, failed, crashed, at = 0.0, 0, 0, 0
    while at < len(paths):
        child = subprocess.run([sys.executable, __file__, CHILD, str(at), worker, *paths],
                               stdout=subprocess.PIPE, text=True, check=False)
        done = at
        for line in child.stdout.splitlines():
            index, took, failing = line.split()
            seconds += float(took)
            failed += int(failing)
            done = int(index) + 1
        if child.returncode == 0:
            break
        if child.returncode > 0:
            raise SystemExit(f"the replay from request {at} failed (status {child.returncode})")
        crashed += 1  # the request after the last one done ended the process
        at = done + 1
    print(f"{len(paths) - crashed} requests ({failed} failed, {crashed} crashed and left out) "
          f"in {seconds:.1f} s: {(len(paths) - crashed) / seconds:.2f} requests/s")


if __name__ == "__main__":
    main()
