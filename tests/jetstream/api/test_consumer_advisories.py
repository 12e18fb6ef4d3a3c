"""Consumer action advisories side by side with nats-server:
``$JS.EVENT.ADVISORY.CONSUMER.CREATED|DELETED.<stream>.<consumer>`` (``consumer_action``).

What the binary sends (and jsemu must): one ``create`` for a new durable, named ephemeral
or unnamed ephemeral consumer; nothing when a create finds the same consumer, for an update,
or for a failed create or delete; one ``delete`` for a delete request, for an ephemeral
whose inactive threshold ran out, and for each consumer of a deleted stream (before the
stream's own advisory). The real server sends these from other goroutines than the API
reply and audit, so advisories of one step are compared as sorted lists. Only the event id,
the timestamps and the generated ephemeral name are normalised.
"""

from __future__ import annotations

import asyncio
import re

from support.pair import Pair

from .test_consumer_pause import _EVENT_ID, Advisories

STREAM = "$JS.API.STREAM"
CONSUMER = "$JS.API.CONSUMER"
#: A generated ephemeral name (8 characters of nuid's alphabet), in a subject or the JSON.
_GENERATED = re.compile(r'"consumer":"[0-9A-Za-z]{8}"')


def _action(consumer: str, action: str, stream: str = "S", domain: str = "") -> str:
    tail = f',"domain":"{domain}"' if domain else ""
    return (
        '{"type":"io.nats.jetstream.advisory.v1.consumer_action","id":"<id>","timestamp":"<ts>",'
        f'"stream":"{stream}","consumer":"{consumer}","action":"{action}"{tail}}}'
    )


async def expect_sorted(adv: Advisories, n: int, timeout: float = 2.0) -> list[str]:
    """``n`` advisories from each side, equal as sorted lists (arrival order is a race)."""
    got = await asyncio.gather(
        *(Advisories._take(c, s, n, timeout) for c, s in zip(adv.clients, adv.sides, strict=True))
    )
    emu, real = (sorted(_generated(t.strip()) for t in side) for side in got)
    assert emu == real
    assert len(real) == n, real
    return real


def _generated(text: str) -> str:
    return _GENERATED.sub('"consumer":"<gen>"', text)


def _create(name: str, **config: object) -> tuple[str, dict[str, object]]:
    cfg = {"ack_policy": "explicit", **config}
    if name:
        return f"{CONSUMER}.CREATE.S.{name}", {"stream_name": "S", "config": {"name": name, **cfg}}
    return f"{CONSUMER}.CREATE.S", {"stream_name": "S", "config": cfg}


async def test_consumer_create_update_delete_advisories(pair: Pair) -> None:
    await pair.same(f"{STREAM}.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    adv = await Advisories.listen(pair, ("$JS.EVENT.ADVISORY.CONSUMER.>",))
    try:
        durable = {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}
        await pair.same(f"{CONSUMER}.DURABLE.CREATE.S.D", durable)
        assert await expect_sorted(adv, 1) == [_action("D", "create")]
        await pair.same(f"{CONSUMER}.DURABLE.CREATE.S.D", durable)  # the same one: none
        changed = {"stream_name": "S", "config": {**durable["config"], "description": "x"}}  # type: ignore[dict-item]
        await pair.same(f"{CONSUMER}.DURABLE.CREATE.S.D", changed)  # an update: none
        refused = {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "none"}}
        await pair.same(f"{CONSUMER}.DURABLE.CREATE.S.D", refused)  # 10012: none
        await pair.same(*_create("X", ack_policy="bogus"))  # a bad config: none
        await expect_sorted(adv, 0)
        await pair.same(*_create("E"))  # a named ephemeral
        emu, real = await pair.request(*_create(""))  # a generated name (differs per side)
        assert '"error"' not in real and '"error"' not in emu
        assert await expect_sorted(adv, 2) == sorted([_action("E", "create"), _action("<gen>", "create")])
        await pair.same(f"{CONSUMER}.DELETE.S.D")
        assert await expect_sorted(adv, 1) == [_action("D", "delete")]
        await pair.same(f"{CONSUMER}.DELETE.S.D")  # 10014: none
        await expect_sorted(adv, 0)
        await pair.same(f"{STREAM}.DELETE.S")  # each consumer of the stream goes
        await adv.expect_after_stream_delete([_action("E", "delete"), _action("<gen>", "delete")], normalise=_generated)
    finally:
        await adv.close()


async def test_stream_delete_sends_a_delete_per_consumer_and_its_own(pair: Pair) -> None:
    await pair.same(f"{STREAM}.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    await pair.same(*_create("A", durable_name="A"))
    adv = await Advisories.listen(pair, ("$JS.EVENT.ADVISORY.CONSUMER.>", "$JS.EVENT.ADVISORY.STREAM.>"))
    try:
        await pair.same(f"{STREAM}.DELETE.S")
        stream_deleted = (
            '{"type":"io.nats.jetstream.advisory.v1.stream_action","id":"<id>","timestamp":"<ts>",'
            '"stream":"S","action":"delete"}'
        )
        await adv.expect_after_stream_delete([_action("A", "delete"), stream_deleted], normalise=_generated)
    finally:
        await adv.close()


async def test_inactive_ephemeral_sends_delete(pair: Pair) -> None:
    await pair.same(f"{STREAM}.CREATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    adv = await Advisories.listen(pair, ("$JS.EVENT.ADVISORY.CONSUMER.DELETED.>",))
    try:
        await pair.same(*_create("T", inactive_threshold=100_000_000))
        # The real server looks at inactivity on a timer of its own (about a second here):
        # allow it a few seconds before the usual per-step collection.
        for client, side in zip(adv.clients, adv.sides, strict=True):
            frame = await client.next_frame(8.0)
            while frame is not None and frame.startswith(b"INFO"):  # the INFO after the first PONG
                frame = await client.next_frame(8.0)
            assert frame is not None and frame.startswith(b"MSG "), (side.name, frame)
            text = _EVENT_ID.sub('"id":"<id>"', side.scrub(frame.split(b"\r\n", 1)[1].decode()))
            assert text.strip() == _action("T", "delete")
            assert not [f for f in await client.round_trip() if not f.startswith(b"INFO")]
    finally:
        await adv.close()
