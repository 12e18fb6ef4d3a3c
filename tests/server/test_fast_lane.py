"""The publish fast lane (``Server.learn_route``, stream runs, reply plans) changes nothing a
client can see: each case first teaches the server its routes, then changes something that
a cached route or reply plan must notice. Run against jsemu and the real nats-server."""

from __future__ import annotations

import asyncio
import json
import re
import zlib
from collections.abc import AsyncIterator

import pytest
from support.rawclient import RawClient
from support.servers import Handle

import jsemu

CONNECT = {"verbose": False, "pedantic": False, "headers": True}


async def _client(server: Handle, **opts: object) -> RawClient:
    client = await RawClient.connect(server.port, {**CONNECT, **opts})
    assert await client.exchange() == []
    return client


async def _expect(client: RawClient, data: bytes, n: int, settle: float = 0.15) -> list[bytes]:
    """Send ``data`` and return the next ``n`` frames, checking that no more follow within
    ``settle`` seconds (the real server answers JetStream requests after later PINGs)."""
    client.send(data)
    frames: list[bytes] = []
    while len(frames) < n:
        frame = await client.next_frame(5.0)
        assert frame is not None, f"only {frames!r}"
        if frame != b"PONG\r\n":
            frames.append(frame)
    if settle:
        assert await client.next_frame(settle) is None, "more frames than expected"
    return frames


async def _request(client: RawClient, subject: str, payload: object = b"") -> dict[str, object]:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    frames = await _expect(
        client,
        b"SUB _INBOX.api 99\r\nUNSUB 99 1\r\nPUB %s _INBOX.api %d\r\n%s\r\n" % (subject.encode(), len(body), body),
        1,
        settle=0,
    )
    return json.loads(frames[0].split(b"\r\n", 1)[1][:-2])  # type: ignore[no-any-return]


async def _stream(client: RawClient, name: str, **config: object) -> None:
    cfg = {"name": name, "storage": "memory", **config}
    reply = await _request(client, f"$JS.API.STREAM.CREATE.{name}", cfg)
    assert "error" not in reply, reply
    await _request(client, f"$JS.API.STREAM.PURGE.{name}", {})  # an empty stream either way


async def _stored(client: RawClient, name: str, want: int) -> int:
    """The stream's message count once it has reached ``want`` (or after 5 s, whatever it is).
    nats-server stores a publish without a reply on the stream's own goroutine, after the
    client's read: a STREAM.INFO (another goroutine) or a Direct Get (the same goroutine, but
    another queue of its ``select``) right after can miss it (seen under load: 3 of 5)."""
    deadline = asyncio.get_running_loop().time() + 5.0
    while True:
        info = await _request(client, f"$JS.API.STREAM.INFO.{name}")
        n: int = info["state"]["messages"]  # type: ignore[index]
        if n >= want or asyncio.get_running_loop().time() > deadline:
            return n
        await asyncio.sleep(0.02)


def _stamps(frame: bytes) -> bytes:
    return re.sub(rb"Nats-Time-Stamp: [^\r]*", b"Nats-Time-Stamp: <ts>", frame)


async def test_stream_publishes_reach_a_subscriber_added_after_the_route_was_learned(server: Handle) -> None:
    pub = await _client(server)
    await _stream(pub, "FL1", subjects=["fl1.>"])
    assert await pub.exchange(b"PUB fl1.a 1\r\nx\r\n" * 20) == []
    watcher = await _client(server)
    assert await watcher.exchange(b"SUB fl1.* 7\r\n") == []
    assert await pub.exchange(b"PUB fl1.a 1\r\ny\r\n") == []
    assert await _expect(watcher, b"", 1) == [b"MSG fl1.a 7 1\r\ny\r\n"]
    assert await _stored(pub, "FL1", 21) == 21


