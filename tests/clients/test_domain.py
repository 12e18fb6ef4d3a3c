"""A JetStream domain: ``jsemu.Server(domain="D")`` against nats-server 2.15.1 configured with
``jetstream { domain: D, store_dir: ... }``.

With a domain, nats-server adds account subject mappings from ``$JS.D.API.<...>`` to
``$JS.API.<...>`` (only the subjects of its mapping table, see :data:`MAPPING_PROBES`; applied to
every published message, so subscribers see the mapped subject and a ``no responders`` status names
it), and reports ``"domain": "D"`` in INFO, in account info, in stream info, update and list
replies, and in every successful PubAck (``{"stream":"S","domain":"D","seq":1}``).

Every test gets a fresh pair of servers (a nats-server starts in about 20 ms), so even the
account API counters agree. Replies are compared as raw frames (raw-socket client), normalised
as in ``tests/support/pair.py``: timestamps become ``<ts>``, the server's id and name become
``<server>``, an ``HMSG`` is ``"HMSG " + header block + payload`` (``"!BAD-HDR-LEN <n> "`` in
front when its header length does not end the header block); nothing else is normalised.
Each request ends with a PING/PONG round trip, and every other frame before the PONG (a second
reply, a stray message, ``-ERR``) is appended to the reply as a ``"+ unexpected ..."`` line.
Each test collects every step and asserts at the end, so a failure lists all differing steps
with the real and the jsemu reply. :func:`test_nats_py_kv_domain` drives nats-py's KV through
``nc.jetstream(domain="D")`` and compares what the client sees.

**Validating the harness**: with ``JSEMU_DOMAIN_REAL_REAL=1`` the "jsemu" side is a second
nats-server with the same configuration; every test must pass in that mode::

    JSEMU_DOMAIN_REAL_REAL=1 /work/venv/bin/python -m pytest tests/clients/test_domain.py -q
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.errors import NoRespondersError
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from support.rawclient import RawClient, header_block_ok
from support.servers import RealServer, nats_server_binary

import jsemu

#: Validate the harness: the "jsemu" side is a second nats-server; every test must then pass.
REAL_REAL = os.environ.get("JSEMU_DOMAIN_REAL_REAL", "") not in ("", "0")
DOMAIN = "D"
API = f"$JS.{DOMAIN}.API"
CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}
TIMEOUT = "<timeout>"
MISSING = "<missing>"
ZERO_TS = "0001-01-01T00:00:00Z"
# Go's time.RFC3339Nano in UTC: the fraction has its trailing zeros trimmed.
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{0,8}[1-9])?Z")
_CTRL = re.compile(rb"^(MSG|HMSG) ([^\r\n]*)\r\n")
#: How long jsemu may take to answer after the real server has answered.
GRACE = 0.5
#: INFO keys whose values differ between any two servers (ids, keys, ports, builds).
INFO_VOLATILE = ("server_id", "server_name", "git_commit", "go", "port", "xkey", "nonce")

Headers = dict[str, str] | None


class DomainRealServer(RealServer):
    """nats-server with a configuration file holding a ``jetstream { domain, store_dir }`` block
    (:class:`RealServer` only writes flat ``key: value`` lines)."""

    def __init__(self, domain: str = DOMAIN) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-domain-")
        conf = Path(self.tmp.name, "server.conf")
        store = Path(self.tmp.name, "store")
        conf.write_text(f"jetstream {{\n  domain: {domain}\n  store_dir: {json.dumps(str(store))}\n}}\n")
        args = [nats_server_binary(), "-a", "127.0.0.1", "-p", "-1", "-c", str(conf)]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.port = self._wait_ready()


def info_view(info: dict[str, Any]) -> dict[str, Any]:
    """An INFO object with the per-server values replaced (key order kept)."""
    return {k: f"<{k}>" if k in INFO_VOLATILE else v for k, v in info.items()}


class Side:
    """One raw connection; requests get their own inbox, replies come back normalised."""

    def __init__(self, name: str, client: RawClient) -> None:
        self.name = name
        self.client = client
        info = client.info
        # Longest first: jsemu's name contains its id.
        self.ids = sorted({str(info.get("server_name", "")), str(info.get("server_id", ""))} - {""}, key=len)[::-1]
        self.n = 0
        #: INFO frames received after the first one (nats-server sends one after CONNECT).
        self.infos: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, name: str, port: int) -> Side:
        client = await RawClient.connect(port, CONNECT)
        client.send(b"SUB _D.> 1\r\n")
        side = cls(name, client)
        for frame in await client.exchange():
            side._other(frame)
        return side

    def _other(self, frame: bytes) -> None:
        if frame.startswith(b"INFO "):
            self.infos.append(json.loads(frame[5:]))
        elif frame == b"PING\r\n":
            self.client.send(b"PONG\r\n")
        # +OK, PONG: ignored

    def scrub(self, text: str) -> str:
        text = _TS.sub(lambda t: t.group(0) if t.group(0) == ZERO_TS else "<ts>", text)
        for ident in self.ids:
            text = text.replace(ident, "<server>")
        return text

    def normalise(self, frame: bytes) -> tuple[str, bool]:
        """The normalised reply, and whether it ends a batch (a status other than a plain
        message: ``204 EOB``, ``404``, ``408``, ``503``...)."""
        m = _CTRL.match(frame)
        assert m, frame
        body = frame[m.end() : -2]
        args = m.group(2).split()
        if m.group(1) == b"HMSG":
            hlen = int(args[-2])
            hdr, data = body[:hlen], body[hlen:]
            status = not hdr.startswith(b"NATS/1.0\r\n")
            text = "HMSG " + hdr.decode(errors="backslashreplace") + data.decode(errors="backslashreplace")
            if not header_block_ok(hdr):
                text = f"!BAD-HDR-LEN {hlen} " + text
            return self.scrub(text), status
        return self.scrub(body.decode(errors="backslashreplace")), False

    async def request(
        self, subject: str, payload: bytes, headers: Headers, timeout: float = 2.0, many: bool = False
    ) -> str:
        """Send with a reply inbox; the normalised reply (with ``many``: every reply up to the one
        that ends the batch, joined by newlines), or ``<timeout>``."""
        self.n += 1
        inbox = b"_D.%d" % self.n
        subj = subject.encode()
        if headers is None:
            self.client.send(b"PUB %s %s %d\r\n%s\r\n" % (subj, inbox, len(payload), payload))
        else:
            hdr = ("NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()
            total = len(hdr) + len(payload)
            self.client.send(b"HPUB %s %s %d %d\r\n%s%s\r\n" % (subj, inbox, len(hdr), total, hdr, payload))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        replies: list[str] = []
        extras: list[str] = []
        while True:
            left = deadline - loop.time()
            frame = await self.client.next_frame(left) if left > 0 else None
            if frame is None:
                if self.client.eof:
                    replies.append("<connection closed>")
                    return "\n".join(replies + extras)
                if loop.time() >= deadline:
                    replies.append(TIMEOUT)
                    break
                continue
            m = _CTRL.match(frame)
            if not m or m.group(2).split()[0] != inbox:
                extras += self._unexpected(frame)  # a late reply, a duplicate, an -ERR
                continue
            text, last = self.normalise(frame)
            replies.append(text)
            if not many or last:
                break
        # End with a PING/PONG round trip: whatever came besides the reply is part of the answer.
        for frame in await self.client.round_trip():
            extras += self._unexpected(frame)
        return "\n".join(replies + extras)

    def _unexpected(self, frame: bytes) -> list[str]:
        """A frame that is not (part of) the awaited reply: INFO and PING are handled, anything
        else becomes a ``+ unexpected ...`` line of the answer."""
        if frame.startswith(b"INFO ") or frame == b"PING\r\n":
            self._other(frame)
            return []
        m = _CTRL.match(frame)
        if m is None:
            return ["+ unexpected " + frame.decode(errors="backslashreplace").rstrip("\r\n")]
        return [f"+ unexpected on {m.group(2).split()[0].decode()}: {self.normalise(frame)[0]}"]

    async def close(self) -> None:
        await self.client.close()


class Pair:
    """jsemu (``emu``) and nats-server (``real``), both with the domain; records every step."""

    def __init__(self, emu: Side, real: Side) -> None:
        self.emu = emu
        self.real = real
        #: (label, jsemu reply, real reply) of every compared step.
        self.steps: list[tuple[str, str, str]] = []

    async def request(
        self,
        label: str,
        subject: str,
        payload: bytes | str | dict[str, Any] = b"",
        headers: Headers = None,
        many: bool = False,
    ) -> str:
        """The same request to both; records the step and returns the real reply."""
        if isinstance(payload, dict):
            payload = json.dumps(payload, separators=(",", ":"))
        data = payload.encode() if isinstance(payload, str) else payload
        emu_task = asyncio.ensure_future(self.emu.request(subject, data, headers, many=many))
        real = await self.real.request(subject, data, headers, many=many)
        done, _ = await asyncio.wait([emu_task], timeout=GRACE)
        if not done:  # the real server answered: jsemu gets only a short grace period
            emu_task.cancel()
            await asyncio.gather(emu_task, return_exceptions=True)
            emu = TIMEOUT
        else:
            emu = emu_task.result()
        self.steps.append((label, emu, real))
        return real

    def real_reply(self, label: str) -> str:
        return next(real for lab, _, real in self.steps if lab == label)

    def check(self) -> None:
        """Assert that jsemu answered every step as nats-server did; lists all differing steps."""
        differing = [f"{label}:\n  real:  {real!r}\n  jsemu: {emu!r}" for label, emu, real in self.steps if emu != real]
        assert not differing, f"{len(differing)} of {len(self.steps)} replies differ:\n" + "\n".join(differing)

    async def close(self) -> None:
        await asyncio.gather(self.emu.close(), self.real.close())


@pytest.fixture
async def servers() -> AsyncIterator[tuple[Any, DomainRealServer]]:
    """A fresh jsemu and a fresh nats-server, both with JetStream domain ``D`` (anything with a
    ``port``: with ``JSEMU_DOMAIN_REAL_REAL=1`` the "jsemu" side is a second nats-server)."""
    tmp = tempfile.TemporaryDirectory(prefix="jsemu-domain-emu-")
    real = DomainRealServer()
    emu: Any = DomainRealServer() if REAL_REAL else jsemu.Server(domain=DOMAIN, store_dir=tmp.name)
    try:
        if not REAL_REAL:
            await emu.start()
        yield emu, real
    finally:
        if REAL_REAL:
            emu.stop()
        else:
            await emu.stop()
        real.stop()
        tmp.cleanup()


@pytest.fixture
async def pair(servers: tuple[Any, DomainRealServer]) -> AsyncIterator[Pair]:
    emu, real = servers
    p = Pair(await Side.connect("jsemu", emu.port), await Side.connect("real", real.port))
    try:
        yield p
    finally:
        await p.close()


def stream_config(name: str = "S", **extra: Any) -> dict[str, Any]:
    return {"name": name, "subjects": [f"{name.lower()}.>"], **extra}


# --- INFO ---------------------------------------------------------------------------------------


async def test_info_domain(pair: Pair) -> None:
    """INFO carries ``"domain":"D"`` (after ``jetstream``, before ``api_lvl``); so does the INFO
    nats-server sends after CONNECT."""
    real, emu = pair.real.client.info, pair.emu.client.info
    assert real["domain"] == DOMAIN
    assert list(real).index("domain") == list(real).index("client_ip") + 1
    assert info_view(emu) == info_view(real)
    await pair.request("ping-flush", "nothing.here")  # let the post-CONNECT INFO arrive
    assert [i.get("domain") for i in pair.real.infos] == [DOMAIN]
    assert [info_view(i) for i in pair.emu.infos] == [info_view(i) for i in pair.real.infos]
    pair.check()  # the flush request itself: no responders on both


# --- JetStream API through $JS.D.API ------------------------------------------------------------


async def test_account_info_domain(pair: Pair) -> None:
    """``$JS.D.API.INFO`` and ``$JS.API.INFO`` answer the same account info, with the domain."""
    await pair.request("domain INFO", f"{API}.INFO")
    await pair.request("plain INFO", "$JS.API.INFO")
    await pair.request("domain INFO again", f"{API}.INFO")
    await pair.request("other domain INFO", "$JS.E.API.INFO")
    info = json.loads(pair.real_reply("domain INFO"))
    assert info["domain"] == DOMAIN and info["api"] == {"level": 5, "total": 0, "errors": 0}
    assert json.loads(pair.real_reply("plain INFO"))["api"]["total"] == 1
    assert json.loads(pair.real_reply("domain INFO again"))["api"]["total"] == 2
    assert pair.real_reply("other domain INFO") == "HMSG NATS/1.0 503\r\nNats-Subject: $JS.E.API.INFO\r\n\r\n"
    pair.check()


async def test_stream_api_domain(pair: Pair) -> None:
    """Stream create, info, list, names, update, errors and delete through ``$JS.D.API``."""
    await pair.request("create", f"{API}.STREAM.CREATE.S", stream_config())
    await pair.request("create again", f"{API}.STREAM.CREATE.S", stream_config())
    await pair.request("create bad json", f"{API}.STREAM.CREATE.T", "{bad")
    await pair.request("create name mismatch", f"{API}.STREAM.CREATE.T", stream_config("U"))
    await pair.request("pub s.a", "s.a", "one")
    await pair.request("info", f"{API}.STREAM.INFO.S")
    await pair.request("info subjects", f"{API}.STREAM.INFO.S", {"subjects_filter": ">"})
    await pair.request("info missing", f"{API}.STREAM.INFO.X")
    await pair.request("plain info", "$JS.API.STREAM.INFO.S")
    await pair.request("list", f"{API}.STREAM.LIST")
    await pair.request("names", f"{API}.STREAM.NAMES")
    await pair.request("update", f"{API}.STREAM.UPDATE.S", stream_config(description="d", allow_direct=True))
    await pair.request("msg get", f"{API}.STREAM.MSG.GET.S", {"seq": 1})
    await pair.request("msg delete", f"{API}.STREAM.MSG.DELETE.S", {"seq": 1})
    await pair.request("purge", f"{API}.STREAM.PURGE.S")
    await pair.request("delete", f"{API}.STREAM.DELETE.S")
    await pair.request("delete again", f"{API}.STREAM.DELETE.S")
    await pair.request("account info", f"{API}.INFO")

    created = json.loads(pair.real_reply("create"))
    assert created["did_create"] is True and "domain" not in created  # the create reply has none
    assert json.loads(pair.real_reply("info"))["domain"] == DOMAIN
    assert json.loads(pair.real_reply("plain info"))["domain"] == DOMAIN
    assert [s["domain"] for s in json.loads(pair.real_reply("list"))["streams"]] == [DOMAIN]
    assert json.loads(pair.real_reply("update"))["domain"] == DOMAIN
    assert json.loads(pair.real_reply("info missing"))["error"]["err_code"] == 10059
    assert json.loads(pair.real_reply("account info"))["api"] == {"level": 5, "total": 15, "errors": 4}
    pair.check()


#: Subjects published to show which ones nats-server maps. Its mapping table
#: (``generateJSMappingTable``) has ``$JS.D.API.INFO`` -> ``$JS.API.INFO`` and ``$JS.D.API.<X>.>`` ->
#: ``$JS.API.<X>.>`` for X in STREAM, CONSUMER, DIRECT, META, SERVER, ACCOUNT, plus
#: ``$JS.D.API.$KV.>`` -> ``$KV.>`` and ``$JS.D.API.$OBJ.>`` -> ``$OBJ.>``; nothing else is mapped.
MAPPING_PROBES = [
    f"{API}.INFO",
    f"{API}.INFO.X",
    f"{API}.STREAM.NAMES",
    f"{API}.STREAM",
    f"{API}.CONSUMER.X",
    f"{API}.DIRECT.GET.S",
    f"{API}.META.LEADER.STEPDOWN",
    f"{API}.SERVER.REMOVE",
    f"{API}.ACCOUNT.PURGE.X",
    f"{API}.$KV.B.k",
    f"{API}.$OBJ.B.x",
    f"{API}.FOO",
    f"$JS.{DOMAIN}.API",
    "$JS.E.API.INFO",
    f"$JS.{DOMAIN.lower()}.API.INFO",
]
#: What the subscriber of :func:`test_domain_mapping_table` listens to (sids 1-5).
MAPPING_SUBS = ["$JS.API.>", "$JS.*.API.>", "$KV.>", "$OBJ.>", f"$JS.{DOMAIN}.API"]
SETTLE = 0.2


async def _mapping_view(port: int) -> dict[str, str]:
    """Publish every probe with a reply and no subscriber (what comes back), then again with a
    subscriber on :data:`MAPPING_SUBS` (which subject and sid it receives each probe on)."""
    pub = await Side.connect("pub", port)
    out: dict[str, str] = {}
    try:
        client = pub.client
        for i, subject in enumerate(MAPPING_PROBES):
            client.send(f"PUB {subject} _D.r{i} 0\r\n\r\n".encode())
        frames = await client.exchange()
        await asyncio.sleep(SETTLE)
        frames += await client.exchange()
        # Every frame counts: a second reply to a probe is listed after the first, and
        # anything else (an -ERR, a stray message) under "other frames".
        replies: dict[bytes, list[str]] = {}
        others: list[str] = []
        for frame in frames:
            m = _CTRL.match(frame)
            if m:
                replies.setdefault(m.group(2).split()[0], []).append(pub.normalise(frame)[0])
            elif not frame.startswith(b"INFO ") and frame != b"PING\r\n":
                others.append(frame.decode(errors="backslashreplace"))
        for i, subject in enumerate(MAPPING_PROBES):
            out[f"reply {subject}"] = " | ".join(replies.pop(b"_D.r%d" % i, ["<no reply>"]))
        out["other frames"] = " | ".join(others + [f"{k!r}: {v}" for k, v in replies.items()])

        sub = await RawClient.connect(port, CONNECT)
        try:
            sub.send(b"".join(b"SUB %s %d\r\n" % (s.encode(), n) for n, s in enumerate(MAPPING_SUBS, 1)))
            await sub.exchange()
            for subject in MAPPING_PROBES:
                client.send(f"PUB {subject} 2\r\nhi\r\n".encode())
                await client.exchange()
                await asyncio.sleep(0.01)
                got = [f for f in await sub.exchange() if not f.startswith(b"INFO ")]
                out[f"subscriber {subject}"] = " | ".join(sorted(f.decode(errors="backslashreplace") for f in got))
        finally:
            await sub.close()
    finally:
        await pub.close()
    return out


async def test_domain_mapping_table(servers: tuple[Any, DomainRealServer]) -> None:
    """Exactly the subjects of nats-server's mapping table are mapped (for subscribers too), and
    a no-responders status names the mapped subject."""
    emu, real = servers
    got, expected = await asyncio.gather(_mapping_view(emu.port), _mapping_view(real.port))

    assert expected[f"subscriber {API}.INFO"] == "MSG $JS.API.INFO 1 2\r\nhi\r\n"
    assert expected[f"subscriber {API}.DIRECT.GET.S"] == "MSG $JS.API.DIRECT.GET.S 1 2\r\nhi\r\n"
    assert expected[f"subscriber {API}.$KV.B.k"] == "MSG $KV.B.k 3 2\r\nhi\r\n"
    assert expected[f"subscriber {API}.FOO"] == f"MSG {API}.FOO 2 2\r\nhi\r\n"
    assert expected[f"subscriber {API}.INFO.X"] == f"MSG {API}.INFO.X 2 2\r\nhi\r\n"
    assert json.loads(expected[f"reply {API}.INFO"])["domain"] == DOMAIN
    assert expected[f"reply {API}.$KV.B.k"] == "HMSG NATS/1.0 503\r\nNats-Subject: $KV.B.k\r\n\r\n"
    assert expected[f"reply {API}.FOO"] == f"HMSG NATS/1.0 503\r\nNats-Subject: {API}.FOO\r\n\r\n"
    # Mapped into $JS.API.>, which JetStream listens to: no 503, and no answer for unknown endpoints.
    assert expected[f"reply {API}.CONSUMER.X"] == "<no reply>"
    assert expected[f"reply {API}.META.LEADER.STEPDOWN"] == "<no reply>"

    differing = [
        f"{key}:\n  real:  {expected[key]!r}\n  jsemu: {got.get(key, MISSING)!r}"
        for key in expected
        if expected[key] != got.get(key, MISSING)
    ]
    assert not differing, f"{len(differing)} of {len(expected)} differ:\n" + "\n".join(differing)


async def test_puback_domain(pair: Pair) -> None:
    """PubAcks name the domain (exact bytes); error PubAcks do not. The stream is created through
    the plain ``$JS.API`` so that this test does not depend on the domain mapping."""
    await pair.request("create (plain API)", "$JS.API.STREAM.CREATE.S", stream_config())
    await pair.request("pub 1", "s.a", "one")
    await pair.request("pub msg id", "s.b", "two", {"Nats-Msg-Id": "m1"})
    await pair.request("pub msg id dup", "s.b", "two", {"Nats-Msg-Id": "m1"})
    await pair.request("pub empty", "s.c", "")
    await pair.request("pub wrong stream", "s.a", "x", {"Nats-Expected-Stream": "T"})
    await pair.request("pub wrong last seq", "s.a", "x", {"Nats-Expected-Last-Sequence": "9"})
    await pair.request("pub expected ok", "s.a", "y", {"Nats-Expected-Stream": "S", "Nats-Expected-Last-Sequence": "3"})
    await pair.request("plain info", "$JS.API.STREAM.INFO.S")
    await pair.request("plain list", "$JS.API.STREAM.LIST")

    assert pair.real_reply("pub 1") == '{"stream":"S","domain":"D","seq":1}'
    assert pair.real_reply("pub msg id dup") == '{"stream":"S","domain":"D","seq":2,"duplicate": true}'
    assert pair.real_reply("pub wrong stream") == (
        '{"error":{"code":400,"err_code":10060,"description":"expected stream does not match"},"stream":"S","seq":0}'
    )
    assert pair.real_reply("pub expected ok") == '{"stream":"S","domain":"D","seq":4}'
    pair.check()


async def test_direct_get_domain(pair: Pair) -> None:
    """Direct Get through ``$JS.D.API.DIRECT.GET.S`` (request body) and
    ``$JS.D.API.DIRECT.GET.S.<subject>`` (last by subject), single and batched."""
    await pair.request("create (plain API)", "$JS.API.STREAM.CREATE.S", stream_config(allow_direct=True))
    await pair.request("create nd (plain API)", "$JS.API.STREAM.CREATE.N", stream_config("N"))
    await pair.request("pub 1", "s.a", "one", {"Nats-Msg-Id": "m1", "X-H": "v"})
    await pair.request("pub 2", "s.b", "two")
    await pair.request("pub 3", "s.a", "")
    await pair.request("pub n", "n.a", "n")

    await pair.request("get seq 1", f"{API}.DIRECT.GET.S", {"seq": 1})
    await pair.request("get seq 1 plain", "$JS.API.DIRECT.GET.S", {"seq": 1})
    await pair.request("get last s.a", f"{API}.DIRECT.GET.S", {"last_by_subj": "s.a"})
    await pair.request("get next s.a", f"{API}.DIRECT.GET.S", {"seq": 2, "next_by_subj": "s.a"})
    await pair.request("get subj s.b", f"{API}.DIRECT.GET.S.s.b")
    await pair.request("get subj s.*", f"{API}.DIRECT.GET.S.s.*")
    await pair.request("get subj s.zz", f"{API}.DIRECT.GET.S.s.zz")
    await pair.request("get subj with body", f"{API}.DIRECT.GET.S.s.a", {"seq": 1})
    await pair.request("get seq 9", f"{API}.DIRECT.GET.S", {"seq": 9})
    await pair.request("get empty", f"{API}.DIRECT.GET.S")
    await pair.request("get bad json", f"{API}.DIRECT.GET.S", "{")
    await pair.request("batch", f"{API}.DIRECT.GET.S", {"seq": 1, "batch": 5}, many=True)
    await pair.request("batch next", f"{API}.DIRECT.GET.S", {"seq": 1, "batch": 5, "next_by_subj": "s.a"}, many=True)
    await pair.request("multi last", f"{API}.DIRECT.GET.S", {"multi_last": ["s.>"]}, many=True)
    await pair.request(
        "multi last up_to_seq", f"{API}.DIRECT.GET.S", {"multi_last": ["s.>"], "up_to_seq": 2}, many=True
    )
    await pair.request("no direct", f"{API}.DIRECT.GET.N", {"seq": 1})
    await pair.request("no direct subj", f"{API}.DIRECT.GET.N.n.a")
    await pair.request("unknown stream", f"{API}.DIRECT.GET.X", {"seq": 1})

    assert pair.real_reply("get seq 1") == (
        "HMSG NATS/1.0\r\nNats-Msg-Id: m1\r\nX-H: v\r\nNats-Stream: S\r\nNats-Subject: s.a\r\n"
        "Nats-Sequence: 1\r\nNats-Time-Stamp: <ts>\r\n\r\none"
    )
    assert pair.real_reply("get seq 1 plain") == pair.real_reply("get seq 1")
    assert pair.real_reply("get subj s.b") == (
        "HMSG NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: s.b\r\nNats-Sequence: 2\r\nNats-Time-Stamp: <ts>\r\n\r\ntwo"
    )
    assert pair.real_reply("get subj s.zz") == "HMSG NATS/1.0 404 Message Not Found\r\n\r\n"
    assert pair.real_reply("get subj with body") == "HMSG NATS/1.0 408 Bad Request\r\n\r\n"
    assert pair.real_reply("batch").endswith(
        "HMSG NATS/1.0 204 EOB\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 3\r\n\r\n"
    )
    # The mapping applies before routing: no responders names the mapped subject.
    assert pair.real_reply("no direct") == "HMSG NATS/1.0 503\r\nNats-Subject: $JS.API.DIRECT.GET.N\r\n\r\n"
    assert pair.real_reply("no direct subj") == "HMSG NATS/1.0 503\r\nNats-Subject: $JS.API.DIRECT.GET.N.n.a\r\n\r\n"
    pair.check()


# --- nats-py through the domain ---------------------------------------------------------------


Step = Callable[[], Awaitable[Any]]


async def _kv_scenario(url: str, direct: bool) -> dict[str, Any]:
    """nats-py's KV (and a plain publish) through ``nc.jetstream(domain="D")``; what it sees."""
    out: dict[str, Any] = {}

    async def step(label: str, fn: Step) -> Any:
        try:
            value = await fn()
        except Exception as exc:  # noqa: BLE001  (recorded: the two servers must fail alike)
            out[label] = {"error": type(exc).__name__, "str": str(exc)}
            return None
        out[label] = value
        return value

    def entry(e: Any) -> Any:
        return None if e is None else {"key": e.key, "value": e.value, "revision": e.revision, "op": e.operation}

    nc = await nats.connect(url)
    try:
        js = nc.jetstream(domain=DOMAIN, timeout=2.0)

        async def account() -> Any:
            ai = await js.account_info()
            return {"domain": ai.domain, "streams": ai.streams}

        await step("account", account)

        kv = await step("kv.create", lambda: js.create_key_value(bucket="B", history=3, direct=direct))
        if kv is not None:
            out["kv.create"] = {"bucket": kv._name, "stream": kv._stream, "direct": kv._direct}

            async def status() -> Any:
                s = await kv.status()
                return {"bucket": s.bucket, "values": s.values, "history": s.history}

            await step("kv.put.k1", lambda: kv.put("k", b"v1"))
            await step("kv.put.k2", lambda: kv.put("k", b"v2"))
            await step("kv.get.k", lambda: _entry(kv.get("k"), entry))
            await step("kv.get.k.rev1", lambda: _entry(kv.get("k", revision=1), entry))
            await step("kv.create.n", lambda: kv.create("n", b"n1"))
            await step("kv.create.n.again", lambda: kv.create("n", b"n2"))
            await step("kv.update.n", lambda: kv.update("n", b"n2", last=3))
            await step("kv.update.n.stale", lambda: kv.update("n", b"n3", last=3))
            await step("kv.delete.k", lambda: kv.delete("k"))
            await step("kv.get.k.deleted", lambda: _entry(kv.get("k"), entry))
            await step("kv.get.missing", lambda: _entry(kv.get("missing"), entry))
            await step("kv.purge.n", lambda: kv.purge("n"))
            await step("kv.status", status)

            async def raw_publish() -> Any:
                pa = await js.publish("$KV.B.raw", b"raw")
                return {"stream": pa.stream, "seq": pa.seq, "domain": pa.domain, "duplicate": pa.duplicate}

            await step("js.publish", raw_publish)

            async def msg_get() -> Any:
                m = await js.get_msg("KV_B", seq=1, direct=direct)
                return {"subject": m.subject, "seq": m.seq, "data": m.data}

            await step("js.get_msg.1", msg_get)
            await step("kv.destroy", lambda: js.delete_key_value("B"))
            await step("kv.get.destroyed", lambda: _entry(kv.get("k"), entry))
        await step("account.after", account)
    finally:
        await nc.close()
    return out


