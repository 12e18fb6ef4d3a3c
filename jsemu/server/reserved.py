"""Reply subjects a client may not give a publish: nats-server keeps them for itself."""

from __future__ import annotations

__all__ = ["is_reserved_reply"]


def is_reserved_reply(reply: bytes) -> bool:
    """Service-import replies (``_R_.``), JetStream acks (``$JS.ACK.``) and gateway replies
    (``$GNR.``)."""
    return (
        (len(reply) > 3 and reply[:4] == b"_R_.")
        or (len(reply) > 8 and reply[:8] == b"$JS.ACK.")
        or (len(reply) > 5 and reply[:5] == b"$GNR.")
    )
