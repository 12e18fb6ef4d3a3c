"""The console's JSON API (``/console/api/...``) and pages, asked over HTTP of a jsemu started
in a thread and filled by nats-py: what each view shows, the message browser against the
Direct Get request it names (hypothesis: the same messages as that request answers), the
control actions and their refusals, the live tail's events and its bounded queue.

Captured from nats-server 2.15.1 (``-m``): ``/`` is an HTML page (``text/html``) linking
``./varz``, ``./jsz``, ``./connz``, ``./subsz``, ``./routez``, ``./healthz`` (and more);
``/console`` is ``404 page not found``. jsemu's ``/`` links the same endpoints and its
console first.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import nats
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsemu import Server
from jsemu.console.tail import Tail
from jsemu.server.sublist import Sublist
from tests.support.servers import RealServer

SUBJECTS = ["orders.eu.1", "orders.eu.2", "orders.us.1", "audit"]
N = 40


class Console:
    def __init__(self, threaded: Any) -> None:
        self.threaded = threaded
        self.base = threaded.monitor_urls[0]
        self.nats_url = f"nats://127.0.0.1:{threaded.port}"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.base + path, timeout=10) as resp:
            return json.load(resp)

    def status(self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        req = urllib.request.Request(
            self.base + path, data=data, headers=headers or {}, method="POST" if data is not None else "GET"
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def post(self, method: str, args: dict[str, Any] | None = None) -> Any:
        code, body = self.status(
            f"/console/api/control/{method}", json.dumps(args or {}).encode(), {"Content-Type": "application/json"}
        )
        assert code == 200, body
        return json.loads(body)


async def _fill(url: str) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>", "audit"], allow_direct=True)
    for i in range(N):
        subject = SUBJECTS[i % len(SUBJECTS)]
        payload = json.dumps({"n": i}).encode() if i % 5 else bytes([0xFF, i])
        await js.publish(subject, payload, headers={"X-N": str(i)})
    await js.add_stream(name="PLAIN", subjects=["plain"])  # no allow_direct: browsable all the same
    await js.publish("plain", b"hello")
    await js.pull_subscribe("orders.eu.>", durable="eu", stream="ORDERS")
    kv = await js.create_key_value(bucket="cfg", history=5)
    await kv.put("color", b"red")
    await kv.put("color", b"blue")
    await kv.put("size", b"L")
    await kv.delete("size")
    obj = await js.create_object_store("files")
    await obj.put("big.bin", b"x" * 300_000)
    await nc.close()


@pytest.fixture(scope="module")
def console() -> Iterator[Console]:
    threaded = Server.in_thread(jetstream=True, http_port=-1)
    try:
        con = Console(threaded)
        asyncio.run(_fill(con.nats_url))
        yield con
    finally:
        threaded.stop()


def test_home_page_links_the_console_and_the_endpoints(console: Console) -> None:
    with urllib.request.urlopen(console.base + "/", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/html")
        page = resp.read().decode().replace('"', "")
    links = [link for link in page.split("href=")[1:] if link.startswith("./")]
    assert links[0].startswith("./console>")  # jsemu's own page first
    for link in ("./varz", "./jsz", "./connz", "./subsz", "./routez", "./healthz"):
        assert f"href={link}" in page


@pytest.mark.parametrize("kind", ["real", "jsemu"])
def test_home_page_is_html_linking_the_same_endpoints_on_both_servers(kind: str) -> None:
    server = RealServer(jetstream=False, jsemu_process=kind == "jsemu", conf_text="http_port: -1")
    try:
        with urllib.request.urlopen(server.monitor_url + "/", timeout=10) as resp:
            assert resp.status == 200 and resp.headers["Content-Type"] == "text/html; charset=utf-8"
            page = resp.read().decode().replace('"', "")
        for link in ("./varz", "./jsz", "./connz", "./subsz", "./routez", "./healthz"):
            assert f"href={link}" in page
        with urllib.request.urlopen(server.monitor_url + "/varz", timeout=10) as resp:
            assert resp.status == 200
        code = 200
        try:
            urllib.request.urlopen(server.monitor_url + "/console", timeout=10).close()
        except urllib.error.HTTPError as exc:
            code = exc.code
        assert code == (404 if kind == "real" else 200)  # the console is jsemu's own
    finally:
        server.stop()


def test_static_assets_are_served_from_the_package(console: Console) -> None:
    for path, ctype in [
        ("/console", "text/html"),
        ("/console/console.js", "text/javascript"),
        ("/console/console.css", "text/css"),
    ]:
        with urllib.request.urlopen(console.base + path, timeout=10) as resp:
            assert resp.headers["Content-Type"].startswith(ctype)
            assert resp.read()
    assert console.status("/console/nope")[0] == 404
    assert console.status("/varz")[0] == 200  # the monitor's own endpoints are untouched


def test_overview_shows_the_servers_figures_as_varz_does(console: Console) -> None:
    over = console.get("/console/api/overview")
    varz = console.get("/varz")
    for key in ("server_id", "version", "start", "total_connections", "in_msgs", "in_bytes"):
        assert over[key] == varz[key], key
    assert over["jetstream"] is True and over["control"] is True
    assert set(over["clock"]) == {"now_ns", "now", "frozen", "controlled"}


def test_streams_list_names_and_counts(console: Console) -> None:
    rows = {s["name"]: s for s in console.get("/console/api/streams")["streams"]}
    assert set(rows) == {"ORDERS", "PLAIN", "KV_cfg", "OBJ_files"}
    assert rows["ORDERS"]["messages"] == N and rows["ORDERS"]["last_seq"] == N
    assert rows["ORDERS"]["consumers"] == 1 and rows["ORDERS"]["num_subjects"] == len(SUBJECTS)


def test_stream_subjects_with_counts_and_a_filter(console: Console) -> None:
    info = console.get("/console/api/streams/ORDERS")
    assert info["subjects"] == [{"subject": s, "count": N // len(SUBJECTS)} for s in sorted(SUBJECTS)]
    eu = console.get("/console/api/streams/ORDERS?subjects=orders.eu.*")
    assert [s["subject"] for s in eu["subjects"]] == ["orders.eu.1", "orders.eu.2"]
    assert eu["config"]["name"] == "ORDERS" and eu["state"]["messages"] == N
    assert console.status("/console/api/streams/NOPE")[0] == 404


def test_browser_renders_text_json_hex_and_headers(console: Console) -> None:
    page = console.get("/console/api/streams/ORDERS/messages?mode=seq&seq=2")
    (msg,) = page["messages"]
    assert msg["subject"] == "orders.eu.2" and msg["headers"] == [["X-N", "1"]]
    assert msg["text"] == '{"n": 1}' and msg["json"] == '{\n  "n": 1\n}' and msg["hex"] == "7b 22 6e 22 3a 20 31 7d"
    binary = console.get("/console/api/streams/ORDERS/messages?mode=seq&seq=1")["messages"][0]
    assert binary["text"] is None and binary["hex"] == "ff 00"
    assert page["request"] == {"subject": "$JS.API.DIRECT.GET.ORDERS", "payload": '{"seq": 2}'}
    plain = console.get("/console/api/streams/PLAIN/messages?mode=last&subject=plain")
    assert [m["text"] for m in plain["messages"]] == ["hello"]


def test_browser_pages_through_a_stream(console: Console) -> None:
    seqs: list[int] = []
    start = 1
    for _ in range(N):
        page = console.get(f"/console/api/streams/ORDERS/messages?mode=seq&seq={start}&batch=15")
        seqs += [m["seq"] for m in page["messages"]]
        if page["next_seq"] is None or page["next_seq"] > page["last_seq"]:
            break
        start = page["next_seq"]
        assert len(seqs) <= N
    assert seqs == list(range(1, N + 1))


@pytest.mark.parametrize(
    ("query", "error"),
    [("mode=sideways", "unknown mode"), ("mode=seq&seq=x", "seq must be"), ("mode=last", "needs a subject"),
     ("mode=multi_last&subject=orders.>&up_to_time=yesterday", "RFC 3339")],
)  # fmt: skip
def test_browser_refuses_bad_queries_with_a_reason(console: Console, query: str, error: str) -> None:
    code, body = console.status(f"/console/api/streams/ORDERS/messages?{query}")
    assert code == 404 and error in json.loads(body)["error"]


async def _direct_get(url: str, subject: str, payload: str) -> list[int]:
    """The sequences a client's Direct Get request gets (a batch ends at its status message)."""
    nc = await nats.connect(url)
    try:
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox)
        await nc.publish(subject, payload.encode(), reply=inbox)
        seqs: list[int] = []
        while True:
            msg = await sub.next_msg(timeout=5)
            headers = msg.headers or {}
            if "Status" in headers or not msg.data and "Nats-Sequence" not in headers:
                return seqs
            seqs.append(int(headers["Nats-Sequence"]))
            if "batch" not in payload and "multi_last" not in payload:
                return seqs
    finally:
        await nc.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mode=st.sampled_from(["seq", "next", "last", "multi_last"]),
    seq=st.integers(1, N + 2),
    subject=st.sampled_from([*SUBJECTS, "orders.*.1", "orders.>", "orders.eu.*", "nothing"]),
    batch=st.sampled_from([1, 3, 10]),
    up_to=st.integers(0, N),
)
def test_browser_shows_what_its_direct_get_request_answers(
    console: Console, mode: str, seq: int, subject: str, batch: int, up_to: int
) -> None:
    if mode == "last" and "*" in subject or mode == "last" and ">" in subject:
        subject = "audit"
    query = f"mode={mode}&seq={seq}&subject={subject}&batch={batch}" + (f"&up_to_seq={up_to}" if up_to else "")
    page = console.get(f"/console/api/streams/ORDERS/messages?{query}")
    direct = asyncio.run(_direct_get(console.nats_url, page["request"]["subject"], page["request"]["payload"]))
    assert [m["seq"] for m in page["messages"]] == direct, page["request"]


