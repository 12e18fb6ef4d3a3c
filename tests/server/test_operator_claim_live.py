"""Account claim updates applied to connected clients, side by side with nats-server 2.15.1
(raw clients, so every frame each one gets is compared):

1. ``conn`` lowered below the connected count: the oldest clients stay, each later one gets
   ``-ERR 'maximum account active connections exceeded'`` and is closed;
2. a signing key removed, and a scoped key's template changed: their users are closed without a
   word; users of another key or of the account's own key stay;
3. ``exp`` in the past: the connected clients stay; ``exp`` two seconds ahead: ``-ERR 'Account
   Authentication Expired'`` then, on the server's clock;
4. JetStream turned on (``$JS.API.INFO`` answers, a stream is created), off (not enabled for
   account, a publish to the stream hears no responders) and on again (the stream is back);
5. exports and imports changed on either side (a stream export removed, a service export made
   private, the importer's imports removed and added): the importer's clients see or stop
   seeing the messages and responses at once;
6. an account pushed to the ``full`` resolver while running gets its imports, also when it is
   pushed before the account it imports from;
7. (memory resolver) lowered ``payload`` and ``subs`` (a client at the new ``subs`` closed with
   ``maximum subscriptions exceeded``, a larger PUB then ``Maximum Payload Violation``), new
   ``default_permissions`` for users without their own (a subscription they deny removed with its
   ``-ERR``), ``disallow_bearer`` (bearer users closed with ``Authorization Violation``, and
   refused at login); an account whose JWT (loaded at start) expires while the server runs.
8. the ``full`` resolver stores an account JWT whose ``exp`` is past and answers ``jwt updated``
   (the memory resolver refuses it: ``account validation failed``), but the account keeps its
   claims: connected clients stay and its users still log in.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from pathlib import Path
from typing import Any

import nats
from support.rawclient import RawClient
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.testing.operator import MintedUser, OperatorSetup

JS = {"streams": 2, "mem_storage": -1, "disk_storage": -1}


async def login(port: int, user: MintedUser) -> RawClient:
    raw = await RawClient.connect(port)
    sig = base64.urlsafe_b64encode(user.key.sign(raw.info["nonce"].encode())).rstrip(b"=").decode()
    connect = {"jwt": user.jwt, "sig": sig, "verbose": False, "headers": True, "no_responders": True}
    raw.send(b"CONNECT " + json.dumps(connect).encode() + b"\r\n")
    assert await raw.round_trip() == []
    return raw


async def settle(raw: RawClient, data: bytes, wait: float = 0.4) -> list[bytes]:
    """Send ``data``, give the server ``wait`` seconds, then PING: every frame before the PONG
    (the server's own PINGs answered and left out)."""
    raw.send(data)
    await asyncio.sleep(wait)
    return await raw.round_trip()


def shown(frames: list[bytes]) -> list[Any]:
    """Frames to compare: a JSON reply cut to what does not vary (times, ids), the
    ``Nats-Request-Info`` round-trip time left out."""
    out: list[Any] = []
    for frame in frames:
        head, _, body = frame.partition(b"\r\n")
        if body.startswith(b"{"):
            reply = json.loads(body)
            state = reply.get("state") or {}
            limits = reply.get("limits") or {}
            out.append([head.split()[1], reply.get("error"), state.get("messages"), limits.get("max_streams")])
        else:
            out.append(re.sub(rb'"rtt":\d+', b'"rtt":0', re.sub(rb"HMSG (\S+ \S+) \d+ \d+", rb"HMSG \1", frame)))
    return out


async def _clients_and_jetstream(kind: str, setup: OperatorSetup, conf: str, keys: dict[str, Any]) -> dict[str, Any]:
    server = RealServer(conf_text=conf, jetstream=True, jsemu_process=kind == "jsemu")
    seen: dict[str, Any] = {}
    try:
        admin = await nats.connect(
            f"nats://127.0.0.1:{server.port}", user_credentials=str(setup.users["admin"].creds_path)
        )

        async def push(name: str, **claims: Any) -> Any:
            account = setup.account(name, **claims)
            subject = f"$SYS.REQ.ACCOUNT.{account.public_key}.CLAIMS.UPDATE"
            reply = json.loads((await admin.request(subject, account.jwt.encode(), timeout=3)).data)
            return reply["data"]["message"] if "data" in reply else reply["error"]["description"]

        names = ["u1", "u2", "u3", "u4", "c0", "c1", "c2", "j", "n"]
        c = {name: await login(server.port, setup.users[name]) for name in names}
        seen["conn"] = await push("CONN", conn=1)
        for name in ("c0", "c1", "c2"):
            seen[name] = await c[name].round_trip()
        scope = {**keys["scope"], "template": {**keys["scope"]["template"], "pub": {"allow": ["b.>"]}}}
        seen["keys"] = await push("APP", signing_keys=[keys["sk2"], scope])
        for name in ("u1", "u2", "u3", "u4"):
            seen[name] = await c[name].round_trip()
        n = c["n"]
        n.send(b"SUB _INBOX.n 1\r\n")
        info = b"PUB $JS.API.INFO _INBOX.n 0\r\n\r\n"
        stream = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "file"}).encode()
        create = b"PUB $JS.API.STREAM.CREATE.S _INBOX.n %d\r\n%s\r\n" % (len(stream), stream)
        publish = b"PUB s.1 _INBOX.n 2\r\nhi\r\n"
        stream_info = b"PUB $JS.API.STREAM.INFO.S _INBOX.n 0\r\n\r\n"
        seen["js before"] = shown(await settle(n, info))
        seen["js on"] = await push("NOJS", jetstream=JS)
        seen["js on: info, create, publish"] = [shown(await settle(n, req)) for req in (info, create, publish)]
        seen["js off"] = await push("NOJS")
        seen["js off: info, publish, stream info"] = [
            shown(await settle(n, req)) for req in (info, publish, stream_info)
        ]
        seen["js on again"] = await push("NOJS", jetstream=JS)
        seen["js on again: stream info, publish"] = [shown(await settle(n, req)) for req in (stream_info, publish)]
        seen["exp past"] = await push("EXPX", exp=int(time.time()) - 5)
        seen["j after exp past"] = await c["j"].round_trip()
        seen["exp soon"] = await push("EXPX", exp=int(time.time()) + 2)
        seen["j at once"] = await c["j"].round_trip()
        started = time.monotonic()
        seen["j later"] = await c["j"].read_until_closed(8)
        seen["j closed after more than a second"] = time.monotonic() - started > 1.0
        await admin.close()
    finally:
        server.stop()
    return seen


