"""Unit tests for the JetStream helpers: header lookup quirks, times, subject overlap."""

from __future__ import annotations

import pytest

from jsemu.protocol.headers import parse_uint_header, remove_header, remove_header_status, slice_header
from jsemu.subjects import subject_is_subset_match, subjects_collide
from jsemu.timefmt import ZERO_TIME, format_ns, parse_rfc3339_ns


@pytest.mark.parametrize(
    ("hdr", "key", "value"),
    [
        (b"NATS/1.0\r\nFoo: bar\r\n\r\n", b"Foo", b"bar"),
        (b"NATS/1.0\r\nFoo:   bar \r\n\r\n", b"Foo", b"bar "),  # leading spaces only
        (b"NATS/1.0\r\nfoo: bar\r\n\r\n", b"Foo", None),  # case-sensitive
        (b"NATS/1.0\r\nXFoo: a\r\nFoo: b\r\n\r\n", b"Foo", b"b"),  # only at a line start
        (b"NATS/1.0\r\nFoo: a\r\nFoo: b\r\n\r\n", b"Foo", b"a"),  # the first one wins
        (b"NATS/1.0\r\nFooBar: a\r\n\r\n", b"Foo", None),  # key must be followed by ':'
        (b"", b"Foo", None),
    ],
)
def test_slice_header(hdr: bytes, key: bytes, value: bytes | None) -> None:
    assert slice_header(key, hdr) == value


def test_parse_uint_header_matches_go_parse_int64() -> None:
    assert parse_uint_header(b"42") == 42
    assert parse_uint_header(b"-1") == (1 << 64) - 1
    assert parse_uint_header(b"4 ") == (1 << 64) - 1
    assert parse_uint_header(b"18446744073709551617") == 1  # wraps like Go's int64 arithmetic


def test_remove_header_status() -> None:
    assert remove_header_status(b"NATS/1.0 503 x\r\nA: b\r\n\r\n") == b"NATS/1.0\r\nA: b\r\n\r\n"
    assert remove_header_status(b"NATS/1.0 503\r\n\r\n") == b""
    assert remove_header_status(b"NATS/1.0\r\n\r\n") == b"NATS/1.0\r\n\r\n"


def test_remove_header() -> None:
    hdr = b"NATS/1.0\r\nNats-Request-Info: x\r\nA: b\r\n\r\n"
    assert remove_header(hdr, b"Nats-Request-Info") == b"NATS/1.0\r\nA: b\r\n\r\n"
    assert remove_header(b"NATS/1.0\r\nFoo: b\r\n\r\n", b"Foo") == b""
    # Go's getHeaderKeyIndex gives up when the first hit is inside "NATS/1.0" (index < 2).
    assert remove_header(b"NATS/1.0\r\nA: b\r\n\r\n", b"A") == b"NATS/1.0\r\nA: b\r\n\r\n"


def test_times_keep_nanoseconds() -> None:
    ns = 1_767_225_600_123_456_789
    assert format_ns(ns) == "2026-01-01T00:00:00.123456789Z"
    assert parse_rfc3339_ns(format_ns(ns)) == ns
    assert format_ns(1_767_225_600_100_000_000) == "2026-01-01T00:00:00.1Z"
    assert format_ns(0) == ZERO_TIME
    assert parse_rfc3339_ns("2026-01-01T01:00:00+01:00") == 1_767_225_600_000_000_000


@pytest.mark.parametrize(
    ("a", "b", "collide"),
    [
        ("foo", "foo", True),
        ("foo", "bar", False),
        ("foo.*", "foo.bar", True),
        ("foo.>", "foo", False),
        ("foo.*", "foo.>", True),
        ("*", "foo.bar", False),
        ("foo.*.baz", "foo.bar.*", True),
        ("a.>", "b.*.c", False),
        ("$JS.>", ">", True),
    ],
)
def test_subjects_collide(a: str, b: str, collide: bool) -> None:
    assert subjects_collide(a, b) is collide
    assert subjects_collide(b, a) is collide


def test_subset_match() -> None:
    assert subject_is_subset_match("foo.bar", "foo.*")
    assert subject_is_subset_match("$JS.EVENT.x.>", "$JS.EVENT.>")
    assert not subject_is_subset_match("foo.>", "foo.*")
    assert not subject_is_subset_match("foo.*", "foo.bar")
