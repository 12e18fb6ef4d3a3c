"""How acks and push deliveries are routed, side by side with nats-server.

On the real server an ack is an ordinary publish to ``$JS.ACK.<stream>.<consumer>...``: a
client subscribed to ``$JS.ACK.>`` (or any subject reaching it) sees every ack, and the
consumer still gets it. jsemu sends acks down a direct lane (``server/ack_lane.py``) only
while nobody else could see them; these tests pin that the lane changes nothing a client can
observe. A push consumer with ``deliver_group`` is active only while a member of that queue
group listens (a plain subscriber or another group is not enough), and then its messages are
routed as usual (every plain subscriber and every group get them).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from server.test_auth import _pair
from support.pair import Pair
from support.rawclient import RawClient

from .test_consumers import CREATE, NEXT, _req, _stream_with, ack, pull_frames
from .test_push_consumers import _both, _push, _sub, _subscribers

_INFO = "$JS.API.CONSUMER.INFO.S.D"


async def test_a_js_ack_subscriber_sees_acks_and_the_consumer_still_gets_them(pair: Pair) -> None:
    await _stream_with(pair, 4)
    await pair.same(f"{CREATE}.D", _req({"durable_name": "D", "ack_policy": "explicit"}))
    watchers = await _subscribers(pair)
    await _sub(watchers, "SUB $JS.ACK.> 1")
    await _sub(watchers, "SUB $JS.*.S.> 2")  # a wildcard before the stream token reaches acks too
    emu, real = await pull_frames(pair, f"{NEXT}.D", "4", 4)
    assert emu.frames == real.frames
    await ack(pair, emu.acks[0], real.acks[0], "+ACK")
    await ack(pair, emu.acks[1], real.acks[1], "-NAK")
    seen = await _both(watchers, 4)
    assert [f.split(" ")[0] for f in seen] == [
        "$JS.ACK.S.D.1.1.1.<ts>.3",
        "$JS.ACK.S.D.1.1.1.<ts>.3",
        "$JS.ACK.S.D.1.2.2.<ts>.2",
        "$JS.ACK.S.D.1.2.2.<ts>.2",
    ]
    assert seen[0].endswith("+ACK") and seen[2].endswith("-NAK")
    await pair.same(_INFO)  # processed as well: one acked, the nak'ed one due again
    # a double ack still gets its answer while watched
    await ack(pair, emu.acks[2], real.acks[2], "+ACK", reply=True)
    assert len(await _both(watchers, 2)) == 2
    # watchers gone: acks go on working (and nobody sees them)
    await _sub(watchers, "UNSUB 1")
    await _sub(watchers, "UNSUB 2")
    await ack(pair, emu.acks[3], real.acks[3], "+ACK", reply=True)
    assert await _both(watchers, 1, timeout=0.2) == []
    await pair.same(_INFO)


_PERMS_CONF = """jetstream {{ store_dir: "{store}" }}
authorization {{
  users: [
    {{user: admin, password: admin}}
    {{user: worker, password: worker, permissions: {{
        publish: ["$JS.API.CONSUMER.MSG.NEXT.S.D"], subscribe: "_INBOX.>" }}}}
    {{user: acker, password: acker, permissions: {{
        publish: ["$JS.ACK.S.D.>"], subscribe: "_INBOX.>" }}}}
  ]
}}
"""
_TS_TOKEN = re.compile(rb"(\$JS\.ACK\.S\.D\.\d+\.\d+\.\d+\.)\d+")


async def _frames(client: RawClient, n: int, timeout: float = 2.0) -> list[bytes]:
    """Up to ``n`` frames (PINGs answered), or what came within ``timeout``."""
    out: list[bytes] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(out) < n and (left := deadline - loop.time()) > 0:
        frame = await client.next_frame(left)
        if frame is None:
            break
        if frame == b"PING\r\n":
            client.send(b"PONG\r\n")
            continue
        out.append(frame)
    return out


async def _permissions_scenario(port: int) -> dict[str, Any]:
    def login(user: str) -> dict[str, Any]:
        return {"user": user, "pass": user, "verbose": False, "pedantic": False, "headers": True}

    admin = await RawClient.connect(port, login("admin"))
    stream = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory"}).encode()
    consumer = json.dumps({"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}).encode()
    admin.send(b"SUB _INBOX.a 1\r\nPUB $JS.API.STREAM.CREATE.S _INBOX.a %d\r\n%b\r\n" % (len(stream), stream))
    assert len(await _frames(admin, 1)) == 1
    admin.send(b"".join(b"PUB s.%d _INBOX.a 1\r\n%d\r\n" % (i, i) for i in range(3)))
    assert len(await _frames(admin, 3)) == 3
    admin.send(b"PUB $JS.API.CONSUMER.CREATE.S.D _INBOX.a %d\r\n%b\r\n" % (len(consumer), consumer))
    assert len(await _frames(admin, 1)) == 1

    worker = await RawClient.connect(port, login("worker"))
    worker.send(b"SUB _INBOX.w 1\r\nPUB $JS.API.CONSUMER.MSG.NEXT.S.D _INBOX.w 1\r\n3\r\n")
    msgs = await _frames(worker, 3)
    acks = [frame.split(b" ")[3] for frame in msgs]
    # the worker may fetch but not ack: refused, with or without a reply, on the fast lane too
    denied = await worker.exchange(b"PUB %b 4\r\n+ACK\r\nPUB %b _INBOX.w 4\r\n+ACK\r\n" % (acks[0], acks[1]))
    acker = await RawClient.connect(port, login("acker"))
    acked = await acker.exchange(b"SUB _INBOX.k 1\r\nPUB %b _INBOX.k 4\r\n+ACK\r\n" % acks[2])
    acked += await _frames(acker, 1, timeout=0.5)
    admin.send(b"PUB %b _INBOX.a 0\r\n\r\n" % _INFO.encode())
    info = json.loads((await _frames(admin, 1))[0].split(b"\r\n")[1])
    for client in (admin, worker, acker):
        await client.close()
    return {
        "denied": [_TS_TOKEN.sub(rb"\1<ts>", f) for f in denied],
        "acked": acked,
        "state": [info["num_ack_pending"], info["ack_floor"]["stream_seq"], info["delivered"]["stream_seq"]],
    }


async def test_acks_are_subject_to_publish_permissions(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, _PERMS_CONF.format(store=tmp_path / "store")):
        got = {kind: await _permissions_scenario(port) for kind, port in pair.ports.items()}
        assert got["jsemu"] == got["real"]
        assert got["real"]["denied"] == [
            b"-ERR 'Permissions Violation for Publish to \"$JS.ACK.S.D.1.1.1.<ts>.2\"'\r\n",
            b"-ERR 'Permissions Violation for Publish to \"$JS.ACK.S.D.1.2.2.<ts>.1\"'\r\n",
        ]
        assert got["real"]["acked"] == [b"MSG _INBOX.k 1 0\r\n\r\n"]
        assert got["real"]["state"] == [2, 0, 3]


async def test_deliver_group_needs_a_member_of_that_group(pair: Pair) -> None:
    await _stream_with(pair, 3)
    plain = await _subscribers(pair)
    other = await _subscribers(pair)
    members = await _subscribers(pair)
    await _sub(plain, "SUB push.G 1")
    await pair.same(f"{CREATE}.G", _push("G", deliver_group="workers", ack_policy="none"))
    assert await _both(plain, 3, timeout=0.3) == []  # a plain subscriber does not bind it
    await _sub(other, "SUB push.G others 1")
    assert await _both(plain, 3, timeout=0.3) == []  # nor another queue group
    await pair.same("$JS.API.CONSUMER.INFO.S.G")
    await _sub(members, "SUB push.G workers 1")
    # bound now: routed as usual, to the plain subscriber and to one member of each group
    for subs in (plain, other, members):
        assert [f.split(" ")[0] for f in await _both(subs, 3)] == ["s.0", "s.1", "s.2"]
    await pair.same("$JS.API.CONSUMER.INFO.S.G")
    await _sub(members, "UNSUB 1")
    await asyncio.sleep(0.1)
    await pair.same("$JS.API.CONSUMER.INFO.S.G")  # not push bound any more
    await pair.publish("s.9", "late")
    assert await _both(plain, 1, timeout=0.3) == []
