"""A Python engine's own floor for nncheck's rate: the run requests a campaign sent its worker,
recorded by the SDK (NNCHECK_WORKER_RECORD=DIR), run again in one process exactly as the worker
runs them, with nothing of nncheck around: no protocol, no host, no reference, no comparison.
The requests are replayed in the order they were sent (by the time each was recorded): an
engine that keeps what it compiled last answers a repeat as it did in the campaign.

Prints requests per second over all of them, and over the case requests alone: the first request
of each model's graph name (a case is judged first, and what follows its failure keeps its
name). nncheck's cases/s on the same campaign over the case rate is its share of the engine's own
speed on its cases: the part of its time the engine spent on cases. A request that crashes the
engine (a signal ends the process) is left out; one that runs past the campaign's timeout
(--timeout, 10 s as nncheck fuzz's) is stopped and counted at the timeout, as the campaign
counted it. Either way the replay goes on in a new process from the next one, each process's
first request run once untimed (the engine's start and first compile are no request's).

    NNCHECK_WORKER_RECORD=/tmp/rec nncheck fuzz --backend xla --config mode=jit --cases 300 --jobs 1
    ~/.cache/nncheck/python/xla/bin/python bench/worker_floor.py [--timeout S] \\
        build/engines/xla/xla_worker.py /tmp/rec/run-*.bin
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import select
import signal
import subprocess
import sys
import time

import onnx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
from nncheck_engine import Engine  # noqa: E402
from nncheck_engine.protocol import read_run  # noqa: E402

CHILD = "--from"  # worker_floor.py --from K WORKER RUNS...: replays RUNS[K:], one line each
READY = "ready"  # what the child prints once its engine is loaded and its first request run
# A process's start and its first compile (untimed) may take this long before it counts as hung.
START_SECONDS = 600.0


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
    print(READY, file=lines, flush=True)
    for i in range(start, len(runs)):
        began = time.perf_counter()
        failed = 0
        try:
            engine.run_request(runs[i])
        except Exception:  # a request the engine fails on still took its time
            failed = 1
        print(f"{i} {time.perf_counter() - began} {failed}", file=lines, flush=True)


def in_sent_order(paths: list[str]) -> list[str]:
    """The recorded requests in the order they were sent: by the time each file was written, then
    by its worker's pid and its number there (run-<pid>-<n>.bin)."""
    def key(path: str) -> tuple[int, int, int]:
        pid, n = pathlib.Path(path).stem.split("-")[1:3]
        return os.stat(path).st_mtime_ns, int(pid), int(n)
    return sorted(paths, key=key)


def case_requests(paths: list[str]) -> set[int]:
    """The indices of the case requests: each the first of its model's graph name."""
    seen: set[str] = set()
    cases: set[int] = set()
    for i, path in enumerate(paths):
        name = onnx.load_from_string(read_run(pathlib.Path(path).read_bytes()).model).graph.name
        if name not in seen:
            seen.add(name)
            cases.add(i)
    return cases


class Replay:
    """A child process replaying the requests from `start`, its lines read as they come, each
    within a deadline."""

    def __init__(self, worker: str, paths: list[str], start: int) -> None:
        self.child = subprocess.Popen([sys.executable, __file__, CHILD, str(start), worker, *paths],
                                      stdout=subprocess.PIPE)
        self.pending = b""

    def line(self, seconds: float) -> str | None:
        """The next line, or None when the child ends first or `seconds` pass without one."""
        assert self.child.stdout is not None
        deadline = time.monotonic() + seconds
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.child.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.child.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def stop(self) -> int:
        """Kills the child if it still runs; its exit status."""
        if self.child.poll() is None:
            self.child.kill()
        return self.child.wait()


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == CHILD:
        replay(pathlib.Path(sys.argv[3]), sys.argv[4:], int(sys.argv[2]))
        return
    args = sys.argv[1:]
    timeout = 10.0  # nncheck fuzz's --timeout by default
    if args[:1] == ["--timeout"] and len(args) > 1:
        timeout, args = float(args[1]), args[2:]
    if len(args) < 2:
        raise SystemExit(__doc__)
    worker, paths = args[0], in_sent_order(args[1:])
    cases = case_requests(paths)
    seconds, failed, crashed, hung, at = 0.0, 0, 0, 0, 0
    case_seconds, cases_done = 0.0, 0
    while at < len(paths):
        child = Replay(worker, paths, at)
        done = at  # the first request not done
        ready = child.line(START_SECONDS) == READY
        while ready and (line := child.line(timeout)) is not None:
            index, took, failing = line.split()
            seconds += float(took)
            failed += int(failing)
            if int(index) in cases:
                case_seconds += float(took)
                cases_done += 1
            done = int(index) + 1
        status = child.stop()
        if done == len(paths):
            break
        if status >= 0:
            raise SystemExit(f"the replay from request {at} failed (status {status})")
        if status == -signal.SIGKILL:
            # Killed here: the request ran past the campaign's timeout, which it took there too.
            hung += 1
            seconds += timeout
            if done in cases:
                case_seconds += timeout
                cases_done += 1
        else:
            crashed += 1  # the request after the last one done ended the process
        at = done + 1
    print(f"{cases_done} case requests (the first of each model's name) in {case_seconds:.1f} s: "
          f"{cases_done / case_seconds if case_seconds else 0:.2f} requests/s")
    print(f"{len(paths) - crashed} requests ({failed} failed, {hung} hung for the {timeout:g} s "
          f"timeout, {crashed} crashed and left out) in {seconds:.1f} s: "
          f"{(len(paths) - crashed) / seconds:.2f} requests/s")


if __name__ == "__main__":
    main()
