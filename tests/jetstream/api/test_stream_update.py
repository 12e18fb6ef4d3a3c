"""``$JS.API.STREAM.UPDATE.<name>``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

U = "$JS.API.STREAM.UPDATE."
SEC = 1_000_000_000

BASE: dict[str, Any] = {"name": "S", "subjects": ["foo.>"]}

# Changes applied on top of BASE to an existing stream created from BASE (+ storage).
UPDATES: dict[str, dict[str, Any]] = {
    "same": {},
    "max_msgs": {"max_msgs": 20},
    "max_bytes": {"max_bytes": 4096},
    "max_age": {"max_age": 60 * SEC},
    "max_age_too_small": {"max_age": 1000},
    "max_msgs_per_subject": {"max_msgs_per_subject": 3},
    "max_msg_size": {"max_msg_size": 64},
    "max_consumers": {"max_consumers": 4},
    "negative_limits": {"max_msgs": -3, "max_bytes": 0, "max_msg_size": -9},
    "allow_direct_on": {"allow_direct": True},
    "mirror_direct": {"mirror_direct": True},
    "allow_rollup": {"allow_rollup_hdrs": True},
    "deny_delete": {"deny_delete": True},
    "deny_purge": {"deny_purge": True},
    "rollup_and_deny_purge": {"allow_rollup_hdrs": True, "deny_purge": True},
    "discard_new": {"discard": "new"},
    "discard_new_per_subject": {"discard": "new", "discard_new_per_subject": True, "max_msgs_per_subject": 2},
    "discard_new_per_subject_invalid": {"discard_new_per_subject": True},
    "description": {"description": "now described"},
    "metadata": {"metadata": {"k": "v"}},
    "duplicate_window": {"duplicate_window": 10 * SEC},
    "duplicate_window_too_small": {"duplicate_window": 10},
    "no_ack": {"no_ack": True},
    "subjects_changed": {"subjects": ["bar.*", "baz"]},
    "subjects_removed": {"subjects": None},
    "subjects_invalid": {"subjects": ["a..b"]},
    "subjects_self_overlap": {"subjects": ["x.*", "x.y"]},
    "storage_change": {"storage": "__other__"},
    "retention_interest": {"retention": "interest"},
    "retention_workqueue": {"retention": "workqueue"},
    "num_replicas_3": {"num_replicas": 3},
    "num_replicas_0": {"num_replicas": 0},
    "compression": {"compression": "s2"},
    "first_seq": {"first_seq": 50},
    "allow_msg_ttl": {"allow_msg_ttl": True},
    "subject_delete_marker_ttl": {"allow_msg_ttl": True, "subject_delete_marker_ttl": SEC},
    "sealed": {"sealed": True},
    "placement": {"placement": {"cluster": "c"}},
    "unknown_field": {"bogus": 1},
}


@pytest.mark.parametrize("change", list(UPDATES.values()), ids=list(UPDATES))
async def test_update(pair, storage, change) -> None:
    await pair.create(**{**BASE, "storage": storage, "name": "S"})
    for i in range(4):
        await pair.same(f"foo.{i % 2}", f"m{i}")
    body = {**BASE, "storage": storage, **change}
    if body["storage"] == "__other__":
        body["storage"] = "memory" if storage == "file" else "file"
    await pair.same(U + "S", body)
    await pair.info()
    if change.get("no_ack"):
        # No ack at all now; give the servers a moment to store the message.
        assert await pair.request("foo.0", "after", timeout=0.3) == ("<timeout>", "<timeout>")
        await asyncio.sleep(0.2)
    else:
        await pair.same("foo.0", "after")
    await pair.info()


@pytest.mark.parametrize(
    ("subject_name", "body"),
    [
        pytest.param("S", b"", id="empty_body"),
        pytest.param("S", b"{}", id="empty_object"),
        pytest.param("S", b"{", id="invalid_json"),
        pytest.param("S", {"name": "T", "subjects": ["foo.>"]}, id="rename"),
        pytest.param("T", {"name": "T"}, id="not_found"),
        pytest.param("T", {"name": "T", "bogus": 1}, id="not_found_unknown_field"),
        pytest.param("T", {"name": "T", "max_age": 1}, id="not_found_invalid_config"),
        pytest.param("T", b"", id="not_found_empty_body"),
        pytest.param("a*", {"name": "a*"}, id="invalid_name"),
    ],
)
async def test_update_errors(pair, subject_name, body) -> None:
    await pair.create(**BASE)
    await pair.same(U + subject_name, body)
    await pair.info()


async def test_update_trims_to_new_limits(pair, storage) -> None:
    await pair.create(**BASE, storage=storage)
    for i in range(10):
        await pair.same(f"foo.{i % 3}", "x" * i)
    await pair.same(U + "S", {**BASE, "storage": storage, "max_msgs": 6})
    await pair.info()
    await pair.same(U + "S", {**BASE, "storage": storage, "max_msgs": 6, "max_msgs_per_subject": 1})
    await pair.info(payload={"subjects_filter": ">"})
    await pair.same(U + "S", {**BASE, "storage": storage, "max_msgs_per_subject": 1, "max_bytes": 60})
    await pair.info(payload={"subjects_filter": ">"})


async def test_update_subjects_overlap_other_stream(pair) -> None:
    await pair.create("A", subjects=["a.>"])
    await pair.create("B", subjects=["b.>"])
    await pair.same(U + "B", {"name": "B", "subjects": ["a.x"]})
    await pair.same(U + "B", {"name": "B", "subjects": ["b.>", "c"]})
    await pair.same(U + "A", {"name": "A", "subjects": ["c.>"]})
    await pair.same(U + "A", {"name": "A", "subjects": ["c.d"]})
    # Subjects that moved now go to the other stream.
    await pair.same("a.x", "1")
    await pair.same("c.d", "2")
    await pair.same("c", "3")
    await pair.same("$JS.API.STREAM.LIST")


async def test_update_subject_change_routes(pair) -> None:
    await pair.create(**BASE)
    await pair.same("foo.a", "1")
    await pair.same(U + "S", {"name": "S", "subjects": ["bar"]})
    await pair.same("foo.a", "2")  # no longer captured: no responders
    await pair.same("bar", "3")
    await pair.info(payload={"subjects_filter": ">"})


async def test_update_allow_direct_toggle(pair) -> None:
    await pair.create(**BASE)
    await pair.same("foo.a", "1")
    await pair.same(U + "S", {**BASE, "allow_direct": True})
    await pair.same("$JS.API.DIRECT.GET.S", {"seq": 1})
    await pair.same(U + "S", {**BASE, "allow_direct": False})
    await pair.info()


async def test_update_seal(pair, storage) -> None:
    await pair.create(**BASE, storage=storage, max_msgs=5)
    await pair.same("foo.a", "1")
    await pair.same(U + "S", {**BASE, "storage": storage, "max_msgs": 5, "sealed": True})
    await pair.info()
    await pair.same("foo.a", "2")  # sealed: rejected
    await pair.same("$JS.API.STREAM.PURGE.S")
    await pair.same("$JS.API.STREAM.MSG.DELETE.S", {"seq": 1})
    await pair.same(U + "S", {**BASE, "storage": storage, "max_msgs": 5, "sealed": False})
    await pair.same(U + "S", {**BASE, "storage": storage, "sealed": True})
    # Sealing turned on deny_delete and deny_purge, so they must be given now.
    await pair.same(U + "S", {**BASE, "storage": storage, "sealed": True, "deny_delete": True})
    body = {**BASE, "storage": storage, "sealed": True, "deny_delete": True, "deny_purge": True}
    await pair.same(U + "S", body)
    await pair.same(U + "S", {**body, "max_msgs": 9, "description": "still sealed"})
    await pair.same(U + "S", {**body, "discard": "new"})
    await pair.info()
    await pair.same("$JS.API.STREAM.MSG.GET.S", {"seq": 1})
    await pair.same("$JS.API.STREAM.DELETE.S")


async def test_update_deny_flags_cannot_be_cancelled(pair) -> None:
    await pair.create("S", deny_delete=True, deny_purge=True)
    for body in (
        {"name": "S", "deny_delete": False, "deny_purge": True},
        {"name": "S", "deny_delete": True, "deny_purge": False},
        {"name": "S", "deny_delete": True, "deny_purge": True, "max_msgs": 3},
        {"name": "S", "deny_delete": True, "deny_purge": True, "mirror_direct": True},
        {"name": "S"},
    ):
        await pair.same(U + "S", body)


async def test_update_retention_changes(pair) -> None:
    await pair.create("S")
    await pair.same(U + "S", {"name": "S", "retention": "interest"})
    await pair.same(U + "S", {"name": "S", "retention": "limits"})
    await pair.same(U + "S", {"name": "S", "retention": "workqueue"})
    await pair.create("W", retention="workqueue")
    await pair.same(U + "W", {"name": "W", "retention": "limits"})
    await pair.same(U + "W", {"name": "W", "retention": "interest"})
    await pair.same(U + "W", {"name": "W", "retention": "workqueue", "max_msgs": 3})


async def test_update_storage_from_default(pair) -> None:
    await pair.create("S")
    await pair.same(U + "S", {"name": "S", "storage": "memory"})
    await pair.same(U + "S", {"name": "S", "storage": "file"})


async def test_update_then_create_same_is_idempotent(pair) -> None:
    await pair.create(**BASE)
    await pair.same(U + "S", {**BASE, "max_msgs": 7})
    await pair.same("$JS.API.STREAM.CREATE.S", {**BASE, "max_msgs": 7})
    await pair.same("$JS.API.STREAM.CREATE.S", BASE)