async def _entry(get: Awaitable[Any], entry: Callable[[Any], Any]) -> Any:
    return entry(await get)


@pytest.mark.parametrize("direct", [False, True], ids=["msg-get", "direct-get"])
async def test_nats_py_kv_domain(servers: tuple[Any, DomainRealServer], direct: bool) -> None:
    """nats-py's KV through the domain sees the same on both servers."""
    emu, real = servers
    expected = await _kv_scenario(f"nats://127.0.0.1:{real.port}", direct)
    got = await _kv_scenario(f"nats://127.0.0.1:{emu.port}", direct)

    assert expected["account"] == {"domain": DOMAIN, "streams": 0}
    assert expected["kv.create"] == {"bucket": "B", "stream": "KV_B", "direct": direct}
    assert expected["kv.put.k1"] == 1 and expected["kv.update.n"] == 4
    assert expected["kv.get.k"] == {"key": "k", "value": b"v2", "revision": 2, "op": None}
    assert expected["kv.create.n.again"]["error"] == KeyWrongLastSequenceError.__name__
    assert expected["kv.get.k.deleted"]["error"] == KeyNotFoundError.__name__
    assert expected["kv.get.missing"]["error"] == KeyNotFoundError.__name__
    assert expected["js.publish"] == {"stream": "KV_B", "seq": 7, "domain": DOMAIN, "duplicate": None}
    assert expected["kv.status"] == {"bucket": "B", "values": 4, "history": 3}
    # The bucket is gone: STREAM.MSG.GET answers "stream not found", Direct Get has no responders.
    destroyed = NoRespondersError.__name__ if direct else KeyNotFoundError.__name__
    assert expected["kv.get.destroyed"]["error"] == destroyed
    assert expected["account.after"] == {"domain": DOMAIN, "streams": 0}

    differing = [
        f"{key}:\n  real:  {expected.get(key, MISSING)!r}\n  jsemu: {got.get(key, MISSING)!r}"
        for key in [*expected, *(k for k in got if k not in expected)]
        if expected.get(key, MISSING) != got.get(key, MISSING)
    ]
    assert not differing, "nats-py through the domain differs at\n" + "\n".join(differing)
