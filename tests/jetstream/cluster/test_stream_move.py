"""jsemu-only: ``ACCOUNT.STREAM.MOVE`` and both ``CANCEL_MOVE``s in a simulated 5-node cluster,
against what a real 5-node nats-server 2.15.1 cluster answered (an R3 stream ``S`` in account
``A`` with five messages and a durable ``D``; ``{"server": <a follower>}`` asked by ``SYS``):

- the move's reply is a ``stream_update_response`` with the stream's info whose ``cluster``
  still lists the old followers and carries ``desired``: ``created``, the cluster ``name``,
  the new group (leader, the member that stays, the spare) as name and peer id, and
  ``origin: {"replicas": 3}``;
- a ``STREAM.CANCEL_MOVE`` during the move answers ``stream_cancel_move_response`` with the
  stream's info whose ``desired`` names the original group; stream info then has no
  ``desired`` and the original followers; a cancel with no move answers 10129;
- a move left alone settles: the server named is out of the stream's and the consumer's
  groups, every message stays.

jsemu settles a move at once unless ``control.hold_moves`` holds it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest
from support.five_nodes import five_nodes
from support.five_nodes import request_json as _json

import jsemu
from jsemu.ids import get_hash

pytestmark = pytest.mark.fake_only

_T = "io.nats.jetstream.api.v1."
NOT_IN_PROGRESS = {"code": 400, "err_code": 10129, "description": "stream reconfiguration not in progress"}


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[jsemu.Server, nats.NATS, nats.NATS]]:
    async with five_nodes(tmp_path) as nodes:
        yield nodes


def _names(cluster: dict[str, Any]) -> list[str]:
    return [r["name"] for r in cluster["replicas"]]


async def _move(a: nats.NATS, sys: nats.NATS) -> tuple[dict[str, Any], dict[str, Any]]:
    """Move the stream's first follower away; the stream info before and the reply."""
    before = await _json(a, "$JS.API.STREAM.INFO.S")
    follower = before["cluster"]["replicas"][0]["name"]
    reply = await _json(sys, "$JS.API.ACCOUNT.STREAM.MOVE.A.S", json.dumps({"server": follower}).encode())
    return before, reply


async def test_a_held_move_shows_its_desired_group_and_cancels(
    cluster: tuple[jsemu.Server, nats.NATS, nats.NATS],
) -> None:
    srv, a, sys = cluster
    srv.control.hold_moves("S", account="A")
    before, reply = await _move(a, sys)
    leader, (gone, stays) = before["cluster"]["leader"], _names(before["cluster"])
    assert list(reply) == ["type", "config", "created", "state", "cluster", "ts"]
    assert reply["type"] == _T + "stream_update_response" and reply["state"]["messages"] == 5
    cl = reply["cluster"]
    assert _names(cl) == [gone, stays] and list(cl)[-1] == "desired"
    desired = cl["desired"]
    assert list(desired) == ["created", "name", "replicas", "origin"]
    assert desired["name"] == "c" and desired["origin"] == {"replicas": 3}
    spare = desired["replicas"][2]["name"]
    assert spare not in (leader, gone, stays)
    assert desired["replicas"] == [{"name": n, "peer": get_hash(n)} for n in (leader, stays, spare)]
    info = await _json(a, "$JS.API.STREAM.INFO.S")
    assert info["cluster"]["desired"] == desired  # in progress until settled or cancelled

    cancelled = await _json(a, "$JS.API.STREAM.CANCEL_MOVE.S")
    assert list(cancelled) == ["type", "config", "created", "state", "cluster", "ts"]
    assert cancelled["type"] == _T + "stream_cancel_move_response"
    back = cancelled["cluster"]["desired"]
    assert {r["name"] for r in back["replicas"]} == {leader, gone, stays} and back["origin"] == {"replicas": 3}
    info = await _json(a, "$JS.API.STREAM.INFO.S")
    assert "desired" not in info["cluster"] and _names(info["cluster"]) == [gone, stays]
    again = await _json(sys, "$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.A.S")
    assert again["error"] == NOT_IN_PROGRESS


async def test_the_accounts_cancel_and_a_finished_move(cluster: tuple[jsemu.Server, nats.NATS, nats.NATS]) -> None:
    srv, a, sys = cluster
    srv.control.hold_moves("S", account="A")
    await _move(a, sys)
    cancelled = await _json(sys, "$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.A.S")
    assert cancelled["type"] == _T + "stream_cancel_move_response" and "desired" in cancelled["cluster"]
    _before, reply = await _move(a, sys)
    srv.control.finish_move("S", account="A")
    info = await _json(a, "$JS.API.STREAM.INFO.S")
    group = [r["name"] for r in reply["cluster"]["desired"]["replicas"]]
    assert "desired" not in info["cluster"] and info["state"]["messages"] == 5
    assert sorted([info["cluster"]["leader"], *_names(info["cluster"])]) == sorted(group)
    consumer = await _json(a, "$JS.API.CONSUMER.INFO.S.D")
    assert sorted([consumer["cluster"]["leader"], *_names(consumer["cluster"])]) == sorted(group)
    assert (await _json(a, "$JS.API.STREAM.CANCEL_MOVE.S"))["error"] == NOT_IN_PROGRESS


async def test_a_move_left_alone_settles(cluster: tuple[jsemu.Server, nats.NATS, nats.NATS]) -> None:
    _srv, a, sys = cluster
    before, reply = await _move(a, sys)
    assert "desired" in reply["cluster"]  # the reply shows the move under way, as nats-server's
    gone = _names(before["cluster"])[0]
    info = await _json(a, "$JS.API.STREAM.INFO.S")
    assert "desired" not in info["cluster"] and gone not in _names(info["cluster"])
    assert info["state"]["messages"] == 5
    assert (await _json(sys, "$JS.API.ACCOUNT.STREAM.CANCEL_MOVE.A.S"))["error"] == NOT_IN_PROGRESS
