"""``$JS.API.STREAM.DELETE``, ``$JS.API.STREAM.PURGE`` and ``$JS.API.STREAM.MSG.DELETE``."""

from __future__ import annotations

import pytest

D = "$JS.API.STREAM.DELETE."
P = "$JS.API.STREAM.PURGE."
MD = "$JS.API.STREAM.MSG.DELETE."
DD = b'{"deleted_details":true}'


async def fill(pair, storage: str, **config) -> None:
    """Twelve messages: foo.a x4, foo.b x3, foo.c.d x3, bar x2 (seq 1..12)."""
    await pair.create("S", subjects=["foo.>", "bar"], storage=storage, **config)
    subjects = ["foo.a", "foo.b", "foo.c.d", "foo.a", "bar", "foo.b", "foo.a", "foo.c.d", "bar", "foo.b", "foo.c.d"]
    for i, subject in enumerate([*subjects, "foo.a"]):
        await pair.same(subject, f"payload-{i}" * (i % 3))


# --- STREAM.DELETE -------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [b"", b"{}", b"garbage", b'{"bogus":1}'])
async def test_delete(pair, storage, payload) -> None:
    await fill(pair, storage)
    await pair.same(D + "S", payload)
    await pair.same(D + "S", payload)  # already gone
    await pair.info()
    await pair.same("foo.a", "no stream")
    await pair.same("$JS.API.STREAM.NAMES")


async def test_delete_not_found(pair) -> None:
    await pair.same(D + "S")
    await pair.same(D + "a*")


async def test_delete_and_recreate(pair, storage) -> None:
    await fill(pair, storage)
    await pair.same(D + "S")
    await pair.settle()
    await pair.create("S", subjects=["foo.>"], storage=storage)
    await pair.info()
    await pair.same("foo.x", "fresh")
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 1})


async def test_delete_frees_subjects(pair) -> None:
    await pair.create("A", subjects=["foo.>"])
    await pair.create("B", subjects=["foo.x"])
    await pair.same(D + "A")
    await pair.settle()
    await pair.create("B", subjects=["foo.x"])
    await pair.same("foo.x", "1")


@pytest.mark.parametrize("config", [{"deny_delete": True}, {"deny_purge": True}])
async def test_delete_stream_with_deny_flags(pair, config) -> None:
    await pair.create("S", **config)
    await pair.same("S", "x")
    await pair.same(D + "S")
    await pair.same("$JS.API.STREAM.NAMES")


# --- STREAM.PURGE --------------------------------------------------------------------------

PURGES = [
    b"",
    b"{}",
    b"null",
    b'{"filter":"foo.a"}',
    b'{"filter":"foo.*"}',
    b'{"filter":"foo.>"}',
    b'{"filter":">"}',
    b'{"filter":"nope"}',
    b'{"filter":"foo.a.b"}',
    b'{"filter":"a..b"}',
    b'{"filter":""}',
    b'{"seq":5}',
    b'{"seq":1}',
    b'{"seq":0}',
    b'{"seq":12}',
    b'{"seq":13}',
    b'{"seq":100}',
    b'{"keep":3}',
    b'{"keep":0}',
    b'{"keep":1}',
    b'{"keep":12}',
    b'{"keep":50}',
    b'{"filter":"foo.a","seq":7}',
    b'{"filter":"foo.b","keep":1}',
    b'{"filter":"foo.*","keep":2}',
    b'{"filter":">","keep":2}',
    b'{"filter":"foo.a","keep":10}',
    b'{"seq":5,"keep":1}',
    b'{"filter":"foo.a","seq":3,"keep":1}',
    b'{"seq":-1}',
    b'{"keep":-1}',
    b'{"bogus":1}',
    b"{",
    b"garbage",
]


