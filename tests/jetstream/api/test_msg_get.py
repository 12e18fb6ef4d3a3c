"""``$JS.API.STREAM.MSG.GET.<name>``."""

from __future__ import annotations

import pytest

G = "$JS.API.STREAM.MSG.GET."


async def fill(pair, storage: str) -> None:
    """seq 1 foo.a, 2 foo.b (headers), 3 foo.a (empty), 4 bar, 5 foo.c.d (headers, empty),
    6 foo.b, 7 foo.a; then seq 6 is deleted."""
    await pair.create("S", subjects=["foo.>", "bar"], storage=storage)
    await pair.run(
        [
            ("foo.a", "one"),
            ("foo.b", "two", {"X-A": "1", "X-B": "two words"}),
            ("foo.a", ""),
            ("bar", b"\x00\x01\xff binary"),
            ("foo.c.d", "", {"Only": "hdr"}),
            ("foo.b", "six"),
            ("foo.a", "seven"),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 6}),
        ]
    )


REQUESTS = [
    # by sequence
    b'{"seq":1}',
    b'{"seq":2}',
    b'{"seq":3}',
    b'{"seq":4}',
    b'{"seq":5}',
    b'{"seq":6}',
    b'{"seq":7}',
    b'{"seq":8}',
    b'{"seq":1000}',
    b'{"seq":2,"no_hdr":true}',
    b'{"seq":5,"no_hdr":true}',
    b'{"seq":1,"no_hdr":false}',
    # last by subject
    b'{"last_by_subj":"foo.a"}',
    b'{"last_by_subj":"foo.b"}',
    b'{"last_by_subj":"foo.*"}',
    b'{"last_by_subj":"foo.>"}',
    b'{"last_by_subj":">"}',
    b'{"last_by_subj":"*"}',
    b'{"last_by_subj":"bar"}',
    b'{"last_by_subj":"nope"}',
    b'{"last_by_subj":"foo.c.*"}',
    b'{"last_by_subj":"foo.b","no_hdr":true}',
    b'{"last_by_subj":"a..b"}',
    # next by subject
    b'{"next_by_subj":"foo.a"}',
    b'{"next_by_subj":"foo.a","seq":2}',
    b'{"next_by_subj":"foo.a","seq":4}',
    b'{"next_by_subj":"foo.a","seq":8}',
    b'{"next_by_subj":"foo.b","seq":3}',
    b'{"next_by_subj":"foo.*","seq":4}',
    b'{"next_by_subj":">","seq":6}',
    b'{"next_by_subj":">","seq":0}',
    b'{"next_by_subj":"nope","seq":1}',
    b'{"next_by_subj":"foo.>","seq":5,"no_hdr":true}',
    # start time
    b'{"start_time":"2000-01-01T00:00:00Z"}',
    b'{"start_time":"2999-01-01T00:00:00Z"}',
    b'{"start_time":"2000-01-01T00:00:00Z","next_by_subj":"bar"}',
    b'{"start_time":"2000-01-01T00:00:00.5+02:00","next_by_subj":"foo.c.d"}',
    b'{"start_time":"not a time"}',
    b'{"start_time":"0001-01-01T00:00:00Z"}',
    # bad requests
    b"",
    b"{}",
    b"null",
    b"[]",
    b"{",
    b'{"seq":1}{"seq":2}',
    b'{"seq":1} x',
    b'{"seq":1,"bogus":true}',
    b'{"seq":-1}',
    b'{"seq":"1"}',
    b'{"seq":0}',
    b'{"batch":1}',
    b'{"batch":2,"seq":1}',
    b'{"max_bytes":100,"seq":1}',
    b'{"seq":1,"last_by_subj":"foo.a"}',
    b'{"last_by_subj":"foo.a","next_by_subj":"foo.a"}',
    b'{"seq":1,"start_time":"2000-01-01T00:00:00Z"}',
    b'{"last_by_subj":"foo.a","start_time":"2000-01-01T00:00:00Z"}',
    b'{"no_hdr":true}',
    b'{"multi_last":["foo.a"]}',
    b'{"multi_last":["foo.a"],"seq":1}',
    b'{"up_to_seq":3,"last_by_subj":"foo.a"}',
    b'{"up_to_time":"2999-01-01T00:00:00Z","last_by_subj":"foo.a"}',
    b'{"SEQ":1}',
    b'{"Last_By_Subj":"foo.b"}',
]


