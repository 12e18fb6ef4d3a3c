"""The system account's ``$JS.API`` endpoints on a standalone server, side by side with
nats-server 2.15.1 (the same file given to both: a system account ``SYS``, an account ``A``
with JetStream, an account ``B`` without). Standalone, nats-server answers none of them but
``ACCOUNT.PURGE``, and that one only to the system account: it deletes the account's streams
(consumer and stream ``DELETED`` advisories in that account) and answers ``initiated``. The
system account's own clients get ``system_response`` (503/10039) for any other subject but
``INFO`` and ``ACCOUNT.*``. The clustered replies are in tests/jetstream/cluster/test_system_endpoints.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
from server.test_auth import Pair, _RealWithConfig

import jsemu
from jsemu.config.server_config import load_config

CONF = """
jetstream {{ store_dir: "{store}" }}
accounts {{
  SYS: {{ users: [ {{user: sys, password: sys}} ] }}
  A: {{ users: [ {{user: a, password: a}} ], jetstream: enabled }}
  B: {{ users: [ {{user: b, password: b}} ] }}
}}
system_account: SYS
"""

#: (user, subject after $JS.API., request): what each asks, in order.
REQUESTS = [
    ("a", "META.LEADER.STEPDOWN", b""),
    ("a", "SERVER.REMOVE", b'{"peer":"zz"}'),
    ("a", "ACCOUNT.PURGE.A", b""),
    ("a", "ACCOUNT.STREAM.MOVE.A.S", b"{}"),
    ("a", "ACCOUNT.STREAM.CANCEL_MOVE.A.S", b""),
    ("a", "META.RESCUE", b"{}"),
    ("b", "ACCOUNT.STREAM.MOVE.B.S", b"{}"),
    ("b", "ACCOUNT.PURGE.B", b""),
    ("b", "STREAM.PEER.REMOVE.S", b'{"peer":"n2"}'),
    ("sys", "META.LEADER.STEPDOWN", b""),
    ("sys", "META.LEADER.STEPDOWN", b"{bad"),
    ("sys", "SERVER.REMOVE", b""),
    ("sys", "SERVER.REMOVE", b'{"peer":"zz"}'),
    ("sys", "SERVER.EVACUATE", b'{"peer":"zz"}'),
    ("sys", "META.RESCUE", b""),
    ("sys", "META.RESCUE", b'{"quorum_needed":1}'),
    ("sys", "ACCOUNT.PURGE.A/x", b""),
    ("sys", "ACCOUNT.PURGE.A\\x", b""),
    ("sys", "ACCOUNT.STREAM.MOVE.A.S", b"{}"),
    ("sys", "ACCOUNT.STREAM.CANCEL_MOVE.A.S", b""),
    ("sys", "ACCOUNT.PURGE.NOPE", b""),
    ("sys", "ACCOUNT.PURGE.B", b""),
    ("sys", "INFO", b""),
    # The system account's own requests to any other subject: system_response, 503/10039.
    ("sys", "STREAM.INFO.S", b""),
    ("sys", "STREAM.NAMES", b""),
    ("sys", "STREAM.PEER.REMOVE.S", b'{"peer":"n2"}'),
    ("sys", "STREAM.LEADER.STEPDOWN.S", b""),
    ("sys", "FOO", b""),
    ("sys", "STREAM.FOO.X", b""),
    ("sys", "DIRECT.GET.S", b'{"seq":1}'),
    ("sys", "DIRECT.GET.S.x", b""),
    ("sys", "CONSUMER.MSG.NEXT.S.C", b"{}"),
    ("sys", "ACCOUNT.FOO", b""),
    ("b", "FOO", b""),
    ("a", "FOO", b""),
]


async def _pair(tmp_path: Path) -> AsyncIterator[Pair]:
    conf = tmp_path / "server.conf"
    conf.write_text(CONF.format(store=tmp_path / "real-store"))
    real = _RealWithConfig(conf)
    options = jsemu.ServerOptions()
    load_config(conf, options)
    options.host, options.port, options.store_dir = "127.0.0.1", 0, None
    emu = jsemu.Server(options)
    await emu.start()
    try:
        yield Pair(real, real.port, emu)
    finally:
        await emu.stop()
        real.stop()


async def _connect(port: int, user: str) -> nats.NATS:
    return await nats.connect(f"nats://127.0.0.1:{port}", user=user, password=user)


async def _replies(conns: dict[str, nats.NATS], expect: int = 0) -> dict[int, str]:
    """Every request at once, each with its own reply subject; then a request answered for
    sure in each account and a margin for stragglers: what came back, by request index.
    ``expect`` is how many replies the other server gave: the margin lasts until that many
    came (an exact comparison follows, so a wait for more cannot hide a missing reply)."""
    got: dict[int, str] = {}
    for user, nc in conns.items():

        async def seen(msg: Any) -> None:
            got[int(msg.subject.rsplit(".", 1)[1])] = msg.data.decode()

        await nc.subscribe(f"r.{user}.>", cb=seen)
        await nc.flush()
    for i, (user, subject, body) in enumerate(REQUESTS):
        await conns[user].publish(f"$JS.API.{subject}", body, reply=f"r.{user}.{i}")
    for user, nc in conns.items():
        await nc.request("$JS.API.INFO", b"", timeout=5)
    # Stragglers: nats-server under load answered some requests more than 0.5 s after the
    # INFOs, so the margin lasts until nothing new came for a second (10 s at most).
    loop = asyncio.get_running_loop()
    deadline, count = loop.time() + 10, -1
    while (count != len(got) or len(got) < expect) and loop.time() < deadline:
        count = len(got)
        await asyncio.sleep(1.0 if count else 0.5)
    return got


async def test_system_endpoints_standalone_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        seen: dict[str, Any] = {}
        for kind, port in sorted(pair.ports.items()):  # jsemu first: nats-server waits for as many
            conns = {user: await _connect(port, user) for user in ("a", "b", "sys")}
            a = conns["a"]
            await a.request("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s"]}', timeout=5)
            durable = b'{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}'
            await a.request("$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable, timeout=5)
            events: list[tuple[str, str, str]] = []

            async def event(msg: Any, into: list[tuple[str, str, str]] = events) -> None:
                body = json.loads(msg.data)
                into.append((msg.subject, body["type"], body.get("action", "")))

            await a.subscribe("$JS.EVENT.ADVISORY.*.DELETED.>", cb=event)
            await a.flush()
            replies = await _replies(conns, expect=len(seen["jsemu"][0]) if seen else 0)
            purged = await conns["sys"].request("$JS.API.ACCOUNT.PURGE.A", b"", timeout=5)
            names = await a.request("$JS.API.STREAM.NAMES", b"", timeout=5)
            await asyncio.sleep(0.2)
            for _ in range(50):  # the purge's advisories, which nats-server may send late under load
                if len(events) >= 2:
                    break
                await asyncio.sleep(0.1)
            for nc in conns.values():
                await nc.close()
            seen[kind] = (replies, purged.data.decode(), json.loads(names.data)["streams"], sorted(events))
        assert seen["jsemu"] == seen["real"]
        assert seen["real"][3] == [
            ("$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.D", "io.nats.jetstream.advisory.v1.consumer_action", "delete"),
            ("$JS.EVENT.ADVISORY.STREAM.DELETED.S", "io.nats.jetstream.advisory.v1.stream_action", "delete"),
        ]


async def test_system_account_audits_as_nats_server(tmp_path: Path) -> None:
    """``$JS.EVENT.ADVISORY.API`` in the system account: ``client`` is ``{}`` for the system
    endpoints and ``INFO``, ``null`` for a ``system_response``; no reply, no audit."""
    requests = [
        ("ACCOUNT.PURGE.A/x", b""),
        ("ACCOUNT.PURGE.NOPE", b""),
        ("META.LEADER.STEPDOWN", b""),
        ("INFO", b""),
        ("STREAM.INFO.S", b""),
        ("STREAM.NAMES", b'{"offset":1}'),
    ]
    async for pair in _pair(tmp_path):
        seen: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            sys = await _connect(port, "sys")
            audits: list[dict[str, Any]] = []

            async def audit(msg: Any, into: list[dict[str, Any]] = audits) -> None:
                into.append(json.loads(msg.data))

            await sys.subscribe("$JS.EVENT.ADVISORY.API", cb=audit)
            await sys.flush()
            for subject, body in requests:
                await sys.publish(f"$JS.API.{subject}", body, reply="r.x")
            await sys.request("$JS.API.ACCOUNT.PURGE.LAST", b"", timeout=5)
            await asyncio.sleep(0.3)
            await sys.close()
            for event in audits:
                assert event.pop("server") and event.pop("id") and event.pop("timestamp")
            seen[kind] = sorted(audits, key=lambda e: e["subject"])
        assert seen["jsemu"] == seen["real"]
        assert [(e["subject"], e["client"]) for e in seen["real"]] == [
            ("$JS.API.ACCOUNT.PURGE.A/x", {}),
            ("$JS.API.ACCOUNT.PURGE.LAST", {}),
            ("$JS.API.ACCOUNT.PURGE.NOPE", {}),
            ("$JS.API.INFO", {}),
            ("$JS.API.STREAM.INFO.S", None),
            ("$JS.API.STREAM.NAMES", None),
        ]
