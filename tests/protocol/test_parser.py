"""The sans-I/O parser: unit cases, random splits, garbage."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.protocol import Connect, Err, HMsg, Info, Ok, Parser, Ping, Pong, ProtocolError, Pub, PubRun, Sub, Unsub
from jsemu.protocol.ops import Op


def parse(data: bytes, chunks: list[int] | None = None, headers: bool = True, **kw: int) -> list[Op]:
    p = Parser(**kw)
    p.headers = headers
    if chunks is None:
        return list(p.feed(data))
    out: list[Op] = []
    pos = 0
    for size in chunks:
        out += p.feed(data[pos : pos + size])
        pos += size
    out += p.feed(data[pos:])
    return out


def test_basic_ops() -> None:
    data = (
        b'CONNECT {"verbose":false}\r\nPING\r\nPONG\r\nSUB foo 1\r\nSUB foo q 2\r\nUNSUB 1\r\nUNSUB 2 5\r\n'
        b"PUB foo 5\r\nhello\r\nPUB foo bar 0\r\n\r\nHPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n+OK\r\nINFO {}\r\n"
    )
    assert parse(data) == [
        Connect(b'{"verbose":false}'),
        Ping(),
        Pong(),
        Sub(b"foo", None, b"1"),
        Sub(b"foo", b"q", b"2"),
        Unsub(b"1", -1),
        Unsub(b"2", 5),
        Pub(b"foo", None, -1, b"hello"),
        Pub(b"foo", b"bar", -1, b""),
        Pub(b"foo", None, 12, b"NATS/1.0\r\n\r\nhi"),
        Ok(),
        Info(b"{}"),
    ]


def test_case_insensitive_and_whitespace() -> None:
    assert parse(b"pub\tfoo  \t 2\r\nhi\r\nsUb foo 1\n") == [Pub(b"foo", None, -1, b"hi"), Sub(b"foo", None, b"1")]


def test_connect_needs_no_space() -> None:
    assert parse(b"CONNECT{}\r\n") == [Connect(b"{}")]


def test_cr_inside_argument_drops_last_byte() -> None:
    # nats-server's `drop` flag: any CR in the argument drops its last byte.
    assert parse(b"SUB foo\r 12\n") == [Sub(b"foo", None, b"1")]


def test_unknown_ops() -> None:
    for data in (b"FOO\r\n", b"PUX", b"\r\n", b"MSG foo 1 1\r\n", b"PUB\r\n", b"UNSUB\r\n"):
        assert parse(data) == [ProtocolError("Unknown Protocol Operation")], data


def test_silent_closes() -> None:
    for data in (b"PUB foo\r\n", b"PUB foo abc\r\n", b"PUB foo 1234567890\r\n", b"SUB foo\r\n", b"HPUB foo 5 4\r\n"):
        assert parse(data) == [ProtocolError(None)], data


def test_hpub_needs_headers() -> None:
    assert parse(b"HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n", headers=False) == [ProtocolError(None)]


def test_client_err_and_hmsg() -> None:
    assert parse(b"-ERR 'x'\r\nPING\r\n") == [Err(b"'x'")]
    assert parse(b"HMSG foo 1 2 3\r\n\r\nPING\r\n") == [HMsg(), Ping()]
    assert parse(b"HMSG foo 1 2 3\r\nab\r\n") == [ProtocolError("Unknown Protocol Operation")]


def test_limits() -> None:
    assert parse(b"PUB foo 11\r\n", max_payload=10) == [ProtocolError("Maximum Payload Violation")]
    assert parse(b"PUB foo 10\r\n0123456789\r\n", max_payload=10) == [Pub(b"foo", None, -1, b"0123456789")]
    ok = b"SUB " + b"a" * 4094 + b" 1\r\n"
    assert parse(ok) == [Sub(b"a" * 4094, None, b"1")]
    assert parse(b"SUB " + b"a" * 4095 + b" 1\r\n") == [ProtocolError("maximum control line exceeded")]
    assert parse(b"SUB " + b"a" * 5000) == [ProtocolError("maximum control line exceeded")]


def test_nothing_after_error() -> None:
    p = Parser()
    assert list(p.feed(b"PING\r\nBAD\r\n")) == [Ping(), ProtocolError("Unknown Protocol Operation")]
    assert list(p.feed(b"PING\r\n")) == []


# --- property tests ---------------------------------------------------------------

token = st.text(alphabet="abcxyz019_-", min_size=1, max_size=6)
subject = st.lists(token, min_size=1, max_size=4).map(".".join)
payload = st.binary(max_size=64)


@st.composite
def valid_op(draw: st.DrawFn) -> tuple[bytes, Op]:
    kind = draw(st.sampled_from(["pub", "pubr", "hpub", "sub", "qsub", "unsub", "unsubmax", "ping", "pong", "connect"]))
    subj = draw(subject).encode()
    if kind in ("pub", "pubr"):
        body = draw(payload)
        reply = draw(subject).encode() if kind == "pubr" else None
        line = b"PUB %b %b%d\r\n" % (subj, reply + b" " if reply else b"", len(body))
        return line + body + b"\r\n", Pub(subj, reply, -1, body)
    if kind == "hpub":
        hdr = b"NATS/1.0\r\nK: " + draw(token).encode() + b"\r\n\r\n"
        body = draw(payload)
        msg = hdr + body
        return b"HPUB %b %d %d\r\n" % (subj, len(hdr), len(msg)) + msg + b"\r\n", Pub(subj, None, len(hdr), msg)
    sid = str(draw(st.integers(1, 10**6))).encode()
    if kind == "sub":
        return b"SUB %b %b\r\n" % (subj, sid), Sub(subj, None, sid)
    if kind == "qsub":
        q = draw(token).encode()
        return b"SUB %b %b %b\r\n" % (subj, q, sid), Sub(subj, q, sid)
    if kind == "unsub":
        return b"UNSUB %b\r\n" % sid, Unsub(sid, -1)
    if kind == "unsubmax":
        m = draw(st.integers(0, 10**8))
        return b"UNSUB %b %d\r\n" % (sid, m), Unsub(sid, m)
    if kind == "ping":
        return b"PING\r\n", Ping()
    if kind == "pong":
        return b"PONG\r\n", Pong()
    return b'CONNECT {"verbose":false}\r\n', Connect(b'{"verbose":false}')


def split_points(data: bytes) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, max(1, len(data))), max_size=20)


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(valid_op(), max_size=15), data=st.data())
def test_random_splits_of_valid_stream(ops: list[tuple[bytes, Op]], data: st.DataObject) -> None:
    stream = b"".join(raw for raw, _ in ops)
    chunks = data.draw(split_points(stream))
    assert parse(stream, chunks) == [op for _, op in ops]


@settings(max_examples=300, deadline=None)
@given(
    prefix=st.lists(valid_op(), max_size=4),
    garbage=st.binary(max_size=200)
    | st.lists(st.sampled_from([b"PUB", b" ", b"\r", b"\n", b"5", b"foo", b"HPUB", b"SUB", b"PING", b"\t", b"-1"])).map(
        b"".join
    ),
    data=st.data(),
)
def test_garbage_never_raises_and_split_does_not_matter(
    prefix: list[tuple[bytes, Op]], garbage: bytes, data: st.DataObject
) -> None:
    stream = b"".join(raw for raw, _ in prefix) + garbage
    whole = parse(stream, max_control_line=64)
    chunks = data.draw(split_points(stream))
    assert parse(stream, chunks, max_control_line=64) == whole
    # The valid prefix always comes out first, and an error is always last.
    assert whole[: len(prefix)] == [op for _, op in prefix]
    for op in whole[:-1]:
        assert not isinstance(op, ProtocolError)


# --- the PUB-run fast path gives exactly what the general path gives ---------------

plain_pub = st.tuples(subject, st.none() | subject, st.binary(max_size=40) | st.just(b"z" * 5000)).map(
    lambda t: b"PUB %b %b%d\r\n%b\r\n" % (t[0].encode(), t[1].encode() + b" " if t[1] else b"", len(t[2]), t[2])
)
pub_piece = st.one_of(
    plain_pub,
    st.sampled_from(
        [
            b"PUB a 4\r\na\r\nb\r\n",  # CRLF inside the payload
            b"pub a 1\r\nx\r\n",  # lower case
            b"PUB a\t1\r\nx\r\n",  # tab
            b"PUB a\tr 1\r\nx\r\n",  # tab between subject and reply
            b"PUB  a 1\r\nx\r\n",  # two spaces
            b"PUB a 1\rx\r\n",  # lone CR
            b"PUB a\n1\r\nx\r\n",  # lone LF
            b"PUB a 0001\r\nx\r\n",  # leading zeros
            b"PUB a 9999999999\r\n",  # size too long
            b"PUB a 2\r\nxyz\r\n",  # wrong size
            b"PUB " + b"s" * 70 + b" 1\r\nx\r\n",  # control line over a small limit
            b"PUB a 30\r\n" + b"y" * 30 + b"\r\n",  # payload over a small limit
            b"PING\r\n",
            b"SUB a 1\r\n",
            b"SUB q 2\r\nab\r\n",  # shaped like a PUB and its payload
            b"HPUB a 12 12\r\nNATS/1.0\r\n\r\n\r\n",
            b'CONNECT {"headers":true}\r\n',
        ]
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(pub_piece, max_size=400),
    headers=st.booleans(),
    limits=st.sampled_from([(4096, 1 << 20), (64, 20)]),
    data=st.data(),
)
def test_pub_run_fast_path_matches_general_path(
    pieces: list[bytes], headers: bool, limits: tuple[int, int], data: st.DataObject
) -> None:
    stream = b"".join(pieces)
    mcl, mp = limits
    chunks = data.draw(split_points(stream))

    def run(fast: bool, chunked: bool) -> list[object]:
        p = Parser(mcl, mp, fast=fast)
        p.headers = headers
        out: list[object] = []
        pos = 0
        for size in chunks if chunked else []:
            out += p.feed(stream[pos : pos + size])
            pos += size
        out += p.feed(stream[pos:])
        return out

    general = run(False, False)
    assert run(True, False) == general
    assert run(True, True) == general


@settings(max_examples=150, deadline=None)
@given(
    pubs=st.lists(plain_pub, min_size=1, max_size=300),
    odd=st.none() | st.tuples(st.integers(0, 300), pub_piece),
    reply_everywhere=st.booleans(),
    data=st.data(),
)
def test_columns_of_plain_pubs_match_general_path(
    pubs: list[bytes], odd: tuple[int, bytes] | None, reply_everywhere: bool, data: st.DataObject
) -> None:
    """Long runs of plain PUBs (where the parser hands out ``PubRun`` columns), with or
    without one odd op somewhere, against the general path."""
    if reply_everywhere:
        pubs = [p if p.count(b" ") >= 3 else p.replace(b" ", b" r ", 1) for p in pubs]
    if odd is not None:
        pubs.insert(odd[0] % (len(pubs) + 1), odd[1])
    stream = b"".join(pubs)
    chunks = data.draw(split_points(stream))
    general = list(Parser(fast=False).feed(stream))
    p = Parser()
    out: list[object] = []
    pos = 0
    for size in chunks:
        out += p.feed(stream[pos : pos + size])
        pos += size
    out += p.feed(stream[pos:])
    assert out == general
    assert list(Parser().feed(stream)) == general


def test_pub_run_window_adapts_to_long_runs_and_mixed_traffic() -> None:
    pubs = b"".join(b"PUB s.%d r %d\r\n%s\r\n" % (i, len(b"x" * (i % 7)), b"x" * (i % 7)) for i in range(20000))
    p = Parser()
    raw = p.feed_list(pubs)
    assert sum(len(op.subjects) for op in raw if isinstance(op, PubRun)) > 19000  # columns, not tuples
    ops = list(Parser().feed(pubs))
    assert len(ops) == 20000 and ops[-1] == Pub(b"s.19999", b"r", -1, b"x" * (19999 % 7))
    mixed = b"".join(b"PUB a 1\r\nx\r\nPING\r\n" for _ in range(3000))
    assert list(p.feed(mixed)) == [Pub(b"a", None, -1, b"x"), Ping()] * 3000


def test_feed_list_stops_after_connect_so_headers_apply() -> None:
    p = Parser()
    stream = b'CONNECT {"headers":true}\r\nHPUB a 12 12\r\nNATS/1.0\r\n\r\n\r\n'
    assert p.feed_list(stream) == [Connect(b'{"headers":true}')]
    assert p.resume
    p.headers = True
    assert p.feed_list(b"") == [Pub(b"a", None, 12, b"NATS/1.0\r\n\r\n")]
    assert not p.resume
