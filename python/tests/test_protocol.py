"""The Python SDK's reader and writer against the protocol's test vectors
(docs/worker-protocol/*.bin): what a worker writes is exactly the vector's bytes, and what it
reads gives the vector's values (the same values as tests/backends/worker_protocol_test.cpp)."""

from __future__ import annotations

import io
import os
import pathlib
import signal
import struct
import subprocess
import sys
import unittest

import numpy as np
import onnx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from nncheck_engine import Engine, Unsupported, protocol, reply_to, serve  # noqa: E402

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "worker-protocol"


def vector(name: str) -> bytes:
    """A vector's body: its frame less the length, which must say its size."""
    frame = (VECTORS / f"{name}.bin").read_bytes()
    (n,) = struct.unpack("<Q", frame[:8])
    assert n == len(frame) - 8, name
    return frame[8:]


def frame_of(parts: list[bytes]) -> bytes:
    out = io.BytesIO()
    protocol.write_frame(out, parts)
    return out.getvalue()[8:]


FACTS = {
    "protocol": 1,
    "name": "vectors",
    "version": "1.0",
    "description": "the worker protocol's test vectors",
    "configurations": ["O0", "O1"],
    "baseline": "O0",
    "optimizations": {"O0": [], "O1": ["FoldConstant", "FuseOps"]},
    "install": "pip install vectors",
    "capabilities": {
        "dtypes": [1, 7],
        "opset": 17,
        "ops": {"Add": 100, "Cast": 50},
        "shape_operands_must_be_initializers": True,
        "weights_must_be_initializers": False,
    },
    "unreported_optimizations": {"O1": ["Vectorize"]},
    "fixed_optimizations": {"O1": ["SimplifyShapes"]},
    "restart_every": 500,
    "start_seconds": 30,
    "shared_stage": "the import",
    "fresh_forks": True,
    "reproducer": {
        "language": "python",
        "runtime": "Python 3.11",
        "requirements": "pip install vectors",
        "configurations": {"O0": "def run(model_path, feeds):\n    return []\n"},
    },
}


class Vectors(unittest.TestCase):
    def test_writes_every_worker_message_byte_for_byte(self) -> None:
        self.assertEqual(frame_of(protocol.facts_body(FACTS)), vector("facts"))
        outputs = {
            "y": np.array([[7, 7.5, 8], [8.5, 9, 9.5]], dtype=np.float32),
            "e": np.zeros([0], dtype=np.int64),
            "h": np.array([1, -2], dtype=np.float16),
            "t": np.array(["ok"], dtype=object),
        }
        body = protocol.outputs_body(outputs, ["FoldConstant"], {"note": b"bytes\0\x01"})
        self.assertEqual(frame_of(body), vector("outputs"))
        self.assertEqual(
            frame_of(protocol.unsupported_body("op", "no Loop in the frontend")), vector("unsupported")
        )
        trace = 'Traceback (most recent call last):\n  File "engine.py", line 1'
        self.assertEqual(frame_of(protocol.error_body("compile failed: ünïcode", trace)), vector("error"))

    def test_reads_every_host_message_to_its_values(self) -> None:
        self.assertEqual(protocol.read_hello(vector("hello")), 1)
        run = protocol.read_run(vector("run"))
        self.assertEqual(run.configuration, "O1")
        self.assertEqual(run.disabled, ["FuseOps"])
        self.assertEqual(run.options, {"log": True})
        model = onnx.load_from_string(run.model)
        self.assertEqual([n.op_type for n in model.graph.node], ["Cast", "Add"])
        self.assertEqual(list(run.inputs), ["x", "n", "b", "s"])
        np.testing.assert_array_equal(run.inputs["x"], np.array([[0, 0.5, 1], [1.5, 2, 2.5]], np.float32))
        self.assertEqual(run.inputs["x"].dtype, np.float32)
        self.assertEqual(run.inputs["n"].shape, ())
        self.assertEqual(int(run.inputs["n"]), 7)
        np.testing.assert_array_equal(run.inputs["b"], np.array([True, False]))
        self.assertEqual(list(run.inputs["s"]), ["a", "ünï"])
        # and the host's writer, in Python, gives the vector back
        self.assertEqual(frame_of(protocol.run_body(run)), vector("run"))
        self.assertEqual(frame_of(protocol.hello_body()), vector("hello"))

    def test_a_message_cut_short_or_overlong_is_a_protocol_error(self) -> None:
        body = vector("run")
        with self.assertRaises(protocol.ProtocolError):
            protocol.read_run(body[:-3])
        with self.assertRaises(protocol.ProtocolError):
            protocol.read_run(body + b"x")
        with self.assertRaises(protocol.ProtocolError):
            protocol.read_run(b"Q" + body[1:])


