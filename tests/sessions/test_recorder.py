"""``jsemu.sessions.Recorder`` (``jsemu record``): a proxy that changes nothing on the wire, writes
every byte both ways to the session file, and keeps credentials out of the file unless told.

Captured from nats-server 2.15.1 and jsemu alike: the same raw session through the proxy and
straight to the server gives the same frames (up to the ids INFO carries per connection), and
the file holds exactly the bytes the client sent and received; a server that closes the
connection (``-ERR`` for an unknown op) is recorded as ``"by": "server"``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nats
import pytest
from support.servers import KINDS, RealServer

import jsemu
from jsemu.protocol.frames import FrameReader
from jsemu.sessions import Recorder, read_session
from jsemu.sessions.normalise import view
from jsemu.sessions.redact import ConnectRedactor, redact_connect
from jsemu.testing.certificates import generate

SCRIPT = [
    b'CONNECT {"verbose":true,"pedantic":false,"headers":true,"protocol":1,"user":"u"}\r\n',
    b"SUB orders.* 1\r\nSUB orders.* q 2\r\n",
    b"PUB orders.1 reply.x 5\r\nhello\r\nHPUB orders.2 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n",
    b"PING\r\n",
    b"UNSUB 1\r\nPUB orders.3 0\r\n\r\nPING\r\n",
    b"BOGUS\r\n",
]


async def _talk(port: int) -> bytes:
    """Send SCRIPT one chunk at a time, each after the server's answers to the one before."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    got = await reader.readuntil(b"\r\n")  # INFO
    for chunk in SCRIPT:
        writer.write(chunk)
        await writer.drain()
        await asyncio.sleep(0.05)
    try:
        while data := await asyncio.wait_for(reader.read(65536), 5):
            got += data
    except (TimeoutError, ConnectionError):
        pass
    writer.close()
    return got


def _views(data: bytes) -> list[str]:
    frames = FrameReader()
    frames.feed(data)
    return [view(f)[0] for f in frames.frames()]


@pytest.fixture(params=KINDS)
async def upstream(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    if request.param == "jsemu":
        async with jsemu.Server() as srv:
            yield srv.port
    else:
        real = await asyncio.to_thread(RealServer)
        yield real.port
        await asyncio.to_thread(real.stop)


async def test_proxy_changes_nothing_and_records_every_byte(upstream: int, tmp_path: Path) -> None:
    direct = await _talk(upstream)
    path = tmp_path / "s.jsonl"
    async with Recorder(f"nats://127.0.0.1:{upstream}", path) as recorder:
        proxied = await _talk(recorder.port)
        await asyncio.sleep(0.1)
    assert _views(proxied) == _views(direct)
    assert direct.endswith(b"-ERR 'Unknown Protocol Operation'\r\n")
    assert sum(v.startswith(("MSG orders.", "HMSG orders.")) for v in _views(direct)) == 5
    session = read_session(path)
    assert session.header["format"] == "jsemu-session" and session.header["version"] == 1
    [conn] = session.connections.values()
    assert b"".join(c.data for c in conn.chunks if c.dir == "c2s") == b"".join(SCRIPT)
    assert b"".join(c.data for c in conn.chunks if c.dir == "s2c") == proxied
    assert conn.closed_by == "server"
    assert [c.t for c in conn.chunks] == sorted(c.t for c in conn.chunks)


def test_redact_connect_keeps_every_other_byte() -> None:
    line = (
        b'CONNECT {"user":"alice","pass":"s3cr\\"et","Auth_Token":"tok","sig":"c2ln",'
        b'"jwt":"eyJ0","nkey":"UABC","verbose":false}\r\n'
    )
    assert redact_connect(line) == (
        b'CONNECT {"user":"alice","pass":"[REDACTED]","Auth_Token":"[REDACTED]","sig":"[REDACTED]",'
        b'"jwt":"[REDACTED]","nkey":"UABC","verbose":false}\r\n'
    )
    assert redact_connect(b'PUB a 15\r\n{"pass":"x"}\r\n') == b'PUB a 15\r\n{"pass":"x"}\r\n'


def test_redactor_holds_the_first_line_until_whole() -> None:
    r = ConnectRedactor()
    assert r.feed(b'CONNECT {"pa') == b""
    assert r.feed(b'ss": "hunter2"}') == b""
    assert r.feed(b"\r\nPUB a 1\r\nx\r\n") == b'CONNECT {"pass": "[REDACTED]"}\r\nPUB a 1\r\nx\r\n'
    assert r.feed(b'CONNECT {"pass":"later"}\r\n') == b'CONNECT {"pass":"later"}\r\n'  # only the first op
    cut = ConnectRedactor()
    assert cut.feed(b'CONNECT {"pass":"x"}') == b""
    assert cut.flush() == b'CONNECT {"pass":"[REDACTED]"}'


@pytest.mark.parametrize("redact", [True, False])
async def test_nats_py_with_a_password_through_the_proxy(redact: bool, tmp_path: Path) -> None:
    """nats-server with a user and password: the client authenticates through the proxy; the
    file has the password only with ``redact=False`` (``--no-redact``)."""
    real = await asyncio.to_thread(
        RealServer, jetstream=False, conf_text="authorization { user: alice, password: wonderland }"
    )
    path = tmp_path / "auth.jsonl"
    try:
        async with Recorder(f"nats://127.0.0.1:{real.port}", path, redact=redact) as recorder:
            nc = await nats.connect(recorder.url, user="alice", password="wonderland")
            await nc.flush()
            await nc.close()
            await asyncio.sleep(0.05)
    finally:
        await asyncio.to_thread(real.stop)
    text = path.read_text()
    assert ('"wonderland"' in json.loads(text.splitlines()[3])["data"]) is not redact
    assert json.loads(text.splitlines()[0])["redacted"] is redact
    if redact:
        assert "wonderland" not in text and '\\"pass\\": \\"[REDACTED]\\"' in text


async def test_tls_upstream(tmp_path: Path) -> None:
    """An upstream with TLS: the client talks plainly to the proxy, which does the handshake
    after INFO; the file records the INFO the client saw (no ``tls_required``)."""
    from jsemu.sessions.recorder import tls_context

    generate(tmp_path)
    conf = f'tls {{ cert_file: "{tmp_path / "cert.pem"}", key_file: "{tmp_path / "key.pem"}" }}'
    real = await asyncio.to_thread(RealServer, conf_text=conf)
    path = tmp_path / "tls.jsonl"
    try:
        tls = tls_context(str(tmp_path / "ca.pem"), None, None)
        async with Recorder(f"nats://127.0.0.1:{real.port}", path, tls=tls) as recorder:
            nc = await nats.connect(recorder.url)
            sub = await nc.subscribe("x")
            await nc.publish("x", b"over tls")
            assert (await sub.next_msg(2)).data == b"over tls"
            await nc.close()
            await asyncio.sleep(0.05)
    finally:
        await asyncio.to_thread(real.stop)
    session = read_session(path)
    [conn] = session.connections.values()
    info = conn.chunks[0].data
    assert info.startswith(b"INFO ") and b"tls_required" not in info
    async with jsemu.Server() as srv:
        from jsemu.sessions import replay

        assert (await replay(session, "127.0.0.1", srv.port)).ok
