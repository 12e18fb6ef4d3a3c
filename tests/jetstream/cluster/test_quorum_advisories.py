"""jsemu-only: quorum-lost advisories of the simulated cluster, against what a real 3-node
nats-server 2.15.1 cluster sent (three ``nats-server -c`` processes, file store under /tmp,
routes on 127.0.0.1; an R3 stream ``S`` and an R3 durable ``D`` whose leaders were moved to
the same server; a client on that server subscribed to ``$JS.EVENT.ADVISORY.>``; the two
other servers stopped one after the other, 26 s apart; recorded below).

What the real cluster did:

* one server of three down (the quorum stays): no advisory, the leader stays;
* the second down: nothing for 16.9 s, then ``STREAM.QUORUM_LOST.S`` and
  ``CONSUMER.QUORUM_LOST.S.D`` at exactly 50 s after each group's leader was elected (the
  leader's 10 s lost-quorum ticker); ``STREAM.INFO`` then shows no ``leader`` and the three
  peers, ``CONSUMER.INFO`` answers 503 10008;
* again 14.7 s later (13.6 s for the consumer), then every 20.5 s or so while stalled, each
  with every peer ``active`` 0 (a candidate's signal);
* a server back: ``LEADER_ELECTED`` for both, no more ``QUORUM_LOST``.

Under SIGTERM the peers that left are ``offline`` (jsemu's peer down); under SIGKILL the
remaining server does not know, so no ``offline`` (``REAL_STREAM_LOST_KILLED``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client

import jsemu
from jsemu.jetstream.cluster import quorum as quorum_advisories
from jsemu.timefmt import parse_rfc3339_ns

pytestmark = pytest.mark.fake_only

S = 1_000_000_000

#: Recorded (SIGTERM; ids, times and order of the replicas vary): the leader's step-down.
REAL_STREAM_LOST = {
    "type": "io.nats.jetstream.advisory.v1.stream_quorum_lost",
    "id": "YSVL9Kazj8C2KuQzXPgNcD",
    "timestamp": "2026-11-26T05:20:45.529624346Z",
    "stream": "S",
    "replicas": [
        {"name": "n1", "current": False, "offline": True, "active": 42994929793, "peer": "fjFyEjc1"},
        {"name": "n2", "current": False, "offline": True, "active": 16999993388, "peer": "44jzkV9D"},
        {"name": "n3", "current": True, "active": 50003665525, "peer": "BXScrY9i"},
    ],
}
REAL_CONSUMER_LOST = {
    "type": "io.nats.jetstream.advisory.v1.consumer_quorum_lost",
    "id": "YSVL9Kazj8C2KuQzXPgNgz",
    "timestamp": "2026-11-26T05:20:45.60027134Z",
    "stream": "S",
    "consumer": "D",
    "replicas": [
        {"name": "n1", "current": False, "offline": True, "active": 42998403539, "peer": "fjFyEjc1"},
        {"name": "n2", "current": False, "offline": True, "active": 16998891558, "peer": "44jzkV9D"},
        {"name": "n3", "current": True, "active": 50002992526, "peer": "BXScrY9i"},
    ],
}
#: The candidate's signal 14.7 s later: every peer's last-heard time was reset.
REAL_STREAM_LOST_AGAIN = {
    "type": "io.nats.jetstream.advisory.v1.stream_quorum_lost",
    "id": "YSVL9Kazj8C2KuQzXPgOvN",
    "timestamp": "2026-11-26T05:21:00.265033342Z",
    "stream": "S",
    "replicas": [
        {"name": "n1", "current": False, "offline": True, "active": 0, "peer": "fjFyEjc1"},
        {"name": "n2", "current": False, "offline": True, "active": 0, "peer": "44jzkV9D"},
        {"name": "n3", "current": True, "active": 0, "peer": "BXScrY9i"},
    ],
}
#: SIGKILL instead: the same, without ``offline``.
REAL_STREAM_LOST_KILLED = {
    "type": "io.nats.jetstream.advisory.v1.stream_quorum_lost",
    "id": "7tvpwjW3TQYAIEARAFkH8c",
    "timestamp": "2026-11-26T05:18:07.669009273Z",
    "stream": "S",
    "replicas": [
        {"name": "n1", "current": True, "active": 50002350019, "peer": "fjFyEjc1"},
        {"name": "n3", "current": False, "active": 16000569484, "peer": "BXScrY9i"},
        {"name": "n2", "current": False, "active": 41999995936, "peer": "44jzkV9D"},
    ],
}
#: Times the real cluster sent them, in seconds after the second server went down
#: (stream: 50 s, 64.7 s and 85.2 s after its leader was elected).
REAL_STREAM_TIMES = [16.87, 31.61, 52.07]
REAL_CONSUMER_TIMES = [16.94, 30.58, 51.35, 71.69]
#: ``STREAM.INFO``'s cluster block meanwhile (SIGTERM, before the candidate's first campaign).
REAL_STALLED_INFO = {
    "name": "C",
    "raft_group": "S-R3F-Ev4BXY2z",
    "system_account": True,
    "traffic_account": "$SYS",
    "replicas": [
        {"name": "n1", "current": False, "offline": True, "active": 44152886057, "peer": "fjFyEjc1"},
        {"name": "n2", "current": False, "offline": True, "active": 18157949451, "peer": "44jzkV9D"},
        {"name": "n3", "current": False, "active": 51161620747, "peer": "BXScrY9i"},
    ],
}
REAL_CONSUMER_INFO_STALLED = {
    "type": "io.nats.jetstream.api.v1.consumer_info_response",
    "error": {"code": 503, "err_code": 10008, "description": "JetStream system temporarily unavailable"},
}


def _shape(value: Any) -> Any:
    """Keys in order and value types; replicas as a set of entry shapes (their order varies)."""
    if isinstance(value, dict):
        return [(k, _shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return sorted({json.dumps(_shape(v)) for v in value})
    return type(value).__name__


Event = tuple[int, str, dict[str, Any]]


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[jsemu.Server, Client, list[Event]]]:
    async with jsemu.Server(cluster_size=3, cluster_name="C") as srv:
        srv.control.freeze_clock()
        nc = await nats.connect(srv.url)
        got: list[Event] = []

        async def on_msg(msg: Any) -> None:
            got.append((srv.control.js.clock.now_ns(), msg.subject, json.loads(msg.data)))

        await nc.subscribe("$JS.EVENT.ADVISORY.*.QUORUM_LOST.>", cb=on_msg)
        await nc.subscribe("$JS.EVENT.ADVISORY.*.LEADER_ELECTED.>", cb=on_msg)
        await nc.flush()
        yield srv, nc, got
        await nc.close()


async def _request(nc: Client, subject: str, body: Any = b"") -> dict[str, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply: dict[str, Any] = json.loads((await nc.request(subject, data, timeout=2)).data)
    return reply


async def _setup(srv: jsemu.Server, nc: Client) -> tuple[int, str, list[str]]:
    """S (R3) and D (R3 durable), both led by the same peer; returns (t0, leader, followers)."""
    t0 = srv.control.js.clock.now_ns()
    created = await _request(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
    body = {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}
    consumer = await _request(nc, "$JS.API.CONSUMER.CREATE.S.D", body)
    leader = created["cluster"]["leader"]
    assert consumer["cluster"]["leader"] == leader
    return t0, leader, sorted({"n1", "n2", "n3"} - {leader})


async def _until(srv: jsemu.Server, nc: Client, t0: int, seconds: float) -> None:
    """Move the frozen clock to ``t0 + seconds`` and let the advisories arrive."""
    srv.control.set_clock(t0 + round(seconds * S))
    await nc.flush()
    await asyncio.sleep(0.02)


def _lost(got: list[Event]) -> list[Event]:
    return [e for e in got if ".QUORUM_LOST." in e[1]]


async def test_quorum_lost_as_the_real_cluster(cluster: tuple[jsemu.Server, Client, list[Event]]) -> None:
    srv, nc, got = cluster
    t0, leader, (first, second) = await _setup(srv, nc)
    await _until(srv, nc, t0, 10)
    srv.control.peer_down("S", first)  # one of three: a quorum remains
    for second_ in range(11, 37):
        await _until(srv, nc, t0, second_)
    assert _lost(got) == []
    assert (await _request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] == leader
    got.clear()
    srv.control.peer_down("S", second)  # at 36 s: the leader's tick at 40 s still heard it
    await _until(srv, nc, t0, 49.9)
    assert _lost(got) == []
    assert (await _request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] == leader
    await _until(srv, nc, t0, 50)  # the tick at 50 s: 14 s unheard, the leader steps down
    lost = _lost(got)
    assert [s for _, s, _ in lost] == [
        "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.S",
        "$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.S.D",
    ]
    (_, _, stream_event), (_, _, consumer_event) = lost
    assert _shape(stream_event) == _shape(REAL_STREAM_LOST)
    assert _shape(consumer_event) == _shape(REAL_CONSUMER_LOST)
    for event in (stream_event, consumer_event):
        replicas = {r["name"]: r for r in event["replicas"]}
        assert sorted(replicas) == ["n1", "n2", "n3"]
        assert (replicas[leader]["current"], replicas[leader]["active"]) == (True, 50 * S)
        assert replicas[second]["active"] == 14 * S and replicas[first]["active"] == 40 * S
        assert not replicas[first]["current"] and not replicas[second]["current"]
    # meanwhile: no leader, the three peers; the consumer does not answer; no publishes
    info = (await _request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]
    assert _shape(info) == _shape(REAL_STALLED_INFO)
    assert await _request(nc, "$JS.API.CONSUMER.INFO.S.D") == REAL_CONSUMER_INFO_STALLED
    with pytest.raises(nats.errors.NoRespondersError):
        await nc.request("s.x", b"x", timeout=1)
    # stalled: the candidate signals again (not within 10 s, then every 20 s and a timeout)
    for half in range(101, 261):
        await _until(srv, nc, t0, half / 2)
    for subject, template in (
        ("$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.S", REAL_STREAM_LOST_AGAIN),
        ("$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.S.D", None),
    ):
        events = [(parse_rfc3339_ns(e["timestamp"]), e) for _, s, e in got if s == subject]
        times = [(ts - t0) / S for ts, _ in events]
        assert times[0] == 50
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert len(times) >= 3, times
        assert 10 <= gaps[0] <= 39 and all(20 < g <= 29 for g in gaps[1:]), times
        for _, event in events[1:]:
            if template is not None:
                assert _shape(event) == _shape(template)
            replicas = {r["name"]: r for r in event["replicas"]}
            assert all(r["active"] == 0 for r in replicas.values())
            assert replicas[leader]["current"] and not replicas[first]["current"]
    # a peer back: a quorum, both groups elect, no more QUORUM_LOST
    got.clear()
    srv.control.peer_up("S", second)
    await _until(srv, nc, t0, 130)
    assert sorted(s for _, s, _ in got) == [
        "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.S.D",
        "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.S",
    ]
    for second_ in range(131, 200, 3):
        await _until(srv, nc, t0, second_)
    assert _lost(got) == []
    assert (await _request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] in (leader, second)
    assert "error" not in await _request(nc, "$JS.API.CONSUMER.INFO.S.D")
    assert "error" not in json.loads((await nc.request("s.x", b"x", timeout=1)).data)


async def test_one_of_three_down_sends_nothing(cluster: tuple[jsemu.Server, Client, list[Event]]) -> None:
    srv, nc, got = cluster
    t0, leader, (first, second) = await _setup(srv, nc)
    got.clear()
    srv.control.peer_down("S", first)
    for second_ in range(1, 122, 2):
        await _until(srv, nc, t0, second_)
    assert got == []
    assert (await _request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] == leader
    assert (await _request(nc, "$JS.API.CONSUMER.INFO.S.D"))["cluster"]["leader"] == leader
    # the second at 121 s: the tick at 130 s still heard it, the one at 140 s did not
    srv.control.peer_down("S", second)
    await _until(srv, nc, t0, 139.9)
    assert got == []
    await _until(srv, nc, t0, 140)
    assert [s for _, s, _ in got] == [
        "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.S",
        "$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.S.D",
    ]
    assert all(r["active"] == 19 * S for _, _, e in got for r in e["replicas"] if r["name"] == second)


async def test_nothing_without_a_listener_but_the_group_stalls(monkeypatch: pytest.MonkeyPatch) -> None:
    """No subscriber: no advisory is even built (no event id drawn); the leader still steps down."""
    built: list[str] = []
    original = quorum_advisories.new_event_id

    def counted() -> str:
        built.append("event")
        return str(original())

    monkeypatch.setattr(quorum_advisories, "new_event_id", counted)
    async with jsemu.Server(cluster_size=3, cluster_name="C") as srv:
        srv.control.freeze_clock()
        nc = await nats.connect(srv.url)
        t0, _, (first, second) = await _setup(srv, nc)
        srv.control.peer_down("S", first)
        srv.control.peer_down("S", second)
        for second_ in range(1, 80, 2):
            await _until(srv, nc, t0, second_)
        assert built == []
        assert "leader" not in (await _request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]
        assert (await _request(nc, "$JS.API.CONSUMER.INFO.S.D")) == REAL_CONSUMER_INFO_STALLED
        # the same with a listener: built and sent
        sub = await nc.subscribe("$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.S")
        await nc.flush()
        for second_ in range(80, 140, 2):
            await _until(srv, nc, t0, second_)
        assert built and json.loads((await sub.next_msg(timeout=1)).data)["stream"] == "S"
        await nc.close()


async def test_candidate_signals_throttled_then_every_20s(
    cluster: tuple[jsemu.Server, Client, list[Event]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every election timeout 4 s: the candidate's first check (58 s) is within 10 s of
    the step-down's advisory (throttled, yet it counts as a signal), the next signal comes
    more than 20 s after it (82 s), then 106 s, 130 s."""
    monkeypatch.setattr(quorum_advisories, "election_timeout_ns", lambda: 4 * S)
    srv, nc, got = cluster
    t0, _, (first, second) = await _setup(srv, nc)
    srv.control.peer_down("S", first)
    await _until(srv, nc, t0, 36)
    srv.control.peer_down("S", second)
    for second_ in range(37, 132):
        await _until(srv, nc, t0, second_)
    for subject in ("$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.S", "$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.S.D"):
        times = [(parse_rfc3339_ns(e["timestamp"]) - t0) / S for _, s, e in got if s == subject]
        assert times == [50, 82, 106, 130], (subject, times)


async def test_domain_is_the_last_field() -> None:
    """``Domain string `json:"domain,omitempty"``` comes after ``replicas``."""
    async with jsemu.Server(cluster_size=3, cluster_name="C", domain="hub") as srv:
        srv.control.freeze_clock()
        nc = await nats.connect(srv.url)
        sub = await nc.subscribe("$JS.EVENT.ADVISORY.*.QUORUM_LOST.>")
        await nc.flush()
        t0, _, (first, second) = await _setup(srv, nc)
        srv.control.peer_down("S", first)
        srv.control.peer_down("S", second)
        await _until(srv, nc, t0, 10)
        for expected in (REAL_STREAM_LOST, REAL_CONSUMER_LOST):
            event = json.loads((await sub.next_msg(timeout=1)).data)
            assert list(event) == [*expected, "domain"] and event["domain"] == "hub"
        await nc.close()
