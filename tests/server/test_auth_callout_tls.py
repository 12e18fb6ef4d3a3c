"""The auth callout's request for a TLS client, side by side with nats-server 2.15.1:
``nats.client_tls`` (``server/client_tls.py``) carries Go's TLS version (``"1.2"``,
``"1.3"``), Go's cipher suite name, and with ``verify`` the verified chain (the client's
certificate, then the CA's, PEM-encoded); without ``verify`` no certificate at all.

Which TLS 1.3 suite a handshake settles on is each server's own preference (Go's and
OpenSSL's differ), so TLS 1.3 compares the cipher's form only; a TLS 1.2 client offering one
suite pins the name exactly."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
from pathlib import Path
from typing import Any

import nats
import pytest

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.protocol.jwt.callout import response_jwt
from jsemu.testing.certificates import generate

from .test_auth import _pair

ISSUER = KeyPair.create(PREFIX_ACCOUNT)


def _conf(cert: str, key: str, ca: str, verify: bool) -> str:
    return f"""
tls {{ cert_file: "{cert}", key_file: "{key}", ca_file: "{ca}", verify: {str(verify).lower()} }}
accounts {{
  AUTH {{ users: [ {{user: auth, password: pwd}} ] }}
  APP {{ }}
}}
authorization {{ auth_callout {{ issuer: {ISSUER.public_key}, auth_users: [ auth ], account: AUTH }} }}
"""


def _claims(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    value = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    assert isinstance(value, dict)
    return value


def _login(port: int, context: ssl.SSLContext) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.recv(65536)  # the INFO, in the clear
        with context.wrap_socket(sock, server_hostname="127.0.0.1") as tls:
            tls.settimeout(3)
            tls.sendall(b'CONNECT {"user":"x","pass":"y"}\r\nPING\r\n')
            return tls.recv(4096)


@pytest.mark.parametrize("verify", [True, False], ids=["verify", "no-verify"])
@pytest.mark.parametrize("tls12", [True, False], ids=["tls1.2", "tls1.3"])
async def test_client_tls_in_the_callout_request(verify: bool, tls12: bool, tmp_path: Path) -> None:
    options, client = generate(tmp_path, verify=verify)
    async for pair in _pair(tmp_path, _conf(options.cert_file, options.key_file, options.ca_file, verify)):
        got: dict[str, Any] = {}
        for kind, port in pair.ports.items():
            context = client.context()
            if tls12:
                context.maximum_version = ssl.TLSVersion.TLSv1_2
                context.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256")  # trustme's keys are ECDSA
            service = await nats.connect(f"tls://127.0.0.1:{port}", user="auth", password="pwd", tls=context)
            requests: list[dict[str, Any]] = []

            async def handler(msg: Any, into: list[dict[str, Any]] = requests) -> None:
                request = _claims(msg.data.decode())["nats"]
                into.append(request)
                user, server = request["user_nkey"], request["server_id"]["id"]
                await msg.respond(response_jwt(user, server, ISSUER, error="no").encode())

            await service.subscribe("$SYS.REQ.USER.AUTH", cb=handler)
            await service.flush()
            answer = await asyncio.get_running_loop().run_in_executor(None, _login, port, context)
            await service.close()
            assert len(requests) == 1
            got[kind] = answer, list(requests[0]), requests[0]["client_tls"]
        real_tls = got["real"][2]
        assert got["real"][0].startswith(b"-ERR 'Authorization Violation'")
        assert real_tls["version"] == ("1.2" if tls12 else "1.3")
        if tls12:
            assert real_tls["cipher"] == "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
        else:  # each server's own preference among the TLS 1.3 suites
            for _, _, tls in got.values():
                assert tls["cipher"] in (
                    "TLS_AES_128_GCM_SHA256",
                    "TLS_AES_256_GCM_SHA384",
                    "TLS_CHACHA20_POLY1305_SHA256",
                )
                tls["cipher"] = "*"
        if verify:
            chain = [Path(client.cert_file).read_text(), Path(client.ca_file).read_text()]
            assert real_tls["verified_chains"] == [chain]
        else:
            assert "verified_chains" not in real_tls and "certs" not in real_tls
        assert got["jsemu"] == got["real"]
