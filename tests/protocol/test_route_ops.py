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


@st.composite
def message_runs(draw: st.DrawFn) -> list[RouteMsg]:
    """Runs of plain RMSGs (what a busy route carries): a few heads, each repeated, payloads
    that may hold CRLF, digits or a control line of their own."""
    heads = draw(
        st.lists(
            st.tuples(st.sampled_from([b"$G", b"ACC"]), subject, st.one_of(st.none(), subject)), min_size=1, max_size=3
        )
    )
    tricky = st.sampled_from([b"\r\n", b"RMSG $G a 1\r\n", b"12", b"\n", b"\r"])
    payload = st.lists(st.one_of(st.binary(max_size=6), tricky), max_size=4).map(b"".join)
    msgs: list[RouteMsg] = []
    for _ in range(draw(st.integers(1, 4))):
        account, subj, reply = draw(st.sampled_from(heads))
        for body in draw(st.lists(payload, min_size=1, max_size=30)):
            msgs.append(RouteMsg(account, subj, reply, (), -1, body))
    return msgs


@given(message_runs(), st.data())
def test_runs_of_messages_parse_as_frame_by_frame(msgs: list[RouteMsg], data: st.DataObject) -> None:
    """The bulk parse of a run (one split of a window) gives exactly the frames, whatever the
    payloads hold and wherever the reads end."""
    wire = b"".join(map(_encode, msgs)) + b"PING\r\n"
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=3)))
    parser = RouteParser()
    ops = []
    last = 0
    for cut in [*cuts, len(wire)]:
        ops += parser.feed(wire[last:cut])
        last = cut
    assert ops == [*msgs, PING_OP]


def test_a_read_of_one_run_is_handed_over_whole() -> None:
    """Frames of one account, subject and reply in one read come as one run, the last
    included; another head or another op starts a new one."""
    runs: list[tuple[bytes, bytes, bytes | None, list[bytes]]] = []
    others: list[object] = []

    def on_run(account: bytes, subject: bytes, reply: bytes | None, payloads: list[bytes]) -> bool:
        runs.append((account, subject, reply, list(payloads)))
        return False

    def on_op(op: object) -> bool:
        others.append(op)
        return False

    bodies = [b"m%d" % i for i in range(100)]
    wire = b"".join(b"RMSG $G s %d\r\n%b\r\n" % (len(b), b) for b in bodies)
    wire += b"RMSG $G s r 1\r\nx\r\nRMSG $G s r 1\r\ny\r\nPING\r\nRMSG B s 1\r\nz\r\n"
    RouteParser().feed_to(wire, on_run, on_op)
    assert runs == [
        (b"$G", b"s", None, bodies),
        (b"$G", b"s", b"r", [b"x", b"y"]),
        (b"B", b"s", None, [b"z"]),
    ]
    assert others == [PING_OP]


def test_a_bad_frame_after_a_run_keeps_the_run() -> None:
    """The frames before a broken one are delivered, then the route fails."""
    runs: list[list[bytes]] = []
    ops: list[object] = []
    wire = b"".join(b"RMSG $G s 2\r\nab\r\n" for _ in range(20)) + b"RMSG $G s 2\r\nabc\r\n"

    def on_run(account: bytes, subject: bytes, reply: bytes | None, payloads: list[bytes]) -> bool:
        runs.append(list(payloads))
        return False

    def on_op(op: object) -> bool:
        ops.append(op)
        return False

    RouteParser().feed_to(wire, on_run, on_op)
    assert runs == [[b"ab"] * 20]
    assert ops == [RouteError(None)]


def test_payloads_that_hold_their_own_control_line() -> None:
    """A payload ``a<CRLF><its control line><CRLF>b``: split on CRLF, the window looks like
    frames of one control line with one-byte payloads; each payload's length tells them apart."""
    line = b"RMSG $G s 18"
    payload = b"a\r\n" + line + b"\r\nb"
    assert len(payload) == 18
    wire = (line + b"\r\n" + payload + b"\r\n") * 20 + b"PING\r\n"
    assert RouteParser().feed(wire) == [RouteMsg(b"$G", b"s", None, (), -1, payload)] * 20 + [PING_OP]
