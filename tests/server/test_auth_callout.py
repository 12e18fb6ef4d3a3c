"""Auth callout (ADR-26) side by side with nats-server 2.15.1: config mode, operator mode (an
account JWT's ``authorization`` claims) and ``xkey`` sealing.

Both servers run the same file: accounts ``AUTH`` (the service's user ``auth``, one of
``auth_users``) and ``APP``, and ``authorization { auth_callout { issuer, auth_users, account:
AUTH } }``. The callout service is a nats-py client here: it decodes the request, mints a user
JWT for the request's one-time ``user_nkey`` (``aud``: the account to place it in) and answers
with an ``authorization_response`` signed by the issuer. Facts pinned: what the request JWT
carries (issuer ``sub``, server ``iss`` = the server id, ``aud``, ``exp`` = ``iat`` + the auth
timeout, the client's info and CONNECT options), a grant with permissions (and the callout
subject denied to nobody but the auth account's users), an ``error`` answer, a response signed
by another key, no answer within the auth timeout, and ``auth_users`` that skip the callout.
Every refusal is ``-ERR 'Authorization Violation'``. To keep the file fast, one server pair
serves every way of answering: the service reads it from the client's CONNECT ``name``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import nats
import nats.errors
import pytest
from support.servers import KINDS, RealServer

from jsemu.config.parser import parse_text
from jsemu.config.server_config import ConfigError, apply_config
from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair, encode
from jsemu.protocol.jwt.callout import response_jwt
from jsemu.server.options import ServerOptions
from jsemu.testing.operator import OperatorSetup

ISSUER = KeyPair.create(PREFIX_ACCOUNT)
CONF = f"""
accounts {{
  AUTH {{ users: [ {{user: auth, password: pwd}} ] }}
  APP {{ users: [ {{user: known, password: pw}} ] }}
}}
authorization {{
  timeout: 0.5
  auth_callout {{
    issuer: {ISSUER.public_key}
    auth_users: [ auth ]
    account: AUTH
  }}
}}
"""


def _curve_key() -> str:
    """A public curve (``X``) nkey: role byte, 32 bytes, CRC-16 little endian, base32."""
    raw = bytes([23 << 3]) + bytes(range(32))
    return base64.b32encode(raw + binascii.crc_hqx(raw, 0).to_bytes(2, "little")).decode().rstrip("=")


def _claims(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    value = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    assert isinstance(value, dict)
    return value


def _user_jwt(user_nkey: str, account: str, signer: KeyPair = ISSUER, **nats_fields: Any) -> str:
    nats_fields.setdefault("pub", {"allow": ["ok.>"]})
    nats_fields.setdefault("sub", {})
    nats_fields["type"] = "user"
    return encode({"aud": account, "name": "bob", "sub": user_nkey, "nats": nats_fields}, signer)


#: mode -> how the service answers (None: it does not).
def _answer(mode: str, request: dict[str, Any]) -> str | None:
    nats_part = request["nats"]
    user, server = nats_part["user_nkey"], nats_part["server_id"]["id"]
    if mode == "silent":
        return None
    if mode == "empty":  # nats-server: no reason supplied
        return ""
    if mode == "garbage":
        return "eyJ0eXAiOiJKV1QifQ.not-claims.x"
    if mode == "user-jwt-as-response":
        return _user_jwt(user, "APP")
    if mode == "error":
        return response_jwt(user, server, ISSUER, error="go away")
    if mode == "wrong-signer":
        return response_jwt(user, server, KeyPair.create(PREFIX_ACCOUNT), jwt=_user_jwt(user, "APP"))
    if mode == "user-by-other-key":
        return response_jwt(user, server, ISSUER, jwt=_user_jwt(user, "APP", KeyPair.create(PREFIX_ACCOUNT)))
    if mode == "other-user":
        other = KeyPair.create(20 << 3).public_key
        return response_jwt(user, server, ISSUER, jwt=_user_jwt(other, "APP"))
    if mode == "not-for-this-server":
        return response_jwt(user, KeyPair.create(13 << 3).public_key, ISSUER, jwt=_user_jwt(user, "APP"))
    if mode == "unknown-account":
        return response_jwt(user, server, ISSUER, jwt=_user_jwt(user, "NOPE"))
    if mode == "into-auth":
        return response_jwt(user, server, ISSUER, jwt=_user_jwt(user, "AUTH", pub={}))
    return response_jwt(user, server, ISSUER, jwt=_user_jwt(user, "APP"))


@asynccontextmanager
async def _callout(kind: str, mode: str) -> AsyncIterator[tuple[RealServer, list[dict[str, Any]]]]:
    """A server of ``kind`` running CONF and a callout service answering as ``mode``."""
    server = RealServer(conf_text=CONF, jetstream=False, jsemu_process=kind == "jsemu")
    requests: list[dict[str, Any]] = []
    try:
        nc = await nats.connect(
            f"nats://127.0.0.1:{server.port}", user="auth", password="pwd", allow_reconnect=False, connect_timeout=3
        )

        async def handler(msg: Any) -> None:
            request = _claims(msg.data.decode())
            requests.append(request)
            named = request["nats"]["connect_opts"].get("name", "")
            answer = _answer(named if mode == "by-name" else mode, request)
            if answer is not None:
                await msg.respond(answer.encode())

        await nc.subscribe("$SYS.REQ.USER.AUTH", cb=handler)
        await nc.flush()
        try:
            yield server, requests
        finally:
            await nc.close()
    finally:
        server.stop()


def _exchange(port: int, connect: dict[str, Any], after: bytes = b"", wait: float = 3.0) -> tuple[bytes, float]:
    """CONNECT + PING on a raw socket; what came back (INFO dropped) and how long the answer took."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(wait)
        sock.recv(65536)
        start = time.monotonic()
        sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n" + after)
        out = b""
        elapsed = 0.0
        try:
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                if not out:
                    elapsed = time.monotonic() - start
                out += data
                if out.endswith(b"PONG\r\n") and out.count(b"PONG") >= (2 if after else 1):
                    break
        except TimeoutError:
            pass
    lines = [line for line in out.split(b"\r\n") if line and not line.startswith(b"INFO ")]
    return b"\r\n".join(lines), elapsed


