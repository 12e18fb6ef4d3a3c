"""TLS side by side with nats-server 2.15.1, the same file given to both, with certificates
made by ``trustme`` in the test: INFO's ``tls_required``/``tls_verify``, a plain client (cut
after the INFO, without a word), a silent one (cut at the TLS timeout), the handshake and a
round trip, client certificates with ``verify``, a wrong CA, ``handshake_first``, the
authentication timeout after the handshake; nats-py and nats.js over TLS; the configuration
errors of a ``tls`` block and the ``--tls*`` flags."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
import pytest
import trustme
from config.test_cli_errors import _assert_one_line, _jsemu, _real

import jsemu
from jsemu.cli import build_parser, serve_options
from jsemu.config.startup_errors import StartupError
from jsemu.server.auth import Auth, User
from jsemu.testing.certificates import generate

from .test_auth import _pair


@dataclass
class Certs:
    ca: Path
    cert: Path
    key: Path
    client: Path  # client certificate and key, one PEM
    other_ca: Path  # a CA that signed none of them
    client_cert: Path  # the client's, apart (nats.js wants two files)
    client_key: Path

    def block(self, extra: str = "") -> str:
        return f'tls {{\n  cert_file: "{self.cert}"\n  key_file: "{self.key}"\n  ca_file: "{self.ca}"\n{extra}}}\n'

    def client_context(self, with_cert: bool = False, ca: Path | None = None) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(ca or self.ca))
        if with_cert:
            context.load_cert_chain(str(self.client))
        return context


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    where = tmp_path_factory.mktemp("certs")
    ca, other = trustme.CA(), trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("client@example.com")
    paths = Certs(
        *(where / f"{name}.pem" for name in ("ca", "cert", "key", "client", "other", "client-cert", "client-key"))
    )
    ca.cert_pem.write_to_path(str(paths.ca))
    server.cert_chain_pems[0].write_to_path(str(paths.cert))
    server.private_key_pem.write_to_path(str(paths.key))
    client.private_key_and_cert_chain_pem.write_to_path(str(paths.client))
    other.cert_pem.write_to_path(str(paths.other_ca))
    client.cert_chain_pems[0].write_to_path(str(paths.client_cert))
    client.private_key_pem.write_to_path(str(paths.client_key))
    return paths


async def _read_all(reader: asyncio.StreamReader, timeout: float) -> tuple[bytes, bool]:
    """Bytes until the close (True) or until ``timeout`` passes without any (False)."""
    out = b""
    while True:
        try:
            data = await asyncio.wait_for(reader.read(65536), timeout)
        except TimeoutError:
            return out, False
        except ConnectionError:
            return out, True
        if not data:
            return out, True
        out += data


def _info(data: bytes) -> dict[str, Any]:
    line, _, _ = data.partition(b"\r\n")
    assert line.startswith(b"INFO "), data
    info: dict[str, Any] = json.loads(line[5:])
    return info


async def _tls_session(port: int, context: ssl.SSLContext, first: bool = False, send: bytes = b"") -> Any:
    """INFO (its TLS keys), then the handshake (or the handshake first), ``send`` + PING, and
    what comes back: a comparable summary, or the handshake's failure."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context if first else None)
    try:
        head = await reader.readuntil(b"\r\n")
        info = _info(head)
        keys = list(info)
        summary: list[Any] = [keys[keys.index("headers") + 1 :][:3], info.get("tls_verify")]
        if not first:
            try:
                await writer.start_tls(context, server_hostname="127.0.0.1")
            except (ssl.SSLError, ConnectionError) as exc:
                return [*summary, "handshake failed", type(exc).__name__]
        writer.write(b'CONNECT {"verbose":false}\r\n' + send + b"PING\r\n")
        try:
            answer = await asyncio.wait_for(reader.readuntil(b"PONG\r\n"), 3)
        except (ssl.SSLError, ConnectionError, asyncio.IncompleteReadError) as exc:
            return [*summary, "refused after handshake", type(exc).__name__]
        return [*summary, answer]
    finally:
        writer.close()


