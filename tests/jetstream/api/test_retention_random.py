"""Random scenarios on interest and work-queue streams, side by side with nats-server: seeded
sequences of publishes, consumer creates (random filters and ack policies, refusals
included) and deletes, fetches, acks, terms, naks and purges; every reply, every pulled frame
and the stream info after each step must be the real server's.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import pytest
from support.pair import Pair

from .test_consumers import CREATE, NEXT, _req, ack, pull_frames

SUBJECTS = ["s.a", "s.b", "s.c.x"]
FILTERS = [None, "s.a", "s.b", "s.c.*", "s.*"]
STEPS = 30


@dataclass
class Live:
    ack_policy: str
    pending: list[tuple[str, str]] = field(default_factory=list)  # (jsemu, real) ack subjects


async def _step(pair: Pair, rng: random.Random, retention: str, consumers: dict[str, Live], n: int) -> str:
    choice = rng.choices(["pub", "create", "fetch", "ack", "delete", "purge"], [5, 2, 4, 4, 1, 0.5])[0]
    if choice == "create" and len(consumers) < 4:
        name = f"C{n}"
        ack_policy = "explicit" if retention == "workqueue" else rng.choice(["explicit", "all", "none"])
        cfg: dict[str, object] = {"durable_name": name, "ack_policy": ack_policy}
        filt = rng.choice(FILTERS)
        if filt is not None:
            cfg["filter_subject"] = filt
        reply = await pair.same(f"{CREATE}.{name}", _req(cfg))
        if "error" not in reply:
            consumers[name] = Live(ack_policy)
        return f"create {cfg}"
    if choice == "fetch" and consumers:
        name = rng.choice(sorted(consumers))
        batch = rng.randint(1, 4)
        e, r = await pull_frames(pair, f"{NEXT}.{name}", {"batch": batch, "no_wait": True}, batch + 1, timeout=0.25)
        assert e.frames == r.frames
        if consumers[name].ack_policy != "none":
            consumers[name].pending.extend(zip(e.acks, r.acks, strict=True))
        return f"fetch {name} {batch}"
    if choice == "ack" and any(c.pending for c in consumers.values()):
        name = rng.choice(sorted(n for n, c in consumers.items() if c.pending))
        live = consumers[name]
        i = rng.randrange(len(live.pending))
        kind = rng.choice(["+ACK", "+ACK", "+TERM", "-NAK"])
        emu_subject, real_subject = live.pending[i]
        if kind == "-NAK":
            await ack(pair, emu_subject, real_subject, kind)
        else:
            del live.pending[i]
            await ack(pair, emu_subject, real_subject, kind, reply=True)
        return f"{kind} {name} {real_subject}"
    if choice == "delete" and consumers:
        name = rng.choice(sorted(consumers))
        await pair.same(f"$JS.API.CONSUMER.DELETE.S.{name}")
        del consumers[name]
        return f"delete {name}"
    if choice == "purge":
        subject = rng.choice([None, *SUBJECTS])
        await pair.same("$JS.API.STREAM.PURGE.S", {"filter": subject} if subject else {})
        return f"purge {subject}"
    subject = rng.choice(SUBJECTS)
    await pair.same(subject, "x")
    return f"pub {subject}"


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("retention", ["interest", "workqueue"])
async def test_random_retention_scenario(pair: Pair, retention: str, seed: int) -> None:
    rng = random.Random(f"{retention}-{seed}")
    await pair.create("S", subjects=["s.>"], retention=retention)
    consumers: dict[str, Live] = {}
    done: list[str] = []
    for n in range(STEPS):
        done.append(await _step(pair, rng, retention, consumers, n))
        await asyncio.sleep(0.02)  # ack none deliveries are acked on the stream's own queue
        emu, real = await pair.request("$JS.API.STREAM.INFO.S")
        assert emu == real, done
    for name in consumers:
        await pair.same(f"$JS.API.CONSUMER.INFO.S.{name}")
