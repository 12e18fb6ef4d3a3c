"""Subject delete markers (``subject_delete_marker_ttl``): expiry the stream carries out.

Go's ``expireMsgs`` with markers on: a message past max_age or its TTL is removed, unless it
is the last of its subject (and not itself a marker), in which case a marker is published
through the stream (``processJetStreamMsg`` as a sourced message): no body, the headers
``Nats-Marker-Reason: MaxAge``, ``Nats-TTL: <marker TTL>`` and ``Nats-Rollup: sub``, so the
rollup removes the expired message and the marker expires in its turn. Removals are the
store's logged ``remove`` (peers and the log replay them); the store itself does not expire
such a stream (``StoreLimits.stream_expires``). A timer on the server's clock runs it at the
store's ``next_expiry``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...protocol.go_duration import format_duration
from ...protocol.headers import slice_header

if TYPE_CHECKING:
    from ..clock_timers import Timer
    from .stream import Stream

__all__ = ["MarkerExpiry", "is_delete_marker"]

_MARKER_REASON = b"Nats-Marker-Reason"
_KV_OPERATION = b"KV-Operation"
_SECOND = 1_000_000_000


def is_delete_marker(hdr: bytes) -> bool:
    """Go ``isSubjectDeleteMarker``: a marker, or a KV purge."""
    return bool(slice_header(_MARKER_REASON, hdr)) or slice_header(_KV_OPERATION, hdr) == b"PURGE"


def marker_header(marker_ttl_ns: int) -> bytes:
    """The header block of a marker (Go ``handleRemovalOrSdm``; the TTL in Go's duration text)."""
    ttl = format_duration(marker_ttl_ns // _SECOND * _SECOND)
    return b"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: %s\r\nNats-Rollup: sub\r\n\r\n" % ttl.encode()


class MarkerExpiry:
    """One stream's expiry while it has subject delete markers."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self._timer: Timer | None = None

    def arm(self) -> None:
        """Make sure a timer fires by the store's next expiry."""
        deadline = self.stream.store.next_expiry()
        if deadline:
            self._timer = self.stream.js.timers.no_later_than(self._timer, deadline, self.run)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def run(self) -> None:
        """Remove what is due, leaving a marker where a subject's last message goes."""
        self._timer = None
        stream = self.stream
        store = stream.store
        marker = marker_header(stream.config.subject_delete_marker_ttl)
        for seq in store.expiry_due():
            msg = store.load(seq)
            if msg is None:
                continue
            subject = msg.subject
            last = store.subjects_totals(subject).get(subject, 0) == 1
            if last and not is_delete_marker(msg.hdr):
                stream.store_marker(subject, marker)
            if store.load(seq) is not None:  # not last, or the marker was refused
                store.remove(seq)
        self.arm()