async def test_tls_connections_as_nats_server(certs: Certs, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, certs.block("  timeout: 0.5\n")):
        got: dict[str, list[Any]] = {}
        for kind, port in pair.ports.items():
            results: list[Any] = []
            # A plain client: the INFO, then the close as soon as it speaks in clear.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b'CONNECT {"verbose":false}\r\nPING\r\n')
            data, closed = await _read_all(reader, 3)
            results.append(("plain", list(_info(data)), data.split(b"\r\n", 1)[1], closed))
            writer.close()
            # A silent client: cut at the TLS timeout.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            start = time.monotonic()
            data, closed = await _read_all(reader, 3)
            results.append(("silent", closed, 0.4 < time.monotonic() - start < 1.2))
            writer.close()
            results.append(await _tls_session(port, certs.client_context(), send=b"SUB x 1\r\nPUB x 2\r\nhi\r\n"))
            results.append(await _tls_session(port, certs.client_context(ca=certs.other_ca)))
            got[kind] = results
        plain = {kind: r[0][1] for kind, r in got.items()}
        assert plain["jsemu"][plain["jsemu"].index("headers") :][:3] == ["headers", "tls_required", "max_payload"]
        for results in got.values():  # INFO's keys compared above (ids differ)
            results[0] = (*results[0][:1], None, *results[0][2:])
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == ("plain", None, b"", True)
        assert got["real"][1] == ("silent", True, True)
        assert got["real"][2][-1] == b"MSG x 1 2\r\nhi\r\nPONG\r\n"
        assert got["real"][3][-2] == "handshake failed"


async def test_client_certificates_with_verify(certs: Certs, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, certs.block("  verify: true\n")):
        got = {}
        for kind, port in pair.ports.items():
            got[kind] = [
                await _tls_session(port, certs.client_context(with_cert=True)),
                await _tls_session(port, certs.client_context(with_cert=False)),
            ]
        # nats-server sends the TLS alert "certificate required" before it closes; asyncio
        # closes without it (the failed handshake's alert is never flushed), so the client
        # sees the close instead: the same refusal, told less precisely.
        assert got["real"][1][-2:] == ["refused after handshake", "SSLError"]
        assert got["jsemu"][1][-2:] == ["refused after handshake", "IncompleteReadError"]
        assert got["jsemu"][0] == got["real"][0] and got["jsemu"][1][:-1] == got["real"][1][:-1]
        assert got["real"][0][1] is True and got["real"][0][-1] == b"PONG\r\n"


async def test_handshake_first(certs: Certs, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, certs.block("  handshake_first: true\n  timeout: 0.5\n")):
        got = {}
        for kind, port in pair.ports.items():
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            plain = await _read_all(reader, 3)
            writer.close()
            got[kind] = [plain, await _tls_session(port, certs.client_context(), first=True)]
        assert got["jsemu"] == got["real"]
        assert got["real"][0] == (b"", True) and got["real"][1][-1] == b"PONG\r\n"


async def test_auth_timeout_starts_after_the_handshake(certs: Certs, tmp_path: Path) -> None:
    """Without an explicit ``timeout`` the authentication timeout is the TLS timeout + 1 s."""
    conf = certs.block("  timeout: 0.5\n") + "authorization { user: a, password: b }\n"
    async for pair in _pair(tmp_path, conf):
        got = {}
        for kind, port in pair.ports.items():
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await reader.readuntil(b"\r\n")
            await writer.start_tls(certs.client_context(), server_hostname="127.0.0.1")
            start = time.monotonic()
            data, closed = await _read_all(reader, 4)
            got[kind] = (data, closed, 1.3 <= time.monotonic() - start < 1.9)  # 0.5 + 1 s, not 2 s
            writer.close()
        assert got["jsemu"] == got["real"] == (b"-ERR 'Authentication Timeout'\r\n", True, True)


