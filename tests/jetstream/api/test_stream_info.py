"""``$JS.API.STREAM.INFO.<name>``, ``$JS.API.STREAM.NAMES`` and ``$JS.API.STREAM.LIST``."""

from __future__ import annotations

import pytest

SI = "$JS.API.STREAM.INFO."
NAMES = "$JS.API.STREAM.NAMES"
LIST = "$JS.API.STREAM.LIST"


# --- STREAM.INFO ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"{}", id="empty_object"),
        pytest.param(b"{", id="invalid_json"),
        pytest.param(b'{"bogus":1}', id="unknown_field"),
        pytest.param(b'{"subjects_filter":">"}', id="subjects_filter"),
        pytest.param(b"null", id="null"),
        pytest.param(b"garbage", id="garbage"),
    ],
)
async def test_info_not_found(pair, payload) -> None:
    await pair.same(SI + "S", payload)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"{}", id="empty_object"),
        pytest.param(b"null", id="null"),
        pytest.param(b"{", id="invalid_json"),
        pytest.param(b"garbage", id="garbage"),
        pytest.param(b'{"bogus":1}', id="unknown_field"),
        pytest.param(b'{"subjects_filter":">"}', id="filter_all_empty_stream"),
        pytest.param(b'{"deleted_details":true}', id="deleted_details_empty_stream"),
        pytest.param(b'{"offset":3}', id="offset_without_filter"),
        pytest.param(b'{"subjects_filter":5}', id="filter_wrong_type"),
        pytest.param(b'{"offset":-1}', id="offset_negative"),
    ],
)
async def test_info_payloads_on_empty_stream(pair, storage, payload) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage)
    await pair.info("S", payload)


async def test_info_response_shape(pair) -> None:
    await pair.create("S")
    got = await pair.info()
    assert list(got) == ["type", "total", "offset", "limit", "config", "created", "state", "cluster", "ts"]


async def fill(pair) -> None:
    """Ten messages over four subjects, with and without headers, some empty."""
    steps = [
        ("foo.a", "1"),
        ("foo.b", "22"),
        ("foo.a", ""),
        ("foo.c.d", "4444", {"H": "v"}),
        ("foo.b", "55555"),
        ("foo.a", "6", {"A": "1", "B": "2"}),
        ("foo.e", ""),
        ("foo.c.d", "8"),
        ("foo.b", "9" * 100),
        ("foo.a", "10"),
    ]
    await pair.run(steps)


FILTERS = [
    b'{"subjects_filter":">"}',
    b'{"subjects_filter":"foo.>"}',
    b'{"subjects_filter":"foo.*"}',
    b'{"subjects_filter":"foo.a"}',
    b'{"subjects_filter":"*.c.*"}',
    b'{"subjects_filter":"nope"}',
    b'{"subjects_filter":"a..b"}',
    b'{"subjects_filter":""}',
    b'{"subjects_filter":">","offset":1}',
    b'{"subjects_filter":">","offset":3}',
    b'{"subjects_filter":">","offset":4}',
    b'{"subjects_filter":">","offset":50}',
    b'{"subjects_filter":"foo.a","offset":1}',
    b'{"deleted_details":true}',
    b'{"deleted_details":false}',
    b'{"deleted_details":true,"subjects_filter":"foo.b"}',
]


@pytest.mark.parametrize("payload", FILTERS, ids=[f.decode() for f in FILTERS])
async def test_info_filters(pair, storage, payload) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage)
    await fill(pair)
    await pair.info("S", payload)
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 2})
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 5})
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 9})
    await pair.info("S", payload)


async def test_info_state_lifecycle(pair, storage) -> None:
    """State after publishes, deletes (first, middle, last) and purges."""
    await pair.create("S", subjects=["foo.>"], storage=storage)
    await pair.info()
    await fill(pair)
    dd = b'{"deleted_details":true}'
    await pair.info("S", dd)
    for seq in (1, 5, 10, 9):  # first, middle, last, new last
        await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": seq})
        await pair.info("S", dd)
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 2, "no_erase": True})
    await pair.info("S", dd)
    await pair.same("$JS.API.STREAM.PURGE.S", {"filter": "foo.a"})
    await pair.info("S", dd)
    await pair.same("$JS.API.STREAM.PURGE.S")
    await pair.info("S", dd)
    await pair.info("S", b'{"subjects_filter":">"}')
    await pair.same("foo.z", "after purge")
    await pair.info("S", dd)


