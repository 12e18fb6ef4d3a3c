"""Publishing into streams: PubAcks, the ``Nats-*`` header checks, limits and stored bytes."""

from __future__ import annotations

import asyncio

import pytest

G = "$JS.API.STREAM.MSG.GET.S"
DD = b'{"deleted_details":true}'


async def test_puback_sequence(pair, storage) -> None:
    await pair.create("S", subjects=["foo.>", "bar"], storage=storage)
    for subject in ("foo.a", "bar", "foo.b.c", "foo.a", "bar"):
        got = await pair.same(subject, "x")
        assert set(got) == {"stream", "seq"}
    await pair.info()


async def test_puback_raw_bytes(pair) -> None:
    await pair.create("S")
    emu, real = await pair.request("S", "x")
    assert real == '{"stream":"S","seq":1}'
    assert emu == real


async def test_publish_without_reply(pair, storage) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage)
    for i in range(5):
        await pair.publish(f"foo.{i % 2}", f"m{i}")
    await pair.info()
    await pair.same(G, {"seq": 5})
    await pair.same("foo.x", "with reply")


async def test_publish_no_stream(pair) -> None:
    await pair.same("foo", "nobody")
    await pair.publish("foo", "nobody")  # no reply: nothing comes back at all
    await pair.create("S", subjects=["bar"])
    await pair.same("foo", "still nobody")


async def test_publish_unicode_and_odd_subjects(pair, storage) -> None:
    await pair.create("S", subjects=["é.>", "a-b", "$x.y"], storage=storage)
    for subject in ("é.ü", "a-b", "$x.y", "é.*", "é.>"):
        await pair.same(subject, "v")
    await pair.info("S", b'{"subjects_filter":">"}')
    await pair.same(G, {"last_by_subj": "é.*"})


# --- stored bytes per storage --------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "payload", "hdr"),
    [
        pytest.param("S", b"", None, id="empty"),
        pytest.param("S", b"hello", None, id="payload"),
        pytest.param("S", b"", {"A": "b"}, id="header_only"),
        pytest.param("S", b"hello", {"A": "b", "Long-Header": "v" * 100}, id="header_and_payload"),
        pytest.param("S", b"x" * 5000, None, id="big_payload"),
        pytest.param("S", b"p", b"NATS/1.0\r\n\r\n", id="empty_header_block"),
    ],
)
async def test_stored_bytes(pair, storage, subject, payload, hdr) -> None:
    await pair.create("S", storage=storage)
    await pair.same(subject, payload, hdr)
    await pair.same(subject, payload, hdr)
    await pair.info()
    await pair.same(G, {"seq": 1})


async def test_stored_bytes_account_usage(pair) -> None:
    await pair.create("F", storage="file")
    await pair.create("M", storage="memory")
    await pair.same("F", "abc", {"H": "1"})
    await pair.same("M", "abc", {"H": "1"})
    await pair.same("$JS.API.INFO")


# --- Nats-Msg-Id ---------------------------------------------------------------------------


async def test_msg_id_dedupe(pair, storage) -> None:
    await pair.create("S", storage=storage)
    await pair.run(
        [
            ("S", "1", {"Nats-Msg-Id": "a"}),
            ("S", "2", {"Nats-Msg-Id": "b"}),
            ("S", "1 again", {"Nats-Msg-Id": "a"}),  # duplicate, other payload
            ("S", "3", None),
            ("S", "2 again", {"Nats-Msg-Id": "b"}),
            ("S", "lower", {"nats-msg-id": "a"}),  # header names are case-sensitive
            ("S", "empty id", {"Nats-Msg-Id": ""}),
            ("S", "empty id", {"Nats-Msg-Id": ""}),
            ("S", "spaces", {"Nats-Msg-Id": " a "}),
        ]
    )
    got = await pair.same("S", "dup", {"Nats-Msg-Id": "a"})
    assert got == {"stream": "S", "seq": 1, "duplicate": True}
    await pair.info()