def test_up_to_time_shows_the_subjects_as_they_were(console: Console) -> None:
    third = console.get("/console/api/streams/ORDERS/messages?mode=seq&seq=3")["messages"][0]["time"]
    page = console.get(f"/console/api/streams/ORDERS/messages?mode=multi_last&subject=orders.>&up_to_time={third}")
    seqs = [m["seq"] for m in page["messages"]]
    assert seqs and all(seq < 3 for seq in seqs)  # the last of each subject before seq 3's time
    # (which ones: Go's GetSeqFromTime binary search decides, as the Direct Get it names answers)
    assert seqs == asyncio.run(_direct_get(console.nats_url, page["request"]["subject"], page["request"]["payload"]))
    assert json.loads(page["request"]["payload"])["up_to_time"] == third


def test_consumers_show_pending_delivered_and_waiting(console: Console) -> None:
    rows = console.get("/console/api/streams/ORDERS/consumers")["consumers"]
    (eu,) = rows
    assert eu["name"] == "eu" and eu["num_pending"] == 20 and eu["delivered"]["stream_seq"] == 0
    info = console.get("/console/api/streams/ORDERS/consumers/eu")
    assert info["num_pending"] == 20 and info["config"]["durable_name"] == "eu"
    assert console.status("/console/api/streams/ORDERS/consumers/nope")[0] == 404


