"""Stream snapshots and restores, checked on both servers with the same rules (each server
restores its own snapshots: the archives differ, jsemu's is its own format).

Rules captured from nats-server 2.15.1 (``streamSnapshot``, ``processStreamRestore``):
full chunks carry ``$JS.SNAPSHOT.ACK.<stream>.<id>.<size>.<n>``, a short last chunk has no
reply, the end is an empty message with ``NATS/1.0 204`` after full chunks (plain after a
short one alone); the reply holds the stored config and the state; a restore answers each
chunk with an empty message and the empty chunk with the stream's info, created anew, its
messages and durable consumers as they were; a garbage upload fails with 10062
``restore failed: s2: corrupt input``; a chunk without a reply ends the upload unanswered.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import nats
import pytest
from support.servers import Handle, RealServer

import jsemu

API = "$JS.API.STREAM"
_ACK = re.compile(r"^\$JS\.SNAPSHOT\.ACK\.(\w+)\.[0-9A-Za-z]{22}\.(\d+)\.(\d+)$")


async def _req(nc: Any, subject: str, body: Any = b"") -> dict[str, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply: dict[str, Any] = json.loads((await nc.request(subject, data, timeout=5)).data)
    return reply


async def _snapshot(nc: Any, stream: str, **options: Any) -> tuple[dict[str, Any], list[Any]]:
    """The reply and every message to the deliver subject (acking each full chunk)."""
    inbox = nc.new_inbox()
    got: list[Any] = []
    done = asyncio.Event()

    async def on_chunk(msg: Any) -> None:
        got.append(msg)
        if msg.reply:
            await nc.publish(msg.reply, b"")
        elif not msg.data:
            done.set()

    await nc.subscribe(inbox, cb=on_chunk)
    reply = await _req(nc, f"{API}.SNAPSHOT.{stream}", {"deliver_subject": inbox, **options})
    await asyncio.wait_for(done.wait(), 10)
    return reply, got


def _check_chunks(stream: str, chunks: list[Any], size: int) -> bytes:
    """The framing rules; returns the archive."""
    *data, end = chunks
    full = [m for m in data if m.reply]
    for n, msg in enumerate(full, 1):
        match = _ACK.match(msg.reply)
        assert match is not None, msg.reply
        assert match.groups() == (stream, str(size), str(n)) and len(msg.data) == size
    tail = [m for m in data if not m.reply]
    assert data[: len(full)] == full and len(tail) <= 1 and all(0 < len(m.data) < size for m in tail)
    assert end.data == b""
    status = (end.headers or {}).get("Status")
    assert status == ("204" if full else None), (status, end.headers)
    return b"".join(m.data for m in data)


async def _messages(nc: Any, stream: str, last: int) -> list[Any]:
    out = []
    for seq in range(1, last + 1):
        reply = await _req(nc, f"{API}.MSG.GET.{stream}", {"seq": seq})
        out.append(reply.get("message") or reply["error"]["err_code"])
    return out


async def _restore(nc: Any, stream: str, config: dict[str, Any], archive: bytes, piece: int = 700) -> dict[str, Any]:
    reply = await _req(nc, f"{API}.RESTORE.{stream}", {"config": config})
    subject = reply["deliver_subject"]
    assert re.fullmatch(rf"\$JS\.SNAPSHOT\.RESTORE\.{stream}\.[0-9A-Za-z]{{22}}", subject), reply
    for at in range(0, len(archive), piece):
        ack = await nc.request(subject, archive[at : at + piece], timeout=5)
        assert ack.data == b"" and not ack.headers
    return await _req(nc, subject, b"")


async def test_snapshot_and_restore_round_trip(server: Handle) -> None:
    """A file stream with headers, deletes and a durable consumer part-way through: the
    snapshot's framing, its reply, the advisories, and a restore under a new description
    that brings back the same messages and consumer state."""
    name = f"SNAP_{server.kind}"
    nc = await nats.connect(server.url)
    events: list[dict[str, Any]] = []

    async def on_event(msg: Any) -> None:
        if name in msg.subject:
            events.append(json.loads(msg.data))

    await nc.subscribe("$JS.EVENT.ADVISORY.STREAM.>", cb=on_event)
    config = {"name": name, "subjects": [f"{name}.>"], "storage": "file"}
    await _req(nc, f"{API}.CREATE.{name}", config)
    js = nc.jetstream()
    for i in range(60):
        await js.publish(f"{name}.{i % 7}", (b"payload-%d-" % i) * 5, headers={"N": str(i)} if i % 3 else None)
    for seq in (4, 5, 30):
        await _req(nc, f"{API}.MSG.DELETE.{name}", {"seq": seq})
    await _req(
        nc,
        f"$JS.API.CONSUMER.CREATE.{name}.D",
        {"stream_name": name, "config": {"durable_name": "D", "ack_policy": "explicit"}},
    )
    sub = await js.pull_subscribe_bind("D", name)
    for msg in await sub.fetch(10):
        if msg.metadata.sequence.stream <= 6:
            await msg.ack()
    await nc.flush()
    before = await _messages(nc, name, 60)
    info = await _req(nc, f"{API}.INFO.{name}")
    consumer = await _req(nc, f"$JS.API.CONSUMER.INFO.{name}.D")

    reply, chunks = await _snapshot(nc, name, chunk_size=1024)
    assert list(reply) == ["type", "config", "state"]
    assert reply["state"] == info["state"]
    assert reply["config"]["metadata"] == {"_nats.req.level": "0"}
    archive = _check_chunks(name, chunks, 1024)
    assert len(archive) > 2048, len(archive)  # several full chunks

    await _req(nc, f"{API}.DELETE.{name}")
    restored = await _restore(nc, name, {**config, "description": "restored"}, archive)
    assert list(restored) == ["type", "config", "created", "state", "ts"], restored
    assert restored["config"]["description"] == "restored"
    assert restored["state"] == info["state"]
    assert restored["created"] != info["created"]
    assert await _messages(nc, name, 60) == before
    after = await _req(nc, f"$JS.API.CONSUMER.INFO.{name}.D")
    for key in ("delivered", "ack_floor", "num_ack_pending", "num_pending"):
        if isinstance(after[key], dict):  # (``last_active`` is not kept, by either server)
            after[key].pop("last_active", None)
            consumer[key].pop("last_active", None)
        assert after[key] == consumer[key], key
    await nc.flush()
    await asyncio.sleep(0.2)
    kinds = [f"{e['type'].rsplit('.', 1)[-1]}:{e.get('action', '')}" for e in events]
    assert kinds[:2] == ["stream_action:create", "snapshot_create:"], kinds
    # After those, nats-server sends its advisories from several goroutines (the snapshot's, the
    # API's, the restore's) and under load they cross: the same five, in any order.
    assert sorted(kinds[2:]) == sorted(
        ["snapshot_complete:", "stream_action:delete", "restore_create:", "restore_complete:", "stream_action:create"]
    ), kinds
    snap_events = {e["type"].rsplit(".", 1)[-1]: e for e in events}
    assert list(snap_events["snapshot_create"]) == ["type", "id", "timestamp", "stream", "state", "client"]
    assert snap_events["snapshot_create"]["state"] == info["state"]
    assert list(snap_events["snapshot_complete"]) == ["type", "id", "timestamp", "stream", "start", "end", "client"]
    assert list(snap_events["restore_create"]) == ["type", "id", "timestamp", "stream", "client"]
    complete = snap_events["restore_complete"]
    assert list(complete) == ["type", "id", "timestamp", "stream", "start", "end", "bytes", "client"]
    assert complete["bytes"] == len(archive)
    await _req(nc, f"{API}.DELETE.{name}")
    await nc.close()


async def test_one_short_chunk_ends_without_status(server: Handle) -> None:
    name = f"SNAP1_{server.kind}"
    nc = await nats.connect(server.url)
    await _req(nc, f"{API}.CREATE.{name}", {"name": name, "subjects": [f"{name}.>"], "storage": "memory"})
    _, chunks = await _snapshot(nc, name, chunk_size=1024 * 1024)
    assert len(chunks) == 2 and not chunks[0].reply
    _check_chunks(name, chunks, 1024 * 1024)
    await _req(nc, f"{API}.DELETE.{name}")
    await nc.close()


async def test_bad_uploads(server: Handle) -> None:
    """Garbage fails at the end with the server's error; a chunk without a reply ends the
    upload unanswered, so the next one finds no responders."""
    nc = await nats.connect(server.url)
    bad = f"BAD_{server.kind}"
    reply = await _restore(nc, bad, {"name": bad, "subjects": [f"{bad}.x"]}, b"garbage")
    assert reply == {
        "type": "io.nats.jetstream.api.v1.stream_create_response",
        "error": {"code": 500, "err_code": 10062, "description": "restore failed: s2: corrupt input"},
    }
    quiet = f"QUIET_{server.kind}"
    subject = (await _req(nc, f"{API}.RESTORE.{quiet}", {"config": {"name": quiet}}))["deliver_subject"]
    await nc.publish(subject, b"abc")
    await nc.flush()
    with pytest.raises(nats.errors.NoRespondersError):
        await nc.request(subject, b"", timeout=2)
    assert (await _req(nc, f"{API}.NAMES"))["streams"] is None or quiet not in (await _req(nc, f"{API}.NAMES"))[
        "streams"
    ]
    await nc.close()


async def test_a_nats_server_snapshot_is_refused_with_a_clear_line(real_server: RealServer) -> None:
    """jsemu cannot read S2 blocks: a snapshot made by nats-server gets one clear line."""
    real = await nats.connect(f"nats://127.0.0.1:{real_server.port}")
    await _req(real, f"{API}.CREATE.XSNAP", {"name": "XSNAP", "subjects": ["xsnap"], "storage": "file"})
    _, chunks = await _snapshot(real, "XSNAP")
    await _req(real, f"{API}.DELETE.XSNAP")
    await real.close()
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        reply = await _restore(nc, "XSNAP", {"name": "XSNAP", "subjects": ["xsnap"]}, b"".join(m.data for m in chunks))
        assert reply["error"]["err_code"] == 10062
        assert "only snapshots made by jsemu" in reply["error"]["description"]
        await nc.close()


async def test_unacked_chunks_end_the_snapshot_on_the_server_clock() -> None:
    """One chunk in flight (window = chunk): without its ack, 5 s on the server's clock end
    the snapshot with ``408 No Flow Response``; a restore without chunks for 5 s is dropped."""
    async with jsemu.Server() as srv:
        ctl = srv.control
        ctl.freeze_clock()
        nc = await nats.connect(srv.url)
        await _req(nc, f"{API}.CREATE.S", {"name": "S", "subjects": ["s"]})
        for _ in range(50):
            await nc.request("s", b"x" * 200)
        got: list[Any] = []

        async def keep(msg: Any) -> None:
            got.append(msg)

        await nc.subscribe("snap.in", cb=keep)
        await _req(nc, f"{API}.SNAPSHOT.S", {"deliver_subject": "snap.in", "chunk_size": 1024, "window_size": 1024})
        await nc.flush()
        await asyncio.sleep(0.05)
        assert len(got) == 1 and got[0].reply
        ctl.advance_clock(ns=4_999_000_000)
        await nc.flush()
        assert len(got) == 1
        ctl.advance_clock(ns=1_000_000)
        await nc.flush()
        await asyncio.sleep(0.05)
        assert (
            len(got) == 2
            and got[1].data == b""
            and got[1].headers == {"Status": "408", "Description": "No Flow Response"}
        )
        subject = (await _req(nc, f"{API}.RESTORE.R", {"config": {"name": "R"}}))["deliver_subject"]
        ctl.advance_clock(seconds=5)
        await nc.flush()
        with pytest.raises(nats.errors.NoRespondersError):
            await nc.request(subject, b"x", timeout=2)
        await nc.close()


async def test_restore_under_new_limits(server: Handle) -> None:
    """The restore request's config is the stream's new identity: its limits hold for the
    restored messages at once."""
    name = f"LIM_{server.kind}"
    nc = await nats.connect(server.url)
    config = {"name": name, "subjects": [f"{name}.>"], "storage": "file"}
    await _req(nc, f"{API}.CREATE.{name}", config)
    for i in range(10):
        await nc.request(f"{name}.{i}", b"m%d" % i)
    _, chunks = await _snapshot(nc, name)
    await _req(nc, f"{API}.DELETE.{name}")
    restored = await _restore(nc, name, {**config, "max_msgs": 4}, b"".join(m.data for m in chunks[:-1]))
    state = (await _req(nc, f"{API}.INFO.{name}"))["state"]
    assert (restored["config"]["max_msgs"], state["messages"], state["first_seq"]) == (4, 4, 7), (restored, state)
    await _req(nc, f"{API}.DELETE.{name}")
    await nc.close()


async def test_restore_onto_taken_subjects(server: Handle) -> None:
    """Subjects another stream took meanwhile fail the restore at its end, in addStream's words."""
    name, other = f"OVL_{server.kind}", f"OVO_{server.kind}"
    nc = await nats.connect(server.url)
    config = {"name": name, "subjects": [f"{name}.>"], "storage": "file"}
    await _req(nc, f"{API}.CREATE.{name}", config)
    await nc.request(f"{name}.1", b"x")
    _, chunks = await _snapshot(nc, name)
    await _req(nc, f"{API}.DELETE.{name}")
    await _req(nc, f"{API}.CREATE.{other}", {"name": other, "subjects": [f"{name}.1"]})
    reply = await _restore(nc, name, config, b"".join(m.data for m in chunks[:-1]))
    assert reply["error"] == {
        "code": 500,
        "err_code": 10062,
        "description": "restore failed: error adding stream: subjects overlap with an existing stream (10065)",
    }
    await _req(nc, f"{API}.DELETE.{other}")
    await nc.close()