async def test_msg_id_dedupe_raw_bytes(pair) -> None:
    await pair.create("S")
    await pair.same("S", "1", {"Nats-Msg-Id": "a"})
    emu, real = await pair.request("S", "1", {"Nats-Msg-Id": "a"})
    assert real == '{"stream":"S","seq":1,"duplicate": true}'
    assert emu == real


async def test_msg_id_dedupe_window_expires(pair, storage) -> None:
    await pair.create("S", storage=storage, duplicate_window=100_000_000)
    await pair.same("S", "1", {"Nats-Msg-Id": "a"})
    await pair.same("S", "2", {"Nats-Msg-Id": "a"})
    await asyncio.sleep(0.4)
    await pair.same("S", "3", {"Nats-Msg-Id": "a"})
    await pair.same("S", "4", {"Nats-Msg-Id": "a"})


async def test_msg_id_survives_purge_and_delete(pair, storage) -> None:
    await pair.create("S", storage=storage)
    await pair.same("S", "1", {"Nats-Msg-Id": "a"})
    await pair.same("S", "2", {"Nats-Msg-Id": "b"})
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
    await pair.same("S", "1", {"Nats-Msg-Id": "a"})
    await pair.same("$JS.API.STREAM.PURGE.S")
    await pair.same("S", "2", {"Nats-Msg-Id": "b"})
    await pair.info()


async def test_msg_id_without_reply(pair) -> None:
    await pair.create("S")
    await pair.publish("S", "1", {"Nats-Msg-Id": "a"})
    await pair.publish("S", "1", {"Nats-Msg-Id": "a"})
    await pair.info()
    await pair.same("S", "1", {"Nats-Msg-Id": "a"})


# --- expectations --------------------------------------------------------------------------

EXPECT_CASES: dict[str, list[tuple[str, dict[str, str]]]] = {
    "expected_stream": [
        ("foo.a", {"Nats-Expected-Stream": "S"}),
        ("foo.a", {"Nats-Expected-Stream": "T"}),
        ("foo.a", {"Nats-Expected-Stream": "s"}),
        ("foo.a", {"Nats-Expected-Stream": ""}),
        ("foo.a", {"nats-expected-stream": "T"}),
    ],
    "expected_last_sequence": [
        ("foo.a", {"Nats-Expected-Last-Sequence": "1"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "0"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "3"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "4"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "abc"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "-1"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": ""}),
        ("foo.a", {"Nats-Expected-Last-Sequence": " 5"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "18446744073709551616"}),
    ],
    "expected_last_subject_sequence": [
        ("foo.a", {"Nats-Expected-Last-Subject-Sequence": "1"}),
        ("foo.a", {"Nats-Expected-Last-Subject-Sequence": "3"}),
        ("foo.b", {"Nats-Expected-Last-Subject-Sequence": "2"}),
        ("foo.new", {"Nats-Expected-Last-Subject-Sequence": "0"}),
        ("foo.new2", {"Nats-Expected-Last-Subject-Sequence": "1"}),
        ("foo.a", {"Nats-Expected-Last-Subject-Sequence": "0"}),
        ("foo.a", {"Nats-Expected-Last-Subject-Sequence": "x"}),
    ],
    "expected_last_subject_sequence_subject": [
        ("foo.z", {"Nats-Expected-Last-Subject-Sequence": "3", "Nats-Expected-Last-Subject-Sequence-Subject": "foo.a"}),
        ("foo.z", {"Nats-Expected-Last-Subject-Sequence": "1", "Nats-Expected-Last-Subject-Sequence-Subject": "foo.a"}),
        ("foo.z", {"Nats-Expected-Last-Subject-Sequence": "3", "Nats-Expected-Last-Subject-Sequence-Subject": "foo.*"}),
        ("foo.z", {"Nats-Expected-Last-Subject-Sequence": "2", "Nats-Expected-Last-Subject-Sequence-Subject": "foo.b"}),
        ("foo.z", {"Nats-Expected-Last-Subject-Sequence": "0", "Nats-Expected-Last-Subject-Sequence-Subject": "x.y"}),
        ("foo.z", {"Nats-Expected-Last-Subject-Sequence-Subject": "foo.a"}),
        ("foo.z", {"Nats-Expected-Last-Subject-Sequence": "0", "Nats-Expected-Last-Subject-Sequence-Subject": ""}),
    ],
    "expected_last_msg_id": [
        ("foo.a", {"Nats-Expected-Last-Msg-Id": "id3"}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": "nope"}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": ""}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": "id3", "Nats-Msg-Id": "id4"}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": "id4", "Nats-Msg-Id": "id4"}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": "id4", "Nats-Msg-Id": "id5"}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": "id5"}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": ""}),
    ],
    "check_order": [
        ("foo.a", {"Nats-Expected-Stream": "T", "Nats-Expected-Last-Sequence": "99"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "99", "Nats-Expected-Last-Subject-Sequence": "99"}),
        ("foo.a", {"Nats-Expected-Last-Sequence": "99", "Nats-Msg-Id": "id1"}),
        ("foo.a", {"Nats-Msg-Id": "id1", "Nats-Expected-Last-Msg-Id": "zzz"}),
        ("foo.a", {"Nats-Expected-Last-Msg-Id": "zzz", "Nats-Rollup": "sub"}),
        ("foo.a", {"Nats-Expected-Stream": "T", "Nats-TTL": "1s"}),
        ("foo.a", {"Nats-TTL": "1s", "Nats-Expected-Last-Sequence": "99"}),
        ("foo.a", {"Nats-TTL": "1s"}),
    ],
}


