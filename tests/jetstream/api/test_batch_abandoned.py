"""``$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.<stream>``, side by side with nats-server
2.15.1: a gap, an end-of-batch commit as the first message, a required API level and too
many messages abandon an open batch with an advisory (after the publish's error ack); an
invalid commit and a batch never opened do not. The timeout (10 s of inactivity) is on the
server's clock in jsemu (the real server sent ``"reason":"timeout"`` 9.7 s after the last
message in the capture). Ids and times are blanked; the control line is compared whole
but for its size (with its two spaces before the size: the advisory has an empty reply,
``tests/protocol/test_control_lines.py``)."""

from __future__ import annotations

import re

from support.rawclient import RawClient
from support.servers import Handle

import jsemu

_CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}
_ID = re.compile(rb'"id":"[0-9A-Za-z]{22}","timestamp":"[^"]+"')


def _hpub(subject: str, headers: dict[str, str], reply: str = "_INBOX.r") -> bytes:
    block = b"NATS/1.0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items()) + b"\r\n"
    return f"HPUB {subject} {reply} {len(block)} {len(block) + 1}\r\n".encode() + block + b"x\r\n"


def _batch(batch: str, seq: int, **more: str) -> dict[str, str]:
    return {"Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(seq), **more}


def _normal(frame: bytes) -> bytes:
    """The size field dropped (the blanked id and time change it), spaces kept."""
    line, _, rest = frame.partition(b"\r\n")
    line = line.rsplit(b" ", 1)[0] if line.startswith(b"MSG ") else line
    return line + b"\r\n" + _ID.sub(b'"id":"X","timestamp":"T"', rest)


async def _frames(client: RawClient, quiet: float = 0.3) -> list[bytes]:
    """What comes until ``quiet`` seconds pass without a frame (PINGs answered)."""
    out = []
    while True:
        frame = await client.next_frame(quiet)
        if frame is None:
            return out
        if frame == b"PING\r\n":
            client.send(b"PONG\r\n")
        else:
            out.append(_normal(frame))


async def _login(port: int) -> RawClient:
    client = await RawClient.connect(port, _CONNECT)
    client.send(b"SUB _INBOX.> 1\r\nSUB $JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.> 2\r\n")
    await client.exchange()
    await client.next_frame(0.3)  # the INFO after the first PONG
    return client


STEPS = [
    ("gap", [_batch("gap", 1), _batch("gap", 3)]),
    ("eob first", [_batch("eob", 1, **{"Nats-Batch-Commit": "eob"})]),
    ("api level", [_batch("lvl", 1), _batch("lvl", 2, **{"Nats-Required-Api-Level": "99"})]),
    ("bad commit", [_batch("bc", 1), _batch("bc", 2, **{"Nats-Batch-Commit": "x"})]),
    ("never opened", [_batch("none", 2)]),
    ("too large", [_batch("big", n) for n in range(1, 1002)]),
]


async def test_abandoned_batches(server: Handle) -> None:
    name = f"ABANDON_{server.kind}"
    client = await _login(server.port)
    body = f'{{"name":"{name}","subjects":["{name}.>"],"storage":"memory","allow_atomic":true}}'.encode()
    client.send(f"PUB $JS.API.STREAM.CREATE.{name} _INBOX.c {len(body)}\r\n".encode() + body + b"\r\n")
    await _frames(client)
    got = []
    for step, messages in STEPS:
        client.send(b"".join(_hpub(f"{name}.x", headers) for headers in messages))
        frames = [f for f in await _frames(client) if f != b"MSG _INBOX.r 1\r\n\r\n"]
        # the error ack and the advisory leave nats-server by different queues: either order
        got.append((step, sorted(f.replace(name.encode(), b"S") for f in frames)))
    await client.close()
    advisory = (
        b'MSG $JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.S 2 \r\n{"type":"io.nats.jetstream.advisory.v1.'
        b'stream_batch_abandoned","id":"X","timestamp":"T","stream":"S","batch":"%s","reason":"%s"}\r\n'
    )

    def adv(batch: str, reason: str) -> bytes:
        return advisory % (batch.encode(), reason.encode())

    incomplete = (
        b'MSG _INBOX.r 1\r\n{"error":{"code":400,"err_code":10176,"description":"atomic publish batch is '
        b'incomplete"},"stream":"S","seq":0}\r\n'
    )
    assert got[0] == ("gap", sorted([incomplete, adv("gap", "incomplete")]))
    assert got[1] == ("eob first", sorted([incomplete, adv("eob", "incomplete")]))
    assert got[2][1][0] == adv("lvl", "unsupported") and b"10185" in got[2][1][1]
    assert len(got[3][1]) == 1 and b"10200" in got[3][1][0]  # no advisory
    assert got[4] == ("never opened", [incomplete])
    assert got[5][1][0] == adv("big", "large") and b"10199" in got[5][1][-1]


async def test_an_inactive_batch_times_out_on_the_server_clock() -> None:
    async with jsemu.Server() as srv:
        ctl = srv.control
        ctl.freeze_clock()
        client = await _login(srv.port)
        body = b'{"name":"T","subjects":["t"],"storage":"memory","allow_atomic":true}'
        client.send(b"PUB $JS.API.STREAM.CREATE.T _INBOX.c %d\r\n%s\r\n" % (len(body), body))
        await _frames(client)
        client.send(_hpub("t", _batch("slow", 1)))
        assert await _frames(client) == [b"MSG _INBOX.r 1\r\n\r\n"]
        ctl.advance_clock(ns=9_999_999_999)
        assert await _frames(client) == []
        ctl.advance_clock(ns=1)
        frames = await _frames(client)
        assert [f.split(b"\r\n")[1] for f in frames] == [
            (
                b'{"type":"io.nats.jetstream.advisory.v1.stream_batch_abandoned","id":"X","timestamp":"T",'
                b'"stream":"T","batch":"slow","reason":"timeout"}'
            )
        ]
        client.send(_hpub("t", _batch("slow", 2, **{"Nats-Batch-Commit": "1"})))
        frames = await _frames(client)  # gone: incomplete, and no second advisory
        assert len(frames) == 1 and b"10176" in frames[0], frames
        await client.close()