def test_kv_keys_history_and_object_chunks(console: Console) -> None:
    buckets = console.get("/console/api/buckets")
    assert [b["bucket"] for b in buckets["kv"]] == ["cfg"] and [b["bucket"] for b in buckets["objects"]] == ["files"]
    keys = {k["key"]: k for k in console.get("/console/api/kv/cfg")["keys"]}
    assert keys["color"]["operation"] == "PUT" and keys["color"]["history"] == 2
    assert keys["size"]["operation"] == "DEL"
    history = console.get("/console/api/kv/cfg/history?key=color")["history"]
    assert [(h["revision"], h["value"]) for h in history] == [(1, "red"), (2, "blue")]
    (obj,) = console.get("/console/api/objects/files")["objects"]
    assert obj["name"] == "big.bin" and obj["size"] == 300_000 and obj["chunks"] == obj["chunks_stored"] == 3
    chunks = console.get(f"/console/api/objects/files/{obj['nuid']}/chunks")["chunks"]
    assert [c["size"] for c in chunks] == [128 * 1024, 128 * 1024, 300_000 - 256 * 1024]
    rest = console.get(f"/console/api/objects/files/{obj['nuid']}/chunks?seq={chunks[0]['seq'] + 1}&limit=1")
    assert [c["seq"] for c in rest["chunks"]] == [chunks[1]["seq"]]