@pytest.mark.parametrize("payload", PURGES, ids=[p.decode() or "empty" for p in PURGES])
async def test_purge(pair, storage, payload) -> None:
    await fill(pair, storage)
    await pair.same(P + "S", payload)
    await pair.info("S", DD)
    await pair.info("S", b'{"subjects_filter":">"}')
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 1})
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"last_by_subj": "foo.a"})
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"next_by_subj": ">"})
    await pair.same("foo.a", "after")
    await pair.info("S", DD)


async def test_purge_twice_and_empty(pair, storage) -> None:
    await pair.create("S", storage=storage)
    await pair.same(P + "S")
    await pair.info()
    await pair.same("S", "1")
    await pair.same(P + "S")
    await pair.same(P + "S")
    await pair.info()
    await pair.same(P + "S", {"seq": 10})
    await pair.info()
    await pair.same("S", "2")
    await pair.info()


async def test_purge_with_interior_deletes(pair, storage) -> None:
    await fill(pair, storage)
    for seq in (2, 3, 8):
        await pair.same(MD + "S", {"seq": seq})
    await pair.same(P + "S", {"seq": 4})
    await pair.info("S", DD)
    await pair.same(P + "S", {"keep": 2})
    await pair.info("S", DD)


@pytest.mark.parametrize("payload", [b"", b'{"filter":"S"}', b'{"keep":1}', b'{"seq":2}', b"{"])
async def test_purge_denied(pair, storage, payload) -> None:
    await pair.create("S", storage=storage, deny_purge=True)
    await pair.same("S", "1")
    await pair.same(P + "S", payload)
    await pair.info()


@pytest.mark.parametrize("payload", [b"", b'{"filter":"x"}', b"{"])
async def test_purge_not_found(pair, payload) -> None:
    await pair.same(P + "S", payload)


# --- STREAM.MSG.DELETE ---------------------------------------------------------------------

MSG_DELETES = [
    b'{"seq":1}',
    b'{"seq":5}',
    b'{"seq":12}',
    b'{"seq":1,"no_erase":true}',
    b'{"seq":6,"no_erase":true}',
    b'{"seq":6,"no_erase":false}',
    b'{"seq":13}',
    b'{"seq":100}',
    b'{"seq":0}',
    b'{"seq":-1}',
    b'{"seq":"1"}',
    b'{"no_erase":true}',
    b"{}",
    b"",
    b"null",
    b"{",
    b'{"seq":1,"bogus":1}',
]


@pytest.mark.parametrize("payload", MSG_DELETES, ids=[p.decode() or "empty" for p in MSG_DELETES])
async def test_msg_delete(pair, storage, payload) -> None:
    await fill(pair, storage)
    await pair.same(MD + "S", payload)
    await pair.same(MD + "S", payload)  # again
    await pair.info("S", DD)
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 1})
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 6})


async def test_msg_delete_sequence(pair, storage) -> None:
    await fill(pair, storage)
    for seq in (3, 4, 5, 1, 2, 12, 11, 7):
        await pair.same(MD + "S", {"seq": seq})
        await pair.info("S", DD)
    await pair.same("foo.a", "new")
    await pair.info("S", DD)


async def test_msg_delete_empty_stream(pair, storage) -> None:
    await pair.create("S", storage=storage)
    await pair.same(MD + "S", {"seq": 1})
    await pair.same(MD + "S", {"seq": 0})
    await pair.same("S", "x")
    await pair.same(P + "S")
    await pair.same(MD + "S", {"seq": 1})
    await pair.same(MD + "S", {"seq": 2})


@pytest.mark.parametrize("payload", [b'{"seq":1}', b'{"seq":9}', b"{}", b"{"])
async def test_msg_delete_denied(pair, storage, payload) -> None:
    await pair.create("S", storage=storage, deny_delete=True)
    await pair.same("S", "1")
    await pair.same(MD + "S", payload)
    await pair.info()


@pytest.mark.parametrize("payload", [b'{"seq":1}', b"{}", b"{", b""])
async def test_msg_delete_not_found(pair, payload) -> None:
    await pair.same(MD + "S", payload)