class Doubles(Engine):
    name = "doubles"
    configurations = ["plain", "fast"]
    baseline = "plain"

    def optimizations(self, configuration: str) -> list[str]:
        return ["Twice"] if configuration == "fast" else []

    def run(self, model, inputs, configuration, disabled):  # type: ignore[no-untyped-def]
        if "s" in inputs:
            raise Unsupported("dtype", "no strings")
        if "n" in inputs and int(inputs["n"]) < 0:
            raise ValueError("negative")
        applied = ["Twice"] if configuration == "fast" and "Twice" not in disabled else []
        return {"y": inputs["x"] * 2}, applied


class Serving(unittest.TestCase):
    def session(self, runs: list[protocol.Run]) -> list[bytes]:
        stdin = io.BytesIO()
        protocol.write_frame(stdin, protocol.hello_body())
        for r in runs:
            protocol.write_frame(stdin, protocol.run_body(r))
        stdin.seek(0)
        stdout = io.BytesIO()
        serve(Doubles(), stdin, stdout)
        stdout.seek(0)
        replies = []
        while (body := protocol.read_frame(stdout)) is not None:
            replies.append(body)
        return replies

    def test_an_engine_answers_hello_then_each_run_by_kind(self) -> None:
        x = np.ones([2], np.float32)
        replies = self.session(
            [
                protocol.Run("fast", [], {}, b"", {"x": x}),
                protocol.Run("fast", ["Twice"], {}, b"", {"x": x}),
                protocol.Run("plain", [], {}, b"", {"x": x, "s": np.array(["a"], dtype=object)}),
                protocol.Run("plain", [], {}, b"", {"x": x, "n": np.array(-1, np.int64)}),
            ]
        )
        self.assertEqual([r[:1] for r in replies], [b"F", b"O", b"O", b"U", b"E"])
        facts = protocol.Reader(replies[0][1:]).json()
        self.assertEqual(facts["optimizations"], {"fast": ["Twice"], "plain": []})
        self.assertEqual(facts["baseline"], "plain")
        r = protocol.Reader(replies[1][1:])
        self.assertEqual(r.json(), {"applied": ["Twice"]})
        self.assertEqual(r.u64(), 1)
        name, y = r.tensor()
        self.assertEqual(name, "y")
        np.testing.assert_array_equal(y, np.full([2], 2, np.float32))
        self.assertEqual(protocol.Reader(replies[2][1:]).json(), {"applied": []})
        self.assertEqual(protocol.Reader(replies[3][1:]).json(), {"category": "dtype", "message": "no strings"})
        error = protocol.Reader(replies[4][1:]).json()
        self.assertEqual(error["message"], "ValueError: negative")
        self.assertIn("Traceback", error["trace"])

    def test_facts_carry_a_reproducer_only_for_the_configurations_that_have_one(self) -> None:
        class Scripted(Doubles):
            reproducer_requirements = "pip install doubles"

            def reproducer(self, configuration: str) -> str | None:
                return "def run(model_path, feeds):\n    return []\n" if configuration == "fast" else None

        self.assertNotIn("reproducer", Doubles().facts())
        r = Scripted().facts()["reproducer"]
        self.assertEqual(r["language"], "python")
        self.assertEqual(r["requirements"], "pip install doubles")
        self.assertEqual(list(r["configurations"]), ["fast"])
        self.assertIn("numpy", r["runtime"])

    def test_what_an_engine_prints_goes_to_stderr_not_into_the_protocol(self) -> None:
        script = (
            "import sys; sys.path.insert(0, sys.argv[1])\n"
            "from nncheck_engine import Engine, serve\n"
            "class E(Engine):\n"
            "    name = 'noisy'\n"
            "    def facts(self):\n"
            "        print('hello from the engine')\n"
            "        return super().facts()\n"
            "serve(E())\n"
        )
        hello = io.BytesIO()
        protocol.write_frame(hello, protocol.hello_body())
        done = subprocess.run(
            [sys.executable, "-c", script, str(pathlib.Path(__file__).resolve().parents[1])],
            input=hello.getvalue(),
            capture_output=True,
            check=True,
        )
        body = protocol.read_frame(io.BytesIO(done.stdout))
        assert body is not None
        self.assertEqual(body[:1], b"F")
        self.assertIn(b"hello from the engine", done.stderr)


# An engine that counts the runs its process served, each run's y; `crash` in a run's inputs
# ends its process by SIGSEGV. Served by a script, so that a crash ends that process only.
COUNTING = (
    "import os, signal, sys; sys.path.insert(0, sys.argv[1])\n"
    "import numpy as np\n"
    "from nncheck_engine import Engine, serve\n"
    "class Counting(Engine):\n"
    "    name = 'counting'\n"
    "    fresh_forks = True\n"
    "    runs = 0\n"
    "    def run(self, model, inputs, configuration, disabled):\n"
    "        if 'crash' in inputs:\n"
    "            os.kill(os.getpid(), signal.SIGSEGV)\n"
    "        self.runs += 1\n"
    "        return {'y': np.array(self.runs, np.int64)}, []\n"
    "serve(Counting())\n"
)


