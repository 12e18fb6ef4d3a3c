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

from ...ids import get_hash
from ...protocol.headers import remove_header, remove_header_prefix, slice_header
from ...store import StoredMsg
from ...timefmt import format_ns
from .upstream import UpstreamLink

if TYPE_CHECKING:
    from .upstream import LinkedStream, LinkServices

__all__ = ["SourceLink", "compose_iname", "gen_header"]

STREAM_SOURCE = b"Nats-Stream-Source"


def gen_header(hdr: bytes, key: bytes, value: bytes) -> bytes:
    """``genHeader``: append one header line (a new header block when there is none)."""
    line = key + b": " + value + b"\r\n"
    if len(hdr) > 2:
        return hdr[:-2] + line + b"\r\n"
    return b"NATS/1.0\r\n" + line + b"\r\n"


def compose_iname(spec: dict[str, Any]) -> str:
    """``composeIName``: "<name>[:<api hash>][:C=<consumer hash>] <filters> <destinations>"
    identifies a source (duplicates are refused; the ``Nats-Stream-Source`` header uses it)."""
    name = str(spec.get("name", ""))
    external = spec.get("external")
    if external is not None:
        name += ":" + get_hash(external.get("api", ""))
    consumer = spec.get("consumer")
    if consumer is not None:
        name += ":C=" + get_hash(consumer.get("name", ""))
    transforms = spec.get("subject_transforms") or []
    if not transforms:
        source, destination = spec.get("filter_subject") or ">", ">"
    else:
        source = "\f".join((t or {}).get("src") or ">" for t in transforms)
        destination = "\f".join((t or {}).get("dest") or ">" for t in transforms)
    return f"{name} {source} {destination}"


class SourceLink(UpstreamLink):
    """One entry of a stream's ``sources``."""

    contact_on_setup = False
    filter_before_setup = True

    def __init__(self, js: LinkServices, target: LinkedStream, spec: dict[str, Any]) -> None:
        super().__init__(js, target, spec)
        self.iname = compose_iname(spec)
        self._parts = self.iname.split(" ")
        #: The upstream sequence of the last message stored from this source (0: none).
        self.stored_seq = self._recover_seq()
        # A transform without a source subject is accepted, but its consumer is never made.
        self.never_starts = any(
            not (t or {}).get("src") and (t or {}).get("dest") for t in spec.get("subject_transforms") or []
        )

    def _recover_seq(self) -> int:
        """``startingSequenceForSources``: the last message this source stored in the
        stream, found by its ``Nats-Stream-Source`` header (a source added back resumes)."""
        store = self.target.store
        seq = store.last_seq
        name, filt, dest = self._parts
        while seq >= store.first_seq and seq > 0:
            sm = store.load_prev(b">", seq)
            if sm is None:
                break
            value = slice_header(STREAM_SOURCE, sm.hdr) if sm.hdr else None
            if value:
                fields = value.decode("utf-8", "replace").split(" ")
                if len(fields) >= 5 and fields[0] == name and fields[2] == filt and fields[3] == dest:
                    return int(fields[1]) if fields[1].isdigit() else 0
            seq = sm.seq - 1
        return 0

    def attach(self, upstream: LinkedStream) -> None:
        if self.never_starts:
            self.started = self.consumer_created = True  # no error, and nothing ever flows
            return
        super().attach(upstream)

    def _start(self, upstream: LinkedStream) -> None:
        if self.stored_seq:
            self.sseq = self.first_to_deliver(upstream, self.stored_seq + 1, None) - 1
            return
        start_time = self.spec.get("opt_start_time")
        opt_seq = self.spec.get("opt_start_seq") or 0
        state = self.target.store.state()
        if not opt_seq:
            if start_time is not None:
                if state.last_ts and start_time < state.last_ts:
                    start_time = state.last_ts  # not before what the stream already holds
            elif state.first_seq > 1 and state.last_ts:
                start_time = state.last_ts
        self.sseq = self.first_to_deliver(upstream, opt_seq, start_time) - 1

    def _copy(self, sm: StoredMsg) -> None:
        self.sseq = sm.seq
        hdr = sm.hdr
        if hdr:
            hdr = remove_header(hdr, STREAM_SOURCE)
            hdr = remove_header_prefix(remove_header_prefix(hdr, b"Nats-Expected-"), b"Nats-Batch-")
        name, filt, dest = self._parts
        assert self.upstream is not None
        ident = get_hash(format_ns(self.upstream.created_ns))
        value = f"{name} {sm.seq} {filt} {dest} ".encode() + sm.subject + b" " + ident.encode()
        hdr = gen_header(hdr, STREAM_SOURCE, value)
        before = self.target.store.last_seq
        self.target.store_sourced(self.transform(sm.subject), hdr, sm.data)
        if self.target.store.last_seq != before:
            self.stored_seq = sm.seq

    def _info_seq(self, out: dict[str, Any]) -> None:
        if self.stored_seq:
            out["seq"] = self.stored_seq
