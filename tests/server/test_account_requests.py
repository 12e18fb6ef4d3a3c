"""``$SYS.REQ.ACCOUNT.<acc>.<kind>`` and ``$SYS.REQ.USER.INFO`` side by side with nats-server
2.15.1, the same file given to both: every kind from the system account, the imports every
other account gets (``$SYS.REQ.ACCOUNT.PING.CONNZ``/``STATZ``, ``$SYS.REQ.SERVER.PING.CONNZ``,
``$SYS.REQ.USER.INFO``), bad bodies, unknown accounts and kinds, server filters, and CONNZ
and SUBSZ options drawn by hypothesis.

Normalised: what differs between any two servers (ids, names, times, ports, ``seq``, RTTs)
and the counts that include nats-server's own internal subscriptions (``num_subscriptions``
and the other sublist statistics, ``subscriptions`` of an account); nats-server's internal
subscriptions are left out of SUBSZ lists (jsemu's internal subscribers are not clients)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

import jsemu
from jsemu.config.server_config import load_config
from jsemu.server.account_monitor import SYSTEM_IMPORTS
from jsemu.server.accounts import AccountConfig
from jsemu.threaded import ThreadedServer

from .test_auth import Pair, _RealWithConfig

CONF = """
jetstream {{ store_dir: "{store}" }}
accounts {{
  SYS: {{ users: [ {{user: sys, password: sys}} ] }}
  A: {{
    users: [
      {{user: a, password: a, permissions: {{
        publish: {{allow: ["x.>", "$SYS.>", "_INBOX.>"], deny: ["x.no"]}},
        subscribe: {{allow: ["_INBOX.>", "foo", "x.* q"], deny: ["secret"]}}
      }}}}
      {{user: a2, password: a2, permissions: {{publish: ["$SYS.REQ.USER.INFO"], allow_responses: {{max: 5, expires: "1m"}}}}}}
      {{user: a3, password: a3}}
    ]
    jetstream: enabled
    exports: [ {{service: "svc.>"}}, {{stream: "feed.>"}} ]
  }}
  B: {{
    users: [ {{user: b, password: b}} ]
    imports: [
      {{service: {{account: A, subject: "svc.x"}}, to: "local.x"}}
      {{service: {{account: A, subject: "svc.y"}}}}
      {{stream: {{account: A, subject: "feed.>"}}, prefix: "p"}}
      {{stream: {{account: A, subject: "feed.one"}}, to: "one"}}
    ]
  }}
  C: {{ users: [ {{user: c, password: c}} ] }}
}}
system_account: SYS
"""

#: Values that differ between any two servers (or processes), or count nats-server's internal
#: subscriptions.
_VARYING = frozenset(
    {
        "id",
        "server_id",
        "time",
        "now",
        "start",
        "timestamp",
        "seq",
        "port",
        "rtt",
        "last_activity",
        "idle",
        "uptime",
        "update_time",
        "created",
        "leader",
        "first_ts",
        "last_ts",
        "subscriptions",
        "num_subscriptions",
        "num_cache",
        "num_inserts",
        "num_removes",
        "num_matches",
        "cache_hit_rate",
        "max_fanout",
        "avg_fanout",
        "pending_bytes",
        "out_bytes",
    }
)


#: The account of each user that asks (``me``: the user of a server without accounts).
_ACCOUNT_OF = {"sys": "SYS", "a": "A", "b": "B", "me": "$G"}


def _norm(value: Any, cids: dict[int, str], requester: str = "") -> Any:
    """``value`` with what differs between any two servers replaced by ``"*"``. ``requester``:
    the user who asked, whose own message counts are left out: nats-server adds a read's
    messages to the client's and its account's counts after the read, while the request may
    already be handled on another goroutine (so the request itself is counted, or not)."""
    if isinstance(value, dict):
        out = {k: ("*" if k in _VARYING else _norm(v, cids, requester)) for k, v in value.items()}
        if requester and isinstance(value.get("cid"), int) and cids.get(value["cid"]) == requester:
            out |= {"in_msgs": "*", "in_bytes": "*"}
        if requester and value.get("acc") == _ACCOUNT_OF[requester] and "received" in value:
            out["received"] = "*"
        if isinstance(value.get("cid"), int):  # client ids differ: name the client by its user
            out["cid"] = cids.get(value["cid"], value["cid"])
        if isinstance(value.get("server"), dict):  # the envelope: who answered
            out["server"] = _norm(value["server"], cids, requester) | {"name": "*"}
        if "subscriptions_list" in value and isinstance(value["subscriptions_list"], list):
            subs = [s for s in value["subscriptions_list"] if not isinstance(s, dict) or s.get("cid") in cids]
            out["subscriptions_list"] = sorted((_norm(s, cids, requester) for s in subs), key=json.dumps)
            if not subs:  # omitempty once nats-server's own are left out
                del out["subscriptions_list"]
        for key in ("imports", "exports"):  # nats-server lists them in its maps' order
            if key in value:
                out[key] = sorted(out[key], key=json.dumps)
        if isinstance(value.get("permissions"), dict):  # Go walks its permission sublists in map order
            out["permissions"] = {
                k: {rule: sorted(rules) if isinstance(rules, list) else rules for rule, rules in v.items()}
                for k, v in out["permissions"].items()
            }
        if "num_cache" in value and "total" in value:  # SUBSZ: nats-server counts its own too
            out["total"] = "*"
        if isinstance(value.get("sent"), dict) and "acc" in value:  # replies' sizes follow ids and times
            out["sent"] = out["sent"] | {"bytes": "*"}
        if "account_statz" in value:
            out["account_statz"] = sorted(out["account_statz"], key=lambda s: s["acc"])
        return out
    if isinstance(value, list):
        return [_norm(v, cids, requester) for v in value]
    if isinstance(value, str) and value.startswith("_INBOX."):  # a client's random inbox
        return "_INBOX.*"
    return value


async def _pair(tmp_path: Path, text: str = CONF) -> AsyncIterator[Pair]:
    conf = tmp_path / "server.conf"
    conf.write_text(text.format(store=tmp_path / "real-store"))
    real = _RealWithConfig(conf)
    options = jsemu.ServerOptions(jetstream=False)  # the file turns it on
    load_config(conf, options)
    options.host, options.port, options.store_dir = "127.0.0.1", 0, None
    emu = jsemu.Server(options)
    await emu.start()
    try:
        yield Pair(real, real.port, emu)
    finally:
        await emu.stop()
        real.stop()


async def _connect(port: int, user: str) -> nats.NATS:
    return await nats.connect(f"nats://127.0.0.1:{port}", user=user, password=user, name=f"cl-{user}")


#: Asked after each request: handled in the same queue as the account requests on
#: nats-server (``noInlineCallback``) and always answered, so once its answer is in, an
#: answer to the request before it would be in too.
_BARRIER = ("$SYS.REQ.ACCOUNT.PING.STATZ", b'{"include_unused": true}')


async def _ask(nc: nats.NATS, subject: str, body: bytes = b"", barrier: bool = True) -> Any:
    """The reply, "no responders", or "no reply": nothing had come by the time the barrier
    request after it was answered (a fixed wait would be a race on a loaded machine). The
    barrier goes out once the reply is in (or after 0.3 s), so the counts a later request sees
    are the same on both servers, and no request is handled while the next is in flight."""
    if not barrier:
        try:
            return json.loads((await nc.request(subject, body, timeout=5)).data)
        except NoRespondersError:
            return "no responders"
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    try:
        await nc.publish(subject, body, reply=inbox)
        try:
            msg = await sub.next_msg(timeout=0.3)
        except NatsTimeout:
            msg = None
        await nc.request(*_BARRIER, timeout=10)
        if msg is None:
            try:
                msg = await sub.next_msg(timeout=0.05)
            except NatsTimeout:
                return "no reply"
        if msg.headers and msg.headers.get("Status") == "503":
            return "no responders"
        return json.loads(msg.data)
    finally:
        await sub.unsubscribe()


class _Clients:
    """One connection per user of the file, and the ids nats-server's lists may name."""

    def __init__(self, conns: dict[str, nats.NATS]) -> None:
        self.conns = conns
        self.cids = {nc._client_id: user for user, nc in conns.items() if nc._client_id is not None}

    @classmethod
    async def open(cls, port: int) -> _Clients:
        conns = {user: await _connect(port, user) for user in ("sys", "a", "b")}
        await conns["a"].subscribe("foo")
        await conns["a"].subscribe("x.*", queue="q")
        await conns["a"].flush()
        return cls(conns)

    async def close(self) -> None:
        for nc in self.conns.values():
            await nc.close()


