"""``{{tag(x)}}`` and ``{{account-tag(x)}}`` in a scoped signing key's template, on nats-server
2.15.1 and jsemu alike (nats-server's ``processUserPermissionsTemplate``): a user's tags (its
JWT's ``tags``) or its account's, ``x:value`` giving ``value``; several values give a subject
each (the product over several tags in one subject); none leaves an allow entry out (and an
allow list made empty denies everything) but refuses the login for a deny entry; an unknown
function refuses it; the functions' names are read case-insensitively, with blanks around.

Each user logs in (or not), then publishes to and subscribes to probe subjects: the lines up to
the PONG (``Permissions Violation`` ones) are compared."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.testing.operator import OperatorSetup

ALLOWS = KeyPair.create(PREFIX_ACCOUNT)
DENIES = KeyPair.create(PREFIX_ACCOUNT)
UNKNOWN = KeyPair.create(PREFIX_ACCOUNT)
SUB_ONLY = KeyPair.create(PREFIX_ACCOUNT)


def _scope(key: KeyPair, template: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "user_scope", "key": key.public_key, "role": "r", "template": template}


SETUP = OperatorSetup()
SETUP.account(
    "T",
    signing_keys=[
        _scope(
            ALLOWS,
            {
                "pub": {
                    "allow": [
                        "p.{{tag(dept)}}.>",
                        "n.{{ Name() }}",
                        "r.{{account-tag(region)}}",
                        "x.{{tag(a)}}.{{TAG(b)}}",
                        "at.{{ account-tag(Tier) }}",
                        "s.{{subject()}}.{{account-name()}}",
                    ]
                },
                "sub": {"allow": ["s.{{tag(dept)}}"]},
            },
        ),
        _scope(DENIES, {"pub": {"allow": [">"], "deny": ["p.{{tag(dept)}}"]}}),
        _scope(UNKNOWN, {"pub": {"allow": ["u.{{nope()}}", "ok"]}}),
        _scope(SUB_ONLY, {"sub": {"allow": ["s.{{tag(dept)}}"], "deny": ["s.never"]}}),
    ],
    extra={"tags": ["region:eu", "region:us", "tier:gold", "Tier:Silver", "other"]},
)
USERS = {
    "tagged": SETUP.user("alice", "T", signer=ALLOWS, extra={"tags": ["dept:eng", "dept:ops", "a:1", "b:2", "b:3"]}),
    "untagged": SETUP.user("bob", "T", signer=ALLOWS),
    "upper-case tag": SETUP.user("carol", "T", signer=ALLOWS, extra={"tags": ["Dept:eng", "DEPT:ops"]}),
    "empty value": SETUP.user("dave", "T", signer=ALLOWS, extra={"tags": ["dept:", "a:x y", "b:*"]}),
    "name with a blank": SETUP.user("e ve", "T", signer=ALLOWS, extra={"tags": ["dept:eng"]}),
    "deny with its tag": SETUP.user("frank", "T", signer=DENIES, extra={"tags": ["dept:eng"]}),
    "deny without its tag": SETUP.user("gina", "T", signer=DENIES),
    "unknown function": SETUP.user("hal", "T", signer=UNKNOWN, extra={"tags": ["dept:eng"]}),
    "sub allow emptied": SETUP.user("ivy", "T", signer=SUB_ONLY),
}
ACCOUNT = SETUP.accounts["T"]
PUBS = ["p.eng.1", "p.ops.1", "p.sales.1", "p.eng", "n.alice", "n.bob", "r.eu", "r.us", "x.1.2", "x.1.3", "x.2.2"]
PUBS += ["at.gold", "at.silver", "at.Silver", "ok", "u.x", "q"]
SUBS = ["s.eng", "s.ops", "s.x", "zz"]


def _sig(key: KeyPair, nonce: str) -> str:
    return base64.urlsafe_b64encode(key.sign(nonce.encode())).rstrip(b"=").decode()


def _session(port: int, case: str) -> list[str]:
    user = USERS[case]
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        reader = sock.makefile("rb")
        info = json.loads(reader.readline()[5:])
        connect = {"verbose": False, "pedantic": False, "jwt": user.jwt, "sig": _sig(user.key, info["nonce"])}
        probes = [f"PUB {s} 0\r\n\r\n" for s in [*PUBS, f"s.{user.public_key}.T"]]
        probes += [f"SUB {s} {i}\r\n" for i, s in enumerate(SUBS, 1)]
        sock.sendall(f"CONNECT {json.dumps(connect)}\r\nPING\r\n{''.join(probes)}PING\r\n".encode())
        lines = []
        while len(lines) < 200:
            line = reader.readline().decode().rstrip("\r\n")
            if not line:
                return [*lines, "closed"]
            lines.append(line.replace(user.public_key, "USER"))
            if line == "PONG" and lines.count("PONG") == 2:
                return lines
        return lines
    finally:
        sock.close()


@pytest.fixture(scope="module")
def ports() -> Iterator[dict[str, int]]:
    servers = {}
    try:
        for kind in KINDS:
            servers[kind] = RealServer(conf_text=SETUP.config_text(), jetstream=False, jsemu_process=kind == "jsemu")
        yield {kind: server.port for kind, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


@pytest.mark.parametrize("case", sorted(USERS))
def test_tag_templates_as_nats_server(ports: dict[str, int], case: str) -> None:
    got = {kind: _session(port, case) for kind, port in ports.items()}
    assert got["jsemu"] == got["real"], case
