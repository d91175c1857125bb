"""The worker protocol (docs/worker-protocol.md), version 1, in Python: its one reader and
writer of every message, worker side (and the host's hello and run, for tests and hosts).

    frame = read_frame(sys.stdin.buffer)          # None at the end of input
    kind, body = frame[0:1], frame[1:]
    write_frame(out, facts_body({"name": "mine", ...}))
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

PROTOCOL_VERSION = 1

HELLO, RUN = b"H", b"R"
FACTS, OUTPUTS, UNSUPPORTED, ERROR = b"F", b"O", b"U", b"E"

# ONNX TensorProto.DataType codes and the numpy types that hold them (string: an object array of
# str; bfloat16: ml_dtypes' type, when that package is there).
_NUMPY_OF_CODE: dict[int, Any] = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    9: np.bool_,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
}
STRING = 8
BFLOAT16 = 16
try:  # TVM and JAX bring ml_dtypes
    import ml_dtypes

    _NUMPY_OF_CODE[BFLOAT16] = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - then bfloat16 tensors are refused
    pass


class ProtocolError(Exception):
    """What was read is not a message of this protocol."""


def canonical_json(value: dict[str, Any]) -> bytes:
    """JSON as the protocol writes it: compact, keys sorted, UTF-8 (code point order is UTF-8
    byte order, so Python's sort is the protocol's)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()


# --- frames -----------------------------------------------------------------------------------


def _read_exactly(stream: BinaryIO, n: int) -> bytes | None:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not k:
            return None
        got += k
    return bytes(buf)


def read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's body; None when the input ends before a frame starts."""
    head = _read_exactly(stream, 8)
    if head is None:
        return None
    (n,) = struct.unpack("<Q", head)
    body = _read_exactly(stream, n)
    if body is None:
        raise ProtocolError(f"the input ended inside a frame of {n} bytes")
    return body


def write_frame(stream: BinaryIO, parts: list[bytes]) -> None:
    """One frame of the body made of `parts`, flushed."""
    stream.write(struct.pack("<Q", sum(len(p) for p in parts)))
    for p in parts:
        stream.write(p)
    stream.flush()


# --- values ------------------------------------------------------------------------------------


class Reader:
    """Reads a body's values in order; ProtocolError past its end."""

    def __init__(self, body: bytes) -> None:
        self.body = memoryview(body)
        self.at = 0

    def take(self, n: int) -> memoryview:
        if n > len(self.body) - self.at:
            raise ProtocolError(f"a message ends {n - (len(self.body) - self.at)} bytes early")
        out = self.body[self.at : self.at + n]
        self.at += n
        return out

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.take(8))[0])

    def bytes(self) -> bytes:
        return bytes(self.take(self.u64()))

    def text(self) -> str:
        return self.bytes().decode()

    def json(self) -> dict[str, Any]:
        value = json.loads(self.bytes())
        if not isinstance(value, dict):
            raise ProtocolError("a message's json part is not a JSON object")
        return value

    def tensor(self) -> tuple[str, np.ndarray]:
        name = self.text()
        code, rank = struct.unpack("<iI", self.take(8))
        dims = struct.unpack(f"<{rank}q", self.take(8 * rank)) if rank else ()
        if code == STRING:
            count = int(np.prod(dims, dtype=np.int64))
            values = [self.text() for _ in range(count)]
            return name, np.array(values, dtype=object).reshape(dims)
        if code not in _NUMPY_OF_CODE:
            raise ProtocolError(f"tensor '{name}' is of ONNX data type {code}, not one the protocol has")
        data = self.bytes()
        array = np.frombuffer(data, dtype=np.dtype(_NUMPY_OF_CODE[code]).newbyteorder("<"))
        return name, array.reshape(dims).copy()

    def done(self) -> None:
        if self.at != len(self.body):
            raise ProtocolError("a message holds bytes past its end")


def _u64(n: int) -> bytes:
    return struct.pack("<Q", n)


def _bytes(b: bytes) -> bytes:
    return _u64(len(b)) + b


def _code_of(array: np.ndarray, name: str) -> int:
    if array.dtype == object or array.dtype.kind in "US":
        return STRING
    for code, t in _NUMPY_OF_CODE.items():
        if array.dtype == np.dtype(t):
            return code
    raise ProtocolError(f"output '{name}' is of numpy type {array.dtype}, which ONNX has not")


def tensor_parts(name: str, array: np.ndarray) -> list[bytes]:
    """A tensor's encoding, its data as one part (not copied when contiguous)."""
    array = np.asarray(array)
    code = _code_of(array, name)
    head = _bytes(name.encode()) + struct.pack("<iI", code, array.ndim)
    head += struct.pack(f"<{array.ndim}q", *array.shape)
    if code == STRING:
        return [head] + [_bytes(str(v).encode()) for v in array.reshape(-1)]
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return [head, _bytes(data.tobytes())]


# --- messages ----------------------------------------------------------------------------------


@dataclass
class Run:
    """A run request, as the host sent it."""

    configuration: str
    disabled: list[str]
    options: dict[str, Any]
    model: bytes
    inputs: dict[str, np.ndarray] = field(default_factory=dict)


def hello_body() -> list[bytes]:
    return [HELLO + _bytes(canonical_json({"protocol": PROTOCOL_VERSION}))]


def read_hello(body: bytes) -> int:
    """The protocol version a hello asks for."""
    if body[:1] != HELLO:
        raise ProtocolError("the first message is not hello")
    r = Reader(body[1:])
    version = r.json().get("protocol")
    r.done()
    return int(version) if isinstance(version, int) else 0


def run_body(run: Run) -> list[bytes]:
    head = {"configuration": run.configuration, "disabled": sorted(run.disabled), "options": run.options}
    parts = [RUN + _bytes(canonical_json(head)) + _bytes(run.model) + _u64(len(run.inputs))]
    for name, array in run.inputs.items():
        parts += tensor_parts(name, array)
    return parts


def read_run(body: bytes) -> Run:
    if body[:1] != RUN:
        raise ProtocolError(f"a request of kind {body[:1]!r}, not run ('R')")
    r = Reader(body[1:])
    head = r.json()
    run = Run(
        configuration=str(head.get("configuration", "")),
        disabled=[str(d) for d in head.get("disabled", [])],
        options=dict(head.get("options", {})),
        model=r.bytes(),
    )
    for _ in range(r.u64()):
        name, array = r.tensor()
        run.inputs[name] = array
    r.done()
    return run


def facts_body(facts: dict[str, Any]) -> list[bytes]:
    return [FACTS + _bytes(canonical_json(facts))]


def outputs_body(
    outputs: dict[str, np.ndarray], applied: list[str], attachments: dict[str, bytes] | None = None
) -> list[bytes]:
    """Outputs and attachments in name order, so that one reply has one encoding."""
    parts = [OUTPUTS + _bytes(canonical_json({"applied": sorted(set(applied))})) + _u64(len(outputs))]
    for name in sorted(outputs):
        parts += tensor_parts(name, outputs[name])
    tail = _u64(len(attachments or {}))
    for name in sorted(attachments or {}):
        tail += _bytes(name.encode()) + _bytes(attachments[name])  # type: ignore[index]
    return parts + [tail]


def unsupported_body(category: str, message: str) -> list[bytes]:
    return [UNSUPPORTED + _bytes(canonical_json({"category": category, "message": message}))]


def error_body(message: str, trace: str) -> list[bytes]:
    return [ERROR + _bytes(canonical_json({"message": message, "trace": trace}))]
