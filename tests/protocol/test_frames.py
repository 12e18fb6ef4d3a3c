"""The client-side frame reader: whole frames out of any split of the bytes, headers apart."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jsemu.protocol import OK, PING, PONG, encode_err, encode_hmsg, encode_info, encode_msg
from jsemu.protocol.frames import FrameReader, parse_frame

HDR = b"NATS/1.0\r\nA: 1\r\n\r\n"
STREAM = [
    encode_info({"server_id": "x", "headers": True}),
    PING,
    encode_msg(b"foo", b"1", None, b"hello\r\nMSG not a frame 3\r\n"),
    encode_msg(b"foo", b"1", b"_INBOX.a", b""),
    encode_hmsg(b"bar", b"22", b"_INBOX.b", len(HDR), HDR + b"body"),
    encode_hmsg(b"bar", b"22", None, len(HDR), HDR),
    OK,
    encode_err("Unknown Protocol Operation"),
    PONG,
]


def _check(frames: list) -> None:  # type: ignore[type-arg]
    assert [f.raw for f in frames] == STREAM
    assert [f.op for f in frames] == [b"INFO", b"PING", b"MSG", b"MSG", b"HMSG", b"HMSG", b"+OK", b"-ERR", b"PONG"]
    msg, empty, hmsg, hdr_only = frames[2:6]
    assert (msg.subject, msg.sid, msg.reply, msg.header, msg.payload) == (
        b"foo",
        b"1",
        b"",
        b"",
        b"hello\r\nMSG not a frame 3\r\n",
    )
    assert (empty.reply, empty.payload) == (b"_INBOX.a", b"")
    assert (hmsg.subject, hmsg.sid, hmsg.reply, hmsg.header, hmsg.payload) == (b"bar", b"22", b"_INBOX.b", HDR, b"body")
    assert (hdr_only.reply, hdr_only.header, hdr_only.payload) == (b"", HDR, b"")
    assert frames[7].line == b"-ERR 'Unknown Protocol Operation'"


@given(st.lists(st.integers(1, 40), max_size=60))
def test_any_split_gives_the_same_frames(cuts: list[int]) -> None:
    data = b"".join(STREAM)
    reader = FrameReader()
    frames = []
    pos = 0
    for n in [*cuts, len(data)]:
        reader.feed(data[pos : pos + n])
        pos += n
        frames += reader.frames()
    assert reader.pending == 0
    _check(frames)


def test_a_partial_frame_waits_for_its_payload() -> None:
    frame = encode_msg(b"foo", b"1", None, b"abc")
    assert parse_frame(frame[:-1]) is None
    assert parse_frame(frame[:5]) is None
    reader = FrameReader()
    reader.feed(frame[:-2])
    assert reader.next() is None and reader.pending == len(frame) - 2
    reader.feed(frame[-2:])
    got = reader.next()
    assert got is not None and got.payload == b"abc"


def test_a_msg_line_without_sizes_is_an_error() -> None:
    with pytest.raises(ValueError):
        parse_frame(b"MSG foo 1 x\r\n")


def test_next_from_reads_until_a_frame_is_whole() -> None:
    data = b"".join(STREAM)
    chunks = [data[i : i + 7] for i in range(0, len(data), 7)]
    reader = FrameReader()
    frames = [reader.next_from(lambda _n: chunks.pop(0)) for _ in STREAM]
    _check(frames)
    with pytest.raises(ConnectionError):
        reader.next_from(lambda _n: b"")


def test_a_caller_can_take_frames_from_the_window_itself() -> None:
    """The pipeline's Arrow reader cuts runs of frames from ``window()`` and hands back the
    position; the reader goes on from there."""
    reader = FrameReader()
    reader.feed(b"MSG a 1 2\r\nhi\r\nPING\r\n")
    assert reader.next() is not None
    buf, pos = reader.window()
    assert buf[pos:] == b"PING\r\n"
    reader.skip_to(pos + 6)
    assert reader.next() is None and reader.pending == 0
    reader.feed(b"PONG\r\n")
    frame = reader.next()
    assert frame is not None and frame.op == b"PONG"