@pytest.mark.parametrize("steps", list(EXPECT_CASES.values()), ids=list(EXPECT_CASES))
async def test_expectations(pair, storage, steps) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage)
    await pair.run(
        [
            ("foo.a", "1", {"Nats-Msg-Id": "id1"}),
            ("foo.b", "2"),
            ("foo.a", "3", {"Nats-Msg-Id": "id3"}),
        ]
    )
    for subject, hdrs in steps:
        await pair.same(subject, "p", hdrs)
    await pair.info()


async def test_expected_last_sequence_empty_and_after_purge(pair, storage) -> None:
    await pair.create("S", storage=storage)
    await pair.run(
        [
            ("S", "a", {"Nats-Expected-Last-Sequence": "1"}),
            ("S", "a", {"Nats-Expected-Last-Sequence": "0"}),
            ("S", "b", {"Nats-Expected-Last-Sequence": "0"}),
            ("S", "b", {"Nats-Expected-Last-Sequence": "1"}),
            ("S", "c", {"Nats-Expected-Last-Subject-Sequence": "2"}),
            ("$JS.API.STREAM.PURGE.S", b""),
            ("S", "d", {"Nats-Expected-Last-Sequence": "0"}),
            ("S", "d", {"Nats-Expected-Last-Sequence": "3"}),
            ("S", "e", {"Nats-Expected-Last-Subject-Sequence": "4"}),
            ("S", "e", {"Nats-Expected-Last-Subject-Sequence": "0"}),
            ("S", "f", {"Nats-Expected-Last-Msg-Id": ""}),
        ]
    )


async def test_expected_last_subject_sequence_after_delete(pair, storage) -> None:
    await pair.create("S", subjects=["foo.*"], storage=storage)
    await pair.run(
        [
            ("foo.a", "1"),
            ("foo.a", "2"),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 2}),
            ("foo.a", "3", {"Nats-Expected-Last-Subject-Sequence": "2"}),
            ("foo.a", "3", {"Nats-Expected-Last-Subject-Sequence": "1"}),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 1}),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 3}),
            ("foo.a", "4", {"Nats-Expected-Last-Subject-Sequence": "0"}),
            ("foo.a", "5", {"Nats-Expected-Last-Msg-Id": ""}),
        ]
    )


