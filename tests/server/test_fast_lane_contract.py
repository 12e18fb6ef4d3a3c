"""The fast lane's declared contract (``jsemu/server/subscriber.py``), clause by clause:
every listed state change drops learned routes and reply plans through the one
``Sublist.invalidate``; ``skips`` only claims subjects its subscriber declines; replicated
and persisted stores see every message of a fast-lane run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from support.rawclient import RawClient

import jsemu
from jsemu.jetstream.api.registry import _HANDLERS
from jsemu.server import sublist as sublist_module
from jsemu.server.sublist import Subscription
from jsemu.server.subscriber import Change

CONNECT = {"verbose": False, "pedantic": False, "headers": True}


class _Nobody:
    echo = True

    def deliver(self, *args: object) -> bool:
        return True


@pytest.fixture
async def srv() -> AsyncIterator[jsemu.Server]:
    async with jsemu.Server() as server:
        assert server.jetstream_api is not None
        reply = server.jetstream_api.call("$JS.API.STREAM.CREATE.C", {"name": "C", "subjects": ["c.>"]})
        assert "error" not in reply, reply
        yield server


def _learn(server: jsemu.Server) -> None:
    """Teach the server a route and a reply plan (both cached from here on; the route is
    the stream's ``fast_batch``, or False while a fault or policy is in play)."""
    server.learn_route(b"c.1")
    server.outbound.plan(b"_INBOX.contract")
    assert b"c.1" in server.learned_routes and server.outbound._plans


async def _subscribe(server: jsemu.Server) -> None:
    server.sublist.insert(Subscription(_Nobody(), b"other.>", None, b"1"))


async def _unsubscribe(server: jsemu.Server) -> None:
    sub = Subscription(_Nobody(), b"other.>", None, b"1")
    server.sublist.insert(sub)
    _learn(server)
    server.sublist.remove(sub)


async def _unsub_limit(server: jsemu.Server) -> None:
    client = await RawClient.connect(server.port, CONNECT)
    assert await client.exchange(b"SUB _INBOX.contract 7\r\n") == []
    _learn(server)
    assert await client.exchange(b"UNSUB 7 5\r\n") == []
    client.writer.close()


async def _match_cache_full(server: jsemu.Server) -> None:
    for i in range(sublist_module._CACHE_MAX + 1):
        server.sublist.match(b"x.%d" % i)


async def _fault_added(server: jsemu.Server) -> None:
    server.control.drop("c.9", count=1)


async def _fault_removed(server: jsemu.Server) -> None:
    fault_id = server.control.drop("c.9", count=1)
    _learn(server)
    assert server.control.clear_fault(fault_id)


async def _fault_used_up(server: jsemu.Server) -> None:
    server.control.drop("c.9", count=1)
    _learn(server)
    client = await RawClient.connect(server.port, CONNECT)
    assert await client.exchange(b"PUB c.9 1\r\nx\r\n") == []
    client.writer.close()
    assert not server.faults.rules


async def _faults_cleared(server: jsemu.Server) -> None:
    server.control.drop("c.9", count=1)
    _learn(server)
    server.control.clear_faults()


async def _trace(server: jsemu.Server) -> None:
    server.start_trace()


async def _queue_policy_set(server: jsemu.Server) -> None:
    server.control.responder_policy("round_robin")


async def _queue_policy_cleared(server: jsemu.Server) -> None:
    server.control.responder_policy("round_robin")
    _learn(server)
    server.control.responder_policy("random")


#: Each state change of ``Change``, done through the API that makes it (the last step is
#: the change under test; earlier steps may re-learn).
CHANGES: dict[str, tuple[Change, Callable[[jsemu.Server], Awaitable[None]]]] = {
    "subscribe": (Change.SUBSCRIBE, _subscribe),
    "unsubscribe": (Change.UNSUBSCRIBE, _unsubscribe),
    "unsub limit": (Change.UNSUB_LIMIT, _unsub_limit),
    "match cache full": (Change.MATCH_CACHE_FULL, _match_cache_full),
    "fault added": (Change.FAULT_RULES, _fault_added),
    "fault removed": (Change.FAULT_RULES, _fault_removed),
    "fault used up": (Change.FAULT_RULES, _fault_used_up),
    "faults cleared": (Change.FAULT_RULES, _faults_cleared),
    "trace started": (Change.TRACE, _trace),
    "queue policy set": (Change.QUEUE_POLICY, _queue_policy_set),
    "queue policy cleared": (Change.QUEUE_POLICY, _queue_policy_cleared),
}


def test_every_listed_change_is_exercised() -> None:
    assert {change for change, _ in CHANGES.values()} == set(Change)


@pytest.mark.parametrize("name", list(CHANGES))
async def test_change_drops_learned_routes_and_reply_plans(
    srv: jsemu.Server, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    change, act = CHANGES[name]
    if change is Change.MATCH_CACHE_FULL:
        monkeypatch.setattr(sublist_module, "_CACHE_MAX", 64)
    _learn(srv)
    assert srv.learned_routes[b"c.1"]  # the lane is open before the change
    epoch = srv.sublist.epoch
    await act(srv)
    assert srv.sublist.epoch > epoch
    assert srv.sublist.last_change is change
    assert not srv.outbound._plans
    # What was relearned before the change (by the steps above) is gone too.
    assert b"c.1" not in srv.learned_routes


# --- skips -------------------------------------------------------------------------


def _api_subjects() -> list[bytes]:
    subjects = [("$JS.API." + ".".join(pattern)).replace("*", "X").encode() for pattern, _ in _HANDLERS]
    return [
        *subjects,
        b"$JS.API.DIRECT.GET.X",
        b"$JS.API.DIRECT.GET.X.a.b",
        b"$JS.API.DIRECT.GETX",
        b"$JS.API.DIRECT.GE",
        b"$JS.API.DIRECT",
        b"$JS.API.INFO",
        b"$JS.API.NOPE",
    ]


async def test_api_skips_only_what_it_declines(srv: jsemu.Server) -> None:
    """The API import's ``skips`` may claim a subject only if its ``deliver`` declines it
    and does nothing: a fast-lane Direct Get must lose nothing by not calling it."""
    js, endpoint = srv.jetstream, srv.jetstream_api
    assert js is not None and endpoint is not None
    api = endpoint.sub.client
    assert api.skips is not None
    skipped = [s for s in _api_subjects() if api.skips(s)]
    assert b"$JS.API.DIRECT.GET.X" in skipped and b"$JS.API.DIRECT.GETX" in skipped
    for subject in _api_subjects():
        before = js.api_total, js.api_errors, srv.sublist.epoch, len(js.streams)
        taken = api.deliver(endpoint.sub, subject, b"_INBOX.skips", -1, b'{"name":"Z"}')
        if subject in skipped:
            assert taken is False, subject
            assert (js.api_total, js.api_errors, srv.sublist.epoch, len(js.streams)) == before, subject
        else:
            assert taken is True, subject


# --- replicated stores refuse bulk appends ------------------------------------------


async def _publish_run(server: jsemu.Server, n: int) -> None:
    """``n`` acknowledged publishes in one write: a fast-lane run."""
    client = await RawClient.connect(server.port, CONNECT)
    client.send(b"SUB _INBOX.acks 1\r\n" + b"".join(b"PUB r.%d _INBOX.acks 1\r\nx\r\n" % (i % 7) for i in range(n)))
    acks = 0
    while acks < n:
        frame = await client.next_frame(5.0)
        assert frame is not None
        acks += frame.startswith(b"MSG _INBOX.acks")
    client.writer.close()


async def test_followers_get_every_message_of_a_fast_lane_run() -> None:
    async with jsemu.Server(cluster_size=3) as server:
        js, api = server.jetstream, server.jetstream_api
        assert js is not None and api is not None
        reply = api.call("$JS.API.STREAM.CREATE.R", {"name": "R", "subjects": ["r.>"], "num_replicas": 3})
        assert "error" not in reply, reply
        await _publish_run(server, 1)  # the store is not empty: runs may go in bulk
        await _publish_run(server, 200)
        peers = server.control.peers("R")
        assert len(peers) == 3
        for peer in js.streams["R"].replicas.peers:
            assert peer.store.last_seq == 201, peer


async def test_persisted_stream_keeps_every_message_of_a_fast_lane_run(tmp_path: Path) -> None:
    async with jsemu.Server(store_dir=str(tmp_path)) as server:
        assert server.jetstream_api is not None
        reply = server.jetstream_api.call("$JS.API.STREAM.CREATE.R", {"name": "R", "subjects": ["r.>"]})
        assert "error" not in reply, reply
        await _publish_run(server, 1)
        await _publish_run(server, 200)
    await asyncio.sleep(0)
    async with jsemu.Server(store_dir=str(tmp_path)) as server:
        assert server.jetstream_api is not None
        info = server.jetstream_api.call("$JS.API.STREAM.INFO.R")
        assert info["state"]["messages"] == 201, info