async def _run(kind: str, mode: str, connect: dict[str, Any], after: bytes = b"") -> tuple[bytes, float, list[Any]]:
    async with _callout(kind, mode) as (server, requests):
        frames, elapsed = await asyncio.get_running_loop().run_in_executor(None, _exchange, server.port, connect, after)
        return frames, elapsed, requests


ALICE = {"verbose": False, "pedantic": False, "user": "alice", "pass": "secret", "name": "cli", "protocol": 1}
AFTER = b"PUB ok.1 1\r\na\r\nPUB no 1\r\na\r\nPUB $SYS.REQ.USER.AUTH 1\r\na\r\nPING\r\n"
VIOLATION = b"-ERR 'Authorization Violation'"


def test_request_claims_match() -> None:
    """The request JWT's fields, as nats-server fills them (ids and times normalised)."""

    def shape(kind: str) -> dict[str, Any]:
        _, _, requests = asyncio.run(_run(kind, "allow", {**ALICE, "lang": "raw", "version": "1"}))
        request = requests[0]
        assert request["iss"] == request["nats"]["server_id"]["id"]
        assert request["sub"] == ISSUER.public_key
        assert request["exp"] - request["iat"] in (0, 1)  # the auth timeout (0.5 s) from now, in whole seconds
        nats_part = request["nats"]
        assert nats_part["user_nkey"].startswith("U")
        for key in ("jti", "iat", "exp", "iss"):
            request[key] = key
        nats_part["user_nkey"] = "U"
        nats_part["server_id"] = sorted(nats_part["server_id"])
        nats_part["client_info"]["id"] = 0
        return request

    assert shape("jsemu") == shape("real")