# --- rollups -------------------------------------------------------------------------------


@pytest.mark.parametrize("allow", [True, False])
@pytest.mark.parametrize("value", ["sub", "all", "bogus", "", "SUB"])
async def test_rollup(pair, storage, allow, value) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage, allow_rollup_hdrs=allow)
    await pair.run([("foo.a", "1"), ("foo.b", "2"), ("foo.a", "3"), ("foo.c", "4")])
    await pair.same("foo.a", "roll", {"Nats-Rollup": value})
    await pair.info("S", DD)
    await pair.info("S", b'{"subjects_filter":">"}')
    await pair.same(G, {"seq": 1})
    await pair.same(G, {"last_by_subj": "foo.a"})


async def test_rollup_lowercase_header_name_ignored(pair) -> None:
    await pair.create("S", subjects=["foo.>"])
    await pair.run([("foo.a", "1"), ("foo.a", "2"), ("foo.a", "3", {"nats-rollup": "sub"})])
    await pair.info()


async def test_rollup_without_reply(pair, storage) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage, allow_rollup_hdrs=True)
    await pair.run([("foo.a", "1"), ("foo.b", "2"), ("foo.a", "3")])
    await pair.publish("foo.a", "roll", {"Nats-Rollup": "sub"})
    await pair.info("S", DD)
    await pair.publish("foo.b", "roll all", {"Nats-Rollup": "all"})
    await pair.info("S", DD)


# --- limits --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hdr",
    [
        pytest.param(None, id="no_headers"),
        pytest.param({"H": "v"}, id="headers"),
    ],
)
async def test_max_msg_size(pair, storage, hdr) -> None:
    await pair.create("S", storage=storage, max_msg_size=10)
    for payload in (b"", b"x" * 9, b"x" * 10, b"x" * 11, b"x" * 1000):
        await pair.same("S", payload, hdr)
    await pair.info()


@pytest.mark.parametrize("discard", ["old", "new"])
async def test_max_msgs(pair, storage, discard) -> None:
    await pair.create("S", subjects=["foo.*"], storage=storage, max_msgs=3, discard=discard)
    for i in range(5):
        await pair.same(f"foo.{i}", str(i))
    await pair.info()
    await pair.same(G, {"seq": 1})
    await pair.same(G, {"seq": 3})


@pytest.mark.parametrize("discard", ["old", "new"])
async def test_max_bytes(pair, storage, discard) -> None:
    # file: 22+3+10+8 = 43 bytes per message; memory: 3+10+16 = 29.
    await pair.create("S", subjects=["s.*"], storage=storage, max_bytes=100, discard=discard)
    for i in range(5):
        await pair.same(f"s.{i}", "0123456789")
    await pair.info()
    await pair.same("s.x", "y" * 200)  # bigger than max_bytes on its own
    await pair.info()


@pytest.mark.parametrize("discard", ["old", "new"])
async def test_max_msgs_per_subject(pair, storage, discard) -> None:
    await pair.create("S", subjects=["foo.*"], storage=storage, max_msgs_per_subject=2, discard=discard)
    for subject in ("foo.a", "foo.a", "foo.b", "foo.a", "foo.b", "foo.b", "foo.c"):
        await pair.same(subject, "x")
    await pair.info("S", DD)
    await pair.info("S", b'{"subjects_filter":">"}')


async def test_discard_new_per_subject(pair, storage) -> None:
    await pair.create(
        "S", subjects=["foo.*"], storage=storage, max_msgs_per_subject=2, discard="new", discard_new_per_subject=True
    )
    for subject in ("foo.a", "foo.a", "foo.b", "foo.a", "foo.b", "foo.b", "foo.c"):
        await pair.same(subject, "x")
    await pair.info("S", b'{"subjects_filter":">"}')


