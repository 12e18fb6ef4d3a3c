"""SIGKILL while acknowledged publishes are in flight, restart on the same store dir: every
acknowledged message is there with its sequence and payload, on jsemu as on nats-server.
Five trials each, killed after a random number of acks (quick: a few thousand publishes)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
import signal
from pathlib import Path

import nats
import pytest

from .test_restart_recovery import Serve


async def _publish_until_killed(server: Serve, kill_after: int) -> dict[int, bytes]:
    """Publish with up to 64 acks in flight; SIGKILL the server once ``kill_after`` are in.
    Returns the acknowledged ones (seq -> payload)."""

    async def quiet(_: Exception) -> None:
        """The connection dies with the server: expected here."""

    nc = await nats.connect(f"nats://127.0.0.1:{server.port}", allow_reconnect=False, error_cb=quiet)
    js = nc.jetstream(timeout=5)
    await js.add_stream(name="C", subjects=["c.*"], storage="file")
    acked: dict[int, bytes] = {}
    killed = asyncio.Event()

    async def one(i: int) -> None:
        data = b"payload-%d" % i
        try:
            ack = await js.publish(f"c.{i % 7}", data)
        except Exception:  # noqa: BLE001 - in flight when the server died: not acknowledged
            return
        acked[ack.seq] = data
        if len(acked) >= kill_after and not killed.is_set():
            killed.set()
            server.proc.send_signal(signal.SIGKILL)

    i = 0
    while not killed.is_set() and i < 20_000:
        await asyncio.gather(*(one(i + k) for k in range(64)))
        i += 64
    await asyncio.to_thread(server.proc.wait, 10)
    with contextlib.suppress(Exception):  # the connection died with the server
        await nc.close()
    return acked


async def _stored(port: int, seqs: list[int]) -> dict[int, bytes | None]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    out: dict[int, bytes | None] = {}
    for seq in seqs:
        reply = json.loads((await nc.request("$JS.API.STREAM.MSG.GET.C", json.dumps({"seq": seq}).encode())).data)
        msg = reply.get("message")
        out[seq] = None if msg is None else base64.b64decode(msg["data"])
    await nc.close()
    return out


@pytest.mark.parametrize("kind", ["jsemu", "real"])
async def test_nothing_acknowledged_is_lost_to_sigkill(tmp_path: Path, kind: str) -> None:
    rng = random.Random(2115)
    for trial in range(5):
        store = tmp_path / f"{kind}-{trial}"
        first = await asyncio.to_thread(Serve, kind, store)
        acked = await _publish_until_killed(first, rng.randrange(200, 2000))
        second = await asyncio.to_thread(Serve, kind, store)
        try:
            stored = await _stored(second.port, sorted(acked))
        finally:
            await asyncio.to_thread(second.stop)
        lost = {seq for seq, data in acked.items() if stored[seq] != data}
        assert not lost, f"trial {trial}: {len(lost)} of {len(acked)} acknowledged messages lost"
        assert len(acked) >= 200
