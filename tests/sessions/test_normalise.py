"""What a replay takes out before comparing (``jsemu.sessions.normalise``), and the names it
matches up: captured from nats-server 2.15.1, an ephemeral consumer created without a name is
named by the server (a new random name each run), and the client then uses that name in the
subjects of its next requests; a replay must send them with the name this server chose."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.servers import nats_server_binary

from jsemu.protocol.frames import Frame, FrameReader, parse_frame
from jsemu.sessions import Recorder, read_session, replay
from jsemu.sessions.normalise import Aliases, aliasable, view
from jsemu.sessions.targets import server_at


def _view(raw: bytes) -> str:
    frame = parse_frame(raw)
    assert frame is not None
    return view(frame)[0]


def _msg(head: str, payload: bytes, header: bytes = b"") -> bytes:
    if header:
        return b"HMSG %s %d %d\r\n%s%s\r\n" % (head.encode(), len(header), len(header) + len(payload), header, payload)
    return b"MSG %s %d\r\n%s\r\n" % (head.encode(), len(payload), payload)


def test_times_ids_and_key_order_do_not_count() -> None:
    a = _view(_msg("_INBOX.x 1", b'{"b":1,"created":"2026-11-27T18:15:26.281040437Z","a":[1]}'))
    b = _view(_msg("_INBOX.x 1", b'{"a":[1],"created":"2025-01-01T00:00:00Z","b":1}'))
    assert a == b == 'MSG _INBOX.x 1\n{"a":[1],"b":1,"created":"<time>"}'
    zero = _view(_msg("i 1", b'{"first_ts":"0001-01-01T00:00:00Z"}'))
    assert "0001-01-01T00:00:00Z" in zero  # Go's zero time is a value, not a time stamp
    hmsg = _view(_msg("i 1", b"hi", b"NATS/1.0\r\nNats-Time-Stamp: 2026-11-27T18:15:26.28Z\r\n\r\n"))
    assert hmsg == "HMSG i 1\nNATS/1.0\r\nNats-Time-Stamp: <time>\nhi"
    info1 = _view(b'INFO {"server_id":"NA","server_name":"x","port":1,"client_id":5,"headers":true,"nonce":"q"}\r\n')
    info2 = _view(b'INFO {"headers":true,"server_id":"NB","port":2,"client_id":9}\r\n')
    assert info1 == info2 == 'INFO {"headers":true}'
    assert _view(b"PING\r\n") == ""
    ack = parse_frame(_msg("s 1 $JS.ACK.S.C.1.2.3.1795803326282240611.0", b"x"))
    assert ack is not None and view(ack) == ("MSG s 1 $JS.ACK.S.C.1.2.3.<ts>.0\nx", "1795803326282240611")


_JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(max_size=8),
        st.datetimes().map(lambda d: d.isoformat() + "Z"),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=12,
)


#: A time as the generator writes it ("TZ" is text that merely looks like one).
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=5), st.randoms())
@example({"": "TZ"}, random.Random(0))
def test_a_json_body_is_the_same_view_in_any_key_order_and_at_any_time(body: dict[str, object], rnd) -> None:  # type: ignore[no-untyped-def]
    """Key order and RFC 3339 times (but Go's zero time) never count; everything else does."""
    items = list(body.items())
    rnd.shuffle(items)
    shuffled = dict(items)

    def later(value: object) -> object:
        if isinstance(value, str) and _RFC3339.fullmatch(value) and value != "0001-01-01T00:00:00Z":
            return "2099-12-31T23:59:59.999999999Z"
        if isinstance(value, dict):
            return {k: later(v) for k, v in value.items()}
        if isinstance(value, list):
            return [later(v) for v in value]
        return value

    a = _view(_msg("i 1", json.dumps(body).encode()))
    b = _view(_msg("i 1", json.dumps(later(shuffled)).encode()))
    assert a == b
    if body:
        key = next(iter(body))
        changed = dict(body, **{key: [body[key]]})
        assert _view(_msg("i 1", json.dumps(changed).encode())) != a


def test_aliases_only_for_server_chosen_names() -> None:
    frame = parse_frame(_msg("_INBOX.a 1", b'{"name":"Xq7Zp2Lm","data":"aGVsbG8="}'))
    assert frame is not None
    names = aliasable(frame)
    assert "Xq7Zp2Lm" in names and "aGVsbG8" not in names
    aliases = Aliases()
    exp = view(frame)[0]
    # data is never matched up
    assert not aliases.match(exp, exp.replace("aGVsbG8", "amVsbG8"), names)
    # a consumer name the server chose: learnt, then applied to later frames and client lines
    assert aliases.match(exp, exp.replace("Xq7Zp2Lm", "Rt5Kw9Vb"), names)
    assert aliases.rewrite_client(b"PUB $JS.API.CONSUMER.INFO.S.Xq7Zp2Lm _INBOX.a 0\r\n") == (
        b"PUB $JS.API.CONSUMER.INFO.S.Rt5Kw9Vb _INBOX.a 0\r\n"
    )
    assert aliases.match("MSG x 1\nXq7Zp2Lm", "MSG x 1\nRt5Kw9Vb")
    # one recorded name stands for one replayed name
    assert not aliases.match(exp, exp.replace("Xq7Zp2Lm", "Other123"), names)
    # a name the client sent must come back as it was
    client = Aliases()
    client.saw_client(b"PUB $JS.API.CONSUMER.CREATE.S.Xq7Zp2Lm _INBOX.a 0\r\n")
    assert not client.match(exp, exp.replace("Xq7Zp2Lm", "Rt5Kw9Vb"), names)


async def _ephemeral_program(port: int) -> None:
    """Raw client: an ephemeral consumer without a name, then requests naming it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    frames = FrameReader()

    async def answer() -> Frame:
        while (frame := frames.next()) is None or not frame.is_msg:
            if frame is None:
                frames.feed(await reader.read(65536))
        return frame

    def pub(subject: bytes, reply: bytes, body: bytes) -> None:
        writer.write(b"PUB %s %s %d\r\n%s\r\n" % (subject, reply, len(body), body))

    writer.write(b'CONNECT {"verbose":false,"headers":true}\r\nSUB _INBOX.r.* 1\r\n')
    pub(b"$JS.API.STREAM.CREATE.EPH", b"_INBOX.r.1", b'{"name":"EPH","subjects":["eph.>"]}')
    await answer()
    pub(b"eph.a", b"_INBOX.r.2", b"one")
    await answer()
    pub(b"$JS.API.CONSUMER.CREATE.EPH", b"_INBOX.r.3", b'{"stream_name":"EPH","config":{"ack_policy":"explicit"}}')
    name = json.loads((await answer()).payload)["name"].encode()
    pub(b"$JS.API.CONSUMER.INFO.EPH." + name, b"_INBOX.r.4", b"")
    await answer()
    pub(b"$JS.API.CONSUMER.MSG.NEXT.EPH." + name, b"_INBOX.r.5", b'{"batch":1}')
    msg = await answer()
    pub(msg.reply, b"_INBOX.r.6", b"")  # ack, asking for the server's confirmation
    await answer()
    pub(b"$JS.API.CONSUMER.INFO.EPH." + name, b"_INBOX.r.7", b"")
    assert json.loads((await answer()).payload)["num_ack_pending"] == 0
    writer.close()
    await writer.wait_closed()


@pytest.fixture(scope="module")
def ephemeral_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("eph") / "eph.jsonl"

    async def record() -> None:
        async with (
            server_at("spawn-real", nats_server_binary()) as (host, port),
            Recorder(f"nats://{host}:{port}", path) as recorder,
        ):
            await _ephemeral_program(recorder.port)
            await asyncio.sleep(0.05)

    asyncio.run(record())
    return path


@pytest.mark.parametrize("target", ["spawn-jsemu", "spawn-real"])
async def test_server_named_consumer_is_mapped(ephemeral_session: Path, target: str) -> None:
    session = read_session(ephemeral_session)
    async with server_at(target, nats_server_binary()) as (host, port):
        result = await replay(session, host, port, timeout=2.0)
    assert [d.describe() for d in result.differences] == []
    assert result.frames == 8  # INFO and the seven answers