async def test_discard_new_per_subject_with_max_msgs(pair, storage) -> None:
    await pair.create(
        "S",
        subjects=["foo.*"],
        storage=storage,
        max_msgs=3,
        max_msgs_per_subject=2,
        discard="new",
        discard_new_per_subject=True,
    )
    for subject in ("foo.a", "foo.a", "foo.a", "foo.b", "foo.c", "foo.d"):
        await pair.same(subject, "x")
    await pair.info()


async def test_discard_new_without_reply(pair, storage) -> None:
    await pair.create("S", storage=storage, max_msgs=1, discard="new")
    await pair.publish("S", "1")
    await pair.publish("S", "2")
    await pair.info()


async def test_max_age_expiry(pair, storage) -> None:
    await pair.create("S", storage=storage, max_age=200_000_000)
    await pair.same("S", "1")
    await pair.same("S", "2")
    await asyncio.sleep(1.2)
    await pair.info()
    await pair.same(G, {"seq": 1})
    await pair.same("S", "3")
    await pair.info()


# --- sealed and retention ------------------------------------------------------------------


async def test_sealed_stream_publish(pair, storage) -> None:
    await pair.create("S", storage=storage)
    await pair.same("S", "1")
    await pair.same("$JS.API.STREAM.UPDATE.S", {"name": "S", "storage": storage, "sealed": True})
    await pair.same("S", "2")
    await pair.same("S", "2", {"Nats-Expected-Stream": "T"})
    await pair.same("S", "2", {"Nats-Msg-Id": "x"})
    await pair.publish("S", "3")
    await pair.info()


@pytest.mark.parametrize("retention", ["interest", "workqueue"])
async def test_retention_without_consumers(pair, storage, retention) -> None:
    await pair.create("S", subjects=["foo.*"], storage=storage, retention=retention)
    await pair.same("foo.a", "1")
    await pair.same("foo.b", "2")
    await pair.info()
    await pair.same(G, {"seq": 1})


async def test_no_ack_stream(pair, storage) -> None:
    await pair.create("S", storage=storage, no_ack=True)
    emu, real = await pair.request("S", "x", timeout=0.3)
    assert (emu, real) == ("<timeout>", "<timeout>")
    await asyncio.sleep(0.1)
    await pair.info()


# --- header blocks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hdr",
    [
        pytest.param(b"NATS/1.0\r\n\r\n", id="empty_block"),
        pytest.param(b"NATS/1.0 503 x\r\n\r\n", id="status_and_text"),
        pytest.param(b"NATS/1.0 503 x\r\nFoo: bar\r\n\r\n", id="status_then_header"),
        pytest.param(b"NATS/1.0 100 Idle Heartbeat\r\nNats-Msg-Id: a\r\n\r\n", id="status_and_msg_id"),
        pytest.param(b"NATS/1.0\r\nNats-Msg-Id: a\r\nNats-Msg-Id: b\r\n\r\n", id="msg_id_twice"),
        pytest.param(b"NATS/1.0\r\nNats-Expected-Stream:S\r\n\r\n", id="no_space_after_colon"),
        pytest.param(b"NATS/1.0\r\nNats-Expected-Stream:   S   \r\n\r\n", id="padded_value"),
        pytest.param(b"NATS/1.0\r\nNats-Expected-Stream: T\r\nNats-Expected-Stream: S\r\n\r\n", id="repeated_check"),
        pytest.param(b"NATS/1.0\r\nNats-Expected-Last-Sequence: 0\r\n\r\n", id="expected_last_zero"),
    ],
)
async def test_header_blocks(pair, storage, hdr) -> None:
    await pair.create("S", storage=storage)
    await pair.same("S", "data", hdr)
    await pair.same("S", "again", hdr)
    await pair.info()
    await pair.same(G, {"seq": 1})
    await pair.same(G, {"seq": 2})


async def test_publish_to_api_subject_is_not_stored(pair) -> None:
    await pair.create("S", subjects=["foo"])
    await pair.same("$JS.API.STREAM.INFO.S", b"", {"Nats-Msg-Id": "x"})