async def test_reserved_reply_on_a_learned_stream_subject_is_refused(server: Handle) -> None:
    client = await _client(server)
    await _stream(client, "FL2", subjects=["fl2.>"])
    assert await client.exchange(b"PUB fl2.a 1\r\nx\r\n" * 3) == []
    frames = await client.exchange(b"PUB fl2.a 1\r\nx\r\nPUB fl2.a $JS.ACK.x 1\r\nx\r\nPUB fl2.a 1\r\nx\r\n")
    assert frames == [b"-ERR 'Permissions Violation for Publish with Reply of \"$JS.ACK.x\"'\r\n"]
    assert await _stored(client, "FL2", 5) == 5


async def test_pipelined_acks_interleave_with_other_ops_in_order(server: Handle) -> None:
    client = await _client(server)
    await _stream(client, "FL3", subjects=["fl3.>"], allow_direct=True, duplicate_window=60_000_000_000)
    hdr = b"NATS/1.0\r\nNats-Msg-Id: m1\r\n\r\n"
    batch = (
        b"SUB _INBOX.a 1\r\n"
        + b"PUB fl3.a _INBOX.a 1\r\n1\r\n" * 3
        + b"HPUB fl3.b _INBOX.a %d %d\r\n%s2\r\n" % (len(hdr), len(hdr) + 1, hdr)
        + b"PUB fl3.a _INBOX.a 1\r\n3\r\n"
        + b"HPUB fl3.b _INBOX.a %d %d\r\n%s4\r\n" % (len(hdr), len(hdr) + 1, hdr)
        + b"PUB fl3.c _INBOX.a 1\r\n5\r\n"
    )
    frames = await _expect(client, batch, 7)
    assert [f.split(b"\r\n")[1] for f in frames] == [
        b'{"stream":"FL3","seq":1}',
        b'{"stream":"FL3","seq":2}',
        b'{"stream":"FL3","seq":3}',
        b'{"stream":"FL3","seq":4}',
        b'{"stream":"FL3","seq":5}',
        b'{"stream":"FL3","seq":4,"duplicate": true}',
        b'{"stream":"FL3","seq":6}',
    ]
    got = await _expect(client, b"PUB $JS.API.DIRECT.GET.FL3.fl3.b _INBOX.a 0\r\n\r\n", 1)
    block = (
        b"NATS/1.0\r\nNats-Msg-Id: m1\r\nNats-Stream: FL3\r\nNats-Subject: fl3.b\r\nNats-Sequence: 4\r\n"
        b"Nats-Time-Stamp: <ts>\r\n\r\n"
    )
    head, _, rest = _stamps(got[0]).partition(b"\r\n")
    assert rest == block + b"2\r\n"
    assert head.startswith(b"HMSG _INBOX.a 1 ")


async def test_pipelined_acks_go_to_each_publishers_inbox(server: Handle) -> None:
    """A run of publishes with different reply subjects in one read: each ack goes to its own
    inbox, in order (the run is stored at once and acked with ``Server.reply_many``)."""
    client = await _client(server)
    await _stream(client, "FLA", subjects=["fla.>"])
    # One message first: the route is learned and the store is not empty (an empty store
    # takes a run one by one).
    assert await client.exchange(b"PUB fla.a 1\r\nx\r\n") == []
    assert await _stored(client, "FLA", 1) == 1
    pubs = b"".join(b"PUB fla.a _INBOX.r%d 1\r\nx\r\n" % (i % 3) for i in range(9))
    frames = await _expect(client, b"SUB _INBOX.* 1\r\n" + pubs, 9)
    acks = [b'{"stream":"FLA","seq":%d}' % seq for seq in range(2, 11)]
    assert frames == [b"MSG _INBOX.r%d 1 %d\r\n%s\r\n" % (i % 3, len(ack), ack) for i, ack in enumerate(acks)]


async def test_limits_apply_to_pipelined_publishes(server: Handle) -> None:
    client = await _client(server)
    await _stream(client, "FL4", subjects=["fl4.>"], max_msgs=5)
    pubs = b"".join(b"PUB fl4.%d _INBOX.a 1\r\nx\r\n" % (i % 3) for i in range(20))
    frames = await _expect(client, b"SUB _INBOX.a 1\r\n" + pubs, 20)
    assert [f.split(b"\r\n")[1] for f in frames] == [b'{"stream":"FL4","seq":%d}' % s for s in range(1, 21)]
    info = await _request(client, "$JS.API.STREAM.INFO.FL4")
    assert info["state"]["messages"] == 5 and info["state"]["first_seq"] == 16  # type: ignore[index]


