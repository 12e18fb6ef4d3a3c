"""``delivery_frames`` (a consumer's run of messages to one subscription) against the
frames written out one by one from the protocol's grammar: ``MSG <subject> <sid> [reply]
<size>`` or ``HMSG <subject> <sid> [reply] <header size> <total size>``, and a subscriber
without header support gets the payload alone. Runs of eight or more plain messages take a
column-wise path; the model below has no such path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.protocol.encoder import Delivery, delivery_frames

_TOKEN = st.text("abcxyz0123456789", min_size=1, max_size=6).map(str.encode)
_SUBJECT = st.lists(_TOKEN, min_size=1, max_size=4).map(b".".join)
_HEADER = st.sampled_from([b"NATS/1.0\r\n\r\n", b"NATS/1.0\r\nA: b\r\n\r\n"])


_REPLIES = {
    "plain": _SUBJECT,
    "empty": st.one_of(st.just(b""), _SUBJECT),
    "none": st.none(),
    "headers": _SUBJECT,
}


@st.composite
def _delivery(draw: st.DrawFn, kind: str) -> Delivery:
    """A run's message of ``kind``: plain (a reply, no headers; the column-wise path), an
    empty reply or none among them, or messages with headers among them."""
    subject = draw(_SUBJECT)
    reply = draw(_REPLIES[kind])
    data = draw(st.binary(max_size=12))
    if kind != "headers" or draw(st.booleans()):
        return (subject, reply, draw(st.sampled_from([-1, 0])), data)
    hdr = draw(_HEADER)
    return (subject, reply, len(hdr), hdr + data)


def _frame(sid: bytes, headers: bool, item: Delivery) -> bytes:
    subject, reply, hdr, msg = item
    head = [b"MSG", subject, sid]
    if hdr > 0 and headers:
        head[0] = b"HMSG"
        sizes = [b"%d" % hdr, b"%d" % len(msg)]
    else:
        msg = msg[hdr:] if hdr > 0 else msg
        sizes = [b"%d" % len(msg)]
    # a reply that is there, even empty, is written with its space (Go's msgHeader: reply != nil)
    return b" ".join(head + ([reply] if reply is not None else []) + sizes) + b"\r\n" + msg + b"\r\n"


@settings(max_examples=300)
@given(
    sid=_TOKEN,
    headers=st.booleans(),
    items=st.sampled_from(sorted(_REPLIES)).flatmap(lambda kind: st.lists(_delivery(kind), max_size=30)),
)
def test_delivery_frames_are_the_frames_one_by_one(sid: bytes, headers: bool, items: list[Delivery]) -> None:
    assert delivery_frames(sid, headers, items) == b"".join(_frame(sid, headers, item) for item in items)
