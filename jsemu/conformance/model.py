"""The vocabulary of Direct Get scenarios: stream setup, steps and requests.

A :class:`Scenario` names its streams (create configs) and a list of steps. Only :class:`Get`
steps produce recorded replies; the other steps change the stream and are checked to succeed.

Request bodies are ``bytes`` (sent exactly) or ``str``. A ``str`` body may contain time
templates, resolved at run time from the server under test (STREAM.MSG.GET of that seq),
so the same case works on any server::

    {ts:3}          the stored timestamp of seq 3, RFC 3339 UTC with a trimmed fraction
    {ts:3+1}        one nanosecond later ({ts:3-1}: one earlier; any integer of ns)
    {ts:3@+02:00}   the same instant written with a +02:00 offset (also {ts:3+5@-01:30})
    {ts:3!9}        the same instant with the fraction padded to 9 digits (no trimming)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Delete", "Get", "Pub", "Purge", "Scenario", "Sleep", "Step", "Update", "body", "hdrs"]


@dataclass(frozen=True)
class Pub:
    """Publish with a PubAck (the ack must be a success). ``hdr`` is a raw header block."""

    subject: str
    payload: bytes = b""
    hdr: bytes | None = None


@dataclass(frozen=True)
class Delete:
    """``STREAM.MSG.DELETE`` of one sequence (must succeed)."""

    seq: int
    stream: str = "S"


@dataclass(frozen=True)
class Purge:
    """``STREAM.PURGE`` with an optional request (``{"filter":...}``, ``{"keep":n}``...)."""

    request: dict[str, Any] | None = None
    stream: str = "S"


@dataclass(frozen=True)
class Update:
    """``STREAM.UPDATE`` with a full config (must succeed)."""

    config: dict[str, Any]


@dataclass(frozen=True)
class Sleep:
    """Let wall-clock time pass (for timestamps that must be far apart)."""

    seconds: float


@dataclass(frozen=True)
class Get:
    """One Direct Get request; its reply frames are recorded.

    * ``key``: subject-appended form ``$JS.API.DIRECT.GET.<stream>.<key>`` (None: payload endpoint).
    * ``subject``: the whole request subject, overriding ``stream``/``key``.
    * ``hdr``: a raw header block, sent with HPUB.
    * ``reply=False``: publish without a reply subject.
    * ``conn``: ``default`` (headers + no_responders), ``headers`` (headers, no no_responders),
      ``plain`` (no header support) or ``pedantic`` (like default, pedantic).
    * ``silent``: no reply is expected; only a quiet period is waited for.
    """

    body: bytes | str = b""
    key: str | None = None
    stream: str = "S"
    subject: str | None = None
    hdr: bytes | None = None
    reply: bool = True
    conn: str = "default"
    silent: bool = False
    note: str = ""

    def request_subject(self) -> str:
        if self.subject is not None:
            return self.subject
        base = f"$JS.API.DIRECT.GET.{self.stream}"
        return base if self.key is None else f"{base}.{self.key}"

    def describe(self) -> str:
        """A stable, readable one-line description (templates unresolved)."""
        raw = self.body if isinstance(self.body, bytes) else self.body.encode()
        parts = [self.request_subject(), raw.decode("utf-8", "backslashreplace")]
        if self.hdr is not None:
            parts.append("hdr=" + self.hdr.decode("utf-8", "backslashreplace"))
        if not self.reply:
            parts.append("(no reply subject)")
        if self.conn != "default":
            parts.append(f"conn={self.conn}")
        if self.note:
            parts.append(f"# {self.note}")
        return " ".join(parts)


Step = Pub | Delete | Purge | Update | Sleep | Get


@dataclass(frozen=True)
class Scenario:
    id: str
    streams: tuple[dict[str, Any], ...]
    steps: tuple[Step, ...]
    #: Server options (``max_pending``, ``max_payload``), for jsemu.Server and nats-server alike.
    server: dict[str, Any] = field(default_factory=dict)
    doc: str = ""

    @property
    def requests(self) -> list[Get]:
        return [s for s in self.steps if isinstance(s, Get)]


def body(**fields: Any) -> str:
    """A compact JSON request body, keys in the order given."""
    return json.dumps(fields, separators=(",", ":"))


def hdrs(*lines: str, status: str = "") -> bytes:
    """A raw header block: ``NATS/1.0[ status]\\r\\n`` + lines + ``\\r\\n``."""
    first = "NATS/1.0" + (" " + status if status else "")
    return ("\r\n".join([first, *lines]) + "\r\n\r\n").encode()
