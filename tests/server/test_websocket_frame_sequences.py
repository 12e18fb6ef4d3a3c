"""Hypothesis-generated frame sequences after the upgrade, each sent to nats-server 2.15.1 and to
``jsemu serve`` on fresh connections: data frames (binary, text, continuation) in any
fragment order, control frames (ping, pong, close with any status and text) inside
fragments or not, unknown opcodes, unmasked frames, reserved bits, payload lengths that lie,
the bytes written in random pieces. Then a last ``PING``: both servers must keep or close
the connection alike, answer the PING alike, and when nats-server's close frame gets out its
status must be jsemu's (nats-server may close before its close frame is written: a race on
its side, so a missing one proves nothing)."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.servers import RealServer
from support.wsclient import CONNECT, WsClient, frame, split_frames

_NATS = [
    b"PUB x 1\r\na\r\n",
    b"PUB x 2\r\n\xff\xfe\r\n",
    b"SUB x 1\r\n",
    b"UNSUB 1\r\n",
    b"HPUB x 12 13\r\nNATS/1.0\r\n\r\na\r\n",
    b"",
]
_CLOSE_CODES = [1000, 1001, 1002, 1003, 1005, 1006, 1007, 1011, 1015, 999, 2999, 3000, 4999, 5000, 0, 65535]


@dataclass(frozen=True)
class Spec:
    opcode: int
    payload: bytes
    fin: bool = True
    mask: bool = True
    rsv: int = 0  # 0x40 RSV1, 0x20 RSV2, 0x10 RSV3
    lie: bool = False  # a 64-bit length with its top bit set

    def encode(self) -> bytes:
        if self.lie:
            head = bytes(((0x80 if self.fin else 0) | self.rsv | self.opcode, 0x80 | 127))
            return head + struct.pack("!Q", (1 << 63) | len(self.payload)) + b"\0\0\0\0" + self.payload
        data = frame(self.opcode, self.payload, fin=self.fin, mask=self.mask)
        return bytes((data[0] | self.rsv,)) + data[1:]


_close_payload = st.one_of(
    st.binary(max_size=3),
    st.builds(
        lambda code, text: struct.pack("!H", code) + text,
        st.sampled_from(_CLOSE_CODES),
        st.sampled_from([b"", b"bye", b"\xff\xfe", b"x" * 124]),
    ),
)
_data_payload = st.one_of(st.sampled_from(_NATS), st.sampled_from(_NATS), st.binary(max_size=6))


@st.composite
def _spec(draw: st.DrawFn) -> Spec:
    opcode = draw(st.sampled_from([0, 0, 1, 2, 2, 2, 8, 9, 9, 10, 3, 11]))
    if opcode == 8:
        payload = draw(_close_payload)
    elif opcode in (9, 10):
        payload = draw(st.one_of(st.binary(max_size=8), st.just(b"p" * 126)))
    else:
        payload = draw(_data_payload)
    return Spec(
        opcode,
        payload,
        fin=draw(st.sampled_from([True, True, True, False])),
        mask=draw(st.sampled_from([True] * 15 + [False])),
        rsv=draw(st.sampled_from([0] * 20 + [0x40, 0x20, 0x10])),
        lie=draw(st.sampled_from([False] * 30 + [True])),
    )


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, int]]:
    real = RealServer(jetstream=False, websocket=True)
    emu = RealServer(jetstream=False, websocket=True, jsemu_process=True)
    try:
        yield {"jsemu": int(emu.ws_url.rsplit(":", 1)[1]), "real": int(real.ws_url.rsplit(":", 1)[1])}
    finally:
        real.stop()
        emu.stop()


_SENTINEL = frame(2, b"PING\r\n")


async def _react(port: int, data: bytes, cuts: list[int]) -> tuple[bool, bool, int | None]:
    """Closed?, the sentinel PING answered?, the close frame's status (None: none came)."""
    client = await WsClient.connect(port)
    try:
        await client.until(b"\r\n")  # the INFO
        client.send(frame(2, CONNECT))
        at = 0
        for cut in sorted(set(cuts)):
            if 0 < cut < len(data):
                client.send(data[at:cut])
                await asyncio.sleep(0.005)
                at = cut
        client.send(data[at:] + _SENTINEL)
        received = b""
        closed = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 1.5
        while loop.time() < deadline:
            try:
                chunk = await asyncio.wait_for(client.reader.read(65536), 0.15 if b"PONG" in received else 0.4)
            except TimeoutError:
                break
            except ConnectionError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            received += chunk
    finally:
        client.close()
    frames, _ = split_frames(client.buffer + received)
    status = None
    for f in frames:
        if f.opcode == 8:
            status = struct.unpack("!H", f.payload[:2])[0] if len(f.payload) >= 2 else 1005
    pong = any(b"PONG\r\n" in f.payload for f in frames if f.opcode == 2)
    return closed, pong, status


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(_spec(), min_size=1, max_size=5), cuts=st.lists(st.integers(0, 400), max_size=3))
def test_frame_sequences_as_nats_server(servers: dict[str, int], specs: list[Spec], cuts: list[int]) -> None:
    data = b"".join(s.encode() for s in specs)

    async def both() -> list[tuple[bool, bool, int | None]]:
        return await asyncio.gather(_react(servers["jsemu"], data, cuts), _react(servers["real"], data, cuts))

    emu, real = asyncio.run(both())
    event(f"closed={real[0]} pong={real[1]} status={real[2]}")
    assert emu[:2] == real[:2], (specs, emu, real)
    if real[2] is not None:
        assert emu[2] == real[2], (specs, emu, real)
