"""The system account side by side with nats-server 2.15.1, the same file given to both:
``$SYS.REQ.SERVER`` requests (what ``nats server list`` / ``report`` / ``info`` / ``check``
send), ``$SYS.ACCOUNT.<acc>.CONNECT`` / ``DISCONNECT`` events, and the isolation of the
system account (other accounts see none of it; it has no JetStream).

Only what differs between any two servers is normalised: ids and names, times, versions,
ports, memory and CPU figures, the message ``seq`` and the subscription count (nats-server's
own internal subscriptions are counted there)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
from nats.errors import NoRespondersError

import jsemu
from jsemu.config.server_config import load_config

from .test_auth import Pair, _RealWithConfig

CONF = """
jetstream {{ store_dir: "{store}" }}
accounts {{
  SYS: {{ users: [ {{user: sys, password: sys}} ] }}
  A: {{ users: [ {{user: a, password: a}} ], jetstream: enabled }}
}}
system_account: SYS
"""

#: Values that differ between any two servers (or processes, or machines).
_VARYING = frozenset(
    {
        "id",
        "server_id",
        "name",
        "server_name",
        "time",
        "now",
        "start",
        "stop",
        "timestamp",
        "seq",
        "git_commit",
        "go",
        "port",
        "mem",
        "cpu",
        "cores",
        "gomaxprocs",
        "max_memory",
        "max_storage",
        "store_dir",
        "subscriptions",
        "uptime",
        "config_load_time",
        "rtt",
        "last_activity",
        "idle",
    }
)


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("*" if k in _VARYING else _norm(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


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


async def _connect(port: int, user: str, **kwargs: Any) -> nats.NATS:
    return await nats.connect(f"nats://127.0.0.1:{port}", user=user, password=user, **kwargs)


async def _ask(nc: nats.NATS, subject: str, body: bytes = b"") -> Any:
    try:
        msg = await nc.request(subject, body, timeout=2)
    except NoRespondersError:
        return "no responders"
    return json.loads(msg.data)


#: (subject with ``<id>`` for the server's id, request body): the requests client tools send.
REQUESTS = [
    ("$SYS.REQ.SERVER.PING", b""),
    ("$SYS.REQ.SERVER.PING.STATSZ", b""),
    ("$SYS.REQ.SERVER.PING.HEALTHZ", b""),
    ("$SYS.REQ.SERVER.<id>.HEALTHZ", b""),
    ("$SYS.REQ.SERVER.PING.IDZ", b""),
    ("$SYS.REQ.SERVER.PING.VARZ", b"not json"),
    ("$SYS.REQ.SERVER.PING.CONNZ", b"{"),
    ("$SYS.REQ.SERVER.PING.VARZ", b"[1]"),
    ("$SYS.REQ.SERVER.PING.JSZ", b'"x"'),
    ("$SYS.REQ.SERVER.PING.HEALTHZ", b"{} {}"),
    ("$SYS.REQ.SERVER.PING", b"null"),
    ("$SYS.REQ.SERVER.NOPE.VARZ", b""),
    ("$SYS.REQ.SERVER.PING.NOPEZ", b""),
]


async def test_server_requests_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        got: dict[str, list[Any]] = {}
        sent: dict[str, list[int]] = {}
        for kind, port in pair.ports.items():
            nc = await _connect(port, "sys")
            server_id = nc._server_info["server_id"]
            answers = []
            sent[kind] = []
            for subject, body in REQUESTS:
                answer = await _ask(nc, subject.replace("<id>", server_id), body)
                if isinstance(answer, dict) and "statsz" in answer:
                    for key in ("sent", "sent_to_clients"):  # replies so far: their size follows the ids'
                        answer["statsz"][key]["bytes"] = "*"
                        sent[kind].append(answer["statsz"][key]["msgs"])
                        answer["statsz"][key]["msgs"] = "*"
                answers.append(_norm(answer))
            await nc.close()
            got[kind] = answers
        assert got["jsemu"] == got["real"]
        # nats-server counts a reply once its send queue's goroutine has sent it: under load the
        # previous reply may not be counted yet (one less), never more.
        assert all(e - 1 <= r <= e for e, r in zip(sent["jsemu"], sent["real"], strict=True)), sent
        assert sent["jsemu"] == [0, 0, 1, 1, 10, 10], sent  # the PING, PING.STATSZ and last PING replies


async def test_monitoring_endpoints_in_the_envelope(tmp_path: Path) -> None:
    """VARZ, CONNZ and JSZ carry the monitor's JSON in ``data`` (its fields are compared with
    nats-server's by tests/server/test_monitoring.py): the envelope and the figures a tool reads."""
    async for pair in _pair(tmp_path):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            nc = await _connect(port, "sys")
            a = await _connect(port, "a", name="client-a")
            server_id = nc._server_info["server_id"]
            varz = await _ask(nc, f"$SYS.REQ.SERVER.{server_id}.VARZ")
            connz = await _ask(nc, "$SYS.REQ.SERVER.PING.CONNZ", b'{"limit": 1, "offset": 1}')
            jsz = await _ask(nc, "$SYS.REQ.SERVER.PING.JSZ", b'{"accounts": true}')
            await a.close()
            await nc.close()
            assert varz["server"]["id"] == varz["data"]["server_id"] == server_id
            got[kind] = (
                _norm(varz["server"]),
                {k: varz["data"][k] for k in ("connections", "total_connections", "system_account", "max_payload")},
                [(c["cid"] > 0, c.get("name")) for c in connz["data"]["connections"]],
                {k: connz["data"][k] for k in ("num_connections", "total", "offset", "limit")},
                [d["name"] for d in jsz["data"]["account_details"]],
                {k: jsz["data"][k] for k in ("streams", "consumers", "total")},
            )
        assert got["jsemu"] == got["real"]


