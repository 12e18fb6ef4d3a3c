"""The one outbound path (``jsemu/server/outbound.py``): what a deliverer can rely on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from support.rawclient import RawClient

import jsemu
from jsemu.protocol.encoder import HMSG_TAIL_SPLIT, hmsg_tail, message_frame, split_tail

CONNECT = {"verbose": False, "pedantic": False, "headers": True}


@pytest.fixture
async def srv() -> AsyncIterator[jsemu.Server]:
    async with jsemu.Server() as server:
        yield server


def test_tails_round_trip_and_frames() -> None:
    block = b"NATS/1.0\r\nA: b\r\n\r\n"
    tail = hmsg_tail(block, b"data")
    assert tail == b"%d %d\r\n%bdata\r\n" % (len(block), len(block) + 4, block)
    assert HMSG_TAIL_SPLIT % (len(block), len(block) + 4, block[:10], block[10:], b"data") == tail
    assert split_tail(tail) == (len(block), block + b"data")
    assert message_frame(b"HMSG s 1 ", b"MSG s 1 ", True, len(block), block + b"x") == b"HMSG s 1 " + hmsg_tail(
        block, b"x"
    )
    assert message_frame(b"HMSG s 1 ", b"MSG s 1 ", False, len(block), block + b"x") == b"MSG s 1 1\r\nx\r\n"


async def test_pending_bytes_counts_queued_output_until_written(srv: jsemu.Server) -> None:
    client = await RawClient.connect(srv.port, CONNECT)
    assert await client.exchange(b"SUB _INBOX.fc 1\r\nSUB _INBOX.fc q 2\r\n") == []
    out = srv.outbound
    assert out.pending_bytes(b"_INBOX.fc") == 0
    out.send_payloads(b"_INBOX.fc", [b"x" * 1000] * 5)  # queued, not yet flushed
    # The connection gets each message twice (a plain and a queue subscription).
    frames = 5 * sum(len(b"MSG _INBOX.fc %d 1000\r\n" % sid + b"x" * 1000 + b"\r\n") for sid in (1, 2))
    assert out.pending_bytes(b"_INBOX.fc") == frames
    assert out.pending_bytes(b"_INBOX.other") == 0
    for _ in range(10):
        assert await client.next_frame(5.0) is not None
    assert out.pending_bytes(b"_INBOX.fc") == 0
    client.writer.close()


class _Counting:
    """A Sender that counts the calls made to it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        def call(*args: Any) -> Any:
            self.calls.append(name)
            return method(*args)

        return call


@pytest.mark.parametrize(
    "request_body",
    [b'{"seq":1,"batch":50}', b'{"multi_last":["o.>"]}', b'{"seq":1,"batch":5,"no_hdr":true}', b'{"seq":3}'],
)
async def test_a_direct_get_reply_is_one_call_to_the_outbound_path(srv: jsemu.Server, request_body: bytes) -> None:
    js, api = srv.jetstream, srv.jetstream_api
    assert js is not None and api is not None
    reply = api.call("$JS.API.STREAM.CREATE.O", {"name": "O", "subjects": ["o.>"], "allow_direct": True})
    assert "error" not in reply, reply
    for i in range(10):
        js.streams["O"].publish(b"o.%d" % i, None, -1, b"m")
    responder = js.streams["O"].replicas.peers[0].responders[0]
    counting = _Counting(responder._out)
    responder._out = counting  # type: ignore[assignment]
    client = await RawClient.connect(srv.port, CONNECT)
    frames: Sequence[bytes] = await client.exchange(
        b"SUB _INBOX.o 1\r\nPUB $JS.API.DIRECT.GET.O _INBOX.o %d\r\n%b\r\n" % (len(request_body), request_body)
    )
    await asyncio.sleep(0)
    assert frames and counting.calls and len(counting.calls) == 1, counting.calls
    client.writer.close()


@pytest.mark.parametrize("push", [False, True])
async def test_a_consumer_delivery_run_is_one_call_to_the_outbound_path(srv: jsemu.Server, push: bool) -> None:
    """A pull batch (or what a bound push consumer has to send) leaves in one
    ``Sender.deliver`` call: MSG and HMSG frames with their own subjects and ack replies."""
    js, api = srv.jetstream, srv.jetstream_api
    assert js is not None and api is not None
    api.call("$JS.API.STREAM.CREATE.C", {"name": "C", "subjects": ["c.>"], "storage": "memory"})
    for i in range(20):
        js.streams["C"].publish(b"c.%d" % i, None, *((-1, b"m") if i % 2 else (12, b"NATS/1.0\r\n\r\nh")))
    counting = _Counting(js.out)
    js.out = counting  # type: ignore[assignment]
    client = await RawClient.connect(srv.port, CONNECT)
    cfg: dict[str, Any] = {"durable_name": "D", "ack_policy": "explicit"}
    if push:
        cfg["deliver_subject"] = "_INBOX.c"
    assert await client.exchange(b"SUB _INBOX.c 1\r\n") == []
    assert "error" not in api.call("$JS.API.CONSUMER.CREATE.C.D", {"stream_name": "C", "config": cfg})
    counting.calls.clear()
    if not push:
        client.send(b"PUB $JS.API.CONSUMER.MSG.NEXT.C.D _INBOX.c 2\r\n20\r\n")
    frames: list[bytes] = []
    while len(frames) < 20:
        frame = await client.next_frame(5.0)
        assert frame is not None, frames
        frames.append(frame)
    assert counting.calls.count("deliver") == 1, counting.calls
    assert frames[0].startswith(b"HMSG c.0 1 $JS.ACK.C.D.1.1.1.") and frames[1].startswith(
        b"MSG c.1 1 $JS.ACK.C.D.1.2.2."
    )
    client.writer.close()
