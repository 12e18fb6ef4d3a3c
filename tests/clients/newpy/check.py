"""Drive one server with the newest nats.py packages and print comparable results as JSON.

Run under the new-clients interpreter (``nats-core``, ``nats-jetstream``, ``nats-key-value``,
Python 3.13+), never the test venv: these packages install a ``nats`` namespace that collides with
nats-py's. Usage: ``check.py URL NAME SCENARIO``; NAME prefixes every stream and bucket, so runs
against a shared server do not meet. Each step records its result or the error it raised (the
exception's class and message), so one divergence never hides the next; nothing time-dependent
(timestamps, consumer names the client makes up) is printed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict, is_dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from nats.client import connect
from nats.jetstream import new as jetstream_new
from nats.key_value import KeyValueConfig, create_key_value, delete_key_value

RESULTS: dict[str, Any] = {}


def plain(value: Any) -> Any:
    """A JSON-able form of a result, without timestamps."""
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not isinstance(v, datetime)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, timedelta):
        return value.total_seconds()
    return value


def failure(exc: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"error": type(exc).__name__}
    for attr in ("code", "error_code", "description", "status"):
        if getattr(exc, attr, None) is not None:
            out[attr] = plain(getattr(exc, attr))
    if len(out) == 1:
        out["message"] = str(exc)
    return out


async def step(name: str, run: Callable[[], Awaitable[Any]], view: Callable[[Any], Any] = plain) -> Any:
    """Run one step; record ``view`` of its result, or the error it raised."""
    try:
        value = await asyncio.wait_for(run(), 10)
        RESULTS[name] = plain(view(value))
    except Exception as exc:  # noqa: BLE001 - the error is the result
        RESULTS[name] = failure(exc)
        return None
    return value


def nothing(_: Any) -> None:
    return None


def msg_view(msg: Any) -> dict[str, Any]:
    meta = msg.metadata
    return {
        "subject": msg.subject,
        "data": msg.data.decode(),
        "stream_seq": meta.sequence.stream,
        "consumer_seq": meta.sequence.consumer,
        "delivered": meta.num_delivered,
        "pending": meta.num_pending,
    }


def stored_view(msg: Any) -> dict[str, Any]:
    return {
        "subject": msg.subject,
        "seq": msg.sequence,
        "data": msg.data,
        "headers": msg.headers and msg.headers.asdict(),
    }


def info_view(info: Any) -> dict[str, Any]:
    st = info.state
    return {
        "messages": st.messages,
        "first": st.first_sequence,
        "last": st.last_sequence,
        "num_subjects": st.num_subjects,
        "subjects": st.subjects,
        "deleted": st.deleted,
    }


async def core(nc: Any, name: str) -> None:
    sub = await nc.subscribe(f"{name}.core.*")
    await nc.publish(f"{name}.core.a", b"one", headers={"X-A": "1"})
    await nc.publish(f"{name}.core.b", b"two")
    await nc.flush()

    async def two() -> list[Any]:
        got = [await sub.next(timeout=2), await sub.next(timeout=2)]
        return [{"subject": m.subject, "data": m.data.decode(), "x": m.headers and m.headers.get("X-A")} for m in got]

    await step("core.subscribe", two)
    await sub.unsubscribe()
    await step("core.request.no_responders", lambda: nc.request(f"{name}.nobody", b"", timeout=1))


async def streams(js: Any, name: str) -> None:
    s = f"S_{name}"
    stream = await step(
        "stream.create",
        lambda: js.create_stream(name=s, subjects=[f"{name}.s.>"], storage="memory", max_msgs_per_subject=5),
        lambda st: st.info.config.subjects,
    )
    await step("stream.create.again.different", lambda: js.create_stream(name=s, subjects=[f"{name}.x"]))
    for i, subj in enumerate(["a", "b", "a", "c.d", "c.e"]):
        await step(f"publish.{i}", lambda subj=subj, i=i: js.publish(f"{name}.s.{subj}", f"m{i}".encode()))
    await step("publish.msgid", lambda: js.publish(f"{name}.s.a", b"id", headers={"Nats-Msg-Id": "x1"}))
    await step("publish.msgid.dup", lambda: js.publish(f"{name}.s.a", b"id", headers={"Nats-Msg-Id": "x1"}))
    await step(
        "publish.expect.wrong",
        lambda: js.publish(f"{name}.s.a", b"e", headers={"Nats-Expected-Last-Sequence": "2"}),
    )
    await step("publish.no_stream", lambda: js.publish(f"{name}.none", b"x", retry_attempts=0, timeout=2))
    if stream is None:
        return
    await step("stream.info", lambda: _info(stream))
    await step("stream.info.subjects", lambda: _info(stream, subjects_filter=f"{name}.s.c.*"))
    await step("stream.get.2", lambda: stream.get_message(2), stored_view)
    await step("stream.get.last.a", lambda: stream.get_last_message_for_subject(f"{name}.s.a"), stored_view)
    await step("stream.get.missing", lambda: stream.get_message(99))
    await step("stream.delete.msg", lambda: stream.delete_message(3))
    await step("stream.names", lambda: _collect(js.stream_names(subject=f"{name}.s.a")))

    async def update() -> Any:
        info = await js.update_stream(name=s, subjects=[f"{name}.s.>"], max_msgs=100)
        return info.config.max_msgs

    await step("stream.update", update)

    await pull(js, stream, name)
    await ordered(stream)

    await step("stream.purge.filter", lambda: stream.purge(filter=f"{name}.s.c.>"))
    await step("stream.after.purge.filter", lambda: _info(stream))
    await step("stream.purge.keep", lambda: stream.purge(keep=1))
    await step("stream.after.purge.keep", lambda: _info(stream))
    await step("stream.delete", lambda: js.delete_stream(s))
    await step("stream.delete.again", lambda: js.delete_stream(s))


async def _info(stream: Any, **options: Any) -> dict[str, Any]:
    return info_view(await stream.get_info(**options))


async def _collect(aiter: Any) -> list[Any]:
    return [x async for x in aiter]


async def pull(js: Any, stream: Any, name: str) -> None:
    cons = await step(
        "consumer.create",
        lambda: stream.create_consumer(name="pull", ack_policy="explicit", filter_subject=f"{name}.s.a"),
        lambda c: (c.info.name, c.info.num_pending),
    )
    if cons is None:
        return

    async def fetch_two() -> list[Any]:
        batch = await cons.fetch(max_messages=2, max_wait=2)
        out = []
        async for m in batch:
            out.append(msg_view(m))
            await m.ack()
        return out

    await step("consumer.fetch", fetch_two)

    async def next_one() -> Any:
        m = await cons.next(max_wait=2)
        await m.double_ack()
        return msg_view(m)

    await step("consumer.next", next_one)
    await step("consumer.next.empty", lambda: cons.next(max_wait=0.5))

    async def fetch_nowait() -> Any:
        batch = await cons.fetch_nowait(max_messages=5)
        return [msg_view(m) async for m in batch], batch.error and failure(batch.error)

    await step("consumer.fetch_nowait.empty", fetch_nowait)
    await step(
        "consumer.info",
        lambda: cons.get_info(),
        lambda i: (i.delivered["consumer_seq"], i.delivered["stream_seq"], i.ack_floor["stream_seq"], i.num_pending),
    )

    all_cons = await step(
        "consumer.create.all", lambda: stream.create_consumer(name="every", ack_policy="none"), nothing
    )
    if all_cons is not None:

        async def iterate() -> list[Any]:
            out = []
            msgs = await all_cons.messages(max_messages=2, max_wait=2)
            async for m in msgs:
                out.append(msg_view(m))
                if len(out) == 5:
                    break
            await msgs.stop()
            return out

        await step("consumer.messages", iterate)
    await step("consumer.names", lambda: _collect(js.consumer_names(stream.name)), sorted)
    await step("consumer.delete", lambda: stream.delete_consumer("pull"))
    await step("consumer.delete.again", lambda: stream.delete_consumer("pull"))


async def ordered(stream: Any) -> None:
    cons = await step("ordered.create", lambda: stream.ordered_consumer(deliver_policy="last_per_subject"), nothing)
    if cons is None:
        return

    async def read() -> list[Any]:
        batch = await cons.fetch(max_messages=10, max_wait=1)
        return [(m.subject, m.data.decode(), m.metadata.sequence.stream) async for m in batch]

    await step("ordered.fetch", read)
    await cons.close()


async def key_value(js: Any, name: str) -> None:
    bucket = f"B_{name}"
    kv = await step("kv.create", lambda: create_key_value(js, KeyValueConfig(bucket=bucket, history=5)), nothing)
    if kv is None:
        return
    for key in ("a", "ab", "abc", "ac", "b", "ba", "a.b", "ab.b", "x.y.z"):
        await step(f"kv.put.{key}", lambda key=key: kv.put(key, key.encode()))
    await step("kv.put.a.again", lambda: kv.put("a", b"a2"))
    await step("kv.create.a", lambda: kv.create("a", b"no"))
    await step("kv.update.wrong", lambda: kv.update("b", b"no", 1))
    await step("kv.get.a", lambda: kv.get("a"))
    await step("kv.get.a.rev1", lambda: kv.get("a", revision=1))
    await step("kv.get.missing", lambda: kv.get("zz"))
    await step("kv.delete.b", lambda: kv.delete("b"))
    await step("kv.get.b.deleted", lambda: kv.get("b"))
    await step("kv.purge.ba", lambda: kv.purge("ba"))

    async def history(key: str) -> list[Any]:
        return [(e.key, e.value.decode(), e.revision, e.operation.value) async for e in await kv.history(key)]

    await step("kv.history.a", lambda: history("a"))
    await step("kv.history.b", lambda: history("b"))

    async def keys(filter: str) -> list[str]:
        return sorted([k async for k in await kv.keys(filter)])

    for filter in (">", "a.*", "*", "a*", "ab*", "a>", "*.b", "x.>", "*.*.z", "zz"):
        await step(f"kv.keys {filter}", lambda filter=filter: keys(filter))

    async def watch(*filters: str, **options: Any) -> list[Any]:
        async with await kv.watch_filtered(list(filters), **options) as w:
            return [(e.key, e.revision, e.operation.value) async for e in w.values()]

    await step("kv.watch >", lambda: watch(">"))
    await step("kv.watch a.* ab.* history", lambda: watch("a.*", "ab.*", include_history=True))
    await step("kv.watch a b ignore_deletes", lambda: watch("a", "b", ignore_deletes=True))
    for filter in ("a*", "ab*"):
        await step(f"kv.watch {filter}", lambda filter=filter: watch(filter))
    await step("kv.status", lambda: kv.status(), lambda st: (st.bucket, st.values, st.history))
    await step("kv.destroy", lambda: delete_key_value(js, bucket))


async def newer(js: Any, name: str) -> None:
    """What the newest client sends that older ones do not: consumer pause/resume, KV per-key
    TTL (``Nats-TTL``) with limit markers, ``purge_deletes``."""
    s = f"N_{name}"
    stream = await step(
        "newer.stream", lambda: js.create_stream(name=s, subjects=[f"{name}.n.>"], storage="file"), nothing
    )
    if stream is None:
        return
    for i in range(4):
        await step(f"newer.publish.{i}", lambda i=i: js.publish(f"{name}.n.{i % 2}", b"x"), lambda a: a.sequence)
    cons = await step(
        "newer.consumer", lambda: stream.create_consumer(name="c", ack_policy="explicit"), lambda c: c.info.num_pending
    )
    await step("newer.pause", lambda: stream.pause_consumer("c", 4102444800.0))
    await step(
        "newer.paused", lambda: stream.get_consumer_info("c"), lambda i: (i.paused, i.config.pause_until is not None)
    )
    await step("newer.resume", lambda: stream.resume_consumer("c"))
    await step("newer.resumed", lambda: stream.get_consumer_info("c"), lambda i: i.paused)
    if cons is not None:

        async def take_two() -> list[int]:
            batch = await cons.fetch(max_messages=2, max_wait=2)
            return [m.metadata.sequence.stream async for m in batch]

        await step("newer.fetch", take_two)
    await step("newer.delete", lambda: js.delete_stream(s))

    bucket = f"T_{name}"
    kv = await step(
        "newer.kv.create",
        lambda: create_key_value(js, KeyValueConfig(bucket=bucket, history=3, limit_marker_ttl=timedelta(seconds=60))),
        nothing,
    )
    if kv is None:
        return
    await step("newer.kv.create.ttl", lambda: kv.create("t", b"v", ttl=timedelta(seconds=30)))
    await step("newer.kv.get.t", lambda: kv.get("t"), lambda e: (e.key, e.value, e.revision, e.operation.value))
    await step("newer.kv.create.t.again", lambda: kv.create("t", b"v2"))
    await step("newer.kv.purge.ttl", lambda: kv.purge("t", ttl=timedelta(seconds=30)))
    await step("newer.kv.get.t.purged", lambda: kv.get("t"))
    await step("newer.kv.put.d", lambda: kv.put("d", b"1"))
    await step("newer.kv.delete.d", lambda: kv.delete("d", last_revision=3))
    await step("newer.kv.delete.d.stale", lambda: kv.delete("d", last_revision=1))
    await step("newer.kv.purge_deletes", lambda: kv.purge_deletes(older_than=timedelta(seconds=-1)))
    await step("newer.kv.status", lambda: kv.status(), lambda st: (st.values, st.limit_marker_ttl))
    await step("newer.kv.destroy", lambda: delete_key_value(js, bucket))


async def reset(js: Any, name: str) -> None:
    """``CONSUMER.RESET`` (ADR-60) through ``Stream.reset_consumer``."""
    s = f"R_{name}"
    stream = await step("reset.stream", lambda: js.create_stream(name=s, subjects=[f"{name}.r.>"]), nothing)
    if stream is None:
        return
    for i in range(4):
        await js.publish(f"{name}.r.{i}", b"x")
    cons = await step("reset.consumer", lambda: stream.create_consumer(name="c", ack_policy="explicit"), nothing)
    if cons is not None:

        async def take_two() -> list[int]:
            batch = await cons.fetch(max_messages=2, max_wait=2)
            return [m.metadata.sequence.stream async for m in batch]

        await step("reset.fetch", take_two)
    await step(
        "reset.to.3",
        lambda: stream.reset_consumer("c", 3),
        lambda r: (r.reset_seq, r.info.num_pending, r.info.num_ack_pending, r.info.delivered["consumer_seq"]),
    )
    await step("reset.to.ack_floor", lambda: stream.reset_consumer("c"), lambda r: r.reset_seq)
    await step("reset.delete", lambda: js.delete_stream(s))


async def main(url: str, name: str, scenario: str) -> None:
    nc = await connect(url, allow_reconnect=False)
    try:
        js = jetstream_new(nc)
        if scenario in ("all", "core"):
            await core(nc, name)
        if scenario in ("all", "streams"):
            await streams(js, name)
        if scenario in ("all", "kv"):
            await key_value(js, name)
        if scenario in ("all", "newer"):
            await newer(js, name)
        if scenario == "reset":
            await reset(js, name)
    finally:
        await nc.close()
    json.dump(RESULTS, sys.stdout, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