async def test_claim_updates_reach_connected_clients(tmp_path: Path) -> None:
    setup = OperatorSetup(tmp_path)
    sk1, sk2, sk3 = (KeyPair.create(PREFIX_ACCOUNT) for _ in range(3))
    template = {"pub": {"allow": ["a.>"]}, "sub": {}, "subs": -1, "data": -1, "payload": -1}
    scope = {"kind": "user_scope", "key": sk3.public_key, "role": "r", "template": template}
    setup.account("APP", signing_keys=[sk1.public_key, sk2.public_key, scope])
    setup.account("CONN")
    setup.account("EXPX")
    setup.account("NOJS")
    setup.user("admin", "SYS")
    setup.user("u1", "APP", signer=sk1)
    setup.user("u2", "APP", signer=sk2)
    setup.user("u3", "APP")
    setup.user("u4", "APP", signer=sk3)
    for i in range(3):
        setup.user(f"c{i}", "CONN")
    setup.user("j", "EXPX")
    setup.user("n", "NOJS")
    conf = setup.config_text()
    keys = {"sk2": sk2.public_key, "scope": scope}
    runs = [_clients_and_jetstream(kind, setup, conf, keys) for kind in KINDS]  # both servers at once
    got = dict(zip(KINDS, await asyncio.gather(*runs), strict=True))
    assert got["jsemu"] == got["real"]
    real = got["real"]
    closed = b"<connection closed>"
    assert real["c0"] == [] and real["c2"] == [b"-ERR 'maximum account active connections exceeded'\r\n", closed]
    assert real["u1"] == real["u4"] == [closed] and real["u2"] == real["u3"] == []
    assert real["j after exp past"] == [] and real["j later"] == [b"-ERR 'Account Authentication Expired'\r\n"]
    assert real["js on again: stream info, publish"][0][0][2] == 1  # the stream's message kept


