"""nats-server's start-up refusals of an operator or preloaded account JWT it cannot decode,
word for word: ``error parsing operator JWT: `` and nats-io/jwt's error (Go's JSON words for a
claim field of the wrong type, ``not operator claim``, ``expected 3 chunks``, a truncated
claims part), ``invalid account JWT`` at the preloaded value's position for any account JWT
``DecodeAccountClaims`` refuses (wrong types, another kind, mis-signed). An operator JWT
signed by another operator key than its own still starts nats-server, and jsemu."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, PREFIX_OPERATOR, KeyPair
from jsemu.testing.operator import OperatorSetup

from .test_cli_errors import _assert_one_line, _jsemu, _real

SETUP = OperatorSetup()
SETUP.account("A")
USER = SETUP.user("u", "A")
SYS = SETUP.accounts["SYS"]
OP = SETUP.operator
ACC = KeyPair.create(PREFIX_ACCOUNT)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _token(claims: dict[str, Any], signer: KeyPair) -> str:
    head = (
        _b64(b'{"typ":"JWT","alg":"ed25519-nkey"}')
        + "."
        + _b64(json.dumps({**claims, "iss": signer.public_key}).encode())
    )
    return head + "." + _b64(signer.sign(head.encode()))


_OP_CLAIMS = {
    "sub": OP.public_key,
    "name": "OP",
    "nats": {"type": "operator", "version": 2, "system_account": SYS.public_key},
}
_ACC_CLAIMS = {"sub": ACC.public_key, "name": "A", "nats": {"type": "account", "version": 2}}


def _conf(operator: str, preload: str = "") -> str:
    return (
        f"port: -1\noperator: {operator}\nsystem_account: {SYS.public_key}\nresolver: MEMORY\n"
        f"resolver_preload: {{\n {SYS.public_key}: {SYS.jwt}\n{preload}}}\n"
    )


REFUSED = {
    "operator exp a string": _conf(_token({**_OP_CLAIMS, "exp": "x"}, OP)),
    "operator nats a list": _conf(_token({**_OP_CLAIMS, "nats": []}, OP)),
    "operator signing_keys a number": _conf(
        _token({**_OP_CLAIMS, "nats": {**_OP_CLAIMS["nats"], "signing_keys": 5}}, OP)
    ),
    "operator without version": _conf(_token({**_OP_CLAIMS, "nats": {"type": "operator"}}, OP)),
    "operator of an unknown kind": _conf(_token({**_OP_CLAIMS, "nats": {"type": "foo", "version": 2}}, OP)),
    "a user JWT as operator": _conf(USER.jwt),
    "an account JWT as operator": _conf(SETUP.accounts["A"].jwt),
    "one chunk": _conf("eyJhbGciOi"),
    "truncated claims": _conf("eyJ.eyJ.x"),
    "preloaded exp a string": _conf(
        SETUP.operator_jwt, f" {ACC.public_key}: {_token({**_ACC_CLAIMS, 'exp': 'x'}, OP)}\n"
    ),
    "preloaded conn a string": _conf(
        SETUP.operator_jwt,
        f" {ACC.public_key}: {_token({**_ACC_CLAIMS, 'nats': {'type': 'account', 'version': 2, 'limits': {'conn': 'x'}}}, OP)}\n",
    ),
    "preloaded user JWT": _conf(SETUP.operator_jwt, f" {ACC.public_key}: {USER.jwt}\n"),
    "preloaded mis-signed": _conf(SETUP.operator_jwt, f" {ACC.public_key}: {_token(_ACC_CLAIMS, OP)[:-4]}AAAA\n"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_nats_server(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(REFUSED[name])
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("kind", KINDS)
def test_operator_signed_by_another_operator_key_starts(kind: str) -> None:
    """nats-server 2.15.1 starts with it (the JWT is its ``sub``'s, whoever signed it)."""
    conf = _conf(_token(_OP_CLAIMS, KeyPair.create(PREFIX_OPERATOR))).replace("port: -1\n", "")
    server = RealServer(conf_text=conf, jetstream=False, jsemu_process=kind == "jsemu")
    server.stop()
