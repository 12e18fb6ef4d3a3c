"""The route protocol's parser and encoders (sans-I/O): what is encoded parses back, whatever
the reads it arrives in, and a broken stream gives one final error."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jsemu.protocol.route_ops import (
    PING_OP,
    RouteError,
    RouteMsg,
    RouteParser,
    RouteSub,
    RouteUnsub,
    encode_rmsg_head,
    encode_rs_minus,
    encode_rs_plus,
)

token = st.text(alphabet="abcXYZ09_-$", min_size=1, max_size=6).map(str.encode)
subject = st.lists(token, min_size=1, max_size=4).map(b".".join)


@st.composite
def route_msgs(draw: st.DrawFn) -> RouteMsg:
    account = draw(st.sampled_from([b"$G", b"ACC"]))
    reply = draw(st.one_of(st.none(), subject))
    queues = tuple(draw(st.lists(token, max_size=3, unique=True)))
    payload = draw(st.binary(max_size=40))
    hdr = -1
    if draw(st.booleans()):
        block = b"NATS/1.0\r\nK: v\r\n\r\n"
        payload, hdr = block + payload, len(block)
    return RouteMsg(account, draw(subject), reply, queues, hdr, payload)


def _encode(m: RouteMsg) -> bytes:
    return encode_rmsg_head(m.account, m.subject, m.reply, list(m.queues), m.hdr, len(m.msg), True) + m.msg + b"\r\n"


@given(st.lists(route_msgs(), min_size=1, max_size=5), st.data())
def test_messages_round_trip_across_any_split(msgs: list[RouteMsg], data: st.DataObject) -> None:
    wire = b"".join(map(_encode, msgs)) + b"PING\r\n"
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=6)))
    parser = RouteParser()
    ops = []
    last = 0
    for cut in [*cuts, len(wire)]:
        ops += parser.feed(wire[last:cut])
        last = cut
    assert ops == [*msgs, PING_OP]


def test_rmsg_heads_as_nats_server_writes_them() -> None:
    assert encode_rmsg_head(b"$G", b"qq", None, [b"g"], -1, 1, True) == b"RMSG $G qq | g 1\r\n"
    assert encode_rmsg_head(b"$G", b"qq", b"r", [b"g", b"h"], -1, 1, True) == b"RMSG $G qq + r g h 1\r\n"
    assert encode_rmsg_head(b"$G", b"z", b"r", [], -1, 1, True) == b"RMSG $G z r 1\r\n"
    assert encode_rmsg_head(b"$G", b"z", None, [], 12, 14, True) == b"HMSG $G z 12 14\r\n"
    # a route without headers gets the payload alone
    assert encode_rmsg_head(b"$G", b"z", None, [], 12, 14, False) == b"RMSG $G z 2\r\n"


def test_interest_ops() -> None:
    wire = encode_rs_plus(b"$G", b"a.*") + encode_rs_plus(b"$G", b"b", b"q", 3) + encode_rs_minus(b"$G", b"b", b"q")
    assert RouteParser().feed(wire) == [
        RouteSub(b"$G", b"a.*", None, 0),
        RouteSub(b"$G", b"b", b"q", 3),
        RouteUnsub(b"$G", b"b", b"q"),
    ]


def test_errors_are_final() -> None:
    parser = RouteParser()
    assert parser.feed(b"PING\r\nHELLO\r\nPING\r\n") == [PING_OP, RouteError("Unknown Protocol Operation")]
    assert parser.feed(b"PING\r\n") == []
    assert RouteParser().feed(b"RMSG $G foo x\r\n") == [RouteError(None)]
    assert RouteParser().feed(b"RMSG $G foo 2\r\nabcd\r\n") == [RouteError(None)]
    assert RouteParser(max_control_line=16).feed(b"RS+ $G " + b"x" * 40) == [RouteError("Unknown Protocol Operation")]
