"""Subject mappings (``mappings { ... }``) side by side with nats-server 2.15.1: the same
configuration file, the same raw-socket clients, every frame compared.

What nats-server does (captured with raw sockets):
- A publish whose subject matches a mapping's source is routed to the destination
  instead (plain subscribers, queue groups, streams store the mapped subject); the
  original subject reaches nobody. ``$N`` / ``{{wildcard(N)}}`` take the N-th ``*`` of the
  source, ``>`` the tail.
- Weighted destinations: the weights left short of 100 go to the source subject itself;
  a 100% destination always wins.
- Top-level ``mappings`` are the global account's; an account's own apply in it only.
- Trace (ADR-41): an ``sm`` event ``{"type":"sm","ts":...,"to":"<mapped>"}`` after ``in``,
  before the egress / ``js`` events (``server/msg_trace.py``).
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import RealServer

import jsemu
from jsemu.config.server_config import load_config
from jsemu.threaded import ThreadedServer

CONF = """
mappings {
  "foo": "bar"
  "w.*.*": "w2.$2.{{wildcard(1)}}"
  "t.>": "x.>"
  "m.*.>": "n.$1.>"
  "all": [{destination: "a1", weight: 100%}]
  "half": [{destination: "h1", weight: 50%}]
  "s.in": "s.stored"
}
accounts {
  G: { users: [{user: g, password: g}] }
  A: { users: [{user: a, password: a}], mappings: { "af": "ab", "foo": "afoo" } }
}
"""


def _conf(with_accounts: bool) -> str:
    return CONF if with_accounts else CONF[: CONF.index("accounts {")]


class Client:
    def __init__(self, port: int, user: str | None = None) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.rest = b""
        self.sock.recv(65536)
        auth = f',"user":"{user}","pass":"{user}"' if user else ""
        self.send(f'CONNECT {{"verbose":false,"headers":true{auth}}}\r\n'.encode())

    def send(self, data: bytes) -> None:
        self.sendr(data)

    def sendr(self, data: bytes) -> bytes:
        """Send, and what arrived until the PONG."""
        self.sock.sendall(data + b"PING\r\n")
        return self.read_until_pong()

    def read_until_pong(self) -> bytes:
        """What arrived until the PONG of the last PING (a JetStream reply may come after it,
        in the same read: kept for the next call)."""
        buf = self.rest
        self.sock.settimeout(10)
        while b"PONG\r\n" not in buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            buf += chunk
        head, _, self.rest = buf.partition(b"PONG\r\n")
        return head

    def drain(self) -> bytes:
        self.sock.sendall(b"PING\r\n")
        return self.read_until_pong()

    def drain_traces(self, got: bytes = b"", n: int = 1) -> bytes:
        """``drain`` until ``n`` trace events arrived (nats-server sends them from another
        goroutine, which a PING does not fence), or 5 s passed."""
        got += self.drain()
        deadline = time.monotonic() + 5
        while got.count(b"MSG tr ") < n and time.monotonic() < deadline:
            time.sleep(0.05)
            got += self.drain()
        return got


def _normalise(frames: bytes) -> bytes:
    """Trace events with what always differs blanked (times, server block, cids)."""

    def event(m: re.Match[bytes]) -> bytes:
        body = json.loads(m.group(2))
        body.pop("server")
        body.pop("jsemu", None)  # jsemu's own details (docs: Message tracing)
        for e in body["events"]:
            e.pop("ts")
            e.pop("cid", None)
        text = json.dumps(body, sort_keys=True).encode()
        return m.group(1) + str(len(text)).encode() + b"\r\n" + text

    return re.sub(rb"(MSG tr \d+  )\d+\r\n(\{.*?\})(?=\r\n)", event, frames)


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, int]]:
    real = RealServer(conf_text=_conf(False))
    emu = RealServer(conf_text=_conf(False), jsemu_process=True)
    try:
        yield {"nats-server": real.port, "jsemu": emu.port}
    finally:
        real.stop()
        emu.stop()


def _hpub(subject: str, headers: list[tuple[str, str]], payload: bytes = b"F") -> bytes:
    block = b"NATS/1.0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in headers) + b"\r\n"
    return f"HPUB {subject} {len(block)} {len(block) + len(payload)}\r\n".encode() + block + payload + b"\r\n"


SUBS = (
    b"SUB bar 1\r\nSUB foo 2\r\nSUB w2.> 3\r\nSUB x.> 4\r\nSUB a1 5\r\nSUB all 6\r\n"
    b"SUB n.> 7\r\nSUB m.> 8\r\nSUB w.> 9\r\nSUB t.> 10\r\nSUB q.* g 11\r\n"
)


def _exchange(port: int, pubs: bytes) -> bytes:
    sub = Client(port)
    sub.send(SUBS)
    pub = Client(port)
    pub.send(pubs)
    time.sleep(0.05)
    out = sub.drain()
    sub.sock.close()
    pub.sock.close()
    return out


def _both(servers: dict[str, int], pubs: bytes) -> tuple[bytes, bytes]:
    return _exchange(servers["nats-server"], pubs), _exchange(servers["jsemu"], pubs)


def test_mapped_subjects_delivered_as_nats_server(servers: dict[str, int]) -> None:
    pubs = b"".join(
        f"PUB {s} 1\r\nZ\r\n".encode() for s in ["foo", "w.1.2", "t.y.z", "m.k.l.m", "all", "nomap", "w.1", "t", "m.k"]
    )
    real, emu = _both(servers, pubs)
    assert b"MSG bar 1 1" in real
    assert emu == real


def test_weighted_remainder_goes_to_the_source(servers: dict[str, int]) -> None:
    """50% to h1, the rest to ``half`` itself: both arrive over 200 publishes (margin: the
    chance of one side getting none is 2**-199)."""
    for port in servers.values():
        sub = Client(port)
        sub.send(b"SUB h1 1\r\nSUB half 2\r\n")
        pub = Client(port)
        pub.send(b"PUB half 1\r\nE\r\n" * 200)
        time.sleep(0.05)
        got = sub.drain()
        to_h1, to_half = got.count(b"MSG h1 1 1"), got.count(b"MSG half 2 1")
        assert to_h1 + to_half == 200
        assert 40 <= to_h1 <= 160, (to_h1, to_half)


TRACE = [("Nats-Trace-Dest", "tr")]


@pytest.mark.parametrize(
    "pubs",
    [
        _hpub("foo", TRACE),
        _hpub("w.7.8", [*TRACE, ("Nats-Trace-Only", "true")]),
        _hpub("q.1", TRACE),
        _hpub("nomap", TRACE),
        _hpub("all", TRACE),
    ],
    ids=["plain", "wildcards-trace-only", "queue-unmapped", "no-mapping", "weighted-100"],
)
def test_trace_has_the_sm_event(servers: dict[str, int], pubs: bytes) -> None:
    outs = []
    for port in servers.values():
        sub = Client(port)
        sub.send(SUBS + b"SUB tr 99\r\n")
        pub = Client(port)
        pub.send(pubs)
        time.sleep(0.1)
        outs.append(_normalise(sub.drain_traces()))
    assert outs[1] == outs[0]


TOKENS = st.sampled_from(["foo", "w", "t", "m", "x", "1", "all", "k"])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(TOKENS, min_size=1, max_size=4).map(".".join), min_size=1, max_size=6))
def test_hypothesis_published_subjects(servers: dict[str, int], subjects: list[str]) -> None:
    """Which subject arrives (or none) for any published subject: as nats-server."""
    pubs = b"".join(f"PUB {s} 1\r\nZ\r\n".encode() for s in subjects)
    real, emu = _both(servers, pubs)
    assert emu == real


def test_account_mappings_apply_in_their_account() -> None:
    outs = []
    for jsemu_process in (False, True):
        server = RealServer(conf_text=CONF, jsemu_process=jsemu_process)
        try:
            a, g = Client(server.port, "a"), Client(server.port, "g")
            a.send(b"SUB ab 1\r\nSUB afoo 2\r\nSUB bar 3\r\nSUB tr 4\r\n")
            g.send(b"SUB ab 1\r\nSUB bar 2\r\nSUB afoo 3\r\n")
            pa = Client(server.port, "a")
            pa.send(b"PUB af 1\r\nA\r\nPUB foo 1\r\nB\r\n" + _hpub("af", [("Nats-Trace-Dest", "tr")]))
            pg = Client(server.port, "g")
            pg.send(b"PUB af 1\r\nC\r\nPUB foo 1\r\nD\r\n")
            time.sleep(0.1)
            outs.append((_normalise(a.drain_traces()), g.drain()))
        finally:
            server.stop()
    assert outs[0][0].startswith(b"MSG ab 1 1\r\nA\r\nMSG afoo 2 1\r\nB\r\n")
    assert outs[1] == outs[0]


def test_stream_stores_the_mapped_subject(servers: dict[str, int]) -> None:
    """A stream on ``s.>`` stores ``s.in`` as ``s.stored``; the trace's ``js`` event names it."""
    cfg = b'{"name":"S","subjects":["s.>"],"storage":"memory"}'
    get = b'{"seq":1}'
    outs = []
    for port in servers.values():
        c = Client(port)
        c.send(b"SUB _INBOX.> 1\r\nSUB tr 2\r\n")
        c.send(f"PUB $JS.API.STREAM.CREATE.S _INBOX.c {len(cfg)}\r\n".encode() + cfg + b"\r\n")
        time.sleep(0.1)
        c.drain()
        got = c.sendr(b"PUB s.in _INBOX.r 1\r\nY\r\n" + _hpub("s.in", TRACE))
        time.sleep(0.1)
        got += c.sendr(f"PUB $JS.API.STREAM.MSG.GET.S _INBOX.g {len(get)}\r\n".encode() + get + b"\r\n")
        time.sleep(0.1)
        got = _normalise(c.drain_traces(got))
        c.send(b"PUB $JS.API.STREAM.DELETE.S _INBOX.d 0\r\n\r\n")
        got = re.sub(rb'"time":"[^"]+"', b'"time":""', got)
        got = re.sub(rb"MSG _INBOX.g 1 \d+", b"MSG _INBOX.g 1 N", got)  # the time's length varies
        # Frames as a multiset: nats-server sends the trace event from another goroutine,
        # before or after the publish's ack (every frame here is a one-line MSG).
        outs.append(sorted(got.split(b"MSG ")))
    assert any(b'"subject":"s.stored"' in frame for frame in outs[0])
    assert outs[1] == outs[0]


