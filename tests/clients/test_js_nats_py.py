"""nats-py's JetStream context sees the same results from jsemu as from nats-server 2.15.1.

Every test runs against both servers (``server`` fixture). The expected values below were taken
from the real server; timestamps are never compared, only whether two of them are equal.

Only :func:`test_direct_get_msg` needs Direct Get (``$JS.API.DIRECT.GET.<stream>``); every other
test reads messages with ``STREAM.MSG.GET`` (``js.get_msg(..., direct=False)``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nats.errors import NoRespondersError
from nats.js import JetStreamContext, api
from nats.js.errors import (
    APIError,
    BadRequestError,
    NoStreamResponseError,
    NotFoundError,
    ServerError,
)
from support.names import Names

#: ``metadata`` of a stream without features needing a newer API level, as the server fills it in
#: (in replies to CREATE, UPDATE and INFO; STREAM.LIST only keeps the stored ``_nats.req.level``).
META = {"_nats.level": "5", "_nats.req.level": "0", "_nats.ver": "2.15.1"}


def err(exc: pytest.ExceptionInfo[APIError]) -> tuple[type, int | None, int | None, str | None]:
    e = exc.value
    return type(e), e.code, e.err_code, e.description


def state(si: api.StreamInfo) -> dict[str, int | None]:
    s = si.state
    return {
        "messages": s.messages,
        "bytes": s.bytes,
        "first_seq": s.first_seq,
        "last_seq": s.last_seq,
        "num_deleted": s.num_deleted,
        "consumer_count": s.consumer_count,
    }


def fsize(subject: str, data: bytes, hdr: bytes = b"") -> int:
    """nats-server's file store accounting of one message (``fileStoreMsgSize``: 4 more bytes for
    the length of a header block)."""
    return 22 + len(subject) + (4 + len(hdr) if hdr else 0) + len(data) + 8


def hdr_block(headers: dict[str, str]) -> bytes:
    return b"NATS/1.0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items()) + b"\r\n"


async def test_stream_lifecycle(js: JetStreamContext, names: Names) -> None:
    exc: pytest.ExceptionInfo[APIError]
    name = names.stream()
    root = names.subject_root(name)

    si = await js.add_stream(name=name, subjects=[f"{root}.>"], description="first")
    c = si.config
    assert (c.name, c.subjects, c.description) == (name, [f"{root}.>"], "first")
    assert (c.retention, c.storage, c.discard, c.compression) == ("limits", "file", "old", "none")
    assert (c.max_consumers, c.max_msgs, c.max_bytes, c.max_msgs_per_subject, c.max_msg_size) == (-1, -1, -1, -1, -1)
    assert (c.max_age, c.duplicate_window, c.num_replicas) == (0.0, 120.0, 1)
    assert (c.allow_direct, c.mirror_direct, c.sealed, c.deny_delete, c.deny_purge, c.allow_rollup_hdrs) == (
        False,
        False,
        False,
        False,
        False,
        False,
    )
    assert (c.allow_msg_ttl, c.metadata) == (False, META)
    assert state(si) == {
        "messages": 0,
        "bytes": 0,
        "first_seq": 0,
        "last_seq": 0,
        "num_deleted": None,
        "consumer_count": 0,
    }
    assert si.did_create is True

    # Creating it again with the same configuration succeeds (and still says did_create).
    again = await js.add_stream(name=name, subjects=[f"{root}.>"], description="first")
    assert again.config == si.config
    assert again.created == si.created
    assert again.did_create is True

    with pytest.raises(BadRequestError) as exc:
        await js.add_stream(name=name, subjects=[f"{root}.a"])
    assert err(exc) == (BadRequestError, 400, 10058, "stream name already in use with a different configuration")

    other = names.stream()
    with pytest.raises(BadRequestError) as exc:
        await js.add_stream(name=other, subjects=[f"{root}.b"])
    assert err(exc) == (BadRequestError, 400, 10065, "subjects overlap with an existing stream")

    info = await js.stream_info(name)
    assert info.config == si.config
    assert info.created == si.created
    assert info.did_create is None
    assert info.cluster is not None and info.cluster.leader

    upd = await js.update_stream(name=name, subjects=[f"{root}.>", f"{root}x"], description="second", max_msgs=10)
    assert (upd.config.subjects, upd.config.description, upd.config.max_msgs) == (
        [f"{root}.>", f"{root}x"],
        "second",
        10,
    )
    assert upd.config.metadata == META
    assert upd.created == si.created
    assert (await js.stream_info(name)).config == upd.config
    assert await js.find_stream_name_by_subject(f"{root}x") == name

    with pytest.raises(ServerError) as exc:
        await js.update_stream(name=name, subjects=[f"{root}.>"], storage="memory")
    assert err(exc) == (ServerError, 500, 10052, "stream configuration update can not change storage type")

    with pytest.raises(NotFoundError) as exc:
        await js.update_stream(name=other, subjects=[f"{root}y"])
    assert err(exc) == (NotFoundError, 404, 10059, "stream not found")

    assert await js.delete_stream(name) is True
    for call in (js.delete_stream, js.stream_info, js.purge_stream):
        with pytest.raises(NotFoundError) as exc:
            await call(name)
        assert err(exc) == (NotFoundError, 404, 10059, "stream not found")


async def test_publish_acks_and_dedup(js: JetStreamContext, names: Names) -> None:
    name = names.stream()
    root = names.subject_root(name)
    await js.add_stream(name=name, subjects=[f"{root}.>"], duplicate_window=60)

    ack = await js.publish(f"{root}.a", b"one")
    assert (ack.stream, ack.seq, ack.duplicate, ack.domain) == (name, 1, None, None)

    ack = await js.publish(f"{root}.b", b"two", headers={"Nats-Msg-Id": "id-1"})
    assert (ack.stream, ack.seq, ack.duplicate) == (name, 2, None)
    # Same id inside the duplicate window: not stored again, acked with the first sequence.
    ack = await js.publish(f"{root}.b", b"two again", headers={"Nats-Msg-Id": "id-1"})
    assert (ack.stream, ack.seq, ack.duplicate) == (name, 2, True)
    ack = await js.publish(f"{root}.b", b"three", headers={"Nats-Msg-Id": "id-2"})
    assert (ack.stream, ack.seq, ack.duplicate) == (name, 3, None)

    futures = [await js.publish_async(f"{root}.c", f"async {i}".encode()) for i in range(3)]
    acks = await asyncio.wait_for(asyncio.gather(*futures), 5)
    assert [(a.stream, a.seq, a.duplicate) for a in acks] == [(name, 4, None), (name, 5, None), (name, 6, None)]

    # A subject no stream listens on: no responders, which nats-py turns into NoStreamResponseError.
    with pytest.raises(NoStreamResponseError):
        await js.publish(root, b"nobody")

    info = await js.stream_info(name)
    assert state(info) == {
        "messages": 6,
        "bytes": fsize(f"{root}.a", b"one")
        + fsize(f"{root}.b", b"two", hdr_block({"Nats-Msg-Id": "id-1"}))
        + fsize(f"{root}.b", b"three", hdr_block({"Nats-Msg-Id": "id-2"}))
        + sum(fsize(f"{root}.c", f"async {i}".encode()) for i in range(3)),
        "first_seq": 1,
        "last_seq": 6,
        "num_deleted": None,
        "consumer_count": 0,
    }
    msg = await js.get_msg(name, seq=2)
    assert (msg.subject, msg.seq, msg.data, msg.headers) == (f"{root}.b", 2, b"two", {"Nats-Msg-Id": "id-1"})


async def test_publish_expectations(js: JetStreamContext, names: Names) -> None:
    """The ``Nats-Expected-*`` headers (and nats-py's ``stream=`` helper): the error a failed
    expectation gives, and that a rejected message takes no sequence."""
    name = names.stream()
    root = names.subject_root(name)
    await js.add_stream(name=name, subjects=[f"{root}.>"])
    a, b = f"{root}.a", f"{root}.b"

    assert (await js.publish(a, b"1", headers={"Nats-Msg-Id": "m1"})).seq == 1
    assert (await js.publish(b, b"2")).seq == 2

    async def rejected(subject: str, headers: dict[str, str] | None = None, **kw: str) -> tuple:  # type: ignore[type-arg]
        with pytest.raises(APIError) as exc:
            await js.publish(subject, b"x", headers=headers, **kw)  # type: ignore[arg-type]
        return err(exc)

    # Expected last sequence of the stream.
    assert await rejected(a, {"Nats-Expected-Last-Sequence": "1"}) == (
        BadRequestError,
        400,
        10071,
        "wrong last sequence: 2",
    )
    assert (await js.publish(a, b"3", headers={"Nats-Expected-Last-Sequence": "2"})).seq == 3

    # Expected last sequence on the message's subject (0: the subject must have no message).
    assert await rejected(b, {"Nats-Expected-Last-Subject-Sequence": "0"}) == (
        BadRequestError,
        400,
        10071,
        "wrong last sequence: 2",
    )
    assert await rejected(b, {"Nats-Expected-Last-Subject-Sequence": "3"}) == (
        BadRequestError,
        400,
        10071,
        "wrong last sequence: 2",
    )
    assert (await js.publish(f"{root}.new", b"4", headers={"Nats-Expected-Last-Subject-Sequence": "0"})).seq == 4
    assert (await js.publish(b, b"5", headers={"Nats-Expected-Last-Subject-Sequence": "2"})).seq == 5

    # Expected last message id: the id of the stream's last message (none here, then "m6").
    assert await rejected(a, {"Nats-Expected-Last-Msg-Id": "m1"}) == (
        BadRequestError,
        400,
        10070,
        "wrong last msg ID: ",
    )
    assert (await js.publish(a, b"6", headers={"Nats-Msg-Id": "m6"})).seq == 6
    assert await rejected(a, {"Nats-Expected-Last-Msg-Id": "m1"}) == (
        BadRequestError,
        400,
        10070,
        "wrong last msg ID: m6",
    )
    assert (await js.publish(a, b"7", headers={"Nats-Expected-Last-Msg-Id": "m6"})).seq == 7

    # Expected stream, as a header and through nats-py's ``stream=`` helper.
    assert await rejected(a, {"Nats-Expected-Stream": "OTHER"}) == (
        BadRequestError,
        400,
        10060,
        "expected stream does not match",
    )
    assert await rejected(a, stream="OTHER") == (BadRequestError, 400, 10060, "expected stream does not match")
    ack = await js.publish(a, b"8", stream=name)
    assert (ack.stream, ack.seq) == (name, 8)

    info = await js.stream_info(name)
    assert (info.state.messages, info.state.first_seq, info.state.last_seq) == (8, 1, 8)
    msg = await js.get_msg(name, seq=8)
    assert (msg.subject, msg.data, msg.headers) == (a, b"8", {"Nats-Expected-Stream": name})


async def test_get_and_delete_msg(js: JetStreamContext, names: Names) -> None:
    name = names.stream()
    root = names.subject_root(name)
    await js.add_stream(name=name, subjects=[f"{root}.>"])
    a, b = f"{root}.a", f"{root}.b"
    for i, subject in enumerate([a, b, a, b, a], start=1):
        await js.publish(subject, f"m{i}".encode(), headers={"X-N": str(i)} if i % 2 else None)

    msg = await js.get_msg(name, seq=1, direct=False)
    assert (msg.subject, msg.seq, msg.data, msg.headers) == (a, 1, b"m1", {"X-N": "1"})
    assert msg.time is not None
    msg = await js.get_msg(name, seq=2)
    assert (msg.subject, msg.seq, msg.data, msg.headers, msg.hdrs) == (b, 2, b"m2", None, None)
    msg = await js.get_msg(name, subject=b)  # last_by_subj
    assert (msg.subject, msg.seq, msg.data) == (b, 4, b"m4")
    msg = await js.get_last_msg(name, a)
    assert (msg.subject, msg.seq, msg.data) == (a, 5, b"m5")
    msg = await js.get_msg(name, seq=2, subject=a, next=True)  # next_by_subj from seq 2
    assert (msg.subject, msg.seq, msg.data) == (a, 3, b"m3")
    msg = await js.get_msg(name, seq=1, subject=f"{root}.*", next=True)
    assert (msg.subject, msg.seq) == (a, 1)

    queries: list[dict[str, Any]] = [{"seq": 99}, {"subject": f"{root}.zz"}, {"seq": 5, "subject": b, "next": True}]
    for kw in queries:
        with pytest.raises(NotFoundError) as exc:
            await js.get_msg(name, **kw)
        assert err(exc) == (NotFoundError, 404, 10037, "no message found"), kw
    with pytest.raises(NotFoundError) as exc:
        await js.get_msg(names.stream(), seq=1)
    assert err(exc) == (NotFoundError, 404, 10059, "stream not found")

    assert await js.delete_msg(name, 3) is True
    assert await js.delete_msg(name, 1) is True
    with pytest.raises(NotFoundError) as exc:
        await js.get_msg(name, seq=3)
    assert err(exc) == (NotFoundError, 404, 10037, "no message found")
    msg = await js.get_msg(name, seq=2, subject=a, next=True)
    assert (msg.subject, msg.seq) == (a, 5)

    info = await js.stream_info(name)
    assert (info.state.messages, info.state.first_seq, info.state.last_seq, info.state.num_deleted) == (3, 2, 5, 1)


# What deleting a missing message answers depends on the store (nats-server 2.15.1, 6 messages,
# 1 and 3 deleted): the file store gives 500/10057 with its own error text, or 400/10043 for a
# sequence deleted inside the stream; the memory store always 400/10043.
_DELETE_MISSING: dict[str, dict[int, tuple[type, int, int, str]]] = {
    "file": {
        3: (BadRequestError, 400, 10043, "sequence 3 not found"),
        1: (ServerError, 500, 10057, "no message found"),
        0: (ServerError, 500, 10057, "no message found"),
        7: (ServerError, 500, 10057, "stream store EOF"),
        99: (ServerError, 500, 10057, "stream store EOF"),
    },
    "memory": {seq: (BadRequestError, 400, 10043, f"sequence {seq} not found") for seq in (3, 1, 0, 7, 99)},
}


@pytest.mark.parametrize("storage", ["file", "memory"])
async def test_delete_missing_msg(js: JetStreamContext, names: Names, storage: str) -> None:
    name = names.stream()
    root = names.subject_root(name)
    await js.add_stream(name=name, subjects=[f"{root}.>"], storage=storage)
    for i in range(6):
        await js.publish(f"{root}.a", str(i).encode())
    assert await js.delete_msg(name, 3) is True
    assert await js.delete_msg(name, 1) is True
    got: dict[int, tuple[type, int | None, int | None, str | None]] = {}
    for seq in _DELETE_MISSING[storage]:
        with pytest.raises(APIError) as exc:
            await js.delete_msg(name, seq)
        got[seq] = err(exc)
    assert got == _DELETE_MISSING[storage]
    info = await js.stream_info(name)
    assert (info.state.messages, info.state.first_seq, info.state.last_seq, info.state.num_deleted) == (4, 2, 6, 1)


async def test_purge_stream(js: JetStreamContext, names: Names) -> None:
    name = names.stream()
    root = names.subject_root(name)
    await js.add_stream(name=name, subjects=[f"{root}.>"])
    a, b, c = f"{root}.a", f"{root}.b", f"{root}.c"

    async def fill(subjects: list[str]) -> None:
        for subject in subjects:
            await js.publish(subject, b"x")

    async def st() -> tuple[int, int, int, int | None]:
        s = (await js.stream_info(name)).state
        return s.messages, s.first_seq, s.last_seq, s.num_deleted

    await fill([a, b, c, a, b, c, a, b, c, a])  # 1..10; a: 1,4,7,10  b: 2,5,8  c: 3,6,9
    assert await js.purge_stream(name, subject=b) is True
    assert await st() == (7, 1, 10, 3)
    assert await js.purge_stream(name, subject=a, keep=2) is True  # keeps a@7, a@10
    assert await st() == (5, 3, 10, 3)  # 4, 5 and 8 are gone inside
    assert (await js.get_msg(name, subject=a)).seq == 10
    assert await js.purge_stream(name, seq=7) is True  # everything below 7
    assert await st() == (3, 7, 10, 1)
    assert await js.purge_stream(name, subject=f"{root}.*", keep=1) is True
    assert await st() == (1, 10, 10, None)
    assert await js.purge_stream(name) is True
    assert await st() == (0, 11, 10, None)

    # Sequences go on after a full purge.
    assert (await js.publish(c, b"after")).seq == 11
    assert await st() == (1, 11, 11, None)


async def test_find_stream_and_streams_info(js: JetStreamContext, names: Names) -> None:
    first, second = names.stream(), names.stream()
    r1, r2 = names.subject_root(first), names.subject_root(second)
    await js.add_stream(name=first, subjects=[f"{r1}.>"])
    await js.add_stream(name=second, subjects=[f"{r2}.a", f"{r2}.b.*"], storage="memory")
    await js.publish(f"{r2}.b.x", b"hello")

    assert await js.find_stream_name_by_subject(f"{r1}.x.y") == first
    assert await js.find_stream_name_by_subject(f"{r2}.b.q") == second
    assert await js.find_stream_name_by_subject(f"{r2}.a") == second
    with pytest.raises(NotFoundError):  # raised by nats-py on an empty list
        await js.find_stream_name_by_subject(f"{r2}.c")

    mine = {si.config.name: si for si in await js.streams_info() if si.config.name in (first, second)}
    assert sorted(mine) == sorted([first, second])
    assert mine[first].config.subjects == [f"{r1}.>"]
    assert (mine[second].config.subjects, mine[second].config.storage) == ([f"{r2}.a", f"{r2}.b.*"], "memory")
    # STREAM.LIST gives the stored metadata only, without the server-filled _nats.level/_nats.ver.
    assert mine[first].config.metadata == {"_nats.req.level": "0"}
    assert (mine[second].state.messages, mine[second].state.last_seq) == (1, 1)
    # Memory store accounting (``memStoreMsgSize``): subject + headers + data + 16.
    assert mine[second].state.bytes == len(f"{r2}.b.x") + len(b"hello") + 16
    assert mine[first].cluster is None


async def test_direct_get_msg(js: JetStreamContext, names: Names) -> None:
    """NEEDS DIRECT GET: ``js.get_msg(..., direct=True)`` on a stream with ``allow_direct``."""
    name = names.stream()
    root = names.subject_root(name)
    await js.add_stream(name=name, subjects=[f"{root}.>"], allow_direct=True)
    a, b = f"{root}.a", f"{root}.b"
    await js.publish(a, b"one", headers={"X-N": "1"})
    await js.publish(b, b"two")
    await js.publish(a, b"three")

    def view(msg: api.RawStreamMsg) -> tuple:  # type: ignore[type-arg]
        headers = dict(msg.headers or {})
        assert headers.pop("Nats-Time-Stamp")
        return msg.subject, msg.seq, msg.data, headers

    assert view(await js.get_msg(name, seq=1, direct=True)) == (
        a,
        1,
        b"one",
        {"X-N": "1", "Nats-Stream": name, "Nats-Subject": a, "Nats-Sequence": "1"},
    )
    assert view(await js.get_msg(name, subject=b, direct=True)) == (
        b,
        2,
        b"two",
        {"Nats-Stream": name, "Nats-Subject": b, "Nats-Sequence": "2"},
    )
    assert view(await js.get_last_msg(name, a, direct=True))[:3] == (a, 3, b"three")
    assert view(await js.get_msg(name, seq=2, subject=a, direct=True, next=True))[:3] == (a, 3, b"three")
    with pytest.raises(NotFoundError):
        await js.get_msg(name, seq=9, direct=True)
    with pytest.raises(NotFoundError):
        await js.get_msg(name, subject=f"{root}.zz", direct=True)

    # A stream without allow_direct has no Direct Get responder.
    plain = names.stream()
    await js.add_stream(name=plain, subjects=[f"{names.subject_root(plain)}.>"])
    with pytest.raises(NoRespondersError):
        await js.get_msg(plain, seq=1, direct=True)
