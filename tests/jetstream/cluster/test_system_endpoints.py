"""jsemu-only: the system account's ``$JS.API`` endpoints in the simulated cluster
(``cluster_size=3``), against the replies of a real 3-node nats-server 2.15.1 cluster (three
``nats-server -c`` processes with routes on localhost, a system account ``SYS``, an account
``A`` with JetStream, an account ``B`` without; the bytes below are its). Only the system
account is answered, but a stream move or cancel asked by the stream's own account; the
meta leader steps down (``DOMAIN.LEADER_ELECTED`` in the system account); an account purge
deletes every stream; what jsemu cannot do (remove a server, move a replica, lower the meta
quorum) is refused with an error that says so."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest

import jsemu
from jsemu.config.server_config import load_config
from jsemu.ids import get_hash

pytestmark = pytest.mark.fake_only

CONF = """
jetstream: enabled
accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  A: { users: [ {user: a, password: a} ], jetstream: enabled }
  B: { users: [ {user: b, password: b} ] }
}
system_account: SYS
"""

_T = "io.nats.jetstream.api.v1."
BAD_JSON = "invalid JSON: invalid character 'b' looking for beginning of object key string at offset 2"


def _err(kind: str, code: int, err_code: int, description: str) -> str:
    body = {"type": _T + kind, "error": {"code": code, "err_code": err_code, "description": description}}
    return json.dumps(body, separators=(",", ":"))


STEP = "meta_leader_stepdown_response"
REMOVE = "meta_server_remove_response"
EVACUATE = "meta_server_evacuate_response"
MOVE = "stream_update_response"
CANCEL = "stream_cancel_move_response"
PURGE = "account_purge_response"
#: (user, subject after $JS.API., request, the real cluster's reply or None for no reply).
REAL_REPLIES: list[tuple[str, str, bytes, str | None]] = [
    ("a", "META.LEADER.STEPDOWN", b"", None),
    ("a", "SERVER.REMOVE", b'{"server":"n9"}', None),
    ("a", "ACCOUNT.PURGE.A", b"", None),
    ("a", "ACCOUNT.STREAM.MOVE.A.S", b"{}", _err(MOVE, 400, 10005, "no suitable peers for placement")),
    ("a", "ACCOUNT.STREAM.CANCEL_MOVE.A.S", b"", _err(CANCEL, 400, 10129, "stream reconfiguration not in progress")),
    ("b", "META.LEADER.STEPDOWN", b"", None),
    ("b", "ACCOUNT.STREAM.MOVE.A.S", b"{}", None),
    ("b", "ACCOUNT.STREAM.CANCEL_MOVE.A.S", b"", None),
    ("b", "ACCOUNT.STREAM.MOVE.B.S", b"{}", _err(MOVE, 404, 10059, "stream not found")),
    ("b", "ACCOUNT.STREAM.CANCEL_MOVE.B.S", b"", _err(CANCEL, 404, 10059, "stream not found")),
    ("a", "ACCOUNT.STREAM.MOVE.B.S", b"{}", None),
    ("sys", "ACCOUNT.STREAM.MOVE.SYS.S", b"{}", _err(MOVE, 404, 10059, "stream not found")),
    (
        "sys",
        "META.LEADER.STEPDOWN",
        b'{"placement":{"preferred":"n1"}}',
        _err(STEP, 400, 10005, 'preferred server "n1" is already leader'),
    ),
    (
        "b",
        "STREAM.PEER.REMOVE.S",
        b'{"peer":"n2"}',
        _err("stream_remove_peer_response", 503, 10039, "JetStream not enabled for account"),
    ),
    ("sys", "META.LEADER.STEPDOWN", b"{bad", _err(STEP, 400, 10025, BAD_JSON)),
    (
        "sys",
        "META.LEADER.STEPDOWN",
        b'{"placement":{"preferred":"zz"}}',
        _err(STEP, 400, 10005, 'preferred server "zz" not known'),
    ),
    ("sys", "SERVER.REMOVE", b"", _err(REMOVE, 400, 10003, "bad request")),
    ("sys", "SERVER.REMOVE", b"{}", _err(REMOVE, 400, 10003, "bad request")),
    ("sys", "SERVER.REMOVE", b"{bad", _err(REMOVE, 400, 10025, BAD_JSON)),
    (
        "sys",
        "SERVER.REMOVE",
        b'{"server":"zz"}',
        _err(REMOVE, 400, 10025, 'invalid JSON: json: unknown field "server"'),
    ),
    ("sys", "SERVER.REMOVE", b'{"peer":"zz"}', _err(REMOVE, 400, 10044, "server is not a member of the cluster")),
    # "peer" is a server name, "peer_id" a peer id (the 8-character hash of the name).
    ("sys", "SERVER.REMOVE", b'{"peer":"44jzkV9D"}', _err(REMOVE, 400, 10044, "server is not a member of the cluster")),
    (
        "sys",
        "SERVER.EVACUATE",
        b'{"peer_id":"zz"}',
        _err(EVACUATE, 400, 10044, "server is not a member of the cluster"),
    ),
    ("sys", "SERVER.EVACUATE", b'{"tags":[]}', _err(EVACUATE, 400, 10025, 'invalid JSON: json: unknown field "tags"')),
    (
        "sys",
        "META.LEADER.STEPDOWN",
        b'{"placement":{"cluster":"x"}}',
        _err(STEP, 400, 10005, "no replacement peer connected"),
    ),
    (
        "sys",
        "META.LEADER.STEPDOWN",
        b'{"placement":{"tags":["x"]}}',
        _err(STEP, 400, 10005, "no replacement peer connected"),
    ),
    ("sys", "ACCOUNT.STREAM.MOVE.A.S", b'{"tags":["x"]}', _err(MOVE, 400, 10005, "no suitable peers for placement")),
    (
        "sys",
        "ACCOUNT.STREAM.MOVE.A.S",
        b'{"server":"n1","cluster":"zz"}',
        _err(MOVE, 400, 10044, "server is not a member of the cluster"),
    ),
    ("sys", "SERVER.EVACUATE", b"", _err(EVACUATE, 400, 10003, "bad request")),
    (
        "sys",
        "SERVER.EVACUATE",
        b'{"server":"zz"}',
        _err(EVACUATE, 400, 10025, 'invalid JSON: json: unknown field "server"'),
    ),
    ("sys", "ACCOUNT.PURGE.A/x", b"", _err(PURGE, 500, 10051, "account name can not contain path separators")),
    ("sys", "ACCOUNT.PURGE.NOPE", b"", json.dumps({"type": _T + PURGE, "initiated": True}, separators=(",", ":"))),
    ("sys", "ACCOUNT.STREAM.MOVE.A.S", b"{bad", _err(MOVE, 400, 10025, BAD_JSON)),
    ("sys", "ACCOUNT.STREAM.MOVE.NOPE.S", b"{}", _err(MOVE, 503, 10035, "account not found")),
    ("sys", "ACCOUNT.STREAM.MOVE.A.X", b"{}", _err(MOVE, 404, 10059, "stream not found")),
    (
        "sys",
        "ACCOUNT.STREAM.MOVE.A.S",
        b'{"server":"zz"}',
        _err(MOVE, 400, 10044, "server is not a member of the cluster"),
    ),
    ("sys", "ACCOUNT.STREAM.MOVE.A.S", b"{}", _err(MOVE, 400, 10005, "no suitable peers for placement")),
    ("sys", "ACCOUNT.STREAM.CANCEL_MOVE.NOPE.S", b"", _err(CANCEL, 503, 10035, "account not found")),
    ("sys", "ACCOUNT.STREAM.CANCEL_MOVE.A.X", b"", _err(CANCEL, 404, 10059, "stream not found")),
    ("sys", "ACCOUNT.STREAM.CANCEL_MOVE.A.S", b"", _err(CANCEL, 400, 10129, "stream reconfiguration not in progress")),
    ("sys", "INFO", b"", _err("account_info_response", 503, 10039, "JetStream not enabled for account")),
    (
        "sys",
        "STREAM.PEER.REMOVE.S",
        b'{"peer":"n2"}',
        _err("system_response", 503, 10039, "JetStream not enabled for account"),
    ),
]


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[jsemu.Server, dict[str, nats.NATS]]]:
    conf = tmp_path / "server.conf"
    conf.write_text(CONF)
    options = jsemu.ServerOptions(cluster_size=3, cluster_name="c")
    load_config(conf, options)
    options.host, options.port = "127.0.0.1", 0
    async with jsemu.Server(options) as srv:
        conns = {u: await nats.connect(srv.url, user=u, password=u) for u in ("a", "b", "sys")}
        a = conns["a"]
        await a.request("$JS.API.STREAM.CREATE.S", b'{"name":"S","subjects":["s"],"num_replicas":3}', timeout=2)
        await a.request("$JS.API.STREAM.CREATE.R1", b'{"name":"R1","subjects":["r1"]}', timeout=2)
        durable = b'{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}'
        await a.request("$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable, timeout=2)
        yield srv, conns
        for nc in conns.values():
            await nc.close()


async def _replies(conns: dict[str, nats.NATS], requests: list[tuple[str, str, bytes]]) -> dict[int, list[str]]:
    got: dict[int, list[str]] = {}
    for user, nc in conns.items():

        async def seen(msg: Any) -> None:
            got.setdefault(int(msg.subject.rsplit(".", 1)[1]), []).append(msg.data.decode())

        await nc.subscribe(f"r.{user}.>", cb=seen)
        await nc.flush()
    for i, (user, subject, body) in enumerate(requests):
        await conns[user].publish(f"$JS.API.{subject}", body, reply=f"r.{user}.{i}")
    for nc in conns.values():
        await nc.flush()
    await asyncio.sleep(0.2)
    return got


async def test_replies_are_the_real_clusters(cluster: tuple[jsemu.Server, dict[str, nats.NATS]]) -> None:
    _srv, conns = cluster
    got = await _replies(conns, [(u, s, b) for u, s, b, _ in REAL_REPLIES])
    for i, (user, subject, body, real) in enumerate(REAL_REPLIES):
        assert got.get(i) == ([real] if real is not None else None), (user, subject, body)


async def test_meta_rescue_is_answered_by_every_server_up(
    cluster: tuple[jsemu.Server, dict[str, nats.NATS]],
) -> None:
    srv, conns = cluster
    srv.control.node_down("n3")
    got = await _replies(conns, [("sys", "META.RESCUE", b""), ("sys", "META.RESCUE", b'{"quorum_needed":1}')])
    empty = [json.loads(r) for r in got[0]]
    assert [(r["server"], r["error"]["err_code"]) for r in empty] == [("n1", 10003), ("n2", 10003)]
    assert list(empty[0]) == ["type", "error", "server", "server_id"]  # the real reply's keys
    assert empty[0]["server_id"] == srv.nodes[0].server_id
    rescued = [json.loads(r)["error"] for r in got[1]]
    leader_known = {
        "code": 400,
        "err_code": 10224,
        "description": "JetStream system rescue not applied: raft: leader is known",
    }
    assert rescued == [leader_known, leader_known]  # the real cluster's answer while it has a leader
    srv.control.node_down("n2")  # no quorum, no leader: a rescue jsemu does not make
    got = await _replies(conns, [("sys", "META.RESCUE", b'{"quorum_needed":1}')])
    [refused] = [json.loads(r) for r in got[0]]
    assert refused["server"] == "n1" and "does not implement" in refused["error"]["description"]


async def test_meta_leader_steps_down(cluster: tuple[jsemu.Server, dict[str, nats.NATS]]) -> None:
    _srv, conns = cluster
    sys = conns["sys"]
    elected: list[dict[str, Any]] = []

    async def seen(msg: Any) -> None:
        elected.append(json.loads(msg.data))

    await sys.subscribe("$JS.EVENT.ADVISORY.DOMAIN.LEADER_ELECTED", cb=seen)
    await conns["a"].subscribe("$JS.EVENT.ADVISORY.DOMAIN.LEADER_ELECTED", cb=seen)  # not the account's
    ok = {"type": _T + STEP, "success": True}
    assert json.loads((await sys.request("$JS.API.META.LEADER.STEPDOWN", b"", timeout=2)).data) == ok
    preferred = b'{"placement":{"preferred":"n3"}}'
    assert json.loads((await sys.request("$JS.API.META.LEADER.STEPDOWN", preferred, timeout=2)).data) == ok
    again = json.loads((await sys.request("$JS.API.META.LEADER.STEPDOWN", preferred, timeout=2)).data)
    assert again["error"] == {"code": 400, "err_code": 10005, "description": 'preferred server "n3" is already leader'}
    await sys.flush()
    await asyncio.sleep(0.1)
    assert [e["leader"] for e in elected] == [get_hash("n2"), get_hash("n3")]
    first = elected[0]
    assert list(first) == ["type", "id", "timestamp", "leader", "replicas", "cluster"]
    assert first["type"] == "io.nats.jetstream.advisory.v1.domain_leader_elected" and first["cluster"] == "c"
    assert {r["name"] for r in first["replicas"]} == {"n1", "n2", "n3"}
    assert list(first["replicas"][0]) == ["name", "current", "active", "peer"]


async def test_a_move_or_a_removal_is_refused_not_ignored(
    cluster: tuple[jsemu.Server, dict[str, nats.NATS]],
) -> None:
    _srv, conns = cluster
    sys = conns["sys"]
    info = json.loads((await conns["a"].request("$JS.API.STREAM.INFO.R1", b"", timeout=2)).data)
    home = info["cluster"]["leader"]
    member = json.dumps({"peer_id": get_hash(home)}).encode()
    for subject, body in (
        ("SERVER.REMOVE", member),
        ("SERVER.EVACUATE", member),  # the R1 stream's only replica would move: refused
        ("ACCOUNT.STREAM.MOVE.A.R1", b"{}"),
    ):
        reply = json.loads((await sys.request(f"$JS.API.{subject}", body, timeout=2)).data)
        assert reply["error"]["err_code"] == 10051 and "does not implement" in reply["error"]["description"]
    # A server whose groups all span the cluster has nowhere to go: nats-server answers success.
    other = next(n for n in ("n1", "n2", "n3") if n != home)
    evacuate = json.dumps({"peer": other}).encode()
    reply = json.loads((await sys.request("$JS.API.SERVER.EVACUATE", evacuate, timeout=2)).data)
    assert reply == {"type": _T + EVACUATE, "success": True}


async def test_account_purge_deletes_every_stream(cluster: tuple[jsemu.Server, dict[str, nats.NATS]]) -> None:
    _srv, conns = cluster
    a, sys = conns["a"], conns["sys"]
    events: list[str] = []

    async def seen(msg: Any) -> None:
        events.append(msg.subject)

    await a.subscribe("$JS.EVENT.ADVISORY.*.DELETED.>", cb=seen)
    await a.flush()
    reply = json.loads((await sys.request("$JS.API.ACCOUNT.PURGE.A", b"", timeout=2)).data)
    assert reply == {"type": _T + PURGE, "initiated": True}
    names = json.loads((await a.request("$JS.API.STREAM.NAMES", b"", timeout=2)).data)
    assert names["streams"] is None and names["total"] == 0
    await a.flush()
    await asyncio.sleep(0.1)
    assert sorted(events) == [
        "$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.D",
        "$JS.EVENT.ADVISORY.STREAM.DELETED.R1",
        "$JS.EVENT.ADVISORY.STREAM.DELETED.S",
    ]


async def test_an_accounts_own_move_is_audited_in_its_account(
    cluster: tuple[jsemu.Server, dict[str, nats.NATS]],
) -> None:
    """As the real cluster sent it: the audit of A's ``ACCOUNT.STREAM.MOVE.A.X`` goes to A, with
    A's client in it; the system account's to the system account, with ``client`` ``{}``."""
    _srv, conns = cluster
    audits: dict[str, list[dict[str, Any]]] = {"a": [], "sys": []}
    for user in ("a", "sys"):

        async def seen(msg: Any, into: list[dict[str, Any]] = audits[user]) -> None:
            into.append(json.loads(msg.data))

        await conns[user].subscribe("$JS.EVENT.ADVISORY.API", cb=seen)
        await conns[user].flush()
    await conns["a"].request("$JS.API.ACCOUNT.STREAM.MOVE.A.X", b"{}", timeout=2)
    await conns["sys"].request("$JS.API.ACCOUNT.STREAM.MOVE.A.X", b"{}", timeout=2)
    await asyncio.sleep(0.1)
    [mine], [system] = audits["a"], audits["sys"]
    assert mine["subject"] == system["subject"] == "$JS.API.ACCOUNT.STREAM.MOVE.A.X"
    assert mine["client"]["acc"] == "A" and mine["client"]["user"] == "a"
    assert system["client"] == {} and system["server"] == "n1" and system["request"] == "{}"
    assert json.loads(system["response"])["error"]["err_code"] == 10059
