"""Hostile JWTs, generated with hypothesis, given to nats-server 2.15.1 and to jsemu alike (one
server of each kind, the NATS-based resolver on, for the whole module):

* pushed to ``$SYS.REQ.CLAIMS.UPDATE`` by a system account user: the same JSON answer (code,
  account, description: ``expected 3 chunks``, ``not supported type "x"``, ``unexpected "x"
  algorithm``, ``illegal base64 data at input byte N``, Go's JSON errors, ``claim failed V2 signature
  verification``, ``unable to validate expected prefixes - [...]``, ``not account claim``...);
* given at CONNECT (with a nonce signature, forged or not): the same ``-ERR`` and close;

and after each, a bystander client on the same server still gets its messages.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, PREFIX_OPERATOR, PREFIX_USER, KeyPair
from jsemu.testing.operator import MintedUser, OperatorSetup

from .test_operator_resolver import resolver_conf

SETUP = OperatorSetup()
SETUP.account("APP")
ADMIN = SETUP.user("admin", "SYS")
APP_USER = SETUP.user("app", "APP")
APP = SETUP.accounts["APP"]
STRANGER_OP = KeyPair.create(PREFIX_OPERATOR)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _token(header: dict[str, Any], claims: dict[str, Any], signer: KeyPair, sign_with: KeyPair | None = None) -> str:
    body = {"iat": int(time.time()), "jti": "J" * 52, **claims, "iss": claims.get("iss", signer.public_key)}
    head = _b64(json.dumps(header, separators=(",", ":")).encode()) + "." + _b64(json.dumps(body).encode())
    return head + "." + _b64((sign_with or signer).sign(head.encode()))


HEADER = {"typ": "JWT", "alg": "ed25519-nkey"}


class Raw:
    """A client on a raw socket: CONNECT with a JWT (and the nonce signed by ``seed``)."""

    def __init__(self, port: int, jwt: str, seed: KeyPair | None) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=3)
        self.buf = b""
        self.started = False
        info = json.loads(self.line()[5:])
        self.started = True
        connect: dict[str, Any] = {"verbose": False, "pedantic": False, "protocol": 1, "headers": True, "jwt": jwt}
        if seed is not None:
            connect["sig"] = _b64(seed.sign(info.get("nonce", "").encode()))
        self.sock.sendall(f"CONNECT {json.dumps(connect)}\r\nPING\r\n".encode())

    def line(self) -> str:
        """The next line (INFO updates after the first, as the JWT's limits bring, and the
        server's PINGs, answered, skipped)."""
        while True:
            while b"\r\n" not in self.buf:
                data = self.sock.recv(65536)
                if not data:
                    raise ConnectionError("closed")
                self.buf += data
            line, _, self.buf = self.buf.partition(b"\r\n")
            if self.started and line == b"PING":  # the server's keep-alive
                self.sock.sendall(b"PONG\r\n")
                continue
            if not (self.started and line.startswith(b"INFO ")):
                return line.decode()

    def outcome(self) -> list[str]:
        """The lines after CONNECT+PING up to PONG, or until the server closes ("closed")."""
        lines: list[str] = []
        try:
            while True:
                line = self.line()
                lines.append(line)
                if line == "PONG":
                    return lines
        except (ConnectionError, TimeoutError, OSError):
            return [*lines, "closed"]

    def request(self, subject: str, body: bytes) -> str:
        self.sock.sendall(f"SUB _R.x 9\r\nPUB {subject} _R.x {len(body)}\r\n".encode() + body + b"\r\nPING\r\n")
        while True:
            line = self.line()
            if line.startswith("MSG "):
                size = int(line.split()[-1])
                while len(self.buf) < size + 2:
                    self.buf += self.sock.recv(65536)
                payload, self.buf = self.buf[:size], self.buf[size + 2 :]
                self.sock.sendall(b"UNSUB 9\r\n")
                return payload.decode()
            if line.startswith("-ERR"):
                return line

    def close(self) -> None:
        self.sock.close()


def _login(port: int, user: MintedUser) -> Raw:
    raw = Raw(port, user.jwt, user.key)
    assert raw.outcome()[-1] == "PONG"
    return raw


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    running: dict[str, Any] = {}
    try:
        for kind in KINDS:
            directory: Path = tmp_path_factory.mktemp(kind) / "jwt"
            sys_account = SETUP.accounts["SYS"]
            conf = resolver_conf(SETUP, f'type: full, dir: "{directory}"').replace(
                f"  {sys_account.public_key}: {sys_account.jwt}\n",
                f"  {sys_account.public_key}: {sys_account.jwt}\n  {APP.public_key}: {APP.jwt}\n",
            )
            server = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu")
            running[kind] = (server,)  # stopped below even if the logins fail
            admin = _login(server.port, ADMIN)
            bystander = _login(server.port, APP_USER)
            bystander.sock.sendall(b"SUB by 1\r\nPING\r\n")
            assert bystander.line() == "PONG"
            running[kind] = (server, admin, bystander)
        yield running
    finally:
        for server, *clients in running.values():
            for client in clients:
                client.close()
            server.stop()


def _still_fine(bystander: Raw) -> None:
    bystander.sock.sendall(b"PUB by 2\r\nhi\r\nPING\r\n")
    assert bystander.line().startswith("MSG by 1")
    assert bystander.line() == "hi"
    assert bystander.line() == "PONG"


def _answer(text: str, names: dict[str, str]) -> Any:
    if not text.startswith("{"):
        return text
    answer = json.loads(text)
    answer.pop("server", None)
    out = json.dumps(answer, sort_keys=True)
    for key, name in names.items():
        out = out.replace(key, name)
    return re.sub(r"token size \d+", "token size N", out)


_KINDS_OF_HARM = [
    "chunks",
    "header",
    "base64",
    "mis-signed",
    "issuer-kind",
    "claim-type",
    "expired",
    "not-yet",
    "oversized",
    "truncated",
    "newer-version",
    "garbage",
    "bad-json",
]
#: JSON that is not a claims object: truncated, a bad character, another type, null (Go's
#: ``json.Unmarshal`` words; a field of the wrong type: ``test_operator_words.py``).
_BAD_JSON = ['{"sub": ', "{x", "{'", '{"a" 1}', '{"a":1 2}', "{} x", "[1]", '"s"', "12", "true", "null", ""]


@st.composite
def hostile(draw: st.DrawFn, role: str) -> tuple[str, str, dict[str, str], KeyPair]:
    """A hostile JWT for an account (``role`` "account") or a user ("user"): (why, token, names,
    the subject's key pair)."""
    harm = draw(st.sampled_from(_KINDS_OF_HARM))
    subject = KeyPair.create(PREFIX_ACCOUNT if role == "account" else PREFIX_USER)
    signer = SETUP.operator if role == "account" else APP.key
    names = {subject.public_key: "SUBJECT", signer.public_key: "SIGNER"}
    claims: dict[str, Any] = {"sub": subject.public_key, "name": "h", "nats": {"type": role, "version": 2}}
    if role == "user":
        claims["nats"].update(pub={}, sub={}, subs=-1, data=-1, payload=-1)
    header = dict(HEADER)
    sign_with: KeyPair | None = None
    if harm == "header":
        header["typ"] = draw(st.sampled_from(["JWT", "jwt", "JWS", "", "J\u00e9T"]))
        header["alg"] = draw(st.sampled_from(["ed25519-nkey", "ED25519-NKEY", "ed25519", "ed25519-nkeyX", "HS256", ""]))
    elif harm == "mis-signed":
        sign_with = KeyPair.create(PREFIX_OPERATOR if role == "account" else PREFIX_ACCOUNT)
    elif harm == "issuer-kind":
        signer = KeyPair.create(draw(st.sampled_from([PREFIX_USER, PREFIX_ACCOUNT, PREFIX_OPERATOR])))
        names[signer.public_key] = "SIGNER"
    elif harm == "claim-type":
        claims["nats"]["type"] = draw(st.sampled_from(["user", "account", "operator", "activation"]))
    elif harm == "expired":
        claims["exp"] = int(time.time()) - draw(st.integers(1, 10**6))
    elif harm == "not-yet":
        claims["nbf"] = int(time.time()) + draw(st.integers(60, 10**6))
    elif harm == "oversized":
        claims["nats"]["tags"] = ["x" * draw(st.integers(1000, 60_000))]
    elif harm == "newer-version":
        claims["nats"]["version"] = draw(st.integers(3, 9))
    elif harm == "garbage":
        return harm, draw(st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=40)), names, subject
    token = _token(header, claims, signer, sign_with)
    if harm == "bad-json":
        parts = token.split(".")
        parts[draw(st.integers(0, 1))] = _b64(draw(st.sampled_from(_BAD_JSON)).encode())
        token = ".".join(parts)
    elif harm == "chunks":
        parts = token.split(".")
        count = draw(st.sampled_from([1, 2, 4, 5]))
        token = ".".join((parts * 2)[:count])
    elif harm == "base64":
        parts = token.split(".")
        where = draw(st.integers(0, 2))
        at = draw(st.integers(0, len(parts[where])))
        parts[where] = parts[where][:at] + draw(st.sampled_from(list("!*=+/~$"))) + parts[where][at:]
        token = ".".join(parts)
    elif harm == "truncated":
        token = token[: draw(st.integers(1, len(token) - 1))]
    return harm, token, names, subject


Case = tuple[str, str, dict[str, str], KeyPair]


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=hostile("account"))
def test_hostile_account_jwt_pushed(servers: dict[str, Any], case: Case) -> None:
    harm, token, names, _subject = case
    got = {}
    for kind, (_server, admin, bystander) in servers.items():
        got[kind] = _answer(admin.request("$SYS.REQ.CLAIMS.UPDATE", token.encode()), names)
        _still_fine(bystander)
    assert got["jsemu"] == got["real"], harm


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=hostile("user"), forged=st.booleans())
def test_hostile_user_jwt_at_connect(servers: dict[str, Any], case: Case, forged: bool) -> None:
    harm, token, _names, subject = case
    got = {}
    for kind, (server, _admin, bystander) in servers.items():
        # The nonce signed by the user's key, or forged (signed by another key).
        raw = Raw(server.port, token, KeyPair.create(PREFIX_USER) if forged else subject)
        got[kind] = raw.outcome()
        raw.close()
        _still_fine(bystander)
    assert got["jsemu"] == got["real"], harm
