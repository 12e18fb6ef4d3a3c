"""Consumers of file streams outlive a restart, as nats-server's do: config, delivered and
ack state (ack floor, pending, redelivery counts) after SIGTERM and SIGKILL, compared with
the real server run the same way; ephemerals come back too, consumers of memory streams and
``mem_storage`` consumers do not. The clean in-process stop is jsemu-only."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import nats
import pytest

import jsemu

from .test_persistence import Proc, _api

ACK_WAIT = 2_000_000_000


async def _fetch(nc: Any, sub: Any, consumer: str, body: dict[str, Any], n: int, timeout: float) -> list[Any]:
    await nc.publish(f"$JS.API.CONSUMER.MSG.NEXT.F.{consumer}", json.dumps(body).encode(), reply=sub.subject)
    out = []
    for _ in range(n):
        try:
            m = await sub.next_msg(timeout)
        except nats.errors.TimeoutError:
            break
        if m.reply:
            out.append(m)
    return out


def _seqs(msgs: list[Any]) -> list[tuple[int, int, int]]:
    """(delivery count, stream seq, consumer seq) from each ack subject."""
    out = []
    for m in msgs:
        tokens = m.reply.split(".")
        out.append((int(tokens[4]), int(tokens[5]), int(tokens[6])))
    return out


async def _session_one(port: int, settle: float) -> list[Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    await _api(nc, "$JS.API.STREAM.CREATE.F", {"name": "F", "subjects": ["f.>"]})
    await _api(nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "subjects": ["m"], "storage": "memory"})
    for i in range(6):
        await _api(nc, f"f.{i}", b"v%d" % i)
    cfg = {"durable_name": "D", "ack_policy": "explicit", "ack_wait": ACK_WAIT}
    await _api(nc, "$JS.API.CONSUMER.CREATE.F.D", {"stream_name": "F", "config": cfg})
    mem = {"durable_name": "MEM", "ack_policy": "explicit", "mem_storage": True}
    await _api(nc, "$JS.API.CONSUMER.CREATE.F.MEM", {"stream_name": "F", "config": mem})
    eph = {"name": "EPH", "ack_policy": "explicit", "inactive_threshold": 60_000_000_000}
    await _api(nc, "$JS.API.CONSUMER.CREATE.F.EPH", {"stream_name": "F", "config": eph})
    await _api(nc, "$JS.API.CONSUMER.CREATE.M.MD", {"stream_name": "M", "config": {"durable_name": "MD"}})
    push = {"durable_name": "P", "deliver_subject": "pp", "ack_policy": "all", "deliver_policy": "new"}
    await _api(nc, "$JS.API.CONSUMER.CREATE.F.P", {"stream_name": "F", "config": push})
    await _api(nc, "$JS.API.CONSUMER.PAUSE.F.P", {"pause_until": "2099-01-01T00:00:00Z"})  # kept too
    sub = await nc.subscribe(nc.new_inbox())
    msgs = await _fetch(nc, sub, "D", {"batch": 6}, 6, 2)
    for i in (0, 1, 3):
        await nc.request(msgs[i].reply, b"+ACK", timeout=2)
    await nc.publish(msgs[4].reply, b"-NAK")
    await nc.flush()
    again = await _fetch(nc, sub, "D", {"batch": 1}, 1, 2)  # seq 5, delivered a second time
    eph_msgs = await _fetch(nc, sub, "EPH", {"batch": 2}, 2, 2)
    await nc.request(eph_msgs[0].reply, b"+ACK", timeout=2)
    await asyncio.sleep(settle)  # before a SIGKILL: both write consumer state within 100 ms
    info = await _api(nc, "$JS.API.CONSUMER.INFO.F.D")
    await nc.close()
    return [_seqs(msgs), _seqs(again), _seqs(eph_msgs), _info(info)]


def _info(info: dict[str, Any]) -> dict[str, Any]:
    """The state of a consumer info: the times of this run left out."""
    out = {k: v for k, v in info.items() if k not in ("ts", "created", "pause_remaining")}
    out.get("config", {}).get("metadata", {}).pop("_nats.req.level", None)
    for key in ("delivered", "ack_floor"):
        if key in out:
            out[key] = {k: v for k, v in out[key].items() if k != "last_active"}
    return out


async def _session_two(port: int) -> list[Any]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    names = [(await _api(nc, f"$JS.API.CONSUMER.NAMES.{s}")).get("consumers") for s in ("F", "M")]
    names.append((await _api(nc, "$JS.API.INFO"))["consumers"])
    infos = [_info(await _api(nc, f"$JS.API.CONSUMER.INFO.F.{c}")) for c in ("D", "EPH", "P", "MEM")]
    sub = await nc.subscribe(nc.new_inbox())
    # The messages pending from before the restart come again once their ack wait (counted
    # from their delivery before the restart) is over; then delivery goes on where it was.
    due = await _fetch(nc, sub, "D", {"batch": 3, "expires": 3 * ACK_WAIT}, 3, 3 * ACK_WAIT / 1e9)
    await _api(nc, "f.new", b"new")
    # Not no_wait: under load nats-server once answered it before counting the new message.
    fresh = await _fetch(nc, sub, "D", {"batch": 1, "expires": 2_000_000_000}, 1, 3)
    after = _info(await _api(nc, "$JS.API.CONSUMER.INFO.F.D"))
    await nc.close()
    # Delivered within the same second before the restart, they are due together and come
    # in stream order (a second boundary between them could change that: not compared).
    due_counts = sorted((sseq, dc) for dc, sseq, _ in _seqs(due))
    return [names, infos, _seqs(fresh), due_counts, after["num_redelivered"], after["num_ack_pending"]]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
async def test_consumers_survive_a_restart_like_nats_server(tmp_path: Path, sig: int) -> None:
    results = []
    for kind in ("jsemu", "real"):
        store = tmp_path / kind
        first = await asyncio.to_thread(Proc, kind, store)
        # SIGTERM right away: a stopping server writes what it has not written yet.
        before = await _session_one(first.port, 0.5 if sig == signal.SIGKILL else 0)
        await asyncio.to_thread(first.stop, sig)
        second = await asyncio.to_thread(Proc, kind, store)
        try:
            after = await _session_two(second.port)
        finally:
            await asyncio.to_thread(second.stop)
        results.append((before, after))
    # The binary's num_ack_pending after the fresh delivery was 3, not 4, once in a full run
    # on a loaded machine (unexplained; every other value equal): jsemu's is checked exactly
    # below, the binary's may be one less.
    (emu_before, emu_after), (real_before, real_after) = results
    assert emu_before == real_before
    assert emu_after[:-1] == real_after[:-1]
    assert real_after[-1] in (emu_after[-1], emu_after[-1] - 1), (emu_after[-1], real_after[-1])
    before, after = results[0]
    names, infos, fresh, due, redelivered, ack_pending = after
    assert names == [["D", "EPH", "P"], [], 3]  # MEM (mem_storage) and the memory stream's MD are gone
    d = infos[0]
    assert (d["delivered"], d["ack_floor"]) == (
        {"consumer_seq": 7, "stream_seq": 6},
        {"consumer_seq": 2, "stream_seq": 2},
    )
    assert (d["num_ack_pending"], d["num_redelivered"], d["num_pending"]) == (3, 1, 0)
    assert infos[1]["ack_floor"] == {"consumer_seq": 1, "stream_seq": 1}  # the ephemeral's ack
    assert (infos[2]["paused"], infos[2]["config"]["pause_until"]) == (True, "2099-01-01T00:00:00Z")
    assert fresh == [(1, 7, 11)]
    assert due == [(3, 2), (5, 3), (6, 2)]  # the nak'd 5 was delivered twice before
    assert (redelivered, ack_pending) == (3, 4)


async def test_acks_before_a_clean_stop_are_kept(tmp_path: Path) -> None:
    """Acks and a config update just before a clean (in-process) stop are kept; a deleted
    consumer stays gone."""
    srv = await jsemu.Server(store_dir=str(tmp_path)).start()
    nc = await nats.connect(srv.url)
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s"], storage="file")
    for i in range(5):
        await js.publish("s", b"%d" % i)
    psub = await js.pull_subscribe("s", durable="D")
    msgs = await psub.fetch(5)
    for m in msgs[:3]:
        await m.ack()
    await nc.flush()
    cfg = (await js.consumer_info("S", "D")).config
    cfg.max_ack_pending, cfg.description = 7, "updated"  # an update is saved too
    await js.add_consumer("S", cfg)
    before = await js.consumer_info("S", "D")
    assert before.config.max_ack_pending == 7
    await nc.close()
    await srv.stop()
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        info = await js.consumer_info("S", "D")
        assert (info.delivered.stream_seq, info.ack_floor.stream_seq, info.num_ack_pending) == (5, 3, 2)
        assert info.config == before.config
        await js.delete_consumer("S", "D")
        await nc.close()
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        assert (await _api(nc, "$JS.API.CONSUMER.NAMES.S"))["consumers"] == []
        await nc.close()
