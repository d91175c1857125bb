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
Otherwise it replies with its input "x" as its output "y".
"""

from __future__ import annotations

import os
import pathlib
import signal
import struct
import sys
import time

from nncheck_engine import protocol

MODE = sys.argv[1]
ON_RUN = int(sys.argv[2]) if len(sys.argv) > 2 else 1
COUNTER = pathlib.Path(sys.argv[3]) if len(sys.argv) > 3 else None


def misbehaves_now() -> bool:
    if MODE in ("good", "restarts"):
        return False
    if COUNTER is None:
        return True
    n = int(COUNTER.read_text()) + 1 if COUNTER.exists() else 1
    COUNTER.write_text(str(n))
    return n == ON_RUN


def main() -> None:
    stdin, out = sys.stdin.buffer, sys.stdout.buffer
    if protocol.read_frame(stdin) is None:
        return
    facts = {
        "protocol": 2 if MODE == "version" else 1,
        "name": "broken",
        "configurations": ["plain"],
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
        served += 1
        y = run.inputs["x"] + served if MODE == "restarts" else run.inputs["x"]
        protocol.write_frame(out, protocol.outputs_body({"y": y}, []))


if __name__ == "__main__":
    main()
