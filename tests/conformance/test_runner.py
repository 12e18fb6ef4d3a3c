"""Self-checks of the runner's normalisation (no servers): it hides only the inbox, the sid and
timestamps that equal a stored one, and nothing else."""

from __future__ import annotations

from jsemu.conformance.runner import Run, format_ts, might_batch, parse_ts

TS1 = "2024-01-02T03:04:05.12345Z"
TS2 = "2024-01-02T03:04:05.1234567Z"


def run() -> Run:
    r = Run("127.0.0.1", 0)
    r.ts_text = {("S", 1): TS1, ("S", 2): TS2, ("T", 1): TS2}
    return r


def hmsg(hdr: bytes, payload: bytes = b"", inbox: bytes = b"_INBOX.default.1", sid: bytes = b"1") -> bytes:
    return b"HMSG %s %s %d %d\r\n%s%s\r\n" % (inbox, sid, len(hdr), len(hdr) + len(payload), hdr, payload)


def data_hdr(seq: int, ts: str, stream: str = "S") -> bytes:
    return (
        f"NATS/1.0\r\nNats-Stream: {stream}\r\nNats-Subject: foo\r\nNats-Sequence: {seq}\r\n"
        f"Nats-Time-Stamp: {ts}\r\n\r\n"
    ).encode()


def test_timestamp_token_and_sizes() -> None:
    hdr = data_hdr(1, TS1)
    got = run().normalise(hmsg(hdr, b"hi"), b"_INBOX.default.1")
    n = len(hdr) - len(TS1)
    assert got == f"HMSG <INBOX> <SID> {n}+ts {n + 2}+ts\r\n" + data_hdr(1, "<ts:1>").decode() + "hi\r\n"


def test_token_names_the_stream_and_prefers_the_replied_seq() -> None:
    r = run()
    assert "<ts:2>" in r.normalise(hmsg(data_hdr(2, TS2)), b"_INBOX.default.1")
    assert "<ts:T:1>" in r.normalise(hmsg(data_hdr(1, TS2, "T")), b"_INBOX.default.1")
    # A timestamp of another stored message is still named (so a wrong one is visible).
    assert "<ts:1>" in r.normalise(hmsg(data_hdr(2, TS1)), b"_INBOX.default.1")


def test_unknown_or_reformatted_timestamps_stay() -> None:
    r = run()
    for ts in ("2024-01-02T03:04:05.123450Z", "2024-01-02T04:04:05.12345+01:00", "2000-01-01T00:00:00Z"):
        got = r.normalise(hmsg(data_hdr(1, ts)), b"_INBOX.default.1")
        assert ts in got and "<ts:" not in got and "+ts" not in got


def test_other_inbox_sid_and_bad_header_length_are_visible() -> None:
    r = run()
    hdr = b"NATS/1.0 404 Message Not Found\r\n\r\n"
    assert r.normalise(hmsg(hdr), b"_INBOX.default.1").startswith("HMSG <INBOX> <SID> 34 34\r\n")
    assert r.normalise(hmsg(hdr), b"_INBOX.default.2").startswith("HMSG _INBOX.default.1 <SID> ")
    assert r.normalise(hmsg(hdr, sid=b"7"), b"_INBOX.default.1").startswith("HMSG <INBOX> 7 ")
    bad = b"HMSG _INBOX.default.1 1 10 34\r\n" + hdr + b"\r\n"
    assert "!BAD-HDR-LEN" in r.normalise(bad, b"_INBOX.default.1")


def test_msg_and_other_frames_kept() -> None:
    r = run()
    assert r.normalise(b"MSG _INBOX.default.1 1 3\r\n\x00\xff\r\r\n", b"_INBOX.default.1") == (
        "MSG <INBOX> <SID> 3\r\n\x00\xff\r\r\n"
    )
    assert r.normalise(b"-ERR 'Invalid Publish Subject'\r\n", b"x") == "-ERR 'Invalid Publish Subject'\r\n"
    big = b"x" * 1000
    assert "<1000 bytes sha256:" in r.normalise(b"MSG _INBOX.default.1 1 1000\r\n" + big + b"\r\n", b"")


def test_json_timestamps() -> None:
    payload = ('{"time":"' + TS1 + '","other":"2000-01-01T00:00:00Z"}').encode()
    got = run().normalise(b"MSG i 1 %d\r\n%s\r\n" % (len(payload), payload), b"i")
    assert (
        got
        == f"MSG <INBOX> <SID> {len(payload) - len(TS1)}+ts\r\n"
        + '{"time":"<ts:1>","other":"2000-01-01T00:00:00Z"}\r\n'
    )


def test_times_round_trip_exactly() -> None:
    for text in ("2024-01-02T03:04:05Z", "2024-01-02T03:04:05.1Z", "2024-01-02T03:04:05.123456789Z"):
        assert format_ts(parse_ts(text)) == text
    ns = parse_ts("2024-01-02T03:04:05.123456789Z")
    assert format_ts(ns + 1) == "2024-01-02T03:04:05.12345679Z"
    assert format_ts(ns, "+02:00") == "2024-01-02T05:04:05.123456789+02:00"
    assert format_ts(parse_ts("2024-01-02T03:04:05.1Z"), pad=True) == "2024-01-02T03:04:05.100000000Z"


def test_might_batch() -> None:
    assert might_batch(b'{"batch":2}')
    assert might_batch(b'{"BATCH":2}')
    assert might_batch(b'{"\\u0062atch":2}')
    assert might_batch('{"multi_laſt":["a"]}'.encode())
    assert not might_batch(b'{"seq":1}')
    assert not might_batch(b"")