async def test_info_delete_everything_one_by_one(pair, storage) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage)
    for i in range(4):
        await pair.same(f"foo.{i}", str(i))
    for seq in (2, 1, 4, 3):
        await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": seq})
        await pair.info("S", b'{"deleted_details":true}')


async def test_info_many_subjects(pair, storage) -> None:
    await pair.create("S", subjects=["foo.>"], storage=storage)
    for i in range(25):
        await pair.publish(f"foo.{i:02d}", "x" * i)
    await pair.info("S")
    await pair.info("S", b'{"subjects_filter":">"}')
    await pair.info("S", b'{"subjects_filter":"foo.*","offset":20}')


async def test_info_first_seq_config(pair, storage) -> None:
    await pair.create("S", storage=storage, first_seq=100)
    await pair.info()
    await pair.same("S", "x")
    await pair.info()
    await pair.same("$JS.API.STREAM.PURGE.S")
    await pair.info()


# --- STREAM.NAMES / STREAM.LIST -----------------------------------------------------------


@pytest.mark.parametrize("api", [NAMES, LIST])
@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"{}", id="empty_object"),
        pytest.param(b"null", id="null"),
        pytest.param(b"{", id="invalid_json"),
        pytest.param(b'{"bogus":1}', id="unknown_field"),
        pytest.param(b'{"offset":-1}', id="offset_negative"),
        pytest.param(b'{"offset":3}', id="offset"),
        pytest.param(b'{"subject":"foo"}', id="subject"),
        pytest.param(b'{"subject":""}', id="subject_empty"),
    ],
)
async def test_names_list_no_streams(pair, api, payload) -> None:
    await pair.same(api, payload)


STREAMS = [("b", ["b.>"]), ("A", ["a.*"]), ("a", ["x"]), ("C1", ["c", "d.*.e"]), ("_z", ["z.>"]), ("0", ["n.0"])]


@pytest.mark.parametrize("api", [NAMES, LIST])
@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"{}", id="empty_object"),
        pytest.param(b'{"offset":2}', id="offset"),
        pytest.param(b'{"offset":6}', id="offset_total"),
        pytest.param(b'{"offset":9}', id="offset_beyond"),
        pytest.param(b'{"subject":"b.x.y"}', id="subject_literal"),
        pytest.param(b'{"subject":"*.x"}', id="subject_pwc"),
        pytest.param(b'{"subject":">"}', id="subject_fwc"),
        pytest.param(b'{"subject":"d.>"}', id="subject_fwc_partial"),
        pytest.param(b'{"subject":"c"}', id="subject_second_of_many"),
        pytest.param(b'{"subject":"nope"}', id="subject_no_match"),
        pytest.param(b'{"subject":"a..b"}', id="subject_invalid"),
        pytest.param(b'{"subject":">","offset":3}', id="subject_and_offset"),
        pytest.param(b'{"subject":"*.x","offset":5}', id="subject_and_offset_beyond"),
    ],
)
async def test_names_list(pair, api, payload) -> None:
    for name, subjects in STREAMS:
        await pair.create(name, subjects=subjects, storage="memory")
    await pair.same("b.1", "x")
    await pair.same("x", "yy")
    await pair.same(api, payload)


async def test_names_list_after_delete(pair) -> None:
    for name in ("s1", "s2", "s3"):
        await pair.create(name)
    await pair.same("$JS.API.STREAM.DELETE.s2")
    await pair.settle()
    await pair.same(NAMES)
    await pair.same(LIST)
    await pair.create("s2", storage="memory")
    await pair.same(NAMES)
    await pair.same(LIST)


async def test_list_pages(pair) -> None:
    """More streams than one LIST page (256)."""
    for i in range(258):
        await pair.create(f"s{i:03d}", storage="memory")
    await pair.same(LIST)
    await pair.same(LIST, {"offset": 256})
    await pair.same(LIST, {"offset": 100})
    await pair.same(NAMES)
    await pair.same(NAMES, {"offset": 250})
