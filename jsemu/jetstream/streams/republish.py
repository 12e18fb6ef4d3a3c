"""Republish (``republish {src, dest, headers_only}``): each stored message is sent on again.

As in ``processJetStreamMsg``: a stored message whose subject matches ``src`` goes out on the
transformed subject, before the PubAck, with the stored headers followed by ``Nats-Stream``,
``Nats-Subject``, ``Nats-Sequence``, ``Nats-Time-Stamp``, ``Nats-Last-Sequence`` (the
subject's previous sequence, 0 for none) and, with ``headers_only``, ``Nats-Msg-Size`` in
place of the body. Mirrored, sourced and marker messages are republished too (the server
stores them through the same function). A transformed subject that is no valid publish
subject stops the republish, as in Go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...subject_transform import SubjectTransform
from ...subjects import is_valid_literal_subject, is_valid_subject
from ...timefmt import format_ns

if TYPE_CHECKING:
    from ...server.outbound import Sender

__all__ = ["Republisher"]


class Republisher:
    """One stream's republish rule."""

    def __init__(self, stream_name: str, spec: dict[str, Any]) -> None:
        self._name = stream_name.encode()
        self._dest = spec.get("dest", "")
        self._transform = SubjectTransform(spec.get("src") or ">", self._dest)
        self._headers_only = bool(spec.get("headers_only"))

    def target(self, subject: bytes) -> bytes | None:
        """Where a message stored on ``subject`` is republished, if anywhere."""
        if not self._dest:
            return None  # Go makes no transform for an empty destination
        mapped = self._transform.match(subject)
        if mapped is None:
            return None
        text = mapped.decode("utf-8", "surrogateescape")
        return mapped if is_valid_subject(text) and is_valid_literal_subject(text) else None

    def send(
        self, out: Sender, target: bytes, subject: bytes, seq: int, ts: int, last_seq: int, hdr: bytes, data: bytes
    ) -> None:
        block = hdr[:-2] if hdr else b"NATS/1.0\r\n"
        block += b"Nats-Stream: %s\r\nNats-Subject: %s\r\nNats-Sequence: %d\r\nNats-Time-Stamp: %s\r\n" % (
            self._name,
            subject,
            seq,
            format_ns(ts).encode(),
        )
        if self._headers_only:
            block += b"Nats-Last-Sequence: %d\r\nNats-Msg-Size: %d\r\n\r\n" % (last_seq, len(data))
            out.send(target, len(block), block)
        else:
            block += b"Nats-Last-Sequence: %d\r\n\r\n" % last_seq
            out.send(target, len(block), block + data)