def test_looking_does_not_count_as_api_requests(console: Console) -> None:
    before = console.get("/jsz")["api"]
    for path in ("streams", "streams/ORDERS", "streams/ORDERS/consumers", "streams/ORDERS/consumers/eu"):
        console.get(f"/console/api/{path}")
    assert console.get("/jsz")["api"] == before


def test_connections_list_their_subscriptions(console: Console) -> None:
    async def hold() -> dict[str, Any]:
        nc = await nats.connect(console.nats_url, name="watcher")
        await nc.subscribe("watch.me")
        await nc.flush()
        try:
            return await asyncio.to_thread(console.get, "/console/api/connections")
        finally:
            await nc.close()

    conns = asyncio.run(hold())["connections"]
    (mine,) = [c for c in conns if c.get("name") == "watcher"]
    assert mine["subscriptions_list"] == ["watch.me"]


def test_control_action_runs_the_jsemu_api_method_and_shows_its_request(console: Console) -> None:
    answer = console.post("FREEZE_CLOCK")
    try:
        assert answer["ok"] is True and answer["request"] == {"subject": "$JSEMU.API.FREEZE_CLOCK", "payload": "{}"}
        assert console.get("/console/api/overview")["clock"]["frozen"] is True
        moved = console.post("ADVANCE_CLOCK", {"seconds": 2})
        assert moved["result"] == answer["result"] + 2_000_000_000
        fault = console.post("FAULT", {"filter": "x.>", "action": "drop", "count": 0})
        assert console.get("/console/api/control")["faults"][0]["id"] == fault["result"]
        assert console.post("CLEAR_FAULTS")["ok"] is True
        assert console.post("NOT_A_METHOD")["ok"] is False
        refused = console.post("PEER_DOWN", {"stream": "NOPE", "peer": "x"})
        assert refused["ok"] is False and refused["request"]["subject"] == "$JSEMU.API.PEER_DOWN"
    finally:
        console.post("RESUME_CLOCK")
    assert console.get("/console/api/overview")["clock"]["frozen"] is False


def test_control_refuses_forms_other_origins_and_gets(console: Console) -> None:
    path = "/console/api/control/FREEZE_CLOCK"
    assert console.status(path, b"{}", {"Content-Type": "application/x-www-form-urlencoded"})[0] == 403
    assert console.status(path, b"{}", {"Content-Type": "application/json", "Origin": "http://evil.example"})[0] == 403
    assert console.status(path)[0] == 405
    assert console.status(path, b"x" * 70_000, {"Content-Type": "application/json"})[0] == 413
    assert console.get("/console/api/overview")["clock"]["frozen"] is False


def test_control_off_says_so_and_changes_nothing(console: Console) -> None:
    actions = console.threaded.server.console.actions
    control, actions.control = actions.control, None
    try:
        state = console.get("/console/api/control")
        assert state["enabled"] is False and "control plane is off" in state["message"]
        code, body = console.status("/console/api/control/FREEZE_CLOCK", b"{}", {"Content-Type": "application/json"})
        assert code == 403 and "control plane is off" in json.loads(body)["error"]
        assert console.get("/console/api/overview")["control"] is False
    finally:
        actions.control = control
    assert console.get("/console/api/overview")["clock"]["frozen"] is False