async def test_nats_py_over_tls(certs: Certs, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, certs.block("  verify: true\n")):
        for kind, port in pair.ports.items():
            nc = await nats.connect(
                f"tls://127.0.0.1:{port}", tls=certs.client_context(with_cert=True), allow_reconnect=False
            )
            sub = await nc.subscribe("greet")
            await nc.publish("greet", b"hello")
            assert (await sub.next_msg(timeout=2)).data == b"hello", kind
            await nc.close()
    async for pair in _pair(tmp_path, certs.block("  handshake_first: true\n")):
        for kind, port in pair.ports.items():
            nc = await nats.connect(
                f"tls://127.0.0.1:{port}", tls=certs.client_context(), tls_handshake_first=True, allow_reconnect=False
            )
            sub = await nc.subscribe("greet")
            await nc.publish("greet", b"first")
            assert (await sub.next_msg(timeout=2)).data == b"first", kind
            await nc.close()


BAD = {
    "missing-cert-file": 'tls { cert_file: "/nope.pem", key_file: "KEY" }',
    "missing-ca-file": 'tls { cert_file: "CERT", key_file: "KEY", ca_file: "/nope" }',
    "unknown-field": 'tls { cert_file: "CERT", key_file: "KEY", bogus: 1 }',
    "no-cert-file": 'tls { key_file: "KEY" }',
    "bad-timeout": 'tls { cert_file: "CERT", key_file: "KEY", timeout: "x" }',
    "not-a-block": "tls: 1",
    "key-does-not-match": 'tls { cert_file: "CA", key_file: "KEY" }',
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_tls_block_refused_as_nats_server(name: str, certs: Certs, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    text = BAD[name].replace("CERT", str(certs.cert)).replace("KEY", str(certs.key)).replace("CA", str(certs.ca))
    conf.write_text(text + "\n")
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]


def test_tls_flags(certs: Certs) -> None:
    """``--tls --tlscert --tlskey --tlscacert --tlsverify`` as nats-server reads them."""
    parse = build_parser().parse_args
    options = serve_options(parse(["serve", "--tlscert", str(certs.cert), "--tlskey", str(certs.key)]))
    assert options.tls is not None and not options.tls.verify
    options = serve_options(
        parse(
            [
                "serve",
                "--tlsverify",
                "--tlscert",
                str(certs.cert),
                "--tlskey",
                str(certs.key),
                "--tlscacert",
                str(certs.ca),
            ]
        )
    )
    assert options.tls is not None and options.tls.verify and options.tls.ca_file == str(certs.ca)
    assert serve_options(parse(["serve"])).tls is None


@pytest.mark.parametrize(
    "args",
    [
        ["--tls"],
        ["--tls", "--tlscert", "CERT"],
        ["--tlscacert", "CA"],
        ["--tls", "--tlscert", "/nope", "--tlskey", "KEY"],
    ],
)
def test_bad_tls_flags_refused_as_nats_server(args: list[str], certs: Certs) -> None:
    args = [
        a.replace("CERT", str(certs.cert)).replace("KEY", str(certs.key)).replace("CA", str(certs.ca)) for a in args
    ]
    real = _real(*args, "-p", "-1")
    assert real.returncode == 1
    with pytest.raises(StartupError) as refused:
        serve_options(build_parser().parse_args(["serve", *args]))
    assert f"nats-server: {refused.value}" == real.stderr.strip().splitlines()[0]


async def test_a_connect_refused_as_the_handshake_ends_still_gets_its_error(tmp_path: Path) -> None:
    """In the server's own event loop, a client's first bytes come through TLS in the turn the
    handshake ends, before ``start_tls`` hands over the secure transport: the ``-ERR`` of a
    refused CONNECT must still go out on it (as nats-server sends it), then the close."""
    options, client = generate(tmp_path)
    async with jsemu.Server(port=0, tls=options, auth=Auth(users={"alice": User("alice", "secret")})) as srv:
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        await reader.readuntil(b"\r\n")
        await writer.start_tls(client.context(), server_hostname="localhost")
        writer.write(b'CONNECT {"user":"alice","pass":"wrong","verbose":false}\r\nPING\r\n')
        got = await _read_all(reader, 3)
        writer.close()
    assert got == (b"-ERR 'Authorization Violation'\r\n", True)