async def test_connect_and_disconnect_events_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        got: dict[str, list[Any]] = {}
        for kind, port in pair.ports.items():
            nc = await _connect(port, "sys", name="listener")
            events: list[tuple[str, Any]] = []

            async def seen(msg: Any, into: list[tuple[str, Any]] = events) -> None:
                event = json.loads(msg.data)
                # nats-server sends events from its send queue, after the fact: on a loaded
                # machine the listener's own CONNECT came after its subscription (seen once).
                if event["client"].get("name") != "listener":
                    into.append((msg.subject, event))

            await nc.subscribe("$SYS.ACCOUNT.*.CONNECT", cb=seen)
            await nc.subscribe("$SYS.ACCOUNT.*.DISCONNECT", cb=seen)
            await nc.flush()
            a = await _connect(port, "a", name="client-a")
            await a.publish("x", b"hello")
            await a.flush()
            await a.close()
            other = await _connect(port, "sys", name="tool")
            await other.close()
            for _ in range(200):  # up to 10 s: a loaded CI machine runs 4 test workers on 2 cores
                if len(events) >= 4:
                    break
                await asyncio.sleep(0.05)
            await nc.close()
            for _, event in events:
                assert event["client"]["id"] > 0 and event["client"]["host"] == "127.0.0.1"
                event["client"]["id"] = event["client"]["host"] = "*"
                # nats-server measures RTT with a PING right after CONNECT (jsemu after ~2 s).
                event["client"].pop("rtt", None)
            # Events of different connections race each other on nats-server: compare them in subject order.
            got[kind] = sorted(((subject, _norm(event)) for subject, event in events), key=lambda e: e[0])
        assert [s for s, _ in got["real"]] == [
            "$SYS.ACCOUNT.A.CONNECT",
            "$SYS.ACCOUNT.A.DISCONNECT",
            "$SYS.ACCOUNT.SYS.CONNECT",
            "$SYS.ACCOUNT.SYS.DISCONNECT",
        ]
        assert got["jsemu"] == got["real"]


async def test_other_accounts_do_not_see_the_system_account(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            a = await _connect(port, "a")
            ping = await _ask(a, "$SYS.REQ.SERVER.PING")
            heard: list[str] = []

            async def seen(msg: Any, into: list[str] = heard) -> None:
                into.append(msg.subject)

            await a.subscribe("$SYS.>", cb=seen)
            await a.flush()
            other = await _connect(port, "a")
            await other.close()
            sys_client = await _connect(port, "sys")
            js_info = await _ask(sys_client, "$JS.API.INFO")
            await asyncio.sleep(0.2)
            await sys_client.close()
            await a.close()
            got[kind] = heard, ping, js_info
        assert got["real"] == ([], "no responders", got["real"][2])
        assert got["real"][2]["error"]["err_code"] == 10039  # no JetStream in the system account
        assert got["jsemu"] == got["real"]


async def test_events_are_built_only_for_a_listener(tmp_path: Path) -> None:
    """Nobody in SYS listens: connecting and leaving costs no event (``seq`` counts every
    message the system account sends)."""
    options = jsemu.ServerOptions()
    (tmp_path / "server.conf").write_text(CONF.format(store=tmp_path))
    load_config(tmp_path / "server.conf", options)
    options.host, options.port, options.store_dir = "127.0.0.1", 0, None
    async with jsemu.Server(options) as emu:
        for _ in range(3):
            await (await _connect(emu.port, "a")).close()
        nc = await _connect(emu.port, "sys")
        answer = await _ask(nc, "$SYS.REQ.SERVER.PING")
        await nc.close()
    assert answer["server"]["seq"] == 1


async def test_default_system_account_is_dollar_sys(tmp_path: Path) -> None:
    """Without ``system_account``, an account named ``$SYS`` is the system account, and /varz
    names the configured one."""
    conf = tmp_path / "server.conf"
    conf.write_text('accounts { "$SYS": { users: [ {user: sys, password: sys} ] } }\n')
    options = jsemu.ServerOptions()
    load_config(conf, options)
    options.host, options.port = "127.0.0.1", 0
    async with jsemu.Server(options) as emu:
        nc = await _connect(emu.port, "sys")
        ping = await _ask(nc, "$SYS.REQ.SERVER.PING.EXPVARZ")
        varz = await _ask(nc, "$SYS.REQ.SERVER.PING.VARZ")
        await nc.close()
    assert ping["data"] is None
    assert ping["error"] == {"code": 500, "description": "$SYS.REQ.SERVER.*.EXPVARZ is not implemented by jsemu"}
    assert varz["data"]["system_account"] == "$SYS"