async def _imports(
    kind: str, setup: OperatorSetup, conf: str, exports: list[Any], imports: list[Any]
) -> dict[str, Any]:
    server = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu")
    url = f"nats://127.0.0.1:{server.port}"
    seen: dict[str, Any] = {}
    try:
        admin = await nats.connect(url, user_credentials=str(setup.users["admin"].creds_path))
        exporter = await nats.connect(url, user_credentials=str(setup.users["e"].creds_path))

        async def answer(msg: Any) -> None:
            await msg.respond(b"ok")

        await exporter.subscribe("svc.>", cb=answer)
        await exporter.flush()

        async def push(name: str, **claims: Any) -> Any:
            account = setup.account(name, **claims)
            subject = f"$SYS.REQ.ACCOUNT.{account.public_key}.CLAIMS.UPDATE"
            return json.loads((await admin.request(subject, account.jwt.encode(), timeout=3)).data)["data"]["message"]

        async def probe(raw: RawClient, n: int) -> list[Any]:
            await exporter.publish(f"feed.{n}", b"f")
            await exporter.flush()
            # the feed comes through another connection: its order with the response varies
            return sorted(shown(await settle(raw, b"PUB svc.x _INBOX.i 1\r\nr\r\n")))

        i = await login(server.port, setup.users["i"])
        assert await settle(i, b"SUB feed.> 1\r\nSUB _INBOX.i 2\r\n", 0) == []
        steps: list[tuple[str, dict[str, Any]]] = [
            ("EXP", {"exports": [exports[1]]}),
            ("EXP", {"exports": [exports[0], {**exports[1], "token_req": True}]}),
            ("EXP", {"exports": exports}),
            ("IMP", {"imports": []}),
            ("IMP", {"imports": imports}),
            ("IMP", {"imports": [imports[1]]}),
        ]
        seen["start"] = await probe(i, 0)
        for n, (name, claims) in enumerate(steps, 1):
            seen[f"{n}: {name} {claims}"] = (await push(name, **claims), await probe(i, n))
        x = await login(server.port, setup.users["x"])
        seen["exp past (full resolver)"] = await push("OLD", exp=int(time.time()) - 5)
        seen["x after exp past"] = await x.round_trip()
        late = await RawClient.connect(server.port)
        sig = base64.urlsafe_b64encode(setup.users["x"].key.sign(late.info["nonce"].encode())).rstrip(b"=").decode()
        connect = json.dumps({"jwt": setup.users["x"].jwt, "sig": sig}).encode()
        seen["x logs in again"] = await settle(late, b"CONNECT %s\r\n" % connect, 0)
        seen["pushed"] = await push("NEW", imports=imports)
        new = await login(server.port, setup.users["nw"])
        assert await settle(new, b"SUB feed.> 1\r\nSUB _INBOX.i 2\r\n", 0) == []
        seen["pushed account"] = await probe(new, 10)
        seen["importer pushed before its exporter"] = await push("EARLY", **setup.accounts["EARLY"].claims)
        early = await login(server.port, setup.users["early"])
        assert await settle(early, b"SUB late.> 1\r\n", 0) == []
        seen["its exporter pushed"] = await push("LATE", **setup.accounts["LATE"].claims)
        late = await nats.connect(url, user_credentials=str(setup.users["late"].creds_path))
        held: list[bytes] = []
        for n in range(6):  # nats-server refreshes the importer when the exporter is first looked up
            await late.publish(f"late.{n}", b"x")
            await late.flush()
            held += await settle(early, b"", 0.5)
            if held:
                break
        seen["the import holds"] = bool(held)
        await late.close()
        await admin.close()
        await exporter.close()
    finally:
        server.stop()
    return seen


async def test_import_and_export_updates_as_nats_server(tmp_path: Path) -> None:
    setup = OperatorSetup(tmp_path)
    setup.resolver = "full"
    exports = [
        {"name": "feed", "subject": "feed.>", "type": "stream"},
        {"name": "svc", "subject": "svc.>", "type": "service"},
    ]
    exporter = setup.account("EXP", exports=exports)
    imports = [
        {"name": "feed", "subject": "feed.>", "account": exporter.public_key, "type": "stream"},
        {"name": "svc", "subject": "svc.x", "account": exporter.public_key, "type": "service"},
    ]
    setup.account("IMP", imports=imports)
    setup.user("admin", "SYS")
    setup.user("e", "EXP")
    setup.user("i", "IMP")
    setup.account("OLD")
    setup.user("x", "OLD")
    conf = setup.config_text()
    setup.account("NEW", imports=imports)  # pushed while the server runs
    setup.user("nw", "NEW")
    late = setup.account("LATE", exports=[{"name": "l", "subject": "late.>", "type": "stream"}])
    setup.account("EARLY", imports=[{"name": "l", "subject": "late.>", "account": late.public_key, "type": "stream"}])
    setup.user("late", "LATE")
    setup.user("early", "EARLY")
    # both servers at once, each with its own directory
    runs = [
        _imports(kind, setup, conf.replace(str(tmp_path / "jwt"), str(tmp_path / kind)), exports, imports)
        for kind in KINDS
    ]
    got = dict(zip(KINDS, await asyncio.gather(*runs), strict=True))
    for key in got["real"]:
        assert got["jsemu"][key] == got["real"][key], key
    assert len(got["real"]["1: EXP {'exports': [" + repr(exports[1]) + "]}"][1]) == 1  # no feed.1
    assert b"MSG feed.10 1 1\r\nf\r\n" in got["real"]["pushed account"]
    assert got["real"]["x after exp past"] == [] and got["real"]["x logs in again"] == [b"+OK\r\n"]
    assert got["real"]["the import holds"]


_LIMITS = {
    "subs": -1,
    "data": -1,
    "payload": -1,
    "imports": -1,
    "exports": -1,
    "wildcards": True,
    "conn": -1,
    "leaf": -1,
}


