"""An engine as one class, served over the worker protocol (docs/worker-protocol.md).

    class Mine(Engine):
        name = "mine"
        configurations = ["O0", "O1"]
        def optimizations(self, configuration): return ["FoldConstant"] if configuration == "O1" else []
        def run(self, model, inputs, configuration, disabled):
            ...                                    # compile `model` (ONNX bytes), run it
            return outputs, ["FoldConstant"]       # outputs by name, the optimizations that fired

    if __name__ == "__main__":
        serve(Mine())

An engine that compiles defines `compile` and `execute` instead of `run`: a model compiled once at
a configuration then serves every run of it (a shrinker's candidates that change only inputs).
"""

from __future__ import annotations

import os
import pathlib
import platform
import re
import signal
import sys
import hashlib
import json
import traceback
from collections import OrderedDict
from typing import Any, BinaryIO

import numpy as np

from . import protocol


def probed_ops(table: pathlib.Path) -> dict[str, int]:
    """The ops `nncheck probe --write-table <table>` found an engine takes, weighted by the whole
    percentage of their models it ran (the facts' capabilities "ops"); {} when there is no table."""
    ops: dict[str, int] = {}
    if table.exists():
        for op, share in re.findall(r'\{"(\w+)", ([0-9.]+)\}', table.read_text()):
            ops[op] = round(float(share) * 100)
    return ops


