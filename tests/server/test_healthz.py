"""``/healthz`` and ``$SYS.REQ.SERVER.<id>.HEALTHZ`` with their options, side by side with
nats-server 2.15.1 (``jsemu/server/healthz.py``): both run as processes from one configuration.

Captured on the binary: a stream named without its account (or a consumer without its stream)
is a 400 ``"error"``; a standalone server looks for the account and stream among the folders
of its store, so an account with only memory streams, one with JetStream but no stream yet,
one without JetStream and one that does not exist are all "not found" (404, ``"unavailable"``)
while an account whose only file stream was deleted is found; memory streams are never found,
any consumer of a found stream is; ``details`` answers an ``errors`` list with ``"error"``;
``js-server-only`` and ``js-enabled-only`` skip the asset checks, ``js-meta-only`` changes
nothing; a flag that is not a Go bool is a text/plain 400 naming the first bad flag in
nats-server's order; the HTTP answer has the status code as its status (and no
``status_code`` key), the $SYS answer keeps ``status_code``; without JetStream only the 400s
remain. Compared: status, content type, CORS header and the body byte for byte over HTTP,
the ``data`` of the $SYS answer.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import nats
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.js.api import StorageType

from tests.support.servers import KINDS, RealServer

CONF = """
server_name: srv-health
http: "127.0.0.1:-1"
accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  A: { users: [ {user: a, password: a} ], jetstream: enabled }
  B: { users: [ {user: b, password: b} ] }
  C: { users: [ {user: c, password: c} ], jetstream: enabled }
  D: { users: [ {user: d, password: d} ], jetstream: enabled }
  E: { users: [ {user: e, password: e} ], jetstream: enabled }
}
system_account: SYS
"""
#: The same accounts without JetStream (and no ``jetstream`` word, so jsemu is started without).
CONF_NO_JS = CONF.replace("jetstream: enabled", "")

FLAGS = ("js-enabled", "js-enabled-only", "js-server-only", "js-meta-only", "details")
ACCOUNTS = ("A", "B", "C", "D", "E", "Z", "$G", "SYS", "a", "ä<&>", 'x"y', "\x7f")
STREAMS = ("F", "M", "G", "X", "f", "ä<&>")
CONSUMERS = ("CF", "CM", "CG", "CX")


async def _assets(port: int) -> None:
    """A: file stream F (consumers CF, file, and CM, memory) and memory stream M (CM); C:
    nothing; D: file stream G, deleted; E: memory stream M only."""
    nc = await nats.connect(f"nats://a:a@127.0.0.1:{port}")
    js = nc.jetstream()
    await js.add_stream(name="F", subjects=["f"])
    await js.add_stream(name="M", subjects=["m"], storage=StorageType.MEMORY)
    await js.add_consumer("F", durable_name="CF")
    await js.add_consumer("F", durable_name="CM", mem_storage=True)
    await js.add_consumer("M", durable_name="CM")
    await nc.close()
    nd = await nats.connect(f"nats://d:d@127.0.0.1:{port}")
    await nd.jetstream().add_stream(name="G", subjects=["g"])
    await nd.jetstream().add_consumer("G", durable_name="CG")
    await nd.jetstream().delete_stream("G")
    await nd.close()
    ne = await nats.connect(f"nats://e:e@127.0.0.1:{port}")
    await ne.jetstream().add_stream(name="M", subjects=["me"], storage=StorageType.MEMORY)
    await ne.close()


class _Server:
    """A server process and a raw system-account connection for $SYS requests."""

    def __init__(self, kind: str, jetstream: bool) -> None:
        self.kind = kind
        self.proc = RealServer(
            jetstream=jetstream, jsemu_process=kind == "jsemu", conf_text=CONF if jetstream else CONF_NO_JS
        )
        if jetstream:
            asyncio.run(_assets(self.proc.port))
            # nats-server removes a deleted stream's folder after answering the delete: until
            # then the check walks a folder whose stream "could not be recovered" (503).
            deadline = time.monotonic() + 10
            while self.get("?account=D&stream=G")[0] != 404 and time.monotonic() < deadline:
                time.sleep(0.05)
        self.sock = socket.create_connection(("127.0.0.1", self.proc.port), timeout=5)
        info = self.sock.recv(65536).split(b"\r\n", 1)[0]
        self.server_id: str = json.loads(info.split(b" ", 1)[1])["server_id"]
        connect = {"user": "sys", "pass": "sys", "verbose": False, "pedantic": False}
        self.sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nSUB _R.> 1\r\nPING\r\n")
        self.buf = b""
        while b"PONG\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        self.buf = b""
        self.n = 0

    def stop(self) -> None:
        self.sock.close()
        self.proc.stop()

    def get(self, query: str) -> tuple[int, str, str | None, bytes]:
        """(status, content type, CORS header, body) of ``/healthz<query>``."""
        try:
            with urllib.request.urlopen(self.proc.monitor_url + "/healthz" + query, timeout=5) as resp:
                return (
                    resp.status,
                    resp.headers["Content-Type"],
                    resp.headers["Access-Control-Allow-Origin"],
                    resp.read(),
                )
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.headers["Access-Control-Allow-Origin"], exc.read()

    def ask(self, body: bytes) -> Any:
        """The ``data`` (or ``error``) of the answer to a HEALTHZ request by id."""
        self.n += 1
        reply = f"_R.{self.n}".encode()
        subject = f"$SYS.REQ.SERVER.{self.server_id}.HEALTHZ".encode()
        self.sock.sendall(b"PUB %s %s %d\r\n%s\r\n" % (subject, reply, len(body), body))
        while True:
            head, sep, rest = self.buf.partition(b"\r\n")
            if sep and head.startswith(b"MSG "):
                size = int(head.split()[-1])
                if len(rest) >= size + 2:
                    payload, self.buf = rest[:size], rest[size + 2 :]
                    if head.split()[1] == reply:
                        answer = json.loads(payload)
                        return answer.get("data", answer.get("error"))
                    continue
            elif sep:
                self.buf = rest  # PING/+OK and the like
                if head == b"PING":
                    self.sock.sendall(b"PONG\r\n")
                continue
            self.buf += self.sock.recv(65536)


def _pair(jetstream: bool) -> Iterator[dict[str, _Server]]:
    started: list[_Server] = []
    try:
        for kind in KINDS:
            started.append(_Server(kind, jetstream))
        yield {server.kind: server for server in started}
    finally:
        for server in started:
            server.stop()


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, _Server]]:
    yield from _pair(jetstream=True)


@pytest.fixture(scope="module")
def servers_no_js() -> Iterator[dict[str, _Server]]:
    yield from _pair(jetstream=False)


_BOOL_TEXT = st.sampled_from(["true", "false", "1", "0", "t", "F", "TRUE", "True", "", "xyz", "yes", "2"])
_QUERY = st.fixed_dictionaries(
    {},
    optional={
        **{flag: _BOOL_TEXT for flag in FLAGS},
        "account": st.sampled_from([*ACCOUNTS, ""]),
        "stream": st.sampled_from([*STREAMS, ""]),
        "consumer": st.sampled_from([*CONSUMERS, ""]),
    },
)


def _event_body(query: dict[str, str]) -> bytes:
    """The $SYS body for the same options: flags as JSON booleans (those Go parses)."""
    body: dict[str, Any] = {}
    for key, value in query.items():
        if key in FLAGS:
            if value in ("true", "1", "t", "TRUE", "True"):
                body[key] = True
            elif value in ("false", "0", "F"):
                body[key] = False
        else:
            body[key] = value
    return json.dumps(body).encode()


def _compare(servers: dict[str, _Server], query: dict[str, str]) -> None:
    target = "?" + urllib.parse.urlencode(query) if query else ""
    http = {kind: server.get(target) for kind, server in servers.items()}
    assert http["jsemu"] == http["real"], target
    body = _event_body(query)
    sys_answers = {kind: server.ask(body) for kind, server in servers.items()}
    assert sys_answers["jsemu"] == sys_answers["real"], body


#: Cases worth naming, checked every run (the generated ones add combinations).
CASES = [
    {},
    {"details": "true"},
    {"account": "A"},
    {"account": "B"},
    {"account": "C"},
    {"account": "D"},
    {"account": "E"},
    {"account": "Z", "details": "1"},
    {"account": "A", "stream": "F"},
    {"account": "A", "stream": "M"},
    {"account": "E", "stream": "M"},
    {"account": "D", "stream": "G", "details": "true"},
    {"account": "A", "stream": "F", "consumer": "CF"},
    {"account": "A", "stream": "F", "consumer": "CM"},
    {"account": "A", "stream": "F", "consumer": "CX", "details": "true"},
    {"account": "A", "stream": "M", "consumer": "CM"},
    {"stream": "F"},
    {"stream": "F", "details": "true"},
    {"consumer": "CF"},
    {"account": "A", "consumer": "CF", "details": "t"},
    {"js-enabled-only": "true", "account": "Z"},
    {"js-enabled": "1", "account": "Z"},
    {"js-server-only": "true", "account": "Z", "stream": "X"},
    {"js-meta-only": "true", "account": "Z"},
    {"js-enabled": "xyz"},
    {"details": "yes", "js-meta-only": "x"},
]


@pytest.mark.parametrize("query", CASES, ids=[urllib.parse.urlencode(c) or "none" for c in CASES])
def test_healthz_cases(servers: dict[str, _Server], query: dict[str, str]) -> None:
    _compare(servers, query)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=_QUERY)
def test_healthz_options_generated(servers: dict[str, _Server], query: dict[str, str]) -> None:
    _compare(servers, query)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=_QUERY)
def test_healthz_without_jetstream(servers_no_js: dict[str, _Server], query: dict[str, str]) -> None:
    _compare(servers_no_js, query)


def test_jetstream_on_in_no_account() -> None:
    """JetStream on (``-js``) but no account enables it: the store is still walked, so a named
    account is "not found" (404), as on nats-server."""
    conf = 'http: "127.0.0.1:-1"\naccounts { A: { users: [ {user: a, password: a} ] } }\n'
    queries = ["", "?account=A", "?account=A&stream=S&details=1", "?js-enabled-only=1"]
    seen: dict[str, list[Any]] = {}
    for kind in KINDS:
        proc = RealServer(jetstream=True, jsemu_process=kind == "jsemu", conf_text=conf)
        try:
            url = proc.monitor_url + "/healthz"
            answers = []
            for query in queries:
                try:
                    with urllib.request.urlopen(url + query, timeout=5) as resp:
                        answers.append((resp.status, resp.read()))
                except urllib.error.HTTPError as exc:
                    answers.append((exc.code, exc.read()))
            seen[kind] = answers
        finally:
            proc.stop()
    assert seen["jsemu"] == seen["real"]
    assert seen["real"][1][0] == 404
