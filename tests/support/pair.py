"""Differential harness for the JetStream API: jsemu against the real nats-server.

Every test gets a ``pair`` (:class:`Pair`; the fixture is in ``tests/jetstream/api/conftest.py``):
a fresh ``jsemu.Server`` started in the test's event loop, and a fresh real ``nats-server -js``
with its own store directory (about 20 ms to start and stop; much more robust than one shared
server cleaned between tests, see ``pair``).

The ``Pair`` API (payloads are bytes, str or JSON-able objects; headers a dict, a list of
pairs, or a raw header block as bytes):

* ``await pair.same(subject, payload, headers)``: the same request to both; asserts that the
  normalised replies are equal and returns the real one (parsed when it is JSON).
* ``await pair.request(...)``: both normalised replies, ``(jsemu, real)``, for custom checks.
* ``await pair.publish(subject, payload, headers)``: no reply; waits until stored (barrier).
* ``await pair.run([(subject, payload[, headers]), ("pub", subject, payload), ...])``.
* ``pair.create(name, **config)``, ``pair.info(name, payload)``, ``pair.get(name, **req)``.
* ``await pair.each(...)``: both replies *unnormalised*, for checks within one server.
* ``await pair.settle()``: after deleting a file stream that is then created again.

Replies are compared as the **raw bytes** the servers send (JSON key order, ``\\u003e``
escaping and spacing all count), turned into a string:

* ``MSG``: the payload; ``HMSG``: ``"HMSG "`` + the header block + the payload; a reply that
  carries a reply subject is prefixed with ``"reply=<subject> "``. An HMSG whose header length
  does not end the header block at its first blank line is prefixed ``"!BAD-HDR-LEN <n> "``
  (a wrong length moves bytes between header and payload and would otherwise pass unseen).
* Every request ends with a PING/PONG round trip once its reply is in (or timed out); every
  other frame before the PONG (a second reply, a reply to another inbox, ``-ERR``) is added
  to the reply as a ``"+ unexpected ..."`` line, so it is compared too. A publish without a
  reply compares the frames before its PONG (and its barrier's) in the same way.
* ``"<no responders>"`` (followed by any further header lines, such as the ``Nats-Subject``
  that nats-server 2.15 adds) for a ``NATS/1.0 503`` status without payload, ``"<timeout>"``
  when nothing came.
* Every RFC3339Nano UTC timestamp (Go's trimmed-fraction form), except the zero time
  ``0001-01-01T00:00:00Z``, becomes ``<ts>``; a timestamp in another form (trailing zeros in
  the fraction, an offset) is left alone and so shows up as a difference.
* The server's id and name (from its INFO; they are the ``cluster.leader`` value) become
  ``<server>``. Nothing else is normalised.

Both servers start empty, so even the account API counters of ``$JS.API.INFO`` agree.

**Validating the harness**: with ``JSEMU_PAIR_REAL_REAL=1`` in the environment the "jsemu"
side is a second real nats-server (also fresh for each test). Every test must pass in that
mode; it proves that the normalisation is neither too weak nor the cases flaky::

    JSEMU_PAIR_REAL_REAL=1 /work/venv/bin/python -m pytest tests/jetstream/api -q

``JSEMU_PAIR_LOG=<file>`` appends each compared request with the real server's reply to
``<file>``, which is handy to see what nats-server answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support.rawclient import RawClient, header_block_ok
from support.servers import RealServer

REAL_REAL = os.environ.get("JSEMU_PAIR_REAL_REAL", "") not in ("", "0")
#: Append every compared request and the real server's reply to this file (for exploring).
LOG = os.environ.get("JSEMU_PAIR_LOG", "")

TIMEOUT = "<timeout>"
NO_RESPONDERS = "<no responders>"
ZERO_TS = "0001-01-01T00:00:00Z"
# Go's time.RFC3339Nano in UTC: the fraction has its trailing zeros trimmed.
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{0,8}[1-9])?Z")
_CTRL = re.compile(rb"^(MSG|HMSG) ([^\r\n]*)\r\n")
#: How long jsemu may take to answer after the real server has answered.
GRACE = 0.5
CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}

Headers = dict[str, str] | list[tuple[str, str]] | bytes | str | None
Payload = bytes | str | dict[str, Any] | list[Any] | None


def encode_payload(payload: Payload) -> bytes:
    if payload is None:
        return b""
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, str):
        return payload.encode()
    return json.dumps(payload, separators=(",", ":")).encode()


def encode_headers(headers: Headers) -> bytes | None:
    """A dict or list of pairs becomes ``NATS/1.0\\r\\nK: V\\r\\n...\\r\\n``; bytes/str are sent as is."""
    if headers is None:
        return None
    if isinstance(headers, bytes):
        return headers
    if isinstance(headers, str):
        return headers.encode()
    items = headers.items() if isinstance(headers, dict) else headers
    return ("NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in items) + "\r\n").encode()


class Side:
    """One connection (raw protocol, so header blocks and MSG/HMSG are seen exactly)."""

    def __init__(self, name: str, client: RawClient) -> None:
        self.name = name
        self.client = client
        info = client.info
        # Longest first: jsemu's name contains its id.
        self.ids = sorted({str(info.get("server_name", "")), str(info.get("server_id", ""))} - {""}, key=len)[::-1]
        self.n = 0

    @classmethod
    async def connect(cls, name: str, port: int) -> Side:
        client = await RawClient.connect(port, CONNECT)
        client.send(b"SUB _PAIR.> 1\r\n")
        frames = await client.exchange()
        assert not frames, frames
        return cls(name, client)

    def _send(self, subject: str, reply: bytes | None, payload: bytes, hdr: bytes | None) -> None:
        subj = subject.encode()
        rep = b" " + reply if reply else b""
        if hdr is None:
            self.client.send(b"PUB %s%s %d\r\n%s\r\n" % (subj, rep, len(payload), payload))
        else:
            total = len(hdr) + len(payload)
            self.client.send(b"HPUB %s%s %d %d\r\n%s%s\r\n" % (subj, rep, len(hdr), total, hdr, payload))

    def normalise(self, frame: bytes, scrub: bool = True) -> str:
        m = _CTRL.match(frame)
        assert m, frame
        body = frame[m.end() : -2]
        args = m.group(2).split()
        hmsg = m.group(1) == b"HMSG"
        reply = args[2] if len(args) == (5 if hmsg else 4) else None
        if hmsg:
            hlen = int(args[-2])
            hdr, data = body[:hlen], body[hlen:]
            if hdr.startswith(b"NATS/1.0 503\r\n") and not data:
                # nats-server 2.15 adds "Nats-Subject: <subject>" to its no-responders status;
                # such further header lines are kept, with their CRLFs.
                rest = hdr[len(b"NATS/1.0 503\r\n") : -2].decode(errors="backslashreplace")
                return self.scrub(NO_RESPONDERS + (" " + rest if rest else ""))
            text = "HMSG " + hdr.decode(errors="backslashreplace") + data.decode(errors="backslashreplace")
            if not header_block_ok(hdr):
                text = f"!BAD-HDR-LEN {hlen} " + text
        else:
            text = body.decode(errors="backslashreplace")
        if reply:
            text = f"reply={reply.decode()} {text}"
        return self.scrub(text) if scrub else text

    def scrub(self, text: str) -> str:
        text = _TS.sub(lambda t: t.group(0) if t.group(0) == ZERO_TS else "<ts>", text)
        for ident in self.ids:
            text = text.replace(ident, "<server>")
        return text

    async def exchange(
        self, subject: str, payload: bytes, hdr: bytes | None, timeout: float, scrub: bool = True
    ) -> tuple[str, list[str]]:
        """Send with a fresh inbox; the normalised reply (or ``<timeout>``) and every other
        frame that came before the PING/PONG round trip ending the request (normalised too,
        with the subject they came on): a second reply, an ``-ERR``, a stray message."""
        self.n += 1
        inbox = b"_PAIR.%d" % self.n
        self._send(subject, inbox, payload, hdr)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        reply: bytes | None = None
        extras: list[bytes] = []
        while reply is None:
            left = deadline - loop.time()
            if left <= 0:
                break
            frame = await self.client.next_frame(left)
            if frame is None:
                if self.client.eof:
                    return "<connection closed>", [self.describe(f, scrub) for f in extras]
                continue
            m = _CTRL.match(frame)
            if m and m.group(2).split()[0] == inbox:
                reply = frame
            elif frame == b"PING\r\n":
                self.client.send(b"PONG\r\n")
            elif not frame.startswith(b"INFO "):  # the async INFO nats-server sends after the first PONG
                extras.append(frame)
        extras += await self._round_trip()
        text = TIMEOUT if reply is None else self.normalise(reply, scrub)
        return text, [self.describe(f, scrub) for f in extras]

    async def request(self, subject: str, payload: bytes, hdr: bytes | None, timeout: float, scrub: bool = True) -> str:
        """:meth:`exchange` as one string: the reply, then each unexpected frame on a line
        of its own (``+ unexpected ...``), so that any of them makes the two sides differ."""
        text, extras = await self.exchange(subject, payload, hdr, timeout, scrub)
        return "\n".join([text, *(f"+ unexpected {e}" for e in extras)])

    async def _round_trip(self) -> list[bytes]:
        """The frames before the PONG, without async INFOs (they are not replies)."""
        return [f for f in await self.client.round_trip() if not f.startswith(b"INFO ")]

    def describe(self, frame: bytes, scrub: bool = True) -> str:
        """An unexpected frame: MSG/HMSG normalised with the subject it came on, else as is."""
        m = _CTRL.match(frame)
        if m is None:
            return frame.decode(errors="backslashreplace").rstrip("\r\n")
        return f"on {m.group(2).split()[0].decode()}: {self.normalise(frame, scrub)}"

    async def publish(self, subject: str, payload: bytes, hdr: bytes | None) -> list[str]:
        """Publish without a reply; the frames that came before the PING/PONG round trip."""
        self._send(subject, None, payload, hdr)
        return [self.describe(f) for f in await self._round_trip()]

    async def barrier(self, subject: str) -> list[str]:
        """Wait until the stream holding ``subject`` has processed what was published before;
        returns the unexpected frames seen meanwhile.

        nats-server queues inbound stream messages to the stream's own goroutine, so a PONG
        does not mean they are stored. A publish with a reply that the stream rejects
        (``Nats-Expected-Stream`` mismatch) is answered only after all earlier messages.
        """
        hdr = b"NATS/1.0\r\nNats-Expected-Stream: pair-barrier\r\n\r\n"
        got, extras = await self.exchange(subject, b"", hdr, 1.0)
        if got == TIMEOUT:  # e.g. a no_ack stream: give the server a moment instead
            await asyncio.sleep(0.2)
            extras += [self.describe(f) for f in await self._round_trip()]
        return extras

    async def close(self) -> None:
        await self.client.close()


def _log(line: str) -> None:
    with open(LOG, "a") as f:
        f.write(line)


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


class Pair:
    """The two sides; ``emu`` is jsemu (or a second real server in real-real mode)."""

    def __init__(self, emu: Side, real: Side, real_servers: Sequence[RealServer] = ()) -> None:
        self.emu = emu
        self.real = real
        self.real_servers = list(real_servers)

    async def settle(self) -> None:
        """Call after deleting a file stream that the test creates again under the same name:
        waits for nats-server's background removal (see :func:`store_settled`)."""
        for srv in self.real_servers:
            await store_settled(srv)

    # The default wait is long (a consumer create's reply from the binary came after more than
    # 2 s under heavy load); it is waited out only where neither server answers, and the
    # tests that expect that pass a short timeout of their own.
    async def request(
        self, subject: str, payload: Payload = b"", headers: Headers = None, timeout: float = 5.0
    ) -> tuple[str, str]:
        data, hdr = encode_payload(payload), encode_headers(headers)
        emu_task = asyncio.ensure_future(self.emu.request(subject, data, hdr, timeout))
        real = await self.real.request(subject, data, hdr, timeout)
        if real != TIMEOUT and not emu_task.done():
            # Once the real server has answered, jsemu gets only a short grace period, so a
            # missing handler costs half a second rather than the whole timeout.
            done, _ = await asyncio.wait([emu_task], timeout=GRACE)
            if not done:
                emu_task.cancel()
                await asyncio.gather(emu_task, return_exceptions=True)
                return TIMEOUT, real
        return await emu_task, real

    async def same(self, subject: str, payload: Payload = b"", headers: Headers = None, timeout: float = 5.0) -> Any:
        """Assert both servers give the same (normalised) reply; return the real one, parsed
        as JSON when it is JSON."""
        emu, real = await self.request(subject, payload, headers, timeout)
        if LOG:
            _log(f"{subject} {encode_payload(payload)!r} {encode_headers(headers)!r}\n  -> {real}\n")
        assert emu == real, f"request {subject} {encode_payload(payload)!r} headers={headers!r}: {emu!r} != {real!r}"
        return _parse(real)

    async def each(self, subject: str, payload: Payload = b"", headers: Headers = None) -> tuple[Any, Any]:
        """The same request to both, replies *not* normalised and parsed as JSON when they
        are JSON: for checks within one server's answers (timestamps, ids)."""
        data, hdr = encode_payload(payload), encode_headers(headers)
        (emu, emu_extra), (real, real_extra) = await asyncio.gather(
            self.emu.exchange(subject, data, hdr, 2.0, scrub=False),
            self.real.exchange(subject, data, hdr, 2.0, scrub=False),
        )
        assert len(emu_extra) == len(real_extra), f"unexpected frames: jsemu {emu_extra!r}, real {real_extra!r}"
        return _parse(emu), _parse(real)

    async def publish(
        self, subject: str, payload: Payload = b"", headers: Headers = None, barrier: bool = True
    ) -> None:
        """Publish without a reply on both, then wait until the stream has stored it (see
        :meth:`Side.barrier`; with ``barrier=False`` just wait a little instead)."""
        data, hdr = encode_payload(payload), encode_headers(headers)
        emu, real = await asyncio.gather(self.emu.publish(subject, data, hdr), self.real.publish(subject, data, hdr))
        if barrier:
            emu2, real2 = await asyncio.gather(self.emu.barrier(subject), self.real.barrier(subject))
            emu, real = emu + emu2, real + real2
        else:
            await asyncio.sleep(0.1)
        assert emu == real, f"publish {subject} {data!r}: unexpected frames differ"

    async def run(self, steps: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Run steps in order, each ``(subject, payload[, headers])`` compared with :meth:`same`,
        or ``("pub", subject, payload[, headers])`` published with :meth:`publish`."""
        out: list[Any] = []
        for step in steps:
            if step[0] == "pub":
                await self.publish(*step[1:])
                out.append(None)
            else:
                out.append(await self.same(*step))
        return out

    async def create(self, name: str = "S", **config: Any) -> Any:
        """``STREAM.CREATE.<name>`` with ``{"name": name, **config}``; both must agree."""
        return await self.same(f"$JS.API.STREAM.CREATE.{name}", {"name": name, **config})

    async def info(self, name: str = "S", payload: Payload = b"") -> Any:
        return await self.same(f"$JS.API.STREAM.INFO.{name}", payload)

    async def get(self, name: str = "S", **req: Any) -> Any:
        return await self.same(f"$JS.API.STREAM.MSG.GET.{name}", req)

    async def close(self) -> None:
        await asyncio.gather(self.emu.close(), self.real.close())


# --- servers ------------------------------------------------------------------------------


def _deleted_leftovers(srv: RealServer) -> list[str]:
    streams = Path(srv.tmp.name, "jetstream", "$G", "streams")
    try:
        return sorted(p.name for p in streams.iterdir() if p.name.startswith("."))
    except FileNotFoundError:  # not created yet, or a directory vanished while listing
        return []


async def store_settled(srv: RealServer) -> None:
    """Wait until nats-server has removed the directories of deleted file streams.

    It renames ``<name>`` to ``.<name>`` and removes that in the background; deleting a
    second stream of the same name before that is done makes the rename fail, and the next
    create of that name then fails with 10049 "error creating store for stream".
    """
    for _ in range(500):
        if not _deleted_leftovers(srv):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"deleted streams never removed: {_deleted_leftovers(srv)}")


#: The two stream storages (the ``storage`` fixture is parametrised over them).
STORAGES = ["file", "memory"]