async def test_direct_get_replies_respect_unsub_max_set_after_learning(server: Handle) -> None:
    client = await _client(server)
    await _stream(client, "FL5", subjects=["fl5.>"], allow_direct=True)
    assert await client.exchange(b"PUB fl5.a 1\r\nx\r\n") == []
    assert await _stored(client, "FL5", 1) == 1
    get = b'PUB $JS.API.DIRECT.GET.FL5.fl5.a _INBOX.g 0\r\n\r\nPUB $JS.API.DIRECT.GET.FL5 _INBOX.g 9\r\n{"seq":1}\r\n'
    assert len(await _expect(client, b"SUB _INBOX.g 3\r\n" + get * 2, 4)) == 4  # routes and plans learned
    assert len(await _expect(client, b"UNSUB 3 7\r\n" + get * 3, 3)) == 3  # 4 seen + 3 more = 7
    assert await _expect(client, get, 0) == []


async def test_direct_get_to_a_client_without_headers(server: Handle) -> None:
    setup = await _client(server)
    await _stream(setup, "FL6", subjects=["fl6.>"], allow_direct=True)
    assert await setup.exchange(b"PUB fl6.a 5\r\nhello\r\n") == []
    assert await _stored(setup, "FL6", 1) == 1
    get = b"PUB $JS.API.DIRECT.GET.FL6.fl6.a _INBOX.p 0\r\n\r\n"
    plain = await _client(server, headers=False)
    assert await _expect(plain, b"SUB _INBOX.p 1\r\n" + get * 2, 2) == [b"MSG _INBOX.p 1 5\r\nhello\r\n"] * 2
    with_headers = await _client(server)
    got = await _expect(with_headers, b"SUB _INBOX.p 1\r\n" + get * 2, 2)
    assert all(f.startswith(b"HMSG _INBOX.p 1 ") and f.endswith(b"\r\n\r\nhello\r\n") for f in got)


@pytest.mark.parametrize(
    "request_body",
    [
        b'{"seq":1,"batch":3}',
        b'{"seq":1,"batch":3,"no_hdr":true}',
        b'{"multi_last":["flk.>"]}',
        b'{"last_by_subj":"flk.b"}',
    ],
)
async def test_direct_get_batch_reaches_every_kind_of_listener(server: Handle, request_body: bytes) -> None:
    """One reply to an inbox that a header client, a client without headers and a queue
    group all listen on: each gets every message of the reply and its end-of-batch status
    in its own framing (the outbound path's fallback from pre-encoded frames).

    Each case has its own inbox and closes its clients: the real server is shared, and a
    queue member left over from an earlier case took part of the replies (seen in CI)."""
    inbox = b"_INBOX.all%d" % zlib.crc32(request_body)
    setup = await _client(server)
    await _stream(setup, "FLK", subjects=["flk.>"], allow_direct=True)
    assert (
        await setup.exchange(b"PUB flk.a 1\r\na\r\nHPUB flk.b 12 14\r\nNATS/1.0\r\n\r\nbb\r\nPUB flk.c 0\r\n\r\n") == []
    )
    assert await _stored(setup, "FLK", 3) == 3
    plain = await _client(server, headers=False)
    queue = await _client(server)
    requester = await _client(server)
    try:
        assert await plain.exchange(b"SUB %b 1\r\n" % inbox) == []
        assert await queue.exchange(b"SUB %b grp 2\r\n" % inbox) == []
        get = b"PUB $JS.API.DIRECT.GET.FLK %b %d\r\n%b\r\n" % (inbox, len(request_body), request_body)
        n = 1 if request_body == b'{"last_by_subj":"flk.b"}' else 4
        own = await _expect(requester, b"SUB %b 3\r\n" % inbox + get * 2, 2 * n)
        got = {"own": own, "plain": await _expect(plain, b"", 2 * n), "queue": await _expect(queue, b"", 2 * n)}
    finally:
        for client in (setup, plain, queue, requester):
            await client.close()
    for frames in got.values():
        assert frames[:n] == frames[n:]  # the second request went down the learned path
    assert all(f.startswith(b"HMSG %b 3 " % inbox) for f in own[:n]) or b"no_hdr" in request_body
    assert all(f.startswith(b"MSG %b 1 " % inbox) for f in got["plain"])
    assert all(f.split(b" ", 2)[:2] in ([b"HMSG", inbox], [b"MSG", inbox]) for f in got["queue"])
    assert [_stamps(f).replace(b" 3 ", b" 2 ", 1) for f in own] == [_stamps(f) for f in got["queue"]]
    expected_plain = {
        b'{"seq":1,"batch":3}': [b"a", b"bb", b"", b""],
        b'{"seq":1,"batch":3,"no_hdr":true}': [b"a", b"bb", b"", b""],
        b'{"multi_last":["flk.>"]}': [b"a", b"bb", b"", b""],
        b'{"last_by_subj":"flk.b"}': [b"bb"],
    }[request_body]
    assert [f.split(b"\r\n")[1] for f in got["plain"][:n]] == expected_plain, got