async def test_consumers_in_a_snapshot(server: Handle) -> None:
    """Durable and ephemeral consumers come back; none with ``no_consumers``."""
    name = f"CONS_{server.kind}"
    nc = await nats.connect(server.url)
    config = {"name": name, "subjects": [f"{name}.>"], "storage": "memory"}
    await _req(nc, f"{API}.CREATE.{name}", config)
    await nc.request(f"{name}.1", b"x")
    ephemeral = {"stream_name": name, "config": {"ack_policy": "explicit", "inactive_threshold": 60_000_000_000}}
    eph = (await _req(nc, f"$JS.API.CONSUMER.CREATE.{name}", ephemeral))["name"]
    await _req(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": {"durable_name": "D"}})
    for options, expected in (({}, sorted(["D", eph])), ({"no_consumers": True}, [])):
        reply, chunks = await _snapshot(nc, name, **options)
        assert reply["state"]["consumer_count"] == 2
        await _req(nc, f"{API}.DELETE.{name}")
        restored = await _restore(nc, name, config, b"".join(m.data for m in chunks[:-1]))
        assert restored["state"]["consumer_count"] == len(expected)
        assert sorted((await _req(nc, f"$JS.API.CONSUMER.NAMES.{name}"))["consumers"] or []) == expected
        if not expected:
            break
        for consumer in expected:  # the next round starts from two again
            await _req(nc, f"$JS.API.CONSUMER.DELETE.{name}.{consumer}")
        eph = (await _req(nc, f"$JS.API.CONSUMER.CREATE.{name}", ephemeral))["name"]
        await _req(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": {"durable_name": "D"}})
    await _req(nc, f"{API}.DELETE.{name}")
    await nc.close()
