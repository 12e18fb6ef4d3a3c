"""Authentication-error events side by side with nats-server 2.15.1 (``server/auth_errors.py``).

Every refused login is announced as a ``client_disconnect`` advisory with reason
``Authentication Failure``: ``$SYS.ACCOUNT.CLIENT.AUTH.ERR`` in the account it was refused in
(``$G``, whoever the client claimed to be; the callout's account for a callout refusal; even
without a system account), and, in the system account, ``$SYS.SERVER.<id>.CLIENT.AUTH.ERR``
and ``$SYS.ACCOUNT.$G.DISCONNECT``. A first op that is not a CONNECT gets only the system
account's two. The refused client's ``user`` is the raw name it sent (``[REDACTED]`` for a
token), its ``jwt`` the JWT it sent, ``acc``/``name_tag`` ``$G``.

Listeners in each account subscribe to ``>`` (so an event in the wrong place is caught too);
only what differs between any two servers is normalised (ids, times, ports, the ``server``
block, the RTT, which nats-server measures differently)."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nats
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, PREFIX_USER, KeyPair
from jsemu.protocol.jwt.callout import response_jwt
from jsemu.testing.operator import OperatorSetup

from .test_auth import _pair

NKEY = KeyPair.create(PREFIX_USER)
CONF = f"""
accounts {{
  SYS: {{ users: [ {{user: sys, password: sys}} ] }}
  A: {{ users: [ {{user: a, password: a}}, {{nkey: {NKEY.public_key}}} ] }}
}}
authorization {{ users: [ {{user: g, password: g}} ] }}
system_account: SYS
"""

#: (what the client sends after INFO, events expected: the count nats-server sends).
ATTEMPTS: list[tuple[bytes, int]] = [
    (b'CONNECT {"user":"a","pass":"x","name":"n1","lang":"py","version":"1.0","verbose":false}\r\nPING\r\n', 3),
    (b'CONNECT {"user":"zz","pass":"x"}\r\nPING\r\n', 3),
    (b"CONNECT {}\r\nPING\r\n", 3),
    (b'CONNECT {"auth_token":"t"}\r\nPING\r\n', 3),
    (b'CONNECT {"user":"g","pass":"x"}\r\nPING\r\n', 3),
    (f'CONNECT {{"nkey":"{NKEY.public_key}","sig":"AAAA"}}\r\nPING\r\n'.encode(), 3),
    (b"PUB x 0\r\n\r\n", 2),  # not a CONNECT first: no account-scoped event
    # Logged in (its CONNECT event), then refused for naming an account: AUTH.ERR and
    # DISCONNECT with its own account.
    (b'CONNECT {"user":"a","pass":"a","account":"A"}\r\nPING\r\n', 3),
]

_VARYING = frozenset({"id", "timestamp", "start", "stop", "host", "rtt"})


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("*" if k in _VARYING else _norm(v)) for k, v in value.items() if k != "server"}
    return value


Events = list[tuple[str, str, Any]]


async def _listen(url: str, who: str, events: Events, **kwargs: Any) -> nats.NATS:
    nc = await nats.connect(url, allow_reconnect=False, **kwargs)

    async def seen(msg: Any) -> None:
        # Client events only: not the callout's requests and answers, nor the periodic STATSZ
        # and the account CONNS events (which jsemu does not send: see the accounts guide).
        event = json.loads(msg.data) if msg.data.startswith(b"{") else {}
        if "client" in event:
            events.append((who, msg.subject, event))

    await nc.subscribe(">", cb=seen)
    await nc.flush()
    return nc


async def _attempt(port: int, make: Callable[[dict[str, Any]], bytes]) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    info = json.loads((await reader.readline())[5:])
    writer.write(make(info))
    try:
        answer = await asyncio.wait_for(reader.read(4096), 3)
    finally:
        writer.close()
    return answer


async def _wait_for(events: Events, count: int) -> Events:
    for _ in range(200):  # up to 10 s: a loaded machine
        if len(events) >= count:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)  # and nothing more
    got = sorted(((who, subject.split(".")[1], _norm(e)) for who, subject, e in events), key=repr)
    events.clear()
    return got


def _subject_shape(subject: str, server_id: str) -> str:
    return subject.replace(server_id, "<id>")


async def test_config_mode_refusals_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, CONF):
        got: dict[str, list[Any]] = {}
        for kind, port in pair.ports.items():
            url = f"nats://127.0.0.1:{port}"
            events: Events = []
            listeners = [
                await _listen(url, who, events, user=who, password=who, name=f"listener-{who}")
                for who in ("sys", "a", "g")
            ]
            await asyncio.sleep(0.3)  # the listeners' own CONNECT events (nats-server: after the fact)
            events.clear()
            got[kind] = []
            for line, count in ATTEMPTS:
                answer = await _attempt(port, lambda info, line=line: line)
                seen = await _wait_for(events, count)
                got[kind].append((answer, len(seen), seen))
            for nc in listeners:
                await nc.close()
        assert got["real"][0][1] == 3 and got["real"][-2][1] == 2
        assert got["jsemu"] == got["real"]


async def test_subjects_of_a_refusal(tmp_path: Path) -> None:
    """Where each event goes: who hears what, by subject, on both servers."""
    async for pair in _pair(tmp_path, CONF):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            url = f"nats://127.0.0.1:{port}"
            events: Events = []
            listeners = [await _listen(url, who, events, user=who, password=who) for who in ("sys", "a", "g")]
            server_id = listeners[0]._server_info["server_id"]
            await asyncio.sleep(0.3)
            events.clear()
            await _attempt(port, lambda info: ATTEMPTS[0][0])
            for _ in range(200):
                if len(events) >= 3:
                    break
                await asyncio.sleep(0.05)
            got[kind] = sorted((who, _subject_shape(subject, server_id)) for who, subject, _ in events)
            for nc in listeners:
                await nc.close()
        assert got["real"] == [
            ("g", "$SYS.ACCOUNT.CLIENT.AUTH.ERR"),
            ("sys", "$SYS.ACCOUNT.$G.DISCONNECT"),
            ("sys", "$SYS.SERVER.<id>.CLIENT.AUTH.ERR"),
        ]
        assert got["jsemu"] == got["real"]


async def test_without_a_system_account(tmp_path: Path) -> None:
    """No system account configured: the global account's users still hear their refusals."""
    async for pair in _pair(tmp_path, "authorization { users: [ {user: g, password: g} ] }\n"):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            events: Events = []
            nc = await _listen(f"nats://127.0.0.1:{port}", "g", events, user="g", password="g")
            await _attempt(port, lambda info: b'CONNECT {"user":"g","pass":"no"}\r\nPING\r\n')
            got[kind] = [(subject, who, _norm(e)) for who, subject, e in await _wait_for_raw(events, 1)]
            await nc.close()
        assert [s for s, _, _ in got["real"]] == ["$SYS.ACCOUNT.CLIENT.AUTH.ERR"]
        assert got["jsemu"] == got["real"]


