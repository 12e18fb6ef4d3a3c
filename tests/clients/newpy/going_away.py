"""The newest nats.py packages when a consumer or stream goes away: print comparable results as JSON.

Run under the new-clients interpreter (see ``check.py``). Usage: ``going_away.py URL NAME``;
NAME prefixes every stream. Each case starts a wait (a pull consumer's ``next`` / ``fetch`` /
``messages()``, an ordered consumer's ``next`` / ``fetch`` / ``messages()``), removes what it
waits on (the server-side consumer, the stream, or the stream and then a new stream of the same
name), and records what the wait gave: the messages (data and stream sequence), the error
raised or left on the batch (class and message), and whether it ended well before its own
expiry (``early``), so a server that sends no status, or the wrong one, shows as a difference.
The restart cases are ``restart.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nats.client import connect
from nats.jetstream import new as jetstream_new

RESULTS: dict[str, Any] = {}
#: A wait's own expiry; ``early`` is "ended within EARLY seconds", well before it.
WAIT = 6.0
EARLY = 3.0


def failure(exc: BaseException | None) -> Any:
    if exc is None:
        return None
    return {"error": type(exc).__name__, "message": str(exc)}


async def waiting(js: Any, stream: str, consumer: str) -> None:
    """Until the consumer has a pull request waiting."""
    for _ in range(300):
        info = await (await js.get_stream(stream)).get_consumer_info(consumer)
        if info.num_waiting > 0:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the pull never waited")


async def case(name: str, wait: Callable[[], Awaitable[Any]], remove: Callable[[], Awaitable[Any]]) -> None:
    """Start ``wait``, run ``remove`` once it waits, record what ``wait`` gave."""
    start = time.monotonic()
    task = asyncio.ensure_future(wait())
    try:
        await remove()
        value = await asyncio.wait_for(task, 20)
        result: dict[str, Any] = {"value": value}
    except Exception as exc:  # noqa: BLE001 - the error is the result
        task.cancel()
        result = {"raised": failure(exc)}
    result["early"] = time.monotonic() - start < EARLY
    RESULTS[name] = result


async def after(name: str, wait: Callable[[], Awaitable[Any]]) -> None:
    """Record what one more call of ``wait`` gives (nothing is removed meanwhile)."""
    try:
        RESULTS[name] = {"value": await asyncio.wait_for(wait(), 20)}
    except Exception as exc:  # noqa: BLE001 - the error is the result
        RESULTS[name] = {"raised": failure(exc)}


def seen(m: Any) -> str:
    return f"{m.data.decode()}@{m.metadata.sequence.stream}"


async def pull_cases(js: Any, name: str) -> None:
    """A durable pull consumer's ``next``, ``fetch`` and ``messages()`` while its consumer or its
    stream is deleted."""
    for what in ("consumer", "stream", "recreated"):
        for how in ("next", "fetch", "messages"):
            s = f"{name}_p_{what}_{how}"
            stream = await js.create_stream(name=s, subjects=[f"{s}.>"], storage="memory")
            cons = await stream.create_consumer(name="D", ack_policy="explicit")

            async def wait(cons: Any = cons, how: str = how) -> Any:
                if how == "next":
                    return seen(await cons.next(max_wait=WAIT))
                if how == "fetch":
                    batch = await cons.fetch(max_messages=3, max_wait=WAIT)
                    return [seen(m) async for m in batch], failure(batch.error)
                msgs = await cons.messages(max_messages=3, max_wait=WAIT)
                return [seen(m) async for m in msgs]

            async def remove(s: str = s, what: str = what) -> None:
                await waiting(js, s, "D")
                if what == "consumer":
                    await (await js.get_stream(s)).delete_consumer("D")
                    return
                await js.delete_stream(s)
                if what == "recreated":
                    await js.create_stream(name=s, subjects=[f"{s}.>"], storage="memory")
                    await js.publish(f"{s}.a", b"n1")

            await case(f"pull.{how}.{what}", wait, remove)
            # the same consumer object once more: its consumer is gone for good
            await after(f"pull.{how}.{what}.after", wait)
            try:
                await js.delete_stream(s)
            except Exception:  # noqa: BLE001, S110 - gone already
                pass


async def waiting_any(js: Any, s: str) -> str:
    """The name of the (ordered consumer's newest) consumer once a pull request waits on it."""
    stream = await js.get_stream(s)
    for _ in range(300):
        async for name in js.consumer_names(s):
            try:
                if (await stream.get_consumer_info(name)).num_waiting > 0:
                    return str(name)
            except Exception:  # noqa: BLE001, S112 - the one the client just deleted
                continue
        await asyncio.sleep(0.01)
    raise AssertionError("the pull never waited")


async def ordered_cases(js: Any, name: str) -> None:
    """An ordered consumer's ``next``, ``fetch`` and ``messages()`` while its consumer is deleted,
    its stream is deleted, or its stream is deleted and made again (with new messages)."""
    for what in ("consumer", "stream", "recreated"):
        for how in ("next", "fetch", "messages"):
            s = f"{name}_o_{what}_{how}"
            stream = await js.create_stream(name=s, subjects=[f"{s}.>"], storage="memory")
            for i in range(2):
                await js.publish(f"{s}.a", f"m{i}".encode())
            cons = await stream.ordered_consumer(max_reset_attempts=2)
            first = [seen(m) async for m in await cons.fetch(max_messages=2, max_wait=2)]

            async def wait(cons: Any = cons, how: str = how, what: str = what, s: str = s) -> Any:
                if how == "next":
                    return seen(await cons.next(max_wait=WAIT))
                if how == "fetch":
                    batch = await cons.fetch(max_messages=3, max_wait=WAIT)
                    return [seen(m) async for m in batch], failure(batch.error)
                got = []
                msgs = await cons.messages(max_messages=3, max_wait=WAIT)
                async for m in msgs:
                    got.append(seen(m))
                    if len(got) == 2:
                        break
                await msgs.stop()
                return got

            async def remove(s: str = s, what: str = what) -> None:
                consumer = await waiting_any(js, s)
                if what == "consumer":
                    await (await js.get_stream(s)).delete_consumer(consumer)
                    for i in range(2, 4):
                        await js.publish(f"{s}.a", f"m{i}".encode())
                    return
                await js.delete_stream(s)
                if what == "recreated":
                    await js.create_stream(name=s, subjects=[f"{s}.>"], storage="memory")
                    for i in range(2, 6):
                        await js.publish(f"{s}.a", f"n{i}".encode())

            await case(f"ordered.{how}.{what}", wait, remove)
            RESULTS[f"ordered.{how}.{what}"]["first"] = first
            if how != "messages":
                # the next call makes a new consumer from where the last batch ended (or gives up)
                await after(f"ordered.{how}.{what}.after", wait)
            await cons.close()
            try:
                await js.delete_stream(s)
            except Exception:  # noqa: BLE001, S110 - gone already
                pass


async def main(url: str, name: str) -> None:
    nc = await connect(url, allow_reconnect=False)
    try:
        js = jetstream_new(nc)
        await pull_cases(js, name)
        await ordered_cases(js, name)
    finally:
        await nc.close()
    json.dump(RESULTS, sys.stdout, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