ANSWERS = [
    "allow",
    "error",
    "wrong-signer",
    "user-by-other-key",
    "other-user",
    "not-for-this-server",
    "unknown-account",
    "into-auth",
    "empty",
    "garbage",
    "user-jwt-as-response",
]


async def _each_answer(kind: str) -> dict[str, bytes]:
    """One client per way of answering (the service reads it from the client's ``name``)."""
    async with _callout(kind, "by-name") as (server, _):
        loop = asyncio.get_running_loop()
        out = {}
        for mode in ANSWERS:
            out[mode], _ = await loop.run_in_executor(None, _exchange, server.port, {**ALICE, "name": mode}, AFTER)
        return out


def test_callout_answers() -> None:
    """A grant (the user JWT's permissions apply) and the answers that refuse."""
    results = {kind: asyncio.run(_each_answer(kind)) for kind in KINDS}
    assert results["jsemu"] == results["real"]
    for mode, frames in results["real"].items():
        assert (VIOLATION in frames) == (mode not in ("allow", "into-auth")), mode


def test_no_answer_times_out() -> None:
    """No answer: refused once the auth timeout (0.5 s here) has passed."""
    for kind in KINDS:
        frames, elapsed, requests = asyncio.run(_run(kind, "silent", ALICE))
        assert frames == VIOLATION, kind
        assert 0.3 < elapsed < 2.0, (kind, elapsed)
        assert len(requests) == 1


@pytest.mark.parametrize(
    "connect",
    [
        {"user": "auth", "pass": "pwd"},  # an auth user: no callout, placed in AUTH
        {"user": "auth", "pass": "bad"},  # an auth user with a bad password: refused, no callout
        {"user": "known", "pass": "pw"},  # a configured user not in auth_users: the callout decides
    ],
)
def test_auth_users_skip_the_callout(connect: dict[str, Any]) -> None:
    opts = {"verbose": False, "pedantic": False, "protocol": 1, **connect}
    results = {}
    for kind in KINDS:
        frames, _, requests = asyncio.run(_run(kind, "error", opts, AFTER))
        results[kind] = (frames, len(requests))
    assert results["jsemu"] == results["real"]


def test_nats_py_through_the_callout() -> None:
    """nats-py logs in through the callout, is refused with its error on a refusal."""

    async def case(kind: str) -> tuple[list[bytes], str]:
        async with _callout(kind, "allow") as (server, _):
            nc = await nats.connect(f"nats://127.0.0.1:{server.port}", user="alice", password="x")
            got: list[bytes] = []
            sub = await nc.subscribe("ok.>")
            await nc.publish("ok.1", b"hi")
            msg = await sub.next_msg(timeout=2)
            got.append(msg.data)
            await nc.close()
        async with _callout(kind, "error") as (server, _):
            try:
                await nats.connect(f"nats://127.0.0.1:{server.port}", user="alice", password="x", allow_reconnect=False)
                error = ""
            except nats.errors.Error as exc:  # nats-py: its error for the -ERR
                error = str(exc)
        return got, error

    results = {kind: asyncio.run(case(kind)) for kind in KINDS}
    assert results["jsemu"] == results["real"]
    assert results["real"][0] == [b"hi"]
    assert "authorization violation" in results["real"][1].lower()