def _sse(base: str, path: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return sock


def _read_until(sock: socket.socket, needle: bytes) -> bytes:
    data = b""
    deadline = time.monotonic() + 10
    while needle not in data and time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_live_tail_sends_each_published_message_as_an_event(console: Console) -> None:
    sock = _sse(console.base, "/console/api/tail?subject=tail.>")
    try:
        head = _read_until(sock, b"event: ready")
        assert b"Content-Type: text/event-stream" in head

        async def publish() -> None:
            nc = await nats.connect(console.nats_url)
            await nc.publish("tail.one", b'{"hello": "tail"}', headers={"K": "v"})
            await nc.publish("other", b"not tailed")
            await nc.close()

        asyncio.run(publish())
        data = _read_until(sock, b"event: message")
        line = data.split(b"event: message\ndata: ", 1)[1].split(b"\n", 1)[0]
        event = json.loads(line)
        assert (
            event["subject"] == "tail.one" and event["text"] == '{"hello": "tail"}' and event["headers"] == [["K", "v"]]
        )
        assert b"not tailed" not in data
    finally:
        sock.close()
    # The browser left: its subscription goes (polled: the server notices the EOF).
    deadline = time.monotonic() + 5
    while console.threaded.server.console.tails and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not console.threaded.server.console.tails
    assert not console.threaded.server.sublist.match(b"tail.one").psubs  # and its subscription left


def test_live_tail_refuses_a_bad_subject(console: Console) -> None:
    code, body = console.status("/console/api/tail?subject=a..b")
    assert code == 400 and "not a valid subject" in json.loads(body)["error"]


def test_a_slow_browser_only_fills_its_own_bounded_queue() -> None:
    sublist = Sublist()
    tail = Tail(sublist, "t.>", max_queued=3)
    for i in range(10):
        tail._on_msg(b"t.x", None, -1, str(i).encode())
    assert [m[3] for m in tail.queue] == [b"0", b"1", b"2"] and tail.dropped == 7


def test_server_stop_ends_open_tails() -> None:
    threaded = Server.in_thread(jetstream=True, http_port=-1)
    sock = _sse(threaded.monitor_urls[0], "/console/api/tail?subject=>")
    try:
        assert b"event: ready" in _read_until(sock, b"event: ready")
        started = time.monotonic()
        threaded.stop()
        assert time.monotonic() - started < 5
        _read_until(sock, b"never")  # the connection ends: EOF, not the 10 s deadline
        assert time.monotonic() - started < 8
    finally:
        sock.close()


class _CountingStore:
    """A store that counts the messages the browser loads from it."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.loaded = 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.store, name)
        if name in ("load", "load_next", "load_last"):

            def counted(*args: Any) -> Any:
                self.loaded += 1
                return attr(*args)

            return counted
        return attr


def test_a_page_reads_at_most_a_page_of_a_big_stream() -> None:
    """The browser never walks a stream: each query loads at most its page (the cost check on
    1,000,000 messages with a publisher running is ``python -m benchmarks.console_cost``)."""
    from jsemu.console.browse import browse
    from jsemu.store import MemoryStore

    store = MemoryStore()
    for i in range(20_000):
        store.append_plain(b"big.%d" % (i % 100), b"x")
    for query, most in [
        ({"mode": "seq", "seq": "5000", "batch": "50"}, 50),
        ({"mode": "next", "subject": "big.7", "seq": "1", "batch": "20"}, 20),
        ({"mode": "last", "subject": "big.9"}, 1),
        ({"mode": "multi_last", "subject": "big.*", "batch": "30"}, 30),
        ({"mode": "seq", "seq": "1", "batch": "100000"}, 500),
    ]:
        counting = _CountingStore(store)
        page = browse(counting, "BIG", query)  # type: ignore[arg-type]
        assert len(page["messages"]) == most and counting.loaded <= most, query


def test_with_client_authentication_the_console_shows_what_monitoring_shows() -> None:
    """The monitoring port has no login: a server that requires one for clients shows no
    message contents and no tail there, and takes no action (``$JSEMU.API`` from an
    authenticated client still can)."""
    from jsemu.server.auth import Auth, User

    threaded = Server.in_thread(jetstream=True, http_port=-1, auth=Auth(users={"a": User("a", "pw")}))
    try:
        con = Console(threaded)

        async def fill() -> None:
            nc = await nats.connect(con.nats_url, user="a", password="pw")
            await nc.jetstream().add_stream(name="S", subjects=["s"])
            await nc.jetstream().publish("s", b"secret")
            await nc.close()

        asyncio.run(fill())
        over = con.get("/console/api/overview")
        assert over["control"] is False and "requires client authentication" in over["restricted"]
        assert [s["name"] for s in con.get("/console/api/streams")["streams"]] == ["S"]
        for path in ("streams/S/messages?mode=seq&seq=1", "tail?subject=s", "objects/b/n/chunks", "buckets"):
            code, body = con.status(f"/console/api/{path}")
            assert (code == 403) == (path != "buckets"), path
            assert b"secret" not in body
        code, body = con.status("/console/api/control/FREEZE_CLOCK", b"{}", {"Content-Type": "application/json"})
        assert code == 403 and "requires client authentication" in json.loads(body)["error"]
        assert con.get("/console/api/overview")["clock"]["frozen"] is False
    finally:
        threaded.stop()


def test_a_replicated_stream_shows_each_peers_lag_after_a_console_action() -> None:
    threaded = Server.in_thread(jetstream=True, http_port=-1, cluster_size=3)
    try:
        con = Console(threaded)

        async def publish(n: int) -> None:
            nc = await nats.connect(con.nats_url)
            js = nc.jetstream()
            if n == 0:
                await js.add_stream(name="R3", subjects=["r3"], num_replicas=3)
            for _ in range(n):
                await js.publish("r3", b"x")
            await nc.close()

        asyncio.run(publish(0))
        peers = con.get("/console/api/streams/R3")["peers"]
        assert len(peers) == 3 and sum(p["leader"] for p in peers) == 1
        follower = next(p["name"] for p in peers if not p["leader"])
        held = con.post("SET_LAG", {"stream": "R3", "peer": follower, "messages": 2})
        assert held["ok"] is True
        assert json.loads(held["request"]["payload"]) == {"stream": "R3", "peer": follower, "messages": 2}
        asyncio.run(publish(5))
        lags = {p["name"]: p["lag"] for p in con.get("/console/api/streams/R3")["peers"]}
        assert lags[follower] == 2 and sum(lags.values()) == 2
        assert con.post("RESUME", {"stream": "R3", "peer": follower})["ok"] is True
        assert all(p["lag"] == 0 for p in con.get("/console/api/streams/R3")["peers"])
    finally:
        threaded.stop()


_TEXT = st.text(st.sampled_from("ab.*>-1 0%xZ:T"), max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stream=st.sampled_from(["ORDERS", "PLAIN", "KV_cfg", "NOPE", "a%20b"]),
    params=st.dictionaries(
        st.sampled_from(["mode", "seq", "subject", "batch", "up_to_seq", "up_to_time", "account"]),
        st.one_of(_TEXT, st.sampled_from(["seq", "next", "last", "multi_last", "orders.>", "2026-01-01T00:00:00Z"])),
    ),
)
def test_any_browser_query_gets_an_answer_never_an_internal_error(
    console: Console, stream: str, params: dict[str, str]
) -> None:
    from urllib.parse import urlencode

    code, body = console.status(f"/console/api/streams/{stream}/messages?{urlencode(params)}")
    assert code in (200, 404), body
    answer = json.loads(body)
    assert ("messages" in answer) == (code == 200) and ("error" in answer) == (code == 404)


def test_a_stream_with_many_subjects_counts_them_when_a_filter_asks() -> None:
    threaded = Server.in_thread(jetstream=True, http_port=-1)
    try:
        con = Console(threaded)

        async def fill() -> None:
            nc = await nats.connect(con.nats_url)
            await nc.jetstream().add_stream(name="MANY", subjects=["many.>"])
            for i in range(1500):
                await nc.publish(f"many.{i}", b"")
            await nc.flush()
            await nc.close()

        asyncio.run(fill())
        info = con.get("/console/api/streams/MANY")
        assert info["subjects_total"] is None and info["subjects"] == [] and info["state"]["num_subjects"] == 1500
        some = con.get("/console/api/streams/MANY?subjects=many.*")
        assert some["subjects_total"] == 1500 and len(some["subjects"]) == 1000  # MAX_SUBJECTS shown
    finally:
        threaded.stop()


def test_consumers_show_pause_and_pinned_clients_and_the_responder_log(console: Console) -> None:
    async def act() -> None:
        nc = await nats.connect(console.nats_url)
        try:
            config = {
                "durable_name": "pin",
                "ack_policy": "explicit",
                "filter_subject": "audit",
                "priority_policy": "pinned_client",
                "priority_groups": ["g"],
            }
            await nc.request(
                "$JS.API.CONSUMER.CREATE.ORDERS.pin", json.dumps({"stream_name": "ORDERS", "config": config}).encode()
            )
            inbox = nc.new_inbox()
            sub = await nc.subscribe(inbox)
            pull = {"batch": 1, "expires": 2_000_000_000, "group": "g"}
            await nc.publish("$JS.API.CONSUMER.MSG.NEXT.ORDERS.pin", json.dumps(pull).encode(), reply=inbox)
            await sub.next_msg(timeout=5)
            await nc.request("$JS.API.CONSUMER.PAUSE.ORDERS.eu", b'{"pause_until": "2099-01-01T00:00:00Z"}')
            await nc.request("$JS.API.DIRECT.GET.ORDERS", b'{"seq": 1}')
        finally:
            await nc.close()

    asyncio.run(act())
    try:
        rows = {c["name"]: c for c in console.get("/console/api/streams/ORDERS/consumers")["consumers"]}
        assert rows["eu"]["paused"] is True and rows["pin"]["paused"] is False
        (pinned,) = rows["pin"]["pinned"]
        assert pinned["group"] == "g" and pinned["pinned_client_id"]
        answers = console.get("/console/api/control")["answers"]
        assert answers[-1]["subject"] == "$JS.API.DIRECT.GET.ORDERS" and answers[-1]["stream"] == "ORDERS"
    finally:

        async def undo() -> None:
            nc = await nats.connect(console.nats_url)
            await nc.request("$JS.API.CONSUMER.PAUSE.ORDERS.eu", b"{}")
            await nc.request("$JS.API.CONSUMER.DELETE.ORDERS.pin", b"")
            await nc.close()

        asyncio.run(undo())


def test_each_account_is_shown_on_asking(tmp_path: Any) -> None:
    from jsemu.config.server_config import load_config
    from jsemu.server.options import ServerOptions

    conf = tmp_path / "server.conf"
    (tmp_path / "store").mkdir()  # /varz reads its free space (jsemu makes it with a first file stream only)
    conf.write_text(
        f"jetstream {{ store_dir: {json.dumps(str(tmp_path / 'store'))} }}\nhttp_port: -1\n"
        "accounts { A: { jetstream: enabled, users: [{user: a, password: a}] },"
        " B: { jetstream: enabled, users: [{user: b, password: b}] } }\n"
    )
    threaded = Server.in_thread(load_config(conf, ServerOptions(port=0)))
    try:
        con = Console(threaded)

        async def fill() -> None:
            for user in ("a", "b"):
                nc = await nats.connect(con.nats_url, user=user, password=user)
                await nc.jetstream().add_stream(name=f"S{user.upper()}", subjects=[f"{user}.>"], storage="memory")
                await nc.close()

        asyncio.run(fill())
        assert con.get("/console/api/overview")["accounts"] == ["A", "B"]
        for account in ("A", "B"):
            streams = con.get(f"/console/api/streams?account={account}")["streams"]
            assert [s["name"] for s in streams] == [f"S{account}"]
        code, body = con.status("/console/api/streams?account=C")
        assert code == 404 and "no account 'C'" in json.loads(body)["error"]
    finally:
        threaded.stop()