async def _wait_for_raw(events: Events, count: int) -> Events:
    for _ in range(200):
        if len(events) >= count:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)
    got = list(events)
    events.clear()
    return got


async def test_operator_mode_refusals(tmp_path: Path) -> None:
    """A JWT whose nonce signature fails, one signed by another key, an expired one: the events
    carry the JWT sent and no ``user``."""
    setup = OperatorSetup(tmp_path / "creds")
    setup.account("APP")
    setup.user("app", "APP")
    setup.user("admin", "SYS")
    app = setup.users["app"]
    expired = setup.user("expired", "APP", exp=int(time.time()) - 10)

    def bad_sig(info: dict[str, Any]) -> bytes:
        return b"CONNECT " + json.dumps({"jwt": app.jwt, "sig": "AAAA", "name": "bad"}).encode() + b"\r\nPING\r\n"

    def forged(info: dict[str, Any]) -> bytes:  # signed, but by a key that is not the JWT's
        other = KeyPair.create(PREFIX_USER)
        sig = base64.urlsafe_b64encode(other.sign(info["nonce"].encode())).rstrip(b"=").decode()
        return b"CONNECT " + json.dumps({"jwt": app.jwt, "sig": sig}).encode() + b"\r\nPING\r\n"

    def signed_expired(info: dict[str, Any]) -> bytes:  # the signature checks out, the JWT has expired
        sig = base64.urlsafe_b64encode(expired.key.sign(info["nonce"].encode())).rstrip(b"=").decode()
        return b"CONNECT " + json.dumps({"jwt": expired.jwt, "sig": sig}).encode() + b"\r\nPING\r\n"

    async for pair in _pair(tmp_path, setup.config_text()):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            url = f"nats://127.0.0.1:{port}"
            events: Events = []
            listeners = [
                await _listen(url, "sys", events, user_credentials=str(setup.users["admin"].creds_path)),
                await _listen(url, "app", events, user_credentials=str(app.creds_path)),
            ]
            await asyncio.sleep(0.3)
            events.clear()
            got[kind] = []
            for make in (
                bad_sig,
                forged,
                signed_expired,
                lambda info: b'CONNECT {"user":"x","pass":"y"}\r\nPING\r\n',
            ):
                await _attempt(port, make)
                seen = [(who, s, e) for who, s, e in await _wait_for_raw(events, 2) if "AUTH.ERR" in s or "$G" in s]
                got[kind].append(sorted(((who, s.split(".")[1], _norm(e)) for who, s, e in seen), key=repr))
            for nc in listeners:
                await nc.close()
        assert [len(seen) for seen in got["real"]] == [2, 2, 2, 2]
        assert got["real"][0][0][2]["client"]["jwt"] == app.jwt
        assert got["jsemu"] == got["real"]


