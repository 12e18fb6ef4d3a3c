"""Sources: a stream that stores other streams' messages under its own sequences.

Follows ``setupSourceConsumer`` and ``processInboundSourceMsg``: each source is a
consumer of its upstream (start by ``opt_start_seq``, ``opt_start_time`` or from the
first message, optionally filtered or transformed). A copied message loses any
``Nats-Stream-Source``, ``Nats-Expected-*`` and ``Nats-Batch-*`` header, gains a
``Nats-Stream-Source`` header that says where it came from, and then goes through the
stream's publish path as a sourced message: a new sequence and timestamp, limits, the
dedup window, and rollups where the stream allows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.headers import remove_header, remove_header_prefix
from ..store import StoredMsg
from .stream_config import compose_iname
from .upstream import UpstreamLink

if TYPE_CHECKING:
    from .service import JetStream
    from .stream import Stream

__all__ = ["SourceLink", "gen_header"]

STREAM_SOURCE = b"Nats-Stream-Source"


def gen_header(hdr: bytes, key: bytes, value: bytes) -> bytes:
    """``genHeader``: append one header line (a new header block when there is none)."""
    line = key + b": " + value + b"\r\n"
    if len(hdr) > 2:
        return hdr[:-2] + line + b"\r\n"
    return b"NATS/1.0\r\n" + line + b"\r\n"


class SourceLink(UpstreamLink):
    """One entry of a stream's ``sources``."""

    kind = "source"

    def __init__(self, js: JetStream, target: Stream, spec: dict[str, Any]) -> None:
        super().__init__(js, target, spec)
        self.iname = compose_iname(spec)
        parts = self.iname.split(" ")
        self._header_head = parts[0].encode() + b" "
        self._header_mid = (" " + parts[1] + " " + parts[2] + " ").encode()

    def _start(self, upstream: Stream) -> None:
        if self.sseq:  # it copied from this upstream before: go on after that
            self.sseq = max(self.sseq, self.first_to_deliver(upstream, self.sseq + 1, None) - 1)
            return
        start_time = self.spec.get("opt_start_time")
        last_ts = self.target.store.state().last_ts
        if start_time is not None and last_ts and start_time < last_ts:
            start_time = last_ts  # not before what the stream already holds
        self.sseq = self.first_to_deliver(upstream, self.spec.get("opt_start_seq") or 0, start_time) - 1

    def _copy(self, sm: StoredMsg) -> None:
        self.sseq = sm.seq
        hdr = sm.hdr
        if hdr:
            hdr = remove_header(hdr, STREAM_SOURCE)
            hdr = remove_header_prefix(remove_header_prefix(hdr, b"Nats-Expected-"), b"Nats-Batch-")
        value = self._header_head + str(sm.seq).encode() + self._header_mid + sm.subject
        hdr = gen_header(hdr, STREAM_SOURCE, value)
        self.target.store_sourced(self.transform(sm.subject), hdr, sm.data)