class FreshForks(unittest.TestCase):
    def serve(self, runs: list[dict[str, np.ndarray]], forks: bool) -> subprocess.CompletedProcess[bytes]:
        stdin = io.BytesIO()
        protocol.write_frame(stdin, protocol.hello_body())
        for inputs in runs:
            protocol.write_frame(stdin, protocol.run_body(protocol.Run("", [], {}, b"", inputs)))
        env = dict(os.environ, NNCHECK_WORKER_FRESH_FORKS="1" if forks else "0")
        sdk = str(pathlib.Path(__file__).resolve().parents[1])
        return subprocess.run([sys.executable, "-c", COUNTING, sdk], input=stdin.getvalue(),
                              capture_output=True, env=env)

    def counts(self, done: subprocess.CompletedProcess[bytes]) -> list[int]:
        out = io.BytesIO(done.stdout)
        facts = protocol.read_frame(out)
        assert facts is not None
        self.assertTrue(protocol.Reader(facts[1:]).json()["fresh_forks"])
        counts = []
        while (body := protocol.read_frame(out)) is not None:
            r = protocol.Reader(body[1:])
            r.json()
            r.u64()
            counts.append(int(r.tensor()[1]))
        return counts

    def test_each_run_is_served_by_a_fork_that_ran_nothing_before(self) -> None:
        x = {"x": np.ones([1], np.float32)}
        self.assertEqual(self.counts(self.serve([x, x, x], forks=False)), [1, 2, 3])
        self.assertEqual(self.counts(self.serve([x, x, x], forks=True)), [1, 1, 1])

    def test_a_fork_that_crashes_ends_the_worker_by_its_signal(self) -> None:
        x = {"x": np.ones([1], np.float32)}
        done = self.serve([x, {"crash": np.ones([1], np.float32)}, x], forks=True)
        self.assertEqual(done.returncode, -signal.SIGSEGV)
        self.assertEqual(self.counts(done), [1], "the run before it replied; none after")


class Compiling(Engine):
    """Compiles a model to its factor (the model's bytes as a number), counting its compiles."""

    name = "compiling"
    configurations = ["x1", "x10"]
    compiled_kept = 2

    def __init__(self) -> None:
        self.compiles: list[tuple[bytes, str, list[str]]] = []

    def compile(self, model, configuration, disabled):  # type: ignore[no-untyped-def]
        self.compiles.append((model, configuration, disabled))
        if model == b"bad":
            raise ValueError("no such model")
        if model == b"odd":
            raise Unsupported("op", "an odd model")
        return float(model) * (10 if configuration == "x10" and "Ten" not in disabled else 1)

    def execute(self, compiled, inputs):  # type: ignore[no-untyped-def]
        return {"y": inputs["x"] * compiled}, ["Scaled"]


class CompiledOnce(unittest.TestCase):
    """A model compiled at a configuration serves every run of it; its failure is failed again."""

    def reply(self, engine: Engine, model: bytes, configuration: str = "x1",
              disabled: list[str] | None = None, x: float = 1) -> bytes:
        run = protocol.Run(configuration, disabled or [], {}, model, {"x": np.full([1], x, np.float32)})
        return b"".join(reply_to(engine, protocol.read_run(b"".join(protocol.run_body(run)))))

    def output(self, reply: bytes) -> float:
        r = protocol.Reader(reply[1:])
        self.assertEqual(r.json(), {"applied": ["Scaled"]})
        self.assertEqual(r.u64(), 1)
        return float(r.tensor()[1][0])

    def test_a_model_is_compiled_once_per_configuration_and_disabled_set(self) -> None:
        e = Compiling()
        self.assertEqual(self.output(self.reply(e, b"2", x=1)), 2)
        self.assertEqual(self.output(self.reply(e, b"2", x=3)), 6)
        self.assertEqual(len(e.compiles), 1, "other inputs, the same compiled model")
        self.assertEqual(self.output(self.reply(e, b"2", "x10")), 20)
        self.assertEqual(self.output(self.reply(e, b"2", "x10", ["Ten"])), 2)
        self.assertEqual(len(e.compiles), 3, "each configuration and disabled set compiles")
        self.reply(e, b"3")  # two kept: the oldest, b"2" at x1 and at x10, are compiled again
        self.reply(e, b"2")
        self.assertEqual(len(e.compiles), 5)

    def test_a_compile_that_failed_fails_again_as_it_did(self) -> None:
        e = Compiling()
        first, again = self.reply(e, b"bad"), self.reply(e, b"bad", x=2)
        self.assertEqual(first[:1], b"E")
        self.assertEqual(again, first, "the same message and trace")
        self.assertIn("no such model", protocol.Reader(first[1:]).json()["trace"])
        odd = self.reply(e, b"odd")
        self.assertEqual(self.reply(e, b"odd"), odd)
        self.assertEqual(protocol.Reader(odd[1:]).json(), {"category": "op", "message": "an odd model"})
        self.assertEqual(len(e.compiles), 2)


if __name__ == "__main__":
    unittest.main()
