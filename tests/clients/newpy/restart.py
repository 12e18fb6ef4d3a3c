"""The newest nats.py packages across a server restart (same port, same store directory).

Run under the new-clients interpreter (see ``check.py``). Usage: ``restart.py URL NAME``. Makes a
file stream with three messages and takes them with an ordered consumer's ``messages()`` and a
durable pull consumer's ``fetch``; starts a pull ``next()`` and an ordered ``next()`` that wait,
prints ``READY`` once both wait, and waits for the client to reconnect (the test stops and starts
the server meanwhile). Then it records what the two waits gave, publishes three more messages and
takes them with the same ``messages()`` iteration, the pull consumer and the ordered consumer.
Prints ONE JSON object on the last line.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from nats.client import connect
from nats.jetstream import new as jetstream_new

RESULTS: dict[str, Any] = {}
WAIT = 10.0


def seen(m: Any) -> str:
    return f"{m.data.decode()}@{m.metadata.sequence.stream}"


def failure(exc: BaseException | None) -> Any:
    if exc is None:
        return None
    return {"error": type(exc).__name__, "message": str(exc)}


async def outcome(task: asyncio.Future[Any], start: float) -> dict[str, Any]:
    try:
        result: dict[str, Any] = {"value": await asyncio.wait_for(task, 20)}
    except Exception as exc:  # noqa: BLE001 - the error is the result
        result = {"raised": failure(exc)}
    result["before_expiry"] = time.monotonic() - start < WAIT - 1
    return result


async def retry(run: Any) -> Any:
    """Once the client is back (and JetStream with it)."""
    for _ in range(100):
        try:
            return await run()
        except Exception:  # noqa: BLE001 - not back yet
            await asyncio.sleep(0.1)
    raise AssertionError("JetStream never came back")


async def waiting(stream: Any, consumer: str) -> None:
    for _ in range(300):
        if (await stream.get_consumer_info(consumer)).num_waiting > 0:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the pull never waited")


async def main(url: str, name: str) -> None:
    reconnected = asyncio.Event()
    nc = await connect(url, reconnect_max_attempts=0, reconnect_time_wait=0.1, reconnect_time_wait_max=0.2)
    nc.add_reconnected_callback(reconnected.set)
    js = jetstream_new(nc)
    subject = name.lower()
    stream = await js.create_stream(name=name, subjects=[f"{subject}.>"], storage="file")
    for i in range(3):
        await js.publish(f"{subject}.a", f"m{i}".encode())

    ordered = await stream.ordered_consumer()
    msgs = await ordered.messages(max_messages=10, max_wait=5)
    RESULTS["ordered.messages.before"] = [seen(await msgs.__anext__()) for _ in range(3)]

    pull = await stream.create_consumer(name="D", ack_policy="none")
    RESULTS["pull.fetch.before"] = [seen(m) async for m in await pull.fetch(max_messages=3, max_wait=2)]

    start = time.monotonic()
    pull_next = asyncio.ensure_future(pull.next(max_wait=WAIT))
    await waiting(stream, "D")
    other = await stream.ordered_consumer(deliver_policy="new")
    ordered_next = asyncio.ensure_future(other.next(max_wait=WAIT))
    await waiting(stream, other.name)
    print("READY", flush=True)

    await asyncio.wait_for(reconnected.wait(), 30)
    RESULTS["pull.next.across"] = await outcome(pull_next, start)
    RESULTS["ordered.next.across"] = await outcome(ordered_next, start)

    for i in range(3, 6):
        await retry(lambda i=i: js.publish(f"{subject}.a", f"m{i}".encode()))

    async def three_more() -> list[str]:
        return [seen(await msgs.__anext__()) for _ in range(3)]

    try:
        RESULTS["ordered.messages.after"] = await asyncio.wait_for(three_more(), 20)
    except Exception as exc:  # noqa: BLE001 - the error is the result
        RESULTS["ordered.messages.after"] = failure(exc)
    await msgs.stop()

    async def fetch_three() -> Any:
        batch = await pull.fetch(max_messages=3, max_wait=2)
        return [seen(m) async for m in batch], failure(batch.error)

    RESULTS["pull.fetch.after"] = await retry(fetch_three)
    try:
        RESULTS["ordered.next.after"] = seen(await other.next(max_wait=2))
    except Exception as exc:  # noqa: BLE001 - the error is the result
        RESULTS["ordered.next.after"] = failure(exc)
    await ordered.close()
    await other.close()
    await js.delete_stream(name)
    await nc.close()
    print(json.dumps(RESULTS, sort_keys=True, default=str), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