ISSUER = KeyPair.create(PREFIX_ACCOUNT)
CALLOUT_CONF = f"""
accounts {{
  AUTH {{ users: [ {{user: auth, password: pwd}} ] }}
  APP {{ users: [ {{user: known, password: pw}} ] }}
}}
authorization {{
  timeout: 0.5
  auth_callout {{ issuer: {ISSUER.public_key}, auth_users: [ auth ], account: AUTH }}
}}
"""


async def test_callout_refusals_in_the_callout_account(tmp_path: Path) -> None:
    """The callout says no, or nothing in time: the event goes to the callout's account
    (``acc``: AUTH), its reason the refusal's text (empty for no answer)."""
    async for pair in _pair(tmp_path, CALLOUT_CONF):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            url = f"nats://127.0.0.1:{port}"
            service = await nats.connect(url, user="auth", password="pwd", allow_reconnect=False)

            async def handler(msg: Any) -> None:
                part = msg.data.decode().split(".")[1]
                request = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
                user, server = request["nats"]["user_nkey"], request["nats"]["server_id"]["id"]
                if request["nats"]["connect_opts"].get("name") != "silent":
                    await msg.respond(response_jwt(user, server, ISSUER, error="go away").encode())

            await service.subscribe("$SYS.REQ.USER.AUTH", cb=handler)
            events: Events = []
            listener = await _listen(url, "auth", events, user="auth", password="pwd")
            got[kind] = []
            for name in ("cli", "silent"):
                line = b'CONNECT {"user":"alice","pass":"s","name":"%s"}\r\nPING\r\n' % name.encode()
                answer = await _attempt(port, lambda info, line=line: line)
                seen = [(s, who, _norm(e)) for who, s, e in await _wait_for_raw(events, 1) if "AUTH.ERR" in s]
                got[kind].append((answer, seen))
            await listener.close()
            await service.close()
        assert all(answer.startswith(b"-ERR 'Authorization Violation'") for answer, _ in got["real"])
        assert [[(s, e["client"]["acc"], e["reason"]) for s, _, e in seen] for _, seen in got["real"]] == [
            [("$SYS.ACCOUNT.CLIENT.AUTH.ERR", "AUTH", "Auth callout service returned an error: go away")],
            [("$SYS.ACCOUNT.CLIENT.AUTH.ERR", "AUTH", "")],
        ]
        assert got["jsemu"] == got["real"]


RELOADED = """
accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  A: { users: [ {user: a, password: %s} ] }
}
system_account: SYS
"""


async def test_reload_that_refuses_a_client(tmp_path: Path) -> None:
    """A reload changes a logged-in user's password: ``CLIENT.AUTH.ERR`` with its own account
    (``acc``, ``name_tag``), then its account's ``DISCONNECT``, both ``Authentication Failure``."""
    got: dict[str, Any] = {}
    for kind in KINDS:
        server = RealServer(conf_text=RELOADED % "a", jetstream=False, jsemu_process=kind == "jsemu")
        try:
            url = f"nats://127.0.0.1:{server.port}"
            events: Events = []
            listener = await _listen(url, "sys", events, user="sys", password="sys", name="listener")
            victim = await nats.connect(url, user="a", password="a", name="victim", allow_reconnect=False)
            await asyncio.sleep(0.3)
            events.clear()
            (Path(server.tmp.name) / "server.conf").write_text(RELOADED % "b" + "\n")
            server.proc.send_signal(signal.SIGHUP)
            for _ in range(200):
                if sum(1 for _, s, e in events if e["client"].get("name") == "victim") >= 2:
                    break
                await asyncio.sleep(0.05)
            seen = [(s.split(".")[1], _norm(e)) for _, s, e in events if e["client"].get("name") == "victim"]
            got[kind] = sorted(seen, key=repr)
            await victim.close()
            await listener.close()
        finally:
            server.stop()
    assert [(t, e["client"]["acc"], e["client"]["name_tag"], e["reason"]) for t, e in got["real"]] == [
        ("ACCOUNT", "A", "A", "Authentication Failure"),
        ("SERVER", "A", "A", "Authentication Failure"),
    ]
    assert got["jsemu"] == got["real"]
