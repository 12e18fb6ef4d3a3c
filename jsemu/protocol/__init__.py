"""Sans-I/O NATS client protocol: bytes in, ops out; encoders for what the server sends.

The names below are loaded on first use (PEP 562): a process that needs one module (a Spark
Python worker of the ``jsemu.pipeline`` data source needs ``frames`` alone) does not pay for
the encoder, the parser and the Go JSON decoder, about 0.1 s of CPU in each of the several
Python processes a Spark read starts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .encoder import OK, PING, PONG, encode_err, encode_hmsg, encode_info, encode_msg, encode_no_responders
    from .frames import Frame, FrameReader, parse_frame
    from .ops import Connect, Err, HMsg, Info, Ok, Op, Ping, Pong, ProtocolError, Pub, PubRun, Sub, Unsub
    from .parser import MAX_CONTROL_LINE, MAX_PAYLOAD, Parser

#: Which module of the package defines each name.
_HOME = {
    **dict.fromkeys(
        ("OK", "PING", "PONG", "encode_err", "encode_hmsg", "encode_info", "encode_msg", "encode_no_responders"),
        "encoder",
    ),
    **dict.fromkeys(("Frame", "FrameReader", "parse_frame"), "frames"),
    **dict.fromkeys(
        (
            "Connect",
            "Err",
            "HMsg",
            "Info",
            "Ok",
            "Op",
            "Ping",
            "Pong",
            "ProtocolError",
            "Pub",
            "PubRun",
            "Sub",
            "Unsub",
        ),
        "ops",
    ),
    **dict.fromkeys(("MAX_CONTROL_LINE", "MAX_PAYLOAD", "Parser"), "parser"),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'jsemu.protocol' has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value  # looked up once: later uses find it in the module
    return value


__all__ = [
    "MAX_CONTROL_LINE",
    "MAX_PAYLOAD",
    "OK",
    "PING",
    "PONG",
    "Connect",
    "Err",
    "Frame",
    "FrameReader",
    "HMsg",
    "Info",
    "Ok",
    "Op",
    "Parser",
    "Ping",
    "Pong",
    "ProtocolError",
    "Pub",
    "PubRun",
    "Sub",
    "Unsub",
    "encode_err",
    "encode_hmsg",
    "encode_info",
    "encode_msg",
    "encode_no_responders",
    "parse_frame",
]
