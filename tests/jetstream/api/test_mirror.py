"""Mirror streams (``"mirror": {...}``) on a single server, compared with nats-server 2.15.1.

Mirrors are asynchronous: nats-server sets up the mirror's internal consumer on the upstream
100-200 ms after the create, then copies messages in the background. Each test therefore
waits (:func:`caught_up`, polling ``STREAM.INFO`` on *both* servers) before comparing. The
``mirror`` section of a stream info carries ``"active": <ns since the last contact>``, which is
timing noise: a positive value is replaced by ``"<active>"`` on both sides, ``-1`` (never
contacted) is kept.

What the real server does (all observed here; see also the spec's section 10):

* Config. A mirror has no ``subjects`` and no ``duplicate_window`` in its config (both omitted).
  ``mirror_direct`` is forced to the upstream's ``allow_direct`` whenever the upstream exists
  (on create *and* on every update of the mirror, never when the upstream changes); the
  user's value is kept when the upstream does not exist. With ``"pedantic": true`` in the
  request body a mismatch is 400/10157 "pedantic mode: origin stream has direct get set,
  mirror has it disabled" (same text in both directions). ``mirror_direct: true`` without a
  mirror: 500/10052 "stream has no mirror but does have mirror direct" on create, accepted
  (and echoed) on update.
* Create/update replies and infos of a mirror have a ``"mirror"`` section after ``state``
  (after ``cluster`` in an info): ``{"name":"S","external":{..},"lag":0,"active":-1,
  "error":{..},"filter_subject":"s.a","subject_transforms":[{"src":..,"dest":..}]}`` (only
  name/lag/active always present). The create reply always shows ``"active":-1`` and has
  ``subject_transforms`` but no ``filter_subject`` yet (it appears once the mirror's consumer
  is set up). ``opt_start_time`` is echoed as given (an offset is kept, not turned into UTC).
* Errors: subjects 10034, sources 10031, first_seq 10143 (checked in that order: first_seq,
  subjects, sources), filter_subject + subject_transforms 10150, invalid mirror name 10142,
  max_msg_size smaller than the upstream's 10030, invalid filter 500/10049, invalid transform
  source 10151, bad transform destination 10154, overlapping transforms 10152, delete
  markers 500/10052, counters 10173, atomic 10198, batched 10209, schedules 10186, mirror of
  itself or a cycle 500/10052 "detected cycle". Update: changing the mirror 10055, adding
  subjects 10034; removing the mirror promotes it to a normal stream (subjects ``[name]``,
  ``duplicate_window`` 120 s, no ``mirror`` section).
* Contents: the upstream's sequences and timestamps; ``Nats-Expected-*`` headers are removed
  from the mirror's copy (other headers, ``Nats-Msg-Id`` included, are kept in order; when
  nothing is left the copy has no header at all). A direct get served by a mirror says
  ``Nats-Stream: <mirror>``. A mirror's own messages can be deleted and purged.
* Upstream sequences that are not copied (filtered out, deleted or purged upstream) are
  *skipped*: interior ones become deleted (``num_deleted``); leading ones just move
  ``first_seq`` (an empty store stays empty). Where the mirror starts (upstream first_seq,
  opt_start_seq, opt_start_time) becomes its first_seq at once, with last_seq = first-1,
  even before any message arrives; a start past the upstream's end waits there. Trailing
  filtered-out messages do not move last_seq. Later purges/deletes upstream are not copied.
  Upstream rollups are applied only when the mirror itself has ``allow_rollup_hdrs``.
* Upstream missing: the info soon shows ``"error":{"code":404,"err_code":10059,"description":
  "stream not found"}`` with ``active`` -1; after the upstream appears the mirror catches up
  on its retry, about 12 s after the create (2 s threshold + 10 s backoff).
* Direct get for the upstream's name: a mirror with ``mirror_direct`` joins the ``_sys_``
  queue group of ``$JS.API.DIRECT.GET.<upstream>`` (and ``.>``) when the first message
  flows to it (or at once when an update turns ``mirror_direct`` on), so requests are
  answered at random by the upstream or the mirror, and by the mirror alone once the
  upstream is deleted or has ``allow_direct`` turned off. A mirror of an empty upstream
  never joins by itself.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable
from typing import Any

from support.polling import INFO, parse_reply, wait_for

C = "$JS.API.STREAM.CREATE."
U = "$JS.API.STREAM.UPDATE."
G = "$JS.API.STREAM.MSG.GET."
D = "$JS.API.DIRECT.GET."

LOG = os.environ.get("JSEMU_PAIR_LOG", "")
_ACTIVE = re.compile(r'"active":[1-9][0-9]*')
_NATS_STREAM = re.compile(r"\r\nNats-Stream: ([^\r\n]*)\r\n")


def scrub_active(text: str) -> str:
    """A positive ``active`` (nanoseconds since the last contact) is timing noise."""
    return _ACTIVE.sub('"active":"<active>"', text)


def _log(line: str) -> None:
    with open(LOG, "a") as f:
        f.write(line)


async def same(pair, subject: str, payload: Any = b"", headers: Any = None) -> Any:
    """Like ``pair.same``, but with ``active`` normalised."""
    emu, real = await pair.request(subject, payload, headers)
    emu, real = scrub_active(emu), scrub_active(real)
    if LOG:
        _log(f"{subject} {payload!r} {headers!r}\n  -> {real}\n")
    assert emu == real, f"request {subject} {payload!r} headers={headers!r}"
    return parse_reply(real)


async def create(pair, name: str, **config: Any) -> Any:
    return await same(pair, C + name, {"name": name, **config})


async def info(pair, name: str) -> Any:
    return await same(pair, INFO + name)


def at(last_seq: int) -> Callable[[dict[str, Any]], bool]:
    def ready(got: dict[str, Any]) -> bool:
        mirror = got.get("mirror") or {}
        return (
            got.get("state", {}).get("last_seq") == last_seq
            and mirror.get("lag") == 0
            and mirror.get("active", -1) != -1
            and "error" not in mirror
        )

    return ready


async def caught_up(pair, name: str, last_seq: int, timeout: float = 5.0) -> None:
    """Wait until mirror ``name`` has contacted its upstream and copied up to ``last_seq``."""
    await wait_for(pair, name, at(last_seq), timeout)


def hdrs(reply: dict[str, Any]) -> str:
    """The header block of a ``STREAM.MSG.GET`` reply, decoded."""
    return base64.b64decode(reply["message"].get("hdrs", "")).decode()


def answered_by(text: str) -> str:
    m = _NATS_STREAM.search(text)
    return m.group(1) if m else ""


async def answerers(side, subject: str, payload: Any, want: set[str], tries: int = 80) -> dict[str, str]:
    """Repeat a direct get until every stream in ``want`` has answered (the queue group picks
    at random); the (normalised) reply of each answering stream."""
    seen: dict[str, str] = {}
    body = json.dumps(payload).encode() if payload is not None else b""
    for _ in range(tries):
        text = await side.request(subject, body, None, 2.0)
        seen.setdefault(answered_by(text), text)
        if set(seen) >= want:
            break
    return seen


async def fill(pair, name: str = "S", subjects: tuple[str, ...] = ("s.a", "s.b", "s.a", "s.c", "s.b", "s.a")) -> None:
    for i, subj in enumerate(subjects):
        ack = await pair.same(subj, f"m{i + 1}")
        assert ack == {"stream": name, "seq": i + 1}, ack


# --- 1, 2: mirror_direct ------------------------------------------------------------------


async def test_mirror_direct_follows_upstream_allow_direct(pair) -> None:
    await pair.create("S", subjects=["s.>"], allow_direct=True)
    await pair.create("T", subjects=["t.>"])

    got = await create(pair, "M", mirror={"name": "S"})
    assert got["config"]["mirror_direct"] is True and "subjects" not in got["config"], got
    assert "duplicate_window" not in got["config"], got
    assert got["mirror"] == {"name": "S", "lag": 0, "active": -1}, got
    got = await create(pair, "N", mirror={"name": "T"}, mirror_direct=True)
    assert got["config"]["mirror_direct"] is False, got
    got = await create(pair, "P", mirror={"name": "S"}, mirror_direct=False)
    assert got["config"]["mirror_direct"] is True, got

    # Pedantic: a mismatch either way is an error; a match is fine.
    err = await same(pair, C + "Q", {"name": "Q", "mirror": {"name": "S"}, "mirror_direct": False, "pedantic": True})
    assert err["error"] == {
        "code": 400,
        "err_code": 10157,
        "description": "pedantic mode: origin stream has direct get set, mirror has it disabled",
    }, err
    err = await same(pair, C + "Q", {"name": "Q", "mirror": {"name": "T"}, "mirror_direct": True, "pedantic": True})
    assert err["error"]["err_code"] == 10157, err
    await same(pair, C + "Q", {"name": "Q", "mirror": {"name": "S"}, "mirror_direct": True, "pedantic": True})
    await same(pair, C + "R", {"name": "R", "mirror": {"name": "T"}, "mirror_direct": False, "pedantic": True})

    for name in ("M", "N"):
        await caught_up(pair, name, 0)
        got = await info(pair, name)
        assert got["mirror"]["active"] == "<active>", got

    # Every update of the mirror forces it again, from the upstream's current allow_direct.
    got = await same(pair, U + "M", {"name": "M", "mirror": {"name": "S"}, "mirror_direct": False})
    assert got["config"]["mirror_direct"] is True, got
    err = await same(pair, U + "M", {"name": "M", "mirror": {"name": "S"}, "mirror_direct": False, "pedantic": True})
    assert err["error"]["err_code"] == 10157, err
    await pair.same(U + "S", {"name": "S", "subjects": ["s.>"], "allow_direct": False})
    got = await info(pair, "M")
    assert got["config"]["mirror_direct"] is True, got  # not re-run when the upstream changes
    got = await same(pair, U + "M", {"name": "M", "mirror": {"name": "S"}, "mirror_direct": True})
    assert got["config"]["mirror_direct"] is False, got
    await info(pair, "M")


async def test_mirror_direct_without_mirror(pair) -> None:
    err = await pair.same(C + "X", {"name": "X", "mirror_direct": True})
    assert err["error"] == {
        "code": 500,
        "err_code": 10052,
        "description": "stream has no mirror but does have mirror direct",
    }, err
    await pair.create("X")
    got = await pair.same(U + "X", {"name": "X", "mirror_direct": True})
    assert got["config"]["mirror_direct"] is True and "mirror" not in got, got
    await pair.info("X")


async def test_mirror_of_missing_upstream_keeps_mirror_direct(pair) -> None:
    got = await create(pair, "M", mirror={"name": "S"}, mirror_direct=True)
    assert got["config"]["mirror_direct"] is True, got
    got = await create(pair, "N", mirror={"name": "S"}, mirror_direct=False, pedantic=True)
    assert got["config"]["mirror_direct"] is False, got


# --- 3: config errors ---------------------------------------------------------------------

INVALID: dict[str, dict[str, Any]] = {
    "subjects": {"mirror": {"name": "S"}, "subjects": ["m"]},
    "subjects_with_filter": {"mirror": {"name": "S", "filter_subject": "s.a"}, "subjects": ["m"]},
    "sources": {"mirror": {"name": "S"}, "sources": [{"name": "S"}]},
    "sources_and_subjects": {"mirror": {"name": "S"}, "sources": [{"name": "S"}], "subjects": ["x"]},
    "first_seq": {"mirror": {"name": "S"}, "first_seq": 5},
    "first_seq_and_subjects": {"mirror": {"name": "S"}, "first_seq": 5, "subjects": ["x"]},
    "filter_and_transform": {
        "mirror": {"name": "S", "filter_subject": "s.a", "subject_transforms": [{"src": "s.b", "dest": "t.b"}]}
    },
    "filter_and_transforms": {
        "mirror": {
            "name": "S",
            "filter_subject": "s.c",
            "subject_transforms": [{"src": "s.a", "dest": "t.a"}, {"src": "s.b", "dest": "t.b"}],
        }
    },
    "name_with_dot": {"mirror": {"name": "a.b"}},
    "name_empty": {"mirror": {"name": ""}},
    "name_missing": {"mirror": {}},
    "name_wildcard": {"mirror": {"name": "S*"}},
    "name_fwc": {"mirror": {"name": "S>"}},
    "max_msg_size_smaller": {"mirror": {"name": "S"}, "max_msg_size": 99},
    "filter_invalid": {"mirror": {"name": "S", "filter_subject": "a..b"}},
    "transform_src_invalid": {"mirror": {"name": "S", "subject_transforms": [{"src": "a..b", "dest": "x"}]}},
    "transform_dest_invalid": {"mirror": {"name": "S", "subject_transforms": [{"src": "s.a", "dest": "{{bogus(1)}}"}]}},
    "transforms_overlap": {
        "mirror": {"name": "S", "subject_transforms": [{"src": "s.*", "dest": "x"}, {"src": "s.a", "dest": "y"}]}
    },
    "delete_markers": {"mirror": {"name": "S"}, "allow_msg_ttl": True, "subject_delete_marker_ttl": 1_000_000_000},
    "counters": {"mirror": {"name": "S"}, "allow_msg_counter": True},
    "atomic": {"mirror": {"name": "S"}, "allow_atomic": True},
    "batched": {"mirror": {"name": "S"}, "allow_batched": True},
    "schedules": {"mirror": {"name": "S"}, "allow_msg_schedules": True},
    "itself": {"mirror": {"name": "M"}},
    "unknown_field": {"mirror": {"name": "S", "domain": "d"}},
}


async def test_mirror_config_errors(pair) -> None:
    await pair.create("S", subjects=["s.>"], max_msg_size=100)
    for case, config in INVALID.items():
        got = await same(pair, C + "M", {"name": "M", **config})
        assert "error" in got, (case, got)
    await same(pair, "$JS.API.STREAM.NAMES")


async def test_mirror_cycle(pair) -> None:
    await create(pair, "A", mirror={"name": "B"})
    err = await same(pair, C + "B", {"name": "B", "mirror": {"name": "A"}})
    assert err["error"] == {"code": 500, "err_code": 10052, "description": "detected cycle"}, err


VALID: dict[str, dict[str, Any]] = {
    "max_msg_size_equal": {"mirror": {"name": "S"}, "max_msg_size": 100},
    "max_msg_size_unlimited": {"mirror": {"name": "S"}, "max_msg_size": -1},
    "max_msg_size_zero": {"mirror": {"name": "S"}, "max_msg_size": 0},
    "subjects_empty": {"mirror": {"name": "S"}, "subjects": []},
    "duplicate_window": {"mirror": {"name": "S"}, "duplicate_window": 5_000_000_000},
    "transforms_empty": {"mirror": {"name": "S", "subject_transforms": []}},
    "transform_empty": {"mirror": {"name": "S", "subject_transforms": [{"src": "", "dest": ""}]}},
    "transform_no_dest": {"mirror": {"name": "S", "subject_transforms": [{"src": "s.a", "dest": ""}]}},
    "start_seq_and_time": {"mirror": {"name": "S", "opt_start_seq": 2, "opt_start_time": "2000-01-01T00:00:00Z"}},
    "start_time_offset": {"mirror": {"name": "S", "opt_start_time": "2000-01-01T00:00:00.5+02:00"}},
    "external": {"mirror": {"name": "S", "external": {"api": "$JS.X.API"}}},
    "memory": {"mirror": {"name": "S"}, "storage": "memory"},
    "limits": {"mirror": {"name": "S"}, "max_msgs": 10, "max_bytes": 10000, "max_age": 60_000_000_000},
    "allow_direct": {"mirror": {"name": "S"}, "allow_direct": True},
    "description_metadata": {"mirror": {"name": "S"}, "description": "d", "metadata": {"k": "v"}},
}


async def test_mirror_create_accepted(pair) -> None:
    """Create replies only (what happens next is timing, and an external mirror never connects)."""
    await pair.create("S", subjects=["s.>"], max_msg_size=100)
    for i, config in enumerate(VALID.values()):
        got = await create(pair, f"M{i}", **config)
        assert got.get("did_create") is True, (list(VALID)[i], got)


async def test_mirror_update(pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await pair.create("T", subjects=["t.>"])
    await create(pair, "M", mirror={"name": "S"})
    await pair.same("s.a", "one")
    await caught_up(pair, "M", 1)
    for body in [
        {"name": "M", "mirror": {"name": "T"}},
        {"name": "M", "mirror": {"name": "S", "filter_subject": "s.a"}},
        {"name": "M", "mirror": {"name": "S", "opt_start_seq": 1}},
        {"name": "M", "mirror": {"name": "S"}, "subjects": ["x"]},
        {"name": "M", "mirror": {"name": "S"}, "first_seq": 3},
        {"name": "M", "mirror": {"name": "S"}, "max_msgs": 5, "allow_direct": True, "description": "d"},
        {"name": "M", "mirror": {"name": "S"}},
    ]:
        await same(pair, U + "M", body)
    # Removing the mirror promotes M to a normal stream that stops following S.
    got = await same(pair, U + "M", {"name": "M"})
    assert got["config"]["subjects"] == ["M"] and "mirror" not in got, got
    assert got["config"]["duplicate_window"] == 120_000_000_000, got
    await pair.same("s.b", "two")
    await pair.same("M", "own")
    await pair.info("M")
    await pair.get("M", seq=2)


# --- 4: contents --------------------------------------------------------------------------


async def test_mirror_contents(pair, storage) -> None:
    await pair.create("S", subjects=["s.>"], allow_direct=True)
    got = await create(pair, "M", mirror={"name": "S"}, allow_direct=True, storage=storage)
    assert got["config"]["mirror_direct"] is True, got
    await caught_up(pair, "M", 0)
    await pair.run(
        [
            ("s.a", "one"),
            ("s.b", "two", {"Nats-Msg-Id": "id1", "Nats-Expected-Stream": "S", "X-Custom": "v"}),
            (
                "s.a",
                "three",
                [
                    ("X-First", "1"),
                    ("Nats-Expected-Last-Sequence", "2"),
                    ("Nats-Expected-Last-Subject-Sequence", "1"),
                    ("Nats-Expected-Last-Msg-Id", "id1"),
                    ("X-Last", "2"),
                ],
            ),
            ("s.c", "", {"Nats-Expected-Stream": "S"}),
            ("s.b", "five", {"X-Multi": "a", "x-multi": "b"}),
        ]
    )
    await caught_up(pair, "M", 5)
    got = await info(pair, "M")
    assert got["mirror"] == {"name": "S", "lag": 0, "active": "<active>"}, got
    assert got["state"]["messages"] == 5 and got["state"]["first_seq"] == 1, got

    for seq in range(1, 7):
        await pair.get("S", seq=seq)
        await pair.get("M", seq=seq)
    upstream = await pair.get("S", seq=3)
    mine = await pair.get("M", seq=3)
    assert "Nats-Expected-Last-Sequence" in hdrs(upstream), upstream
    assert hdrs(mine) == "NATS/1.0\r\nX-First: 1\r\nX-Last: 2\r\n\r\n", mine
    mine = await pair.get("M", seq=2)
    assert hdrs(mine) == "NATS/1.0\r\nNats-Msg-Id: id1\r\nX-Custom: v\r\n\r\n", mine
    mine = await pair.get("M", seq=4)
    assert "hdrs" not in mine["message"] or hdrs(mine) == "NATS/1.0\r\n\r\n", mine
    for req in [{"last_by_subj": "s.a"}, {"last_by_subj": "s.*"}, {"next_by_subj": "s.b", "seq": 3}]:
        await pair.get("M", **req)

    # Direct gets addressed to the mirror itself (M has allow_direct): only M answers.
    for payload in [
        {"seq": 1},
        {"seq": 2},
        {"seq": 3},
        {"seq": 4},
        {"seq": 6},
        {"last_by_subj": "s.b"},
        {"next_by_subj": "s.a", "seq": 2},
        {"seq": 3, "no_hdr": True},
    ]:
        got = await pair.same(D + "M", payload)
    got = await pair.same(D + "M.s.a")
    assert "\r\nNats-Stream: M\r\n" in got and "Nats-Expected" not in got, got
    await pair.same(D + "M.s.c")

    await same(pair, "$JS.API.STREAM.LIST")
    # A mirror's messages can be deleted and purged locally.
    await pair.same("$JS.API.STREAM.MSG.DELETE.M", {"seq": 2})
    await pair.same("$JS.API.STREAM.PURGE.M", {"filter": "s.a"})
    await info(pair, "M")
    await pair.info("S")


async def test_mirror_limits_and_rollups(pair) -> None:
    await pair.create("S", subjects=["s.>"], allow_rollup_hdrs=True)
    await create(pair, "M", mirror={"name": "S"}, storage="memory")
    await create(pair, "R", mirror={"name": "S"}, allow_rollup_hdrs=True)
    await create(pair, "L", mirror={"name": "S"}, max_msgs=2)
    await create(pair, "K", mirror={"name": "S"}, max_msgs_per_subject=1)
    for name in "MRLK":
        await caught_up(pair, name, 0)
    await fill(pair, subjects=("s.a", "s.b", "s.a", "s.c", "s.a"))
    await pair.same("s.a", "roll", {"Nats-Rollup": "sub"})
    await pair.same("s.b", "x")
    for name in "MRLK":
        await caught_up(pair, name, 7)
        await info(pair, name)
    await pair.get("M", seq=6)
    await pair.same("s.z", "all", {"Nats-Rollup": "all"})
    for name in "MRLK":
        await caught_up(pair, name, 8)
        await info(pair, name)


# --- 5: filters and transforms ------------------------------------------------------------


async def test_mirror_filter_and_transforms(pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await fill(pair)  # 1 s.a, 2 s.b, 3 s.a, 4 s.c, 5 s.b, 6 s.a
    mirrors: dict[str, tuple[dict[str, Any], int]] = {
        "F": ({"name": "S", "filter_subject": "s.a"}, 6),
        "FB": ({"name": "S", "filter_subject": "s.b"}, 5),
        "FW": ({"name": "S", "filter_subject": "s.*"}, 6),
        "FN": ({"name": "S", "filter_subject": "nope"}, 0),
        "T": ({"name": "S", "subject_transforms": [{"src": "s.b", "dest": "t.b"}]}, 5),
        "T2": ({"name": "S", "subject_transforms": [{"src": "s.b", "dest": "t.b"}, {"src": "s.c", "dest": "t.c"}]}, 5),
        "T3": ({"name": "S", "subject_transforms": [{"src": "s.*", "dest": "x.{{wildcard(1)}}"}]}, 6),
    }
    for name, (mirror, _) in mirrors.items():
        got = await create(pair, name, mirror=mirror)
        # The create reply shows the transforms but not yet the filter (set with the consumer).
        want = {"name": "S", "lag": 0, "active": -1}
        if "subject_transforms" in mirror:
            want["subject_transforms"] = mirror["subject_transforms"]
        assert got["mirror"] == want, got
    for name, (_, last) in mirrors.items():
        await caught_up(pair, name, last)
        await info(pair, name)
        for seq in (1, 2, 4, 5, 6):
            await pair.get(name, seq=seq)
    got = await info(pair, "F")
    assert got["mirror"] == {"name": "S", "lag": 0, "active": "<active>", "filter_subject": "s.a"}, got
    assert (got["state"]["messages"], got["state"]["first_seq"], got["state"]["num_deleted"]) == (3, 1, 3), got
    got = await info(pair, "T")
    assert got["mirror"]["subject_transforms"] == [{"src": "s.b", "dest": "t.b"}], got
    assert (got["state"]["messages"], got["state"]["first_seq"], got["state"]["num_deleted"]) == (2, 2, 2), got

    await pair.same("s.b", "m7")
    await pair.same("s.d", "m8")
    for name in ("FB", "T", "T2", "FW", "T3"):
        await caught_up(pair, name, 7 if name in ("FB", "T", "T2") else 8)
    for name in mirrors:
        await info(pair, name)


# --- 6: start options ---------------------------------------------------------------------


async def test_mirror_opt_start(pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await fill(pair)
    mirrors: dict[str, tuple[dict[str, Any], int]] = {
        "A": ({"name": "S", "opt_start_seq": 3}, 6),
        "B": ({"name": "S", "opt_start_seq": 6}, 6),
        "C": ({"name": "S", "opt_start_seq": 7}, 6),  # first 7, last 6: nothing yet
        "E": ({"name": "S", "opt_start_seq": 100}, 99),  # first 100, last 99
        "F": ({"name": "S", "opt_start_seq": 4, "filter_subject": "s.a"}, 6),  # just seq 6
        "P": ({"name": "S", "opt_start_time": "2000-01-01T00:00:00+02:00"}, 6),  # everything
        "Q": ({"name": "S", "opt_start_time": "2100-01-01T00:00:00Z"}, 6),  # first 7, last 6
        "R": ({"name": "S", "opt_start_seq": 2, "opt_start_time": "2000-01-01T00:00:00Z"}, 6),  # seq wins
    }
    for name, (mirror, _) in mirrors.items():
        await create(pair, name, mirror=mirror)

    # A start time between the messages: each server gets the time of its own seq 4.
    emu4, real4 = await pair.each(G + "S", {"seq": 4})
    body = {"name": "T", "mirror": {"name": "S", "opt_start_time": ""}}
    replies = []
    for side, ts in ((pair.emu, emu4["message"]["time"]), (pair.real, real4["message"]["time"])):
        body["mirror"]["opt_start_time"] = ts
        replies.append(scrub_active(await side.request(C + "T", json.dumps(body).encode(), None, 2.0)))
    assert replies[0] == replies[1]
    mirrors["T"] = ({}, 6)

    for name, (_, last) in mirrors.items():
        await caught_up(pair, name, last)
        got = await info(pair, name)
        assert got["mirror"] == {
            "name": "S",
            "lag": 0,
            "active": "<active>",
            **({"filter_subject": "s.a"} if name == "F" else {}),
        }, got
    states = {name: (await info(pair, name))["state"] for name in mirrors}
    assert {n: (s["first_seq"], s["last_seq"], s["messages"]) for n, s in states.items()} == {
        "A": (3, 6, 4),
        "B": (6, 6, 1),
        "C": (7, 6, 0),
        "E": (100, 99, 0),
        "F": (6, 6, 1),
        "P": (1, 6, 6),
        "Q": (7, 6, 0),
        "R": (2, 6, 5),
        "T": (4, 6, 3),
    }, states

    await pair.same("s.a", "m7")
    for name in mirrors:
        if name != "E":
            await caught_up(pair, name, 7)
    for name in mirrors:
        await info(pair, name)


# --- 7: upstream missing ------------------------------------------------------------------


async def test_mirror_of_missing_upstream(pair) -> None:
    """Slow (about 13 s): nats-server retries the mirror consumer 2 s + 10 s after the failure."""
    got = await create(pair, "M", mirror={"name": "S"})
    assert got["mirror"] == {"name": "S", "lag": 0, "active": -1}, got
    assert got["config"]["mirror_direct"] is False, got
    await wait_for(pair, "M", lambda i: "error" in i.get("mirror", {}))
    got = await info(pair, "M")
    assert got["mirror"] == {
        "name": "S",
        "lag": 0,
        "active": -1,
        "error": {"code": 404, "err_code": 10059, "description": "stream not found"},
    }, got

    await pair.create("S", subjects=["s.>"], allow_direct=True)
    await pair.same("s.a", "one", {"Nats-Expected-Stream": "S", "X-Y": "z"})
    await pair.same("s.b", "two")
    await caught_up(pair, "M", 2, timeout=20.0)
    got = await info(pair, "M")
    assert got["config"]["mirror_direct"] is False, got
    await pair.get("M", seq=1)
    # Created while S was missing, so mirror_direct stayed false: M never answers for S.
    await pair.same("$JS.API.STREAM.DELETE.S")
    await pair.same(D + "S", {"seq": 1})


# --- 8: upstream with gaps ----------------------------------------------------------------


async def test_mirror_of_upstream_with_gaps(pair) -> None:
    await pair.create("S", subjects=["s.>"])
    await fill(pair)  # 1 s.a, 2 s.b, 3 s.a, 4 s.c, 5 s.b, 6 s.a
    await pair.same("$JS.API.STREAM.PURGE.S", {"seq": 3})
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 5})
    await pair.create("E", subjects=["e"])
    for _ in range(3):
        await pair.same("e", "x")
    await pair.same("$JS.API.STREAM.PURGE.E")

    await create(pair, "M", mirror={"name": "S"})
    await create(pair, "ME", mirror={"name": "E"})
    await create(pair, "MF", mirror={"name": "S", "filter_subject": "s.b"})
    await caught_up(pair, "M", 6)
    await caught_up(pair, "ME", 3)  # first 4, last 3, no messages
    await caught_up(pair, "MF", 2)  # first 3, last 2: starts at the upstream's first
    for name in ("M", "ME", "MF"):
        await info(pair, name)
    for seq in range(1, 7):
        await pair.get("M", seq=seq)

    await pair.same("e", "y")
    await pair.same("s.b", "m7")
    await caught_up(pair, "ME", 4)
    await caught_up(pair, "M", 7)
    await caught_up(pair, "MF", 7)
    for name in ("M", "ME", "MF"):
        await info(pair, name)

    # Deletes and purges upstream after the copy are not mirrored.
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 4})
    await pair.same("$JS.API.STREAM.PURGE.S")
    await pair.same("s.a", "m8")
    await caught_up(pair, "M", 8)
    got = await info(pair, "M")
    assert (got["state"]["messages"], got["state"]["first_seq"], got["state"]["num_deleted"]) == (5, 3, 1), got
    await pair.info("S")


# --- 9: direct get for the upstream's name ------------------------------------------------


async def test_direct_get_answered_by_mirror(pair) -> None:
    await pair.create("S", subjects=["s.>"], allow_direct=True)
    await pair.same("s.a", "one")
    await pair.same("s.a", "two", {"Nats-Expected-Last-Sequence": "1", "X-Keep": "k"})
    await create(pair, "M", mirror={"name": "S"})
    await caught_up(pair, "M", 2)

    # The queue group answers at random: the upstream keeps the Nats-Expected-* header, the
    # mirror's copy does not, and each names itself in Nats-Stream.
    last: dict[str, str] = {}
    for subject, payload in [(D + "S", {"last_by_subj": "s.a"}), (D + "S.s.a", None), (D + "S", {"seq": 1})]:
        emu = await answerers(pair.emu, subject, payload, {"S", "M"})
        real = await answerers(pair.real, subject, payload, {"S", "M"})
        if LOG:
            _log(f"{subject} {payload!r} (repeated)\n  -> {real}\n")
        assert set(real) == {"S", "M"}, real
        assert emu == real, subject
        last = last or real
    assert "Nats-Expected-Last-Sequence: 1" in last["S"] and "Nats-Expected" not in last["M"], last
    # Not M's own subject: M has no allow_direct.
    await pair.same(D + "M", {"seq": 1})

    # Without S, every request is answered by M.
    await pair.same("$JS.API.STREAM.DELETE.S")
    got = await pair.same(D + "S", {"last_by_subj": "s.a"})
    assert got.startswith("HMSG NATS/1.0\r\nX-Keep: k\r\nNats-Stream: M\r\n"), got
    await pair.same(D + "S.s.a")
    await pair.same(D + "S", {"seq": 1})
    await pair.same(D + "S", {"seq": 3})
    got = await info(pair, "M")
    assert "error" not in got["mirror"], got


async def test_direct_get_mirror_joins_when_messages_flow(pair) -> None:
    # M0 mirrors an empty S0: nothing flows, so it never joins $JS.API.DIRECT.GET.S0.
    await pair.create("S0", subjects=["a.>"], allow_direct=True)
    got = await create(pair, "M0", mirror={"name": "S0"})
    assert got["config"]["mirror_direct"] is True, got
    await caught_up(pair, "M0", 0)
    await pair.same("$JS.API.STREAM.DELETE.S0")
    got = await pair.same(D + "S0", {"seq": 1})
    assert got.startswith("<no responders>"), got
    await pair.same(D + "S0.a.b")

    # M1 joins with the first message; then S1 stops answering (allow_direct off): M1 only.
    await pair.create("S1", subjects=["b.>"], allow_direct=True)
    await create(pair, "M1", mirror={"name": "S1"})
    await caught_up(pair, "M1", 0)
    await pair.same("b.x", "one", {"Nats-Expected-Stream": "S1", "X-A": "1"})
    await caught_up(pair, "M1", 1)
    got = await pair.same(U + "S1", {"name": "S1", "subjects": ["b.>"], "allow_direct": False})
    assert got["config"]["allow_direct"] is False, got
    got = await pair.same(D + "S1", {"seq": 1})
    assert got.startswith("HMSG NATS/1.0\r\nX-A: 1\r\nNats-Stream: M1\r\n"), got
    await pair.same(D + "S1.b.x")
    await pair.same(D + "S1", {"seq": 2})
    await pair.same("$JS.API.STREAM.DELETE.S1")
    await pair.same(D + "S1", {"last_by_subj": "b.x"})

    # M2 mirrors an empty S2 without direct; once S2 allows it, an update of M2 forces
    # mirror_direct on and joins at once, with nothing flowed.
    await pair.create("S2", subjects=["c.>"])
    got = await create(pair, "M2", mirror={"name": "S2"})
    assert got["config"]["mirror_direct"] is False, got
    await caught_up(pair, "M2", 0)
    await pair.same(U + "S2", {"name": "S2", "subjects": ["c.>"], "allow_direct": True})
    got = await same(pair, U + "M2", {"name": "M2", "mirror": {"name": "S2"}})
    assert got["config"]["mirror_direct"] is True, got
    await pair.same("$JS.API.STREAM.DELETE.S2")
    got = await pair.same(D + "S2", {"seq": 1})
    assert got == "HMSG NATS/1.0 404 Message Not Found\r\n\r\n", got
    await pair.same(D + "S2.c.d")
    await pair.same(D + "M2", {"seq": 1})


# --- 10: mirror of a mirror ---------------------------------------------------------------


async def test_mirror_of_mirror(pair) -> None:
    await pair.create("S", subjects=["s.>"], allow_direct=True)
    await fill(pair, subjects=("s.a", "s.b", "s.a"))
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 2})
    got = await create(pair, "M", mirror={"name": "S"}, allow_direct=True)
    assert got["config"]["mirror_direct"] is True, got
    got = await create(pair, "MM", mirror={"name": "M"})
    assert got["config"]["mirror_direct"] is True, got  # M's allow_direct
    got = await create(pair, "MN", mirror={"name": "M", "filter_subject": "s.b"})
    assert got["config"]["mirror_direct"] is True, got
    await caught_up(pair, "M", 3)
    await caught_up(pair, "MM", 3)
    await pair.same("s.b", "four", {"Nats-Expected-Last-Sequence": "3", "X-B": "b"})
    for name in ("M", "MM", "MN"):
        await caught_up(pair, name, 4)
        await info(pair, name)
        await pair.get(name, seq=4)
    await pair.same("$JS.API.STREAM.DELETE.S")
    await pair.same("$JS.API.STREAM.DELETE.M")
    # MM and MN (mirror_direct forced from M's allow_direct) joined the direct get group of
    # their own upstream M, not that of S.
    emu = await answerers(pair.emu, D + "M", {"seq": 4}, {"MM", "MN"})
    real = await answerers(pair.real, D + "M", {"seq": 4}, {"MM", "MN"})
    assert set(real) == {"MM", "MN"}, real
    assert emu == real
    await pair.same(D + "M", {"seq": 2})
    await pair.same(D + "S", {"seq": 4})