#: (user, subject, body): what each server is asked, in this order.
REQUESTS: list[tuple[str, str, bytes]] = [
    *(("sys", f"$SYS.REQ.ACCOUNT.A.{kind}", b"") for kind in ("SUBSZ", "CONNZ", "LEAFZ", "JSZ", "INFO", "STATZ")),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNS", b""),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNS", b'{"acc":"B"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNS", b"{bad"),
    ("sys", "$SYS.REQ.ACCOUNT.C.CONNS", b""),
    ("sys", "$SYS.REQ.ACCOUNT.SYS.INFO", b""),
    ("sys", "$SYS.REQ.ACCOUNT.B.INFO", b""),
    ("sys", "$SYS.REQ.ACCOUNT.B.JSZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.B.STATZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.C.STATZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.C.STATZ", b'{"include_unused":true}'),
    ("sys", "$SYS.REQ.ACCOUNT.PING.STATZ", b'{"accounts":["A","C"]}'),
    ("sys", "$SYS.REQ.ACCOUNT.PING.STATZ", b'{"accounts":["C"]}'),
    ("sys", "$SYS.REQ.ACCOUNT.PING.CONNZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.NOPE.INFO", b""),
    ("sys", "$SYS.REQ.ACCOUNT.NOPE.CONNZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.NOPE.SUBSZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.NOPE.JSZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.NOPE.LEAFZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.NOPE.STATZ", b'{"include_unused":true}'),
    ("sys", "$SYS.REQ.ACCOUNT.NOPE.CONNS", b""),
    ("sys", "$SYS.REQ.ACCOUNT.A.NOPEZ", b""),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b'{"subscriptions":true,"limit":1}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b'{"state":2,"offset":5}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b"{bad"),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b"[1]"),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b"{} {}"),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b"null"),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b'{"state":"x"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b'{"sort":"bogus"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.CONNZ", b'{"sort":"stop"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.INFO", b'{"server_name":"zzz"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.INFO", b'{"host":"127.0.0.1","exact_match":true}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.INFO", b'{"tags":["t"]}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.INFO", b'{"domain":"d"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.SUBSZ", b'{"test":"foo"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.SUBSZ", b'{"test":"x.*"}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.JSZ", b'{"streams":true,"config":true}'),
    ("sys", "$SYS.REQ.ACCOUNT.A.JSZ", b'{"streams":1}'),
    ("sys", "$SYS.REQ.USER.INFO", b""),
    ("sys", "$SYS.REQ.USER.A.INFO", b""),
    *((user, subject, b"") for user in ("a", "b") for subject in (
        "$SYS.REQ.ACCOUNT.PING.STATZ",
        "$SYS.REQ.ACCOUNT.PING.CONNZ",
        "$SYS.REQ.SERVER.PING.CONNZ",
        "$SYS.REQ.USER.INFO",
        "$SYS.REQ.ACCOUNT.A.INFO",
        "$SYS.REQ.SERVER.PING",
    )),
    ("a", "$SYS.REQ.ACCOUNT.PING.CONNZ", b'{"acc":"B"}'),
    ("a", "$SYS.REQ.ACCOUNT.PING.STATZ", b'{"accounts":["B"]}'),
    ("a", "$SYS.REQ.USER.INFO", b"junk"),
]  # fmt: skip


