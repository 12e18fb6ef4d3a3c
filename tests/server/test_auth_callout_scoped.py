"""Operator-mode auth callout users issued by a signing key of the account they are placed in,
side by side with nats-server 2.15.1 (``auth_callout.go`` ``assignAccountAndPermissions``): a
user JWT a *scoped* key signs takes the scope's template (its ``{{name()}}``, ``{{subject()}}``,
``{{account-name()}}`` filled in) as its permissions; one that sets permissions or limits of its
own is refused (``ValidateScopedSigner``), as is one whose template cannot be filled (a
``{{tag(...)}}`` the user has not); an unscoped signing key's user keeps its own permissions; the
template's ``subs`` limit is not applied (the callout's user is an nkey user to nats-server). A
claim update that removes the key, or changes its scope, closes those users without a word."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from typing import Any

import nats
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.protocol.jwt.callout import response_jwt
from jsemu.protocol.jwt.mint import user_jwt
from jsemu.testing.operator import OperatorSetup

SCOPED = KeyPair.create(PREFIX_ACCOUNT)
TAGGED = KeyPair.create(PREFIX_ACCOUNT)
PLAIN = KeyPair.create(PREFIX_ACCOUNT)

TEMPLATE = {
    "pub": {"allow": ["ok.{{name()}}.>", "acc.{{account-name()}}", "me.{{subject()}}"]},
    "sub": {"allow": ["in.>"]},
    "subs": 1,
}

#: What each granted client does after its CONNECT (then PING).
AFTER = (
    b"PUB ok.bob.1 1\r\na\r\nPUB ok.eve.1 1\r\na\r\nPUB acc.APP 1\r\na\r\nPUB no 1\r\na\r\n"
    b"SUB in.a 1\r\nSUB in.b 2\r\nSUB out 3\r\nPING\r\n"
)

#: connect name -> (signer, issuer_account set, the user JWT's own claims).
MODES: dict[str, tuple[KeyPair, bool, dict[str, Any]]] = {
    "scoped": (SCOPED, True, {"scoped": True}),
    "scoped-own-perms": (SCOPED, True, {"scoped": True, "pub": {"allow": ["x"]}}),
    "scoped-limits": (SCOPED, True, {}),
    "scoped-no-issuer-account": (SCOPED, False, {"scoped": True}),
    "scoped-missing-tag": (TAGGED, True, {"scoped": True}),
    "unscoped-key": (PLAIN, True, {"pub": {"allow": ["ok.>"]}, "sub": {"allow": ["in.>"]}}),
}


TAGGED_SCOPE = {
    "kind": "user_scope",
    "key": TAGGED.public_key,
    "role": "t",
    "template": {"pub": {"allow": ["t.{{tag(team)}}"]}},
}


def _setup_keys() -> list[str | dict[str, Any]]:
    """APP's signing keys at start: the scoped, the tagged scoped, the unscoped one."""
    return [
        {"kind": "user_scope", "key": SCOPED.public_key, "role": "r", "template": TEMPLATE},
        TAGGED_SCOPE,
        PLAIN.public_key,
    ]


def _setup() -> OperatorSetup:
    setup = OperatorSetup()
    app = setup.account("APP", signing_keys=_setup_keys())
    setup.account("CALLOUT")
    service = setup.user("service", "CALLOUT")
    setup.user("sentinel", "CALLOUT", bearer_token=True)
    claims = {"auth_users": [service.public_key], "allowed_accounts": [app.public_key]}
    setup.account("CALLOUT", extra={"authorization": claims})
    return setup