class Unsupported(Exception):
    """The engine does not take this model (an op, a dtype, an attribute value it lacks): a limit,
    not a bug. `category` is a short stable reason: "op", "dtype", "frontend"."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category
        self.message = message


class Engine:
    """Override the facts as class attributes, `optimizations` and `run`."""

    name: str = ""
    version: str = ""
    description: str = ""
    configurations: list[str] = [""]  # the default first
    baseline: str = ""  # the configuration that optimizes least, or ""
    install: str = ""  # how to install what the engine needs
    # What it accepts (docs/worker-protocol.md: dtypes, opset, ops, ...); {} is the defaults.
    capabilities: dict[str, Any] = {}
    # Runs after which nncheck starts the worker afresh (for an engine that leaks); 0: never.
    restart_every: int = 0
    # Seconds past a case's time limit the first run of a fresh worker may take (an import, a
    # first compile's one-time loading), so that starting the engine is no case's hang.
    start_seconds: int = 0
    # What every configuration shares (a converter, an importer), or "": a failure at all of them
    # is that stage's fault, one at some only is in what sets those apart.
    shared_stage: str = ""
    # What a standalone reproducer (`nncheck repro`) needs installed: "pip install ...".
    reproducer_requirements: str = ""
    # Whether a fork of a worker that imported the engine and ran nothing is as fresh as a new
    # worker (the engine starts no thread or handle at import that a fork would break): nncheck
    # then confirms a failure in such forks (NNCHECK_WORKER_FRESH_FORKS), not in a new program
    # that imports the engine again.
    fresh_forks: bool = False

    def optimizations(self, configuration: str) -> list[str]:
        """The optimizations `configuration` may apply, each one `disabled` can switch off."""
        return []

    def unreported_optimizations(self, configuration: str) -> list[str]:
        """Optimizations `disabled` can switch off at `configuration` whose firing the engine cannot
        tell (a compiler's switch rather than a pass): searched for a failure's culprit, never
        returned as applied."""
        return []

    def fixed_optimizations(self, configuration: str) -> list[str]:
        """Optimizations `configuration` may apply and the engine names as applied when they change
        the model, but cannot switch off (a release build's passes): counted as reach, never
        searched for a failure's culprit."""
        return []

    def run(
        self, model: bytes, inputs: dict[str, np.ndarray], configuration: str, disabled: list[str]
    ) -> tuple[dict[str, np.ndarray], list[str]] | dict[str, np.ndarray]:
        """Compile and run `model` (a serialized ONNX ModelProto) on `inputs`, at `configuration`
        with the optimizations named in `disabled` switched off. Returns the outputs by name, and
        optionally the optimizations that changed the model. Raise Unsupported for a model the
        engine does not take; any other exception is the engine's error. By default, `execute`
        of what `compile` made, compiled once for every run of the model (Compiled)."""
        return self.execute(self.compiled(model, configuration, disabled), inputs)

    def compile(self, model: bytes, configuration: str, disabled: list[str]) -> Any:
        """What `execute` runs: `model` compiled at `configuration` with `disabled` switched off
        (and the optimizations that fired, for `execute` to return). Raises as `run` does."""
        raise NotImplementedError(f"{type(self).__name__} defines neither run nor compile")

    def execute(
        self, compiled: Any, inputs: dict[str, np.ndarray]
    ) -> tuple[dict[str, np.ndarray], list[str]] | dict[str, np.ndarray]:
        """What `run` returns, of a model `compile` made."""
        raise NotImplementedError(f"{type(self).__name__} defines neither run nor execute")

    # Models kept compiled, the last ones compiled or run: a shrinker tries several inputs of one
    # model in a row, and what follows a failure triages one model at each configuration.
    compiled_kept: int = 4

    def compiled(self, model: bytes, configuration: str, disabled: list[str]) -> Any:
        """`compile` of the model, or what it made before; a compile that raised raises again."""
        key = hashlib.sha256(
            json.dumps([configuration, sorted(disabled)]).encode() + b"\0" + model
        ).digest()
        cache: OrderedDict[bytes, tuple[bool, Any]] = self.__dict__.setdefault(
            "_compiled", OrderedDict()
        )
        if key in cache:
            cache.move_to_end(key)
        else:
            try:
                cache[key] = (True, self.compile(model, configuration, disabled))
            except Exception as e:  # raised again, without the frames that held the model
                cache[key] = (False, (e.with_traceback(None), traceback.format_exc()))
            while len(cache) > self.compiled_kept:
                cache.popitem(last=False)
        ok, made = cache[key]
        if not ok:
            raise CompileFailed(*made)
        return made

    def run_request(self, run: protocol.Run) -> tuple[dict[str, np.ndarray], list[str]] | dict[
        str, np.ndarray
    ]:
        """The whole run request, `options` too (an engine whose host side sends it more than the
        model: the inductor engine's PyTorch source). By default, `run` without the options."""
        return self.run(run.model, run.inputs, run.configuration, list(run.disabled))

    def reproducer(self, configuration: str) -> str | None:
        """Python source for a standalone reproducer (`nncheck repro`): with its imports, it defines
        `run(model_path, feeds)`, which runs the ONNX model at `model_path` on `feeds` (numpy
        arrays by input name) with the engine alone, at `configuration`, and returns the graph's
        outputs in order. Only the engine's own API: the script goes to its maintainers. None:
        no reproducer."""
        return None

    def facts(self) -> dict[str, Any]:
        configurations = list(self.configurations) or [""]
        facts: dict[str, Any] = {
            "protocol": protocol.PROTOCOL_VERSION,
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "configurations": configurations,
            "baseline": self.baseline,
            "optimizations": {c: sorted(set(self.optimizations(c))) for c in configurations},
            "unreported_optimizations": {
                c: sorted(set(self.unreported_optimizations(c))) for c in configurations
            },
            "fixed_optimizations": {
                c: sorted(set(self.fixed_optimizations(c))) for c in configurations
            },
            "install": self.install,
            "capabilities": self.capabilities,
            "restart_every": self.restart_every,
            "start_seconds": self.start_seconds,
        }
        if self.shared_stage:
            facts["shared_stage"] = self.shared_stage
        if self.fresh_forks:
            facts["fresh_forks"] = True
        code = {c: source for c in configurations if (source := self.reproducer(c)) is not None}
        if code:
            facts["reproducer"] = {
                "language": "python",
                "runtime": f"Python {platform.python_version()}, numpy {np.__version__}",
                "requirements": self.reproducer_requirements,
                "configurations": code,
            }
        return facts


class CompileFailed(Exception):
    """A compile that failed before, raised again: the failure as it was, and its trace then."""

    def __init__(self, failure: Exception, trace: str) -> None:
        super().__init__(str(failure))
        self.failure = failure
        self.trace = trace


def reply_to(engine: Engine, run: protocol.Run) -> list[bytes]:
    """The reply to one run: outputs, unsupported, or the engine's error with its trace."""
    try:
        try:
            result = engine.run_request(run)
        except CompileFailed as again:
            if isinstance(again.failure, Unsupported):
                raise again.failure from None
            e = again.failure
            return protocol.error_body(f"{type(e).__name__}: {e}", again.trace)
        outputs, applied = result if isinstance(result, tuple) else (result, [])
        return protocol.outputs_body({k: np.asarray(v) for k, v in outputs.items()}, list(applied))
    except Unsupported as u:
        return protocol.unsupported_body(u.category, u.message)
    except Exception as e:  # the engine's failure, reported, and the worker goes on
        return protocol.error_body(f"{type(e).__name__}: {e}", traceback.format_exc())


def serve(engine: Engine, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Answers hello with the engine's facts, then each run, until the input ends."""
    inp = stdin or sys.stdin.buffer
    if stdout is None:
        # The protocol owns the real standard output; what the engine prints goes to stderr.
        out: BinaryIO = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    else:
        out = stdout
    hello = protocol.read_frame(inp)
    if hello is None:
        return
    protocol.read_hello(hello)  # the host refuses facts of another version, naming both
    protocol.write_frame(out, protocol.facts_body(engine.facts()))
    # NNCHECK_WORKER_RECORD=DIR keeps each run request as sent (run-<pid>-<n>.bin), to replay
    # without nncheck: what a worker's author debugs with, and what an engine's floor is timed on.
    record = os.environ.get("NNCHECK_WORKER_RECORD")
    if record:
        pathlib.Path(record).mkdir(parents=True, exist_ok=True)
    # NNCHECK_WORKER_FRESH_FORKS=1 (the host asks it of an engine whose facts say fresh_forks):
    # each run is served by a fork of this process, which has run none.
    fresh_forks = os.environ.get("NNCHECK_WORKER_FRESH_FORKS") == "1"
    n = 0
    while (body := protocol.read_frame(inp)) is not None:
        if record:
            pathlib.Path(record, f"run-{os.getpid()}-{n}.bin").write_bytes(body)
            n += 1
        if fresh_forks:
            reply_in_a_fork(engine, body, out)
        else:
            protocol.write_frame(out, reply_to(engine, protocol.read_run(body)))


def reply_in_a_fork(engine: Engine, body: bytes, out: BinaryIO) -> None:
    """Replies to the run `body` from a fork of this process, which runs nothing itself: a fresh
    process without the program's start. A fork that a signal ends (the engine crashed) ends this
    process by the same signal, and one that exits without replying exits it so, as a worker that
    ran the request itself would have."""
    out.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 70  # (EX_SOFTWARE) the reply could not be written
        try:
            protocol.write_frame(out, reply_to(engine, protocol.read_run(body)))
            out.flush()
            code = 0
        finally:
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    if (code := os.waitstatus_to_exitcode(status)) != 0:
        sys.exit(code)