async def _with_a_stream(port: int) -> None:
    """A stream with one message in account A, made by a client that then leaves."""
    nc = await _connect(port, "a3")
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"])
    await js.publish("s.one", b"hello")
    await nc.close()


async def _answers(port: int) -> list[Any]:
    clients = await _Clients.open(port)
    answers = []
    for user, subject, body in REQUESTS:
        answer = await _ask(clients.conns[user], subject, body)
        answers.append((user, subject, body, _norm(answer, clients.cids, user)))
    await clients.close()
    return answers


async def test_account_requests_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        got: dict[str, list[Any]] = {}
        for kind, port in pair.ports.items():
            await _with_a_stream(port)
            got[kind] = await _answers(port)
        for attempt in range(2):
            # nats-server under load now and then answers a SUBSZ without a subscription its
            # flushed client had made: asked again (a new nats-server: the counts add up),
            # jsemu's answers must be ones it gives.
            if got["jsemu"] == got["real"]:
                break
            conf = tmp_path / f"again{attempt}.conf"
            conf.write_text(CONF.format(store=tmp_path / f"again{attempt}-store"))
            again = _RealWithConfig(conf)
            try:
                await _with_a_stream(again.port)
                got["real"] = await _answers(again.port)
            finally:
                again.stop()
        for real, emu in zip(got["real"], got["jsemu"], strict=True):
            assert emu == real, f"\njsemu {json.dumps(emu, default=repr)}\nreal  {json.dumps(real, default=repr)}"


