"""``$JS.API.INFO`` (account info) and how the API answers subjects it does not know.

Both servers are fresh for each test, so the API counters
(``api.total`` / ``api.errors``) start at zero on both sides.
"""

from __future__ import annotations

import pytest

INFO = "$JS.API.INFO"


@pytest.mark.parametrize("payload", [b"", b"{}", b"garbage", b'{"x":1}', b"{", b"null"])
async def test_account_info_payloads(pair, payload) -> None:
    got = await pair.same(INFO, payload)
    assert got["type"] == "io.nats.jetstream.api.v1.account_info_response"
    await pair.same(INFO, payload)  # the counters moved


async def test_account_info_counts(pair) -> None:
    await pair.same(INFO)
    await pair.create("F", storage="file", subjects=["f.>"])
    await pair.same(INFO)
    await pair.create("M", storage="memory", subjects=["m.>"])
    await pair.same(INFO)
    for i in range(3):
        await pair.same(f"f.{i}", "x" * 10 * i)
        await pair.same(f"m.{i}", "y" * 10 * i, {"H": str(i)})
    await pair.same(INFO)
    await pair.same("$JS.API.STREAM.MSG.DELETE.F", {"seq": 2})
    await pair.same("$JS.API.STREAM.PURGE.M")
    await pair.same(INFO)
    await pair.same("$JS.API.STREAM.DELETE.F")
    await pair.same(INFO)


async def test_account_info_reservations(pair) -> None:
    await pair.create("F", storage="file", max_bytes=10_000)
    await pair.create("M", storage="memory", max_bytes=2_000)
    await pair.create("N", storage="memory")
    await pair.same(INFO)
    await pair.same("$JS.API.STREAM.UPDATE.M", {"name": "M", "storage": "memory", "max_bytes": 3_000})
    await pair.same(INFO)
    await pair.same("$JS.API.STREAM.DELETE.F")
    await pair.same(INFO)


async def test_account_info_error_counter(pair) -> None:
    await pair.run(
        [
            ("$JS.API.STREAM.INFO.nope", b""),
            ("$JS.API.STREAM.CREATE.S", b"{"),
            ("$JS.API.STREAM.CREATE.S", {"name": "T"}),
            ("$JS.API.STREAM.MSG.GET.S", {"seq": 1}),
            ("$JS.API.STREAM.NAMES", b'{"bogus":1}'),
            (INFO, b""),
            ("$JS.API.STREAM.CREATE.S", {"name": "S"}),
            ("$JS.API.STREAM.MSG.GET.S", {"seq": 1}),
            ("$JS.API.STREAM.MSG.GET.S", b""),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 1}),
            ("$JS.API.STREAM.PURGE.S", b""),
            ("$JS.API.STREAM.DELETE.S", b"x"),
            (INFO, b""),
        ]
    )


@pytest.mark.parametrize(
    "subject",
    [
        "$JS.API.FOO",
        "$JS.API.STREAM.INFO",
        "$JS.API.STREAM.INFO.a.b",
    ],
)
async def test_unknown_api_subject_gets_no_reply(pair, subject) -> None:
    """The API listens on ``$JS.API.>`` (so there is no no-responders status) but ignores
    subjects it has no handler for; they are not counted either."""
    assert await pair.request(subject, b"{}", timeout=0.4) == ("<timeout>", "<timeout>")
    await pair.same(INFO)


async def test_api_counts_requests_without_reply(pair) -> None:
    await pair.create("S")
    await pair.publish("$JS.API.STREAM.INFO.S", barrier=False)
    await pair.publish("$JS.API.STREAM.INFO.nope", barrier=False)
    await pair.same(INFO)


@pytest.mark.parametrize("level", ["0", "5", "6", "99", "x", ""])
@pytest.mark.parametrize(
    ("subject", "payload"),
    [
        (INFO, b""),
        ("$JS.API.STREAM.CREATE.S", b'{"name":"S"}'),
        ("$JS.API.STREAM.INFO.S", b""),
        ("$JS.API.STREAM.MSG.GET.S", b'{"seq":1}'),
        ("$JS.API.STREAM.NAMES", b""),
    ],
    ids=["info", "create", "stream_info", "msg_get", "names"],
)
async def test_required_api_level_header(pair, subject, payload, level) -> None:
    await pair.same(subject, payload, {"Nats-Required-Api-Level": level})
    await pair.same(INFO)