@pytest.mark.parametrize("payload", REQUESTS, ids=[r.decode() or "empty" for r in REQUESTS])
async def test_msg_get(pair, storage, payload) -> None:
    await fill(pair, storage)
    await pair.same(G + "S", payload)


@pytest.mark.parametrize(
    "payload", [b'{"seq":1}', b"", b"{}", b'{"batch":1}', b'{"seq":1,"last_by_subj":"x"}', b"{", b'{"x":1}']
)
async def test_msg_get_stream_not_found(pair, payload) -> None:
    await pair.same(G + "S", payload)


async def test_msg_get_empty_stream(pair, storage) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage)
    for req in ({"seq": 1}, {"last_by_subj": "foo.a"}, {"last_by_subj": ">"}, {"next_by_subj": ">"}):
        await pair.same(G + "S", req)


async def test_msg_get_after_purge(pair, storage) -> None:
    await fill(pair, storage)
    await pair.same("$JS.API.STREAM.PURGE.S", {"keep": 2})
    for req in (
        {"seq": 1},
        {"seq": 5},
        {"seq": 7},
        {"last_by_subj": "foo.a"},
        {"last_by_subj": "foo.b"},
        {"next_by_subj": ">"},
        {"next_by_subj": "foo.a", "seq": 1},
        {"start_time": "2000-01-01T00:00:00Z"},
    ):
        await pair.same(G + "S", req)


async def test_msg_get_last_by_subj_fwc_after_deleting_last(pair, storage) -> None:
    """``last_by_subj: ">"`` after the stream's last message was deleted."""
    await fill(pair, storage)
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 7})
    for req in ({"last_by_subj": ">"}, {"last_by_subj": "foo.>"}, {"last_by_subj": "foo.a"}, {"seq": 7}):
        await pair.same(G + "S", req)


@pytest.mark.parametrize(
    "hdr",
    [
        pytest.param(b"NATS/1.0\r\nFoo: bar\r\n\r\n", id="simple"),
        pytest.param(b"NATS/1.0\r\n\r\n", id="empty_block"),
        pytest.param(b"NATS/1.0\r\nA: 1\r\nA: 2\r\nb: x\r\n\r\n", id="repeated_and_lowercase"),
        pytest.param(b"NATS/1.0\r\nK:v\r\nSp:   lots  \r\n\r\n", id="spacing"),
        pytest.param(b"NATS/1.0 503 x\r\nFoo: bar\r\n\r\n", id="status_line"),
        pytest.param(b"NATS/1.0 503\r\n\r\n", id="status_only"),
        pytest.param(b"NATS/1.0 404 No Messages\r\nA: b\r\n\r\n", id="status_404"),
        pytest.param(b"NATS/1.0\r\nNats-Msg-Id: m1\r\nNats-Expected-Stream: S\r\n\r\n", id="js_headers"),
    ],
)
async def test_msg_get_stored_headers(pair, storage, hdr) -> None:
    await pair.create("S", storage=storage)
    await pair.same("S", "data", hdr)
    await pair.same("S", "", hdr)
    await pair.info()
    await pair.same(G + "S", {"seq": 1})
    await pair.same(G + "S", {"seq": 2})
    await pair.same(G + "S", {"last_by_subj": "S", "no_hdr": True})


async def test_msg_get_large_payload(pair, storage) -> None:
    await pair.create("S", storage=storage)
    await pair.same("S", bytes(range(256)) * 400)
    await pair.same(G + "S", {"seq": 1})


async def test_msg_get_works_without_allow_direct(pair) -> None:
    await pair.create("S", allow_direct=False)
    await pair.same("S", "x")
    await pair.same(G + "S", {"seq": 1})
    await pair.same("$JS.API.STREAM.UPDATE.S", {"name": "S", "allow_direct": True})
    await pair.same(G + "S", {"seq": 1})
