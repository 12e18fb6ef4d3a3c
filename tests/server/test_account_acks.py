"""Acks stay in their account, side by side with nats-server 2.15.1: accounts A and C both
have stream ``S`` with durable ``D`` (so an ack subject of A's consumer is a well-formed ack
subject in C too); an ack that a user of C publishes on it does not ack A's message, and
the same ack published in A does. Guards the per-account ack lane (``server/ack_lane.py``):
one lane shared by the accounts would hand C's ack to A's consumer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from support.rawclient import RawClient

from .test_accounts import _collect, _login, _pair, _pub

_STREAM = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory"}).encode()
_CONSUMER = json.dumps(
    {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit", "ack_wait": 60_000_000_000}}
).encode()


async def _ack_reply(client: RawClient) -> bytes:
    """The ack subject of the next delivered message (the reply of its MSG line)."""
    while True:
        frame = await client.next_frame(5.0)
        assert frame is not None, "no message delivered"
        if frame.startswith(b"MSG s.1 "):
            return frame.split(b"\r\n", 1)[0].split(b" ")[3]
        if frame == b"PING\r\n":
            client.send(b"PONG\r\n")


async def _ack_state(client: RawClient) -> tuple[Any, ...]:
    client.send(_pub("$JS.API.CONSUMER.INFO.S.D"))
    [(_, body)] = await _collect(client, 1)
    info = json.loads(body)
    return info["num_ack_pending"], info["ack_floor"]["stream_seq"], info["delivered"]["stream_seq"]


async def test_an_ack_published_in_another_account_does_not_ack(tmp_path: Path) -> None:
    got: dict[str, Any] = {}
    async for pair in _pair(tmp_path):
        for kind, port in pair.ports.items():
            out: dict[str, Any] = {}
            clients = {user: await _login(port, user) for user in ("c", "a1")}
            for client in clients.values():
                client.send(b"SUB _INBOX.r 1\r\n")
            # C first: a lane shared by the accounts would then name A's consumer last.
            for user in ("c", "a1"):
                clients[user].send(_pub("$JS.API.STREAM.CREATE.S", _STREAM))
                await _collect(clients[user], 1)
                clients[user].send(_pub("$JS.API.CONSUMER.CREATE.S.D", _CONSUMER))
                await _collect(clients[user], 1)
                clients[user].send(_pub("s.1", user.encode()))
                await _collect(clients[user], 1)
            a1, c = clients["a1"], clients["c"]
            a1.send(b"SUB _INBOX.m 2\r\n" + _pub("$JS.API.CONSUMER.MSG.NEXT.S.D", b"1", "_INBOX.m"))
            ack = await _ack_reply(a1)
            out["before"] = await _ack_state(a1)
            # C publishes A's ack subject: it is C's subject space, A's consumer never sees it.
            c.send(b"PUB " + ack + b" 4\r\n+ACK\r\n")
            await c.exchange()
            await asyncio.sleep(0.3)
            out["after C"] = await _ack_state(a1)
            out["C's consumer"] = await _ack_state(c)
            # The same ack in A acks (the subject is right).
            a1.send(b"PUB " + ack + b" 4\r\n+ACK\r\n")
            await a1.exchange()
            await asyncio.sleep(0.3)
            out["after A"] = await _ack_state(a1)
            for client in clients.values():
                await client.close()
            got[kind] = out
    real = got["real"]
    assert real["before"] == real["after C"] == (1, 0, 1)
    assert real["after A"] == (0, 1, 1)
    assert real["C's consumer"] == (0, 0, 0)
    assert got["jsemu"] == real