@pytest.mark.parametrize("pedantic", [False, True])
async def test_connect_in_the_same_read_switches_the_lane(server: Handle, pedantic: bool) -> None:
    """A CONNECT that turns verbose (and pedantic) on applies to the publishes after it in
    the same read."""
    client = await _client(server)
    await _stream(client, "FL7", subjects=["fl7.>"])
    assert await client.exchange(b"PUB fl7.a 1\r\nx\r\n" * 2) == []
    opts = json.dumps({**CONNECT, "verbose": True, "pedantic": pedantic}).encode()
    frames = await client.exchange(
        b"PUB fl7.a 1\r\nx\r\nCONNECT " + opts + b"\r\nPUB fl7.a 1\r\nx\r\nPUB fl7.* 1\r\nx\r\n"
    )
    expected = [b"+OK\r\n", b"+OK\r\n", b"+OK\r\n"]  # CONNECT, then each PUB after it
    if pedantic:
        expected.insert(2, b"-ERR 'Invalid Publish Subject'\r\n")
    assert frames == expected


@pytest.fixture
async def emu() -> AsyncIterator[Handle]:
    """jsemu alone, for what only it can do (faults) or show (its counters)."""
    async with jsemu.Server() as srv:
        yield Handle("jsemu", "127.0.0.1", srv.port, srv)


async def test_faults_added_after_learning_apply_and_stop_applying(emu: Handle) -> None:
    server = emu
    assert server.server is not None
    client = await _client(server)
    await _stream(client, "FL8", subjects=["fl8.>"], allow_direct=True)
    get = b'PUB $JS.API.DIRECT.GET.FL8 _INBOX.f 9\r\n{"seq":1}\r\n'
    assert len(await _expect(client, b"PUB fl8.a 1\r\nx\r\nSUB _INBOX.f 1\r\n" + get, 1)) == 1
    server.server.control.drop("$JS.API.DIRECT.GET.FL8", count=1)
    assert await _expect(client, get, 0) == []
    assert len(await _expect(client, get, 1)) == 1
    server.server.control.drop("fl8.a", count=2)
    assert await client.exchange(b"PUB fl8.a 1\r\nx\r\n" * 3) == []
    assert await _stored(client, "FL8", 2) == 2


async def test_fast_lane_counts_messages_for_monitoring(emu: Handle) -> None:
    server = emu
    assert server.server is not None
    client = await _client(server)
    await _stream(client, "FL9", subjects=["fl9.>"])
    conn = max(server.server.connections.values(), key=lambda c: c.cid)
    before = conn.in_msgs, conn.in_bytes
    assert await client.exchange(b"PUB fl9.a 3\r\nabc\r\n" * 10) == []
    assert (conn.in_msgs - before[0], conn.in_bytes - before[1]) == (10, 30)