def test_in_process_stream_gets_mapped_subjects(tmp_path: Path) -> None:
    """In process (where the fast lane to a stream is taken; ``jsemu serve`` keeps a trace
    log, which closes it): a run of plain publishes to a mapped subject is stored under the
    mapped subject, as nats-server stores it (``test_stream_stores_the_mapped_subject``)."""
    conf = tmp_path / "server.conf"
    conf.write_text(_conf(False))
    options = jsemu.ServerOptions(jetstream=True)
    load_config(conf, options)
    options.host, options.port, options.store_dir = "127.0.0.1", 0, None
    cfg = b'{"name":"S","subjects":["s.>"],"storage":"memory"}'
    with ThreadedServer(jsemu.Server(options)) as emu:
        c = Client(emu.port)
        c.send(b"SUB _INBOX.> 1\r\n")
        c.send(f"PUB $JS.API.STREAM.CREATE.S _INBOX.c {len(cfg)}\r\n".encode() + cfg + b"\r\n")
        time.sleep(0.1)
        c.drain()
        c.send(b"PUB s.in 1\r\nY\r\n" * 5)
        get = b'{"last_by_subj":"s.stored"}'
        got = c.sendr(f"PUB $JS.API.STREAM.MSG.GET.S _INBOX.g {len(get)}\r\n".encode() + get + b"\r\n")
        time.sleep(0.1)
        got += c.drain()
    assert b'"seq":5' in got, got