def _exchange(port: int, connect: dict[str, Any]) -> list[bytes]:
    """CONNECT, PING, then :data:`AFTER` on a raw socket; the lines that came back (INFO dropped)."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(3)
        sock.recv(65536)
        sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n" + AFTER)
        out = b""
        try:
            while out.count(b"PONG") < 2:
                data = sock.recv(65536)
                if not data:
                    break
                out += data
        except TimeoutError:
            pass
    return [line for line in out.split(b"\r\n") if line and not line.startswith(b"INFO ")]


async def _run(kind: str, setup: OperatorSetup) -> dict[str, list[bytes]]:
    server = RealServer(conf_text=setup.config_text(), jetstream=False, jsemu_process=kind == "jsemu")
    app, callout = setup.accounts["APP"], setup.accounts["CALLOUT"]
    try:
        service = setup.users["service"]
        nc = await nats.connect(
            f"nats://127.0.0.1:{server.port}",
            user_jwt_cb=lambda: service.jwt.encode(),
            signature_cb=lambda nonce: base64.b64encode(service.key.sign(nonce.encode())),
            allow_reconnect=False,
        )

        async def handler(msg: Any) -> None:
            part = msg.data.decode().split(".")[1]
            request = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))["nats"]
            user, server_id = request["user_nkey"], request["server_id"]["id"]
            signer, issuer_account, claims = MODES[request["connect_opts"]["name"]]
            more = {"issuer_account": app.public_key} if issuer_account else {}
            token = user_jwt(user, signer, "bob", **more, **claims)
            await msg.respond(response_jwt(user, server_id, callout.key, jwt=token).encode())

        await nc.subscribe("$SYS.REQ.USER.AUTH", cb=handler)
        await nc.flush()
        frames = {}
        loop = asyncio.get_running_loop()
        for mode in MODES:
            connect = {"verbose": False, "protocol": 1, "name": mode, "jwt": setup.users["sentinel"].jwt}
            frames[mode] = await loop.run_in_executor(None, _exchange, server.port, connect)
        await nc.close()
        return frames
    finally:
        server.stop()


async def test_scoped_signing_key_users() -> None:
    setup = _setup()
    got = {kind: await _run(kind, setup) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    real = got["real"]
    # The template's permissions, its subs limit (1) not applied: both subscriptions taken.
    assert real["scoped"] == [
        b"PONG",
        b"-ERR 'Permissions Violation for Publish to \"ok.eve.1\"'",
        b"-ERR 'Permissions Violation for Publish to \"no\"'",
        b"-ERR 'Permissions Violation for Subscription to \"out\"'",
        b"PONG",
    ]
    for mode in ("scoped-own-perms", "scoped-limits", "scoped-no-issuer-account"):
        assert real[mode] == [b"-ERR 'Authorization Violation'"], mode
    # A tag the user has not: the allow list filled to nothing denies every publish.
    assert real["scoped-missing-tag"][0] == b"PONG" and len(real["scoped-missing-tag"]) == 6


def _hold(port: int, connect: dict[str, Any]) -> socket.socket:
    """A granted client left connected: CONNECT and PING answered, and the INFO both servers
    send a ``protocol: 1`` client after its first PONG (``connect_info``; nats-server's may come
    in a later read) read too."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(3)
    sock.recv(65536)
    sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
    out = b""
    while b"PONG" not in out or b'"connect_info":true' not in out or not out.endswith(b"\r\n"):
        data = sock.recv(65536)
        assert data, out
        out += data
    return sock


def _until_closed(sock: socket.socket) -> list[bytes]:
    """What the server sent until it closed the connection (PINGs aside), or ``<open>``."""
    sock.settimeout(1)
    out = b""
    try:
        while data := sock.recv(65536):
            out += data
    except TimeoutError:
        out += b"<open>"
    finally:
        sock.close()
    return [line for line in out.split(b"\r\n") if line and line != b"PING"]


async def _key_changes(kind: str, setup: OperatorSetup, update: str) -> dict[str, list[bytes]]:
    server = RealServer(conf_text=setup.config_text(), jetstream=False, jsemu_process=kind == "jsemu")
    app, callout = setup.accounts["APP"], setup.accounts["CALLOUT"]
    url = f"nats://127.0.0.1:{server.port}"
    try:
        service, admin = setup.users["service"], setup.users["sys"]
        nc = await nats.connect(
            url,
            user_jwt_cb=lambda: service.jwt.encode(),
            signature_cb=lambda nonce: base64.b64encode(service.key.sign(nonce.encode())),
            allow_reconnect=False,
        )
        sys = await nats.connect(
            url,
            user_jwt_cb=lambda: admin.jwt.encode(),
            signature_cb=lambda nonce: base64.b64encode(admin.key.sign(nonce.encode())),
            allow_reconnect=False,
        )

        async def handler(msg: Any) -> None:
            part = msg.data.decode().split(".")[1]
            request = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))["nats"]
            user, server_id = request["user_nkey"], request["server_id"]["id"]
            signer, _, claims = MODES[request["connect_opts"]["name"]]
            token = user_jwt(user, signer, "bob", issuer_account=app.public_key, **claims)
            await msg.respond(response_jwt(user, server_id, callout.key, jwt=token).encode())

        await nc.subscribe("$SYS.REQ.USER.AUTH", cb=handler)
        await nc.flush()
        loop = asyncio.get_running_loop()
        held = {}
        for mode in ("scoped", "unscoped-key", "scoped-missing-tag"):
            connect = {"verbose": False, "protocol": 1, "name": mode, "jwt": setup.users["sentinel"].jwt}
            held[mode] = await loop.run_in_executor(None, _hold, server.port, connect)
        reply = await sys.request(f"$SYS.REQ.ACCOUNT.{app.public_key}.CLAIMS.UPDATE", update.encode(), timeout=2)
        assert json.loads(reply.data)["data"]["message"] == "jwt updated"
        out = {}
        for mode, sock in held.items():
            out[mode] = await loop.run_in_executor(None, _until_closed, sock)
        await nc.close()
        await sys.close()
        return out
    finally:
        server.stop()


async def test_signing_key_changes_close_callout_users() -> None:
    """A claim update that removes the unscoped key and changes the scoped key's template closes
    the callout users they issued; the users of a key left as it was stay."""
    setup = _setup()
    setup.user("sys", "SYS")
    changed = {**TEMPLATE, "sub": {"allow": ["other.>"]}}
    keys: list[str | dict[str, Any]] = [
        {"kind": "user_scope", "key": SCOPED.public_key, "role": "r", "template": changed},
        TAGGED_SCOPE,
    ]
    update = setup.account("APP", signing_keys=keys).jwt
    setup.account("APP", signing_keys=_setup_keys())  # the config has the keys at start
    got = {kind: await _key_changes(kind, setup, update) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    assert got["real"] == {"scoped": [], "unscoped-key": [], "scoped-missing-tag": [b"<open>"]}