class _Late(Exception):
    """A login came after the account it needs expired: the machine was too slow for the
    margin the test gave (the server's start and the logins before took longer)."""


async def _limits(kind: str, setup: OperatorSetup, conf: str, soon_exp: int) -> dict[str, Any]:
    server = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu")
    seen: dict[str, Any] = {}
    try:
        admin = await nats.connect(
            f"nats://127.0.0.1:{server.port}", user_credentials=str(setup.users["admin"].creds_path)
        )

        async def push(name: str, **claims: Any) -> Any:
            account = setup.account(name, **claims)
            subject = f"$SYS.REQ.ACCOUNT.{account.public_key}.CLAIMS.UPDATE"
            return json.loads((await admin.request(subject, account.jwt.encode(), timeout=3)).data)["data"]["message"]

        async def bearer() -> list[bytes]:
            raw = await RawClient.connect(server.port)
            raw.send(b"CONNECT %s\r\n" % json.dumps({"jwt": setup.users["b"].jwt, "verbose": True}).encode())
            return await raw.round_trip()

        c = {name: await login(server.port, setup.users[name]) for name in ("p", "s", "d", "own", "b2")}
        try:
            c["soon"] = await login(server.port, setup.users["soon"])
        except AssertionError:
            if time.time() >= soon_exp - 0.5:
                raise _Late from None
            raise
        b = await RawClient.connect(server.port)
        b.send(b"CONNECT %s\r\n" % json.dumps({"jwt": setup.users["b"].jwt}).encode())
        seen["bearer"] = await b.round_trip()
        seen["subs"] = await settle(c["s"], b"SUB a 1\r\nSUB b 2\r\nSUB c 3\r\n")
        seen["d subs"] = await settle(c["d"], b"SUB y.1 1\r\nSUB z.1 2\r\n")
        seen["limits"] = await push("LIM", payload=10, subs=2)
        seen["p"] = await settle(c["p"], b"", 0.2)
        seen["s"] = await c["s"].read_until_closed(5)  # nats-server closes it 20 ms after its -ERR
        seen["p publishes 20 bytes"] = await settle(c["p"], b"PUB x 20\r\n01234567890123456789\r\n", 0.2)
        defaults = {"default_permissions": {"pub": {"deny": ["x.>"]}, "sub": {"deny": ["y.>"]}}}
        seen["defaults"] = await push("DP", extra=defaults)
        for name in ("d", "own"):
            seen[name] = await settle(c[name], b"PUB x.1 0\r\n\r\nPUB own.1 0\r\n\r\n", 0.2)
        seen["bearer disallowed"] = await push("BR", extra={"limits": {**_LIMITS, "disallow_bearer": True}})
        seen["b"] = await b.read_until_closed(5)
        seen["b2"] = await settle(c["b2"], b"", 0.2)
        seen["bearer logs in again"] = await bearer()
        frames = await c["soon"].read_until_closed(8)
        seen["an account expiring after start"] = [f for f in frames if f != b"PING\r\n"]  # keepalive timing
        await admin.close()
    finally:
        server.stop()
    return seen


async def test_limits_permissions_and_bearer_updates(tmp_path: Path) -> None:
    """Lowered ``payload`` and ``subs``, new ``default_permissions`` (a user with permissions of
    its own keeps them) and ``disallow_bearer`` applied to connected clients (memory resolver)."""
    setup = OperatorSetup(tmp_path)
    setup.user("admin", "SYS")
    for name in ("LIM", "DP", "BR"):
        setup.account(name)
    setup.user("p", "LIM")
    setup.user("s", "LIM")
    setup.user("d", "DP")
    setup.user("own", "DP", pub={"allow": [">"]})
    setup.user("b", "BR", bearer_token=True)
    setup.user("b2", "BR")
    setup.account("SOON")
    setup.user("soon", "SOON")
    for margin in (4, 15):  # a longer one when a loaded machine started the servers too slowly
        soon_exp = int(time.time()) + margin
        setup.account("SOON", exp=soon_exp)  # expires while the servers run
        conf = setup.config_text()
        runs = await asyncio.gather(*(_limits(kind, setup, conf, soon_exp) for kind in KINDS), return_exceptions=True)
        if not any(isinstance(run, _Late) for run in runs) or margin == 15:
            break
    for run in runs:
        if isinstance(run, BaseException):
            raise run
    got = dict(zip(KINDS, runs, strict=True))
    for key in got["real"]:
        assert got["jsemu"][key] == got["real"][key], key
    real = got["real"]
    assert real["s"] == [b"-ERR 'maximum subscriptions exceeded'\r\n"]
    assert real["b"] == [b"-ERR 'Authorization Violation'\r\n"] and real["b2"] == []
    assert real["an account expiring after start"] == [b"-ERR 'Account Authentication Expired'\r\n"]
