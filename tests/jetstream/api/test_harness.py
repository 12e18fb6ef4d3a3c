"""Self-checks of the normalisation in conftest (no servers): it must hide only what differs
between two correct servers (timestamps, server identity) and nothing else."""

from __future__ import annotations

from support.pair import Side


class _Info:
    def __init__(self) -> None:
        self.info = {"server_id": "NABC", "server_name": "jsemu-NABC"}


def norm(frame: bytes) -> str:
    return Side("t", _Info()).normalise(frame)  # type: ignore[arg-type]


def msg(payload: bytes) -> bytes:
    return b"MSG _PAIR.1 1 %d\r\n%s\r\n" % (len(payload), payload)


def test_timestamps_and_server_replaced() -> None:
    a = norm(msg(b'{"ts":"2024-01-02T03:04:05.123456789Z","leader":"jsemu-NABC","id":"NABC"}'))
    assert a == '{"ts":"<ts>","leader":"<server>","id":"<server>"}'
    assert norm(msg(b'{"t":"2024-01-02T03:04:05Z"}')) == '{"t":"<ts>"}'
    assert norm(msg(b'{"t":"0001-01-01T00:00:00Z"}')) == '{"t":"0001-01-01T00:00:00Z"}'


def test_non_go_timestamps_are_kept() -> None:
    for ts in (b"2024-01-02T03:04:05.120Z", b"2024-01-02T03:04:05+00:00", b"2024-01-02T03:04:05.1234567891Z"):
        assert "<ts>" not in norm(msg(b'{"t":"%s"}' % ts)), ts


def test_everything_else_counts() -> None:
    variants = [
        b'{"a":1,"b":2}',
        b'{"b":2,"a":1}',
        b'{"a": 1,"b":2}',
        b'{"s":"foo.>"}',
        b'{"s":"foo.\\u003e"}',
    ]
    assert len({norm(msg(v)) for v in variants}) == len(variants)


def test_headers_and_reply_subject_count() -> None:
    plain = norm(msg(b"{}"))
    with_hdr = norm(b"HMSG _PAIR.1 1 12 14\r\nNATS/1.0\r\n\r\n{}\r\n")
    with_reply = norm(b"MSG _PAIR.1 1 r.x 2\r\n{}\r\n")
    assert len({plain, with_hdr, with_reply}) == 3
    assert norm(b"HMSG _PAIR.1 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n") == "<no responders>"
    status = b"NATS/1.0 503\r\nNats-Subject: x\r\n\r\n"
    got = norm(b"HMSG _PAIR.1 1 %d %d\r\n%s\r\n" % (len(status), len(status), status))
    assert got == "<no responders> Nats-Subject: x\r\n"


def test_a_wrong_header_length_is_marked() -> None:
    good = norm(b"HMSG _PAIR.1 1 12 14\r\nNATS/1.0\r\n\r\n{}\r\n")
    short = norm(b"HMSG _PAIR.1 1 10 14\r\nNATS/1.0\r\n\r\n{}\r\n")
    long = norm(b"HMSG _PAIR.1 1 13 14\r\nNATS/1.0\r\n\r\n{}\r\n")
    assert "BAD-HDR-LEN" not in good
    assert short.startswith("!BAD-HDR-LEN 10 ") and long.startswith("!BAD-HDR-LEN 13 ")


class _FakeClient:
    """Serves scripted frames to :meth:`Side.exchange` (no server)."""

    def __init__(self, frames: list[bytes], after_ping: list[bytes]) -> None:
        self.info = {"server_id": "NABC", "server_name": "jsemu-NABC"}
        self.frames = frames
        self.after_ping = after_ping
        self.eof = False
        self.sent: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.sent.append(data)

    async def next_frame(self, timeout: float = 2.0) -> bytes | None:
        return self.frames.pop(0) if self.frames else None

    async def round_trip(self, timeout: float = 5.0) -> list[bytes]:
        return self.after_ping


async def test_duplicates_and_errors_are_part_of_the_reply() -> None:
    reply = msg(b"{}")
    clean = Side("t", _FakeClient([reply], []))  # type: ignore[arg-type]
    assert await clean.request("x", b"", None, 1.0) == "{}"
    twice = Side("t", _FakeClient([reply], [reply]))  # type: ignore[arg-type]
    assert await twice.request("x", b"", None, 1.0) == "{}\n+ unexpected on _PAIR.1: {}"
    err = Side("t", _FakeClient([b"-ERR 'Permissions Violation'\r\n", reply], []))  # type: ignore[arg-type]
    assert await err.request("x", b"", None, 1.0) == "{}\n+ unexpected -ERR 'Permissions Violation'"
    late = Side("t", _FakeClient([b"MSG _PAIR.0 1 1\r\nz\r\n", reply], []))  # type: ignore[arg-type]
    assert await late.request("x", b"", None, 1.0) == "{}\n+ unexpected on _PAIR.0: z"