@pytest.mark.parametrize(
    ("block", "error"),
    [
        ("auth_users: [a]", "Authorization callouts require an issuer to be specified"),
        ("issuer: ISSUER", "Authorization callouts require authorized users to be specified"),
        ("issuer: nope, auth_users: [a]", 'Expected callout user to be a valid public account nkey, got "nope"'),
        ("issuer: ISSUER, auth_users: [a], bogus: 1", 'Unknown field "bogus"'),
        ("issuer: ISSUER, auth_users: [a], allowed_accounts: [X]", 'allowed account "X" not found'),
        (
            "issuer: ISSUER, auth_users: [a], xkey: XKEY",
            "xkey encryption needs PyNaCl",
        ),
    ],
)
def test_config_refusals(block: str, error: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``parseAuthCallout``'s refusals (an ``xkey`` without PyNaCl: jsemu's own one line)."""
    monkeypatch.setattr("jsemu.config.auth_callout.available", lambda: False)
    block = block.replace("ISSUER", ISSUER.public_key).replace("XKEY", _curve_key())
    conf, positions = parse_text(f"authorization {{ users: [{{user: a, password: b}}], auth_callout {{ {block} }} }}")
    with pytest.raises(ConfigError, match=error.replace("[", r"\[")):
        apply_config(conf, ServerOptions(), positions)


# --- operator mode: an account JWT's ``authorization`` claims --------------------------------------


def _operator_setup() -> tuple[OperatorSetup, dict[str, KeyPair]]:
    """Accounts CALLOUT (its ``authorization``: the service user skips, APP may be placed in),
    APP and OTHER; users ``service`` and ``sentinel`` (a bearer token) of CALLOUT."""
    setup = OperatorSetup()
    app = setup.account("APP").key
    other = setup.account("OTHER").key
    callout = setup.account("CALLOUT").key
    service = setup.user("service", "CALLOUT")
    setup.user("sentinel", "CALLOUT", bearer_token=True)
    claims = {"auth_users": [service.public_key], "allowed_accounts": [app.public_key]}
    setup.account("CALLOUT", extra={"authorization": claims})
    return setup, {"APP": app, "OTHER": other, "CALLOUT": callout}


def _operator_answer(mode: str, request: dict[str, Any], keys: dict[str, KeyPair]) -> str | None:
    nats_part = request["nats"]
    user, server = nats_part["user_nkey"], nats_part["server_id"]["id"]
    grant = {"pub": {"allow": ["ok.>"]}, "sub": {}, "subs": -1, "data": -1, "payload": -1, "type": "user"}
    signer = {"allow": keys["APP"], "into-callout": keys["CALLOUT"], "not-allowed": keys["OTHER"]}.get(
        mode, keys["APP"]
    )
    user_jwt = encode({"name": "bob", "sub": user, "nats": grant}, signer)
    if mode == "error":
        return response_jwt(user, server, keys["CALLOUT"], error="go away")
    if mode == "wrong-signer":
        return response_jwt(user, server, KeyPair.create(PREFIX_ACCOUNT), jwt=user_jwt)
    if mode == "app-signs-response":
        return response_jwt(user, server, keys["APP"], jwt=user_jwt)
    return response_jwt(user, server, keys["CALLOUT"], jwt=user_jwt)


OPERATOR_ANSWERS = ["allow", "into-callout", "not-allowed", "error", "wrong-signer", "app-signs-response"]


async def _operator_run(kind: str, after: bytes) -> tuple[dict[str, bytes], list[dict[str, Any]], str]:
    setup, keys = _operator_setup()
    server = RealServer(conf_text=setup.config_text(), jetstream=False, jsemu_process=kind == "jsemu")
    requests: list[dict[str, Any]] = []
    try:
        service = setup.users["service"]
        nc = await nats.connect(
            f"nats://127.0.0.1:{server.port}",
            user_jwt_cb=lambda: service.jwt.encode(),
            signature_cb=lambda nonce: base64.b64encode(service.key.sign(nonce.encode())),
            allow_reconnect=False,
            connect_timeout=3,
        )

        async def handler(msg: Any) -> None:
            request = _claims(msg.data.decode())
            requests.append(request)
            answer = _operator_answer(request["nats"]["connect_opts"].get("name", ""), request, keys)
            if answer is not None:
                await msg.respond(answer.encode())

        await nc.subscribe("$SYS.REQ.USER.AUTH", cb=handler)
        await nc.flush()
        frames = {}
        for mode in OPERATOR_ANSWERS:
            connect = {"verbose": False, "protocol": 1, "name": mode, "jwt": setup.users["sentinel"].jwt}
            loop = asyncio.get_running_loop()
            frames[mode], _ = await loop.run_in_executor(None, _exchange, server.port, connect, after)
        await nc.close()
        return frames, requests, keys["CALLOUT"].public_key
    finally:
        server.stop()


def test_operator_mode_callout() -> None:
    """An account JWT with ``authorization``: its users (but ``auth_users``) go to the callout
    in that account; the response is signed by the account (or a signing key), the user JWT by
    the account or one of ``allowed_accounts``, where the user is placed."""
    results = {kind: asyncio.run(_operator_run(kind, AFTER)) for kind in KINDS}
    assert results["jsemu"][0] == results["real"][0]
    for mode, frames in results["real"][0].items():
        assert (VIOLATION in frames) == (mode not in ("allow", "into-callout")), mode
    for _, requests, account in results.values():
        assert len(requests) == len(OPERATOR_ANSWERS)
        assert requests[0]["sub"] == account  # the request is the account's
        assert requests[0]["nats"]["client_info"]["name_tag"] == "sentinel"  # the user JWT's name
    # The same fields on both (``client_info.user``: the sentinel's key, ``name_tag``: its name).
    shapes = [{k: sorted(v) for k, v in r[1][0]["nats"].items() if isinstance(v, dict)} for r in results.values()]
    assert shapes[0] == shapes[1]


# --- xkey: requests and responses sealed with curve keys (PyNaCl) ---------------------------------


@pytest.mark.parametrize("mode", ["sealed", "plain", "bad-seal", "sealed-error"])
def test_xkey_sealed_exchange(mode: str) -> None:
    """With ``xkey`` the request comes sealed for the service's curve key, the server's own in
    its ``Nats-Server-Xkey`` header; the response may come sealed back, or as a plain JWT."""
    pytest.importorskip("nacl")
    from jsemu.protocol.jwt.xkeys import CurveKey

    service_key = CurveKey.create()
    conf = CONF.replace("account: AUTH\n", f"account: AUTH\n    xkey: {service_key.public_key}\n")

    async def case(kind: str) -> tuple[bytes, list[str]]:
        server = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu")
        seen: list[str] = []
        try:
            nc = await nats.connect(
                f"nats://127.0.0.1:{server.port}", user="auth", password="pwd", allow_reconnect=False
            )

            async def handler(msg: Any) -> None:
                server_xkey = (msg.headers or {}).get("Nats-Server-Xkey", "")
                seen.append("header" if server_xkey.startswith("X") else "no header")
                request = _claims(service_key.open(msg.data, server_xkey).decode())
                seen.append("xkey in request" if request["nats"]["server_id"].get("xkey") == server_xkey else "")
                answer = _answer("error" if mode == "sealed-error" else "allow", request).encode()
                if mode == "plain":
                    await msg.respond(answer)
                elif mode == "bad-seal":
                    await msg.respond(b"xkv1" + b"\0" * 40)
                else:
                    await msg.respond(service_key.seal(answer, server_xkey))

            await nc.subscribe("$SYS.REQ.USER.AUTH", cb=handler)
            await nc.flush()
            frames, _ = await asyncio.get_running_loop().run_in_executor(None, _exchange, server.port, ALICE, AFTER)
            await nc.close()
            return frames, seen
        finally:
            server.stop()

    results = {kind: asyncio.run(case(kind)) for kind in KINDS}
    assert results["jsemu"] == results["real"]
    assert results["real"][1] == ["header", "xkey in request"]
    assert (VIOLATION in results["real"][0]) == (mode in ("bad-seal", "sealed-error"))