async def test_user_info_with_response_permissions(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):
        got = {}
        for kind, port in pair.ports.items():
            nc = await _connect(port, "a2")
            got[kind] = _norm(await _ask(nc, "$SYS.REQ.USER.INFO", barrier=False), {})
            await nc.close()
        assert got["jsemu"] == got["real"]
        assert got["real"]["data"]["permissions"]["responses"] == {"max": 5, "ttl": 60_000_000_000}


async def test_no_responders_through_a_filtered_inbox(tmp_path: Path) -> None:
    """User ``a`` has a subscribe deny list, so its wildcard request inbox is filtered: an
    account request nobody in its account answers still gets the 503 (no system import)."""
    async for pair in _pair(tmp_path):
        for port in pair.ports.values():
            nc = await _connect(port, "a")
            assert await _ask(nc, "$SYS.REQ.ACCOUNT.A.INFO", barrier=False) == "no responders"
            await nc.close()


#: CONNZ options jsemu applies (``state`` open only: each example leaves closed clients of
#: its own behind, whose ids the normalisation cannot name).
_CONNZ_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "offset": st.integers(-2, 4),
        "limit": st.integers(-1, 4),
        "subscriptions": st.booleans(),
        "state": st.just(0),
        "acc": st.sampled_from(["A", "B", "NOPE"]),
        "server_name": st.sampled_from(["", "N", "zzz"]),
    },
)
#: SUBSZ options (no ``offset`` and ``limit``: nats-server pages a list in its sublist's map
#: order, its internal subscriptions included, which no other server can reproduce).
_SUBSZ_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "subscriptions": st.booleans(),
        "test": st.sampled_from(["foo", "x.y", "x", "bar", "x.*", "_INBOX.z", ""]),
        "account": st.sampled_from(["B", "A"]),
    },
)
_REQUEST = st.tuples(st.sampled_from(["A", "B", "SYS", "PING"]), st.sampled_from(["CONNZ", "SUBSZ"])).flatmap(
    lambda target: st.tuples(
        st.just(target),
        (_CONNZ_OPTIONS if target[1] == "CONNZ" else _SUBSZ_OPTIONS).map(lambda o: json.dumps(o).encode()),
    )
)


