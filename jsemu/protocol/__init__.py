"""Sans-I/O NATS client protocol: bytes in, ops out; encoders for what the server sends."""

from .encoder import OK, PING, PONG, encode_err, encode_hmsg, encode_info, encode_msg, encode_no_responders
from .frames import Frame, FrameReader, parse_frame
from .ops import Connect, Err, HMsg, Info, Ok, Op, Ping, Pong, ProtocolError, Pub, PubRun, Sub, Unsub
from .parser import MAX_CONTROL_LINE, MAX_PAYLOAD, Parser

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
