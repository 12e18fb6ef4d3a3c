"""One push-interest scenario, run over raw sockets against any server (the differential test
runs it on jsemu and nats-server and compares the transcripts).

A scenario is a consumer (with or without ``deliver_group``) on ``dlv.<stream>`` and a list of
steps over a few subscriptions on two connections: ``sub i``, ``unsub i``, ``create`` (the
consumer, once) and ``check`` (the consumer's ``push_bound``, then one message published and
what each subscription received of it). The transcript is the list of what each step showed.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from support.rawclient import RawClient

CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}
#: The deliver subject, and the subscription subjects a subscriber may use
#: (``{d}`` is the deliver subject, ``{s}`` the stream name).
SUBJECTS = {"exact": "{d}", "star": "dlv.*", "gt": "dlv.>", "all": ">", "star1": "*.{s}"}
#: A second deliver subject, for updates that move the consumer there (not drawn).
OTHER = {"exact2": "dlv2.{s}"}


@dataclass(frozen=True)
class SubSpec:
    conn: int  # 0 or 1: which subscriber connection
    kind: str  # a key of SUBJECTS
    queue: str | None  # None: a plain subscription


def label(spec: SubSpec) -> str:
    """What a delivery to this subscription is recorded as: the members of a queue group are
    alike (which one gets a message is random on both servers)."""
    return f"queue {spec.queue}" if spec.queue else f"{spec.conn}:{spec.kind}"


async def _request(ctl: RawClient, subject: str, body: dict[str, Any] | None | bytes) -> dict[str, Any]:
    payload = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
    ctl.send(b"PUB %s _CTL.r %d\r\n%s\r\n" % (subject.encode(), len(payload), payload))
    while True:
        frame = await ctl.next_frame(5.0)
        assert frame is not None, f"no reply to {subject}"
        if frame == b"PING\r\n":
            ctl.send(b"PONG\r\n")
            continue
        if frame.startswith(b"MSG _CTL.r "):
            body_start = frame.index(b"\r\n") + 2
            result: dict[str, Any] = json.loads(frame[body_start:-2])
            return result


async def run(
    port: int,
    stream: str,
    group: str | None,
    specs: list[SubSpec],
    steps: list[tuple[str, int]],
    updates: list[dict[str, str]] | None = None,
    extra: dict[str, Any] | None = None,
) -> list[Any]:
    """The transcript of ``steps``; ``("update", i)`` sends the consumer's config again with
    ``updates[i]`` applied (``{d2}`` in a value: the second deliver subject); ``extra``: more
    of the consumer's config; ``("idle", 0)``: which subscriptions got idle heartbeats in
    0.5 s."""
    deliver = f"dlv.{stream}"
    ctl = await RawClient.connect(port, CONNECT)
    conns = [await RawClient.connect(port, CONNECT) for _ in range(2)]
    out: list[Any] = []
    got: list[str] = []  # deliveries since the last check (they may come a little late)
    seq = 0
    try:
        ctl.send(b"SUB _CTL.r 1\r\n")
        for c in (ctl, *conns):
            await c.round_trip()
        created = await _request(
            ctl, f"$JS.API.STREAM.CREATE.{stream}", {"name": stream, "subjects": [f"in.{stream}"], "storage": "memory"}
        )
        assert "error" not in created, created
        cfg: dict[str, Any] = {"durable_name": "C", "deliver_subject": deliver, "ack_policy": "none", **(extra or {})}
        if group:
            cfg["deliver_group"] = group
        for op, i in steps:
            if op == "sub":
                spec = specs[i]
                subject = {**SUBJECTS, **OTHER}[spec.kind].format(d=deliver, s=stream)
                q = f" {spec.queue}" if spec.queue else ""
                conns[spec.conn].send(f"SUB {subject}{q} {i + 1}\r\n".encode())
                got += await _received(conns, specs)
            elif op == "unsub":
                conns[specs[i].conn].send(f"UNSUB {i + 1}\r\n".encode())
                got += await _received(conns, specs)
            elif op in ("create", "update"):
                if op == "update":
                    assert updates is not None
                    cfg.update({k: v.format(d2=f"dlv2.{stream}") for k, v in updates[i].items()})
                reply = await _request(
                    ctl, f"$JS.API.CONSUMER.CREATE.{stream}.C", {"stream_name": stream, "config": cfg}
                )
                out.append((op, reply.get("error"), reply.get("push_bound", False)))
            elif op == "idle":
                # A heartbeat already on its way when a change was made does not count.
                await asyncio.sleep(0.1)
                got = [g for g in got + await _received(conns, specs) if "Heartbeat" not in g]
                await asyncio.sleep(0.5)
                got += await _received(conns, specs)
                out.append((op, sorted(set(got))))
                got = []
            else:  # check
                # The real server follows interest on its consumer's goroutine: give it a moment.
                await asyncio.sleep(0.05)
                info = await _request(ctl, f"$JS.API.CONSUMER.INFO.{stream}.C", None)
                bound = info.get("push_bound", False)
                if "error" in info:  # gone (an inactive threshold)
                    out.append((op, info["error"]["err_code"]))
                    continue
                seq += 1
                await _request(ctl, f"in.{stream}", str(seq).encode())  # the PubAck
                await _wait_delivered(ctl, stream, seq, bound)
                got += await _received(conns, specs)
                out.append((op, bound, sorted(got)))
                got = []
        await _request(ctl, f"$JS.API.STREAM.DELETE.{stream}", None)
    finally:
        for c in (ctl, *conns):
            await c.close()
    return out


async def _wait_delivered(ctl: RawClient, stream: str, seq: int, bound: bool) -> None:
    """Until the consumer has delivered ``seq`` (when bound), or a short while (when not)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (3.0 if bound else 0.1)
    while loop.time() < deadline:
        info = await _request(ctl, f"$JS.API.CONSUMER.INFO.{stream}.C", None)
        if info.get("delivered", {}).get("stream_seq", 0) >= seq:
            return
        await asyncio.sleep(0.02)


async def _received(conns: list[RawClient], specs: list[SubSpec]) -> list[str]:
    """What the subscriber connections received so far (each read up to a PING/PONG)."""
    got = []
    for conn in conns:
        for frame in await conn.round_trip():
            shown = _show(frame, specs)
            if shown is not None:
                got.append(shown)
    return sorted(got)


def _show(frame: bytes, specs: list[SubSpec]) -> str | None:
    """A delivery (a message with a ``$JS.ACK`` reply) as ``<label> <payload>``; other
    messages (a ``>`` subscriber sees the API traffic too) and INFOs are left out; anything
    else (an -ERR) is shown as it is."""
    if frame.startswith(b"MSG "):
        head, _, body = frame.partition(b"\r\n")
        args = head.split()
        if len(args) != 5 or not args[3].startswith(b"$JS.ACK."):
            return None
        return f"{label(specs[int(args[2]) - 1])} {body[:-2].decode()}"
    if frame.startswith(b"HMSG "):  # a heartbeat or flow control request: its status line
        head, _, rest = frame.partition(b"\r\n")
        status = rest.partition(b"\r\n")[0].decode()
        return f"{label(specs[int(head.split()[2]) - 1])} {status}"
    if frame.startswith(b"INFO "):
        return None
    return frame.decode(errors="replace").strip()