@pytest.fixture(scope="module")
def pair_ports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, int]]:
    """One nats-server and one jsemu (on a thread) for every example."""
    tmp = tmp_path_factory.mktemp("account-requests")
    conf = tmp / "server.conf"
    conf.write_text(CONF.format(store=tmp / "real-store"))
    real = _RealWithConfig(conf)
    options = jsemu.ServerOptions(jetstream=False)  # the file turns it on
    load_config(conf, options)
    options.host, options.port, options.store_dir = "127.0.0.1", 0, None
    try:
        with ThreadedServer(jsemu.Server(options)) as emu:
            yield {"real": real.port, "jsemu": emu.port}
    finally:
        real.stop()


async def _ask_all(port: int, requests: list[tuple[tuple[str, str], bytes]]) -> list[Any]:
    clients = await _Clients.open(port)
    try:
        return [
            _norm(await _ask(clients.conns["sys"], f"$SYS.REQ.ACCOUNT.{account}.{kind}", body), clients.cids, "sys")
            for (account, kind), body in requests
        ]
    finally:
        await clients.close()


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(requests=st.lists(_REQUEST, min_size=1, max_size=4))
def test_connz_and_subsz_options_as_nats_server(
    pair_ports: dict[str, int], requests: list[tuple[tuple[str, str], bytes]]
) -> None:
    got = {kind: asyncio.run(_ask_all(port, requests)) for kind, port in pair_ports.items()}
    for _ in range(2):
        # nats-server under load once answered a SUBSZ without a subscription its flushed
        # client had made: asked again, jsemu's answer must be one nats-server gives.
        if got["jsemu"] == got["real"]:
            break
        got["real"] = asyncio.run(_ask_all(pair_ports["real"], requests))
    assert got["jsemu"] == got["real"], f"\njsemu {json.dumps(got['jsemu'])}\nreal  {json.dumps(got['real'])}"


@pytest.mark.parametrize("auth", ["", "authorization {{ user: u, password: p }}"], ids=["anonymous", "user"])
async def test_global_account_answers_without_accounts(auth: str, tmp_path: Path) -> None:
    """nats-server's ``$SYS`` account always exists, so the users of ``$G`` on a server with no
    accounts get the system imports too (``$SYS.REQ.ACCOUNT.<acc>`` itself has no responder
    they can reach)."""
    async for pair in _pair(tmp_path, auth):
        got: dict[str, list[Any]] = {}
        for kind, port in pair.ports.items():
            nc = await nats.connect(f"nats://127.0.0.1:{port}", user="u" if auth else None, password="p")
            cids = {nc._client_id: "me"} if nc._client_id is not None else {}
            got[kind] = [
                _norm(await _ask(nc, subject), cids, "me")
                for subject in (
                    "$SYS.REQ.USER.INFO",
                    "$SYS.REQ.ACCOUNT.PING.STATZ",
                    "$SYS.REQ.ACCOUNT.PING.CONNZ",
                    "$SYS.REQ.SERVER.PING.CONNZ",
                    "$SYS.REQ.ACCOUNT.$G.INFO",
                )
            ]
            await nc.close()
        assert got["jsemu"] == got["real"], f"\njsemu {json.dumps(got['jsemu'])}\nreal  {json.dumps(got['real'])}"


async def test_an_account_a_reload_adds_gets_the_system_imports() -> None:
    options = jsemu.ServerOptions(host="127.0.0.1", port=0, jetstream=False)
    options.accounts = [AccountConfig("A")]
    server = await jsemu.Server(options).start()
    try:
        server.account_space.reload([AccountConfig("A"), AccountConfig("D")])
        added = server.account_space.by_name["D"]
        for subject, _, _ in SYSTEM_IMPORTS:
            assert len(added.sublist.match(subject.encode()).psubs) == 1
        # and the accounts kept are not subscribed twice
        assert len(server.account_space.by_name["A"].sublist.match(b"$SYS.REQ.USER.INFO").psubs) == 1
    finally:
        await server.stop()
