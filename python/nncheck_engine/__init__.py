"""nncheck's Python SDK: an engine in Python, as one class, for nncheck to test.

    from nncheck_engine import Engine, Unsupported, serve
    class Mine(Engine): ...
    serve(Mine())          # nncheck fuzz --engine-worker 'python3 mine.py'
"""

from .engine import Engine, Unsupported, probed_ops, reply_to, serve
from .protocol import PROTOCOL_VERSION, ProtocolError

__all__ = ["Engine", "Unsupported", "serve", "reply_to", "probed_ops", "PROTOCOL_VERSION", "ProtocolError"]
