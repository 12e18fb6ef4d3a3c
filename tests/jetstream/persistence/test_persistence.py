"""Streams in a ``store_dir`` outlive the process, as with nats-server: file streams come
back after a clean stop and after SIGKILL, memory streams do not, and a write torn by a
crash never costs an acknowledged message. The restart behaviour is compared with the real
server's; the torn write is jsemu-only (the real file store has its own format)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from support.servers import nats_server_binary

import jsemu
from jsemu.store.wal import read_log


class Proc:
    """``nats-server`` or ``jsemu serve`` with a store dir, on a random port."""

    def __init__(self, kind: str, store: Path) -> None:
        program = [sys.executable, "-m", "jsemu", "serve"] if kind == "jsemu" else [nats_server_binary()]
        args = [*program, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", str(store)]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        assert self.proc.stderr is not None
        self.port = 0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if "Listening for client connections on" in line:
                self.port = int(line.rsplit(":", 1)[1])
            if "Server is ready" in line:
                break

    def stop(self, sig: int = signal.SIGTERM) -> None:
        self.proc.send_signal(sig)
        self.proc.wait(10)


async def _api(nc: Any, subject: str, body: Any = b"") -> dict[str, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return json.loads((await nc.request(subject, data, timeout=5)).data)


async def _session_one(port: int) -> list[dict[str, Any]]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    await _api(nc, "$JS.API.STREAM.CREATE.F", {"name": "F", "subjects": ["f.>"], "max_msgs_per_subject": 2})
    await _api(nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "subjects": ["m"], "storage": "memory"})
    acks = []
    for i in range(5):
        acks.append(await _api(nc, f"f.{i % 2}", b"v%d" % i))
    reply = await nc.request("f.h", b"with headers", headers={"Nats-Msg-Id": "id-1", "X": "1"}, timeout=5)
    acks.append(json.loads(reply.data))
    acks.append(await _api(nc, "$JS.API.STREAM.MSG.DELETE.F", {"seq": 4}))
    acks.append(await _api(nc, "m", b"memory"))
    await nc.close()
    return acks


async def _state_after_restart(port: int) -> tuple[Any, ...]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    names = (await _api(nc, "$JS.API.STREAM.NAMES"))["streams"]
    info = await _api(nc, "$JS.API.STREAM.INFO.F", {"deleted_details": True})
    msgs = [await _api(nc, "$JS.API.STREAM.MSG.GET.F", {"seq": seq}) for seq in range(1, 8)]
    # A publish after the restart continues the sequence.
    ack = await _api(nc, "f.0", b"after")
    await nc.close()
    for m in msgs:
        m.get("message", {}).pop("time", None)
    state = {k: v for k, v in info["state"].items() if not k.endswith("_ts")}
    return names, info["config"]["name"], info["created"], state, msgs, ack


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["stop", "kill"])
async def test_file_streams_survive_a_restart_like_nats_server(tmp_path: Path, sig: int) -> None:
    results = []
    for kind in ("jsemu", "real"):
        store = tmp_path / kind
        first = await asyncio.to_thread(Proc, kind, store)
        acks = await _session_one(first.port)
        created = await _created(first.port)
        await asyncio.to_thread(first.stop, sig)
        second = await asyncio.to_thread(Proc, kind, store)
        try:
            names, name, created_again, state, msgs, ack = await _state_after_restart(second.port)
        finally:
            await asyncio.to_thread(second.stop)
        assert created_again == created, kind  # the creation time is kept
        results.append((names, name, state, msgs, ack, acks))
    assert results[0] == results[1]
    names, _, state, _, ack, acks = results[0]
    assert [a.get("seq") for a in acks] == [1, 2, 3, 4, 5, 6, None, 1]
    assert names == ["F"]  # the memory stream is gone
    # max_msgs_per_subject 2 dropped seq 1; seq 4 was deleted.
    assert (state["messages"], state["first_seq"], state["last_seq"], state["deleted"]) == (4, 2, 6, [4])
    assert ack == {"stream": "F", "seq": 7}


async def _created(port: int) -> str:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    created = (await _api(nc, "$JS.API.STREAM.INFO.F"))["created"]
    await nc.close()
    return str(created)


async def test_a_torn_last_write_loses_nothing_acknowledged(tmp_path: Path) -> None:
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"], storage="file")
        for i in range(10):
            await js.publish("s", b"%d" % i)
        await nc.close()
    wal = tmp_path / "jetstream" / "$G" / "streams" / "S" / "msgs.wal"
    whole = wal.read_bytes()
    # A crash in the middle of the next record: its header and half its payload.
    with wal.open("ab") as f:
        f.write(whole[-40:-10])
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        info = await js.stream_info("S")
        assert (info.state.messages, info.state.last_seq) == (10, 10)
        assert (await js.get_msg("S", 10)).data == b"9"
        assert (await js.publish("s", b"10")).seq == 11
        await nc.close()
    # The torn tail was cut off, so the log is whole again.
    assert len(read_log(wal).records) == 12  # the stream's limits, then the 11 appends


async def test_a_corrupted_record_is_not_replayed(tmp_path: Path) -> None:
    """A whole-length record whose bytes changed (its CRC no longer matches) ends the log
    like a torn one: what it held is not served as if it had been written."""
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"], storage="file")
        for i in range(10):
            await js.publish("s", b"msg-%d" % i)
        await nc.close()
    wal = tmp_path / "jetstream" / "$G" / "streams" / "S" / "msgs.wal"
    whole = wal.read_bytes()
    at = whole.rindex(b"msg-9")
    wal.write_bytes(whole[:at] + b"msg-X" + whole[at + 5 :])
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        info = await js.stream_info("S")
        assert (info.state.messages, info.state.last_seq) == (9, 9)
        assert (await js.get_msg("S", 9)).data == b"msg-8"
        await nc.close()
    assert len(read_log(wal).records) == 10  # cut back to the last whole record (limits + 9 appends)


async def test_updates_deletes_mirrors_and_replicas_survive(tmp_path: Path) -> None:
    async with jsemu.Server(store_dir=str(tmp_path), cluster_size=3) as srv:
        nc = await nats.connect(srv.url)
        await _api(
            nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3, "allow_direct": True}
        )
        await _api(
            nc,
            "$JS.API.STREAM.UPDATE.S",
            {"name": "S", "subjects": ["s"], "num_replicas": 3, "allow_direct": True, "max_msgs": 3},
        )
        await _api(nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "mirror": {"name": "S"}})
        await _api(nc, "$JS.API.STREAM.CREATE.GONE", {"name": "GONE", "subjects": ["gone"]})
        await _api(nc, "$JS.API.STREAM.DELETE.GONE")
        for i in range(5):
            await _api(nc, "s", b"%d" % i)
        await nc.close()
    assert not (tmp_path / "jetstream" / "$G" / "streams" / "GONE").exists()
    async with jsemu.Server(store_dir=str(tmp_path), cluster_size=3) as srv:
        nc = await nats.connect(srv.url)
        assert (await _api(nc, "$JS.API.STREAM.NAMES"))["streams"] == ["M", "S"]
        info = await _api(nc, "$JS.API.STREAM.INFO.S")
        assert (info["config"]["max_msgs"], info["state"]["messages"], info["state"]["first_seq"]) == (3, 3, 3)
        assert [r["name"] for r in info["cluster"]["replicas"]] == ["n2", "n3"]
        # Every peer came back with the data: a Direct Get through n3 sees it.
        srv.control.responder_policy("prefer", "n3")
        msg = await nc.request("$JS.API.DIRECT.GET.S", b'{"seq":5}', timeout=5)
        assert msg.data == b"4" and srv.control.answers()[-1].peer == "n3"
        # The mirror resumes where it stopped.
        await _api(nc, "s", b"5")
        mirror = await _api(nc, "$JS.API.STREAM.INFO.M")
        assert (mirror["state"]["last_seq"], mirror["state"]["messages"]) == (6, 6)
        await nc.close()
