"""A deliberately broken worker, for nncheck's tests: it answers hello as an engine named
"broken", then misbehaves as argv[1] says on the run numbered argv[2] (runs are counted in the
file argv[3], across restarts); without them, on every run.

    dies       exits with status 3 before replying
    crashes    kills itself with SIGSEGV
    hangs      never replies
    garbage    replies with bytes that are no message
    oversized  replies with a frame of 2^62 bytes
    version    says it speaks protocol version 2 (at hello)
    good       never misbehaves
    restarts   asks to be restarted every 2 runs, and replies with x + the runs it served
    closes     closes its stdout at hello and stays alive
    sleeps     sleeps at hello, never answering
    holds      at hello, starts a child that holds its stdout, writes the child's pid to the
               file argv[2] and exits 0
    orphans    on each run, leaves a daemon (forked twice, in a session of its own) whose pid it
               writes to the file argv[2], then replies
    floods     writes argv[2] MiB to its stderr at hello, and again on each run before replying
    grabs      tries to allocate 2 GiB on the run, and replies with the MemoryError it gets
    many       names 200 configurations at hello
    badname    names itself '../escape' at hello
    counts     has the configurations plain and tenfold, and replies with x (times 10 at
               tenfold) + the runs it served
Otherwise it replies with its input "x" as its output "y".
"""

from __future__ import annotations

import os
import pathlib
import signal
import struct
import subprocess
import sys
import time

from nncheck_engine import protocol

MODE = sys.argv[1]
# floods takes the MiB it writes, holds and orphans a file for a pid, instead of a run's number.
ARGUMENT = sys.argv[2] if len(sys.argv) > 2 else ""
TAKES_ARGUMENT = MODE in ("floods", "holds", "orphans")
ON_RUN = int(ARGUMENT) if ARGUMENT and not TAKES_ARGUMENT else 1
COUNTER = pathlib.Path(sys.argv[3]) if len(sys.argv) > 3 else None
PID_FILE = pathlib.Path(ARGUMENT)


def flood() -> None:
    chunk = b"x" * (1 << 20)
    for _ in range(int(ARGUMENT)):
        os.write(2, chunk)


def leave_daemon() -> None:
    """A process of its own session, whose parent is gone: what a careless engine leaves."""
    if os.fork() == 0:
        os.setsid()
        daemon = os.fork()
        if daemon == 0:
            time.sleep(3600)
        # Written before this exits, so that it is there when the worker replies.
        PID_FILE.write_text(str(daemon))
        os._exit(0)
    os.wait()


def misbehaves_now() -> bool:
    if MODE in ("good", "restarts", "counts"):
        return False
    if MODE in ("orphans", "floods", "grabs"):  # on every run
        return True
    if COUNTER is None:
        return True
    n = int(COUNTER.read_text()) + 1 if COUNTER.exists() else 1
    COUNTER.write_text(str(n))
    return n == ON_RUN


def main() -> None:
    stdin, out = sys.stdin.buffer, sys.stdout.buffer
    if protocol.read_frame(stdin) is None:
        return
    if MODE == "closes":
        os.close(1)
    if MODE in ("closes", "sleeps"):
        time.sleep(3600)
    if MODE == "holds":
        child = subprocess.Popen(["sleep", "3600"])  # its stdout is the worker's
        PID_FILE.write_text(str(child.pid))
        os._exit(0)
    if MODE == "floods":
        flood()
    facts = {
        "protocol": 2 if MODE == "version" else 1,
        "name": "../escape" if MODE == "badname" else "broken",
        "configurations": [f"c{i}" for i in range(200)] if MODE == "many"
        else ["plain", "tenfold"] if MODE == "counts" else ["plain"],
        "fixed_optimizations": {"plain": ["Simplify"]},  # named as applied, not switched off
    }
    if MODE == "restarts":
        facts["restart_every"] = 2
    served = 0
    protocol.write_frame(out, protocol.facts_body(facts))
    while (body := protocol.read_frame(stdin)) is not None:
        run = protocol.read_run(body)
        if misbehaves_now():
            if MODE == "dies":
                os._exit(3)
            if MODE == "crashes":
                os.kill(os.getpid(), signal.SIGSEGV)
            if MODE == "hangs":
                time.sleep(3600)
            if MODE == "garbage":
                protocol.write_frame(out, [b"Zthis is no message of the protocol"])
                continue
            if MODE == "oversized":
                out.write(struct.pack("<Q", 1 << 62) + b"O")
                out.flush()
                continue
            if MODE == "orphans":
                leave_daemon()
            if MODE == "floods":
                flood()
            if MODE == "grabs":
                try:
                    grabbed = bytearray(2 << 30)
                    grabbed[-1] = 1
                except MemoryError as e:
                    protocol.write_frame(out, protocol.error_body(f"MemoryError: {e}", ""))
                    continue
        served += 1
        y = run.inputs["x"]
        if MODE == "counts" and run.configuration == "tenfold":
            y = y * 10
        if MODE in ("restarts", "counts"):
            y = y + served
        protocol.write_frame(out, protocol.outputs_body({"y": y}, []))


if __name__ == "__main__":
    main()
