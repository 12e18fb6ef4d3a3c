"""The control lines of what the server itself sends, byte for byte beside nats-server 2.15.1.

nats-server writes ``MSG <subject> <sid> <reply> <size>`` with the reply and its space
whenever the reply is not nil (``msgHeader``). What its server send queue delivers
(``sendInternalAccountMsg``, ``publishAdvisory``, ``$SYS`` replies and events) has an empty,
non-nil reply, so those frames carry two spaces before the size: the API audit, atomic
batch and snapshot/restore advisories, a restore's chunk answers and final reply, ``$SYS`` answers and
events. What a stream or consumer queue sends (API responses travelling back through the
account's import, stream and consumer advisories, Direct Get replies, deliveries) has a nil
reply and one space. Only the size fields are blanked (ids, times and server names change
payload lengths); every space, subject, sid and reply is compared.
"""

from __future__ import annotations

import json
from pathlib import Path

from server.test_system_account import _pair
from support.rawclient import RawClient

_BASE = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}


def _line(frame: bytes) -> bytes:
    """A message frame's control line with its size field(s) blanked, spaces kept."""
    fields = frame.split(b"\r\n", 1)[0].split(b" ")
    sizes = 2 if fields[0] == b"HMSG" else 1
    if len(fields) > 3 + sizes and fields[3].startswith(b"$JS.ACK."):  # its time and pending tokens
        fields[3] = fields[3].rsplit(b".", 2)[0] + b".T.P"
    return b" ".join(fields[:-sizes] + [b"N"] * sizes)


def _messages(frames: list[bytes]) -> list[bytes]:
    return [f for f in frames if f.startswith((b"MSG ", b"HMSG "))]


async def _quiet(client: RawClient, wait: float = 0.3) -> list[bytes]:
    """Every frame until ``wait`` seconds pass without one, then a PING round trip."""
    out = []
    while (frame := await client.next_frame(wait)) is not None:
        out.append(frame)
    return out + await client.round_trip()


async def _script(port: int) -> dict[str, list[bytes]]:
    """One user of A and one of SYS; each step's control lines, sorted (two server queues
    may deliver a step's frames in either order on the binary)."""
    sys_user = await RawClient.connect(port, {**_BASE, "user": "sys", "pass": "sys"})
    sys_user.send(b"SUB $SYS.ACCOUNT.A.CONNECT 1\r\nSUB _INBOX.s 2\r\n")
    await sys_user.round_trip()
    a = await RawClient.connect(port, {**_BASE, "user": "a", "pass": "a"})
    # A queue group on the audit too: its frames are routed one by one, not from a plan.
    a.send(b"SUB _INBOX.a 1\r\nSUB $JS.EVENT.> 2\r\nSUB $JS.EVENT.ADVISORY.API q 5\r\n")
    steps: dict[str, list[bytes]] = {}

    async def step(name: str, data: bytes) -> list[bytes]:
        a.send(data)
        frames = _messages(await _quiet(a))
        steps[name] = sorted(map(_line, frames))
        return frames

    async def request(name: str, subject: str, body: bytes, reply: str = "_INBOX.a") -> list[bytes]:
        return await step(name, b"PUB %s %s %d\r\n%s\r\n" % (subject.encode(), reply.encode(), len(body), body))

    await a.round_trip()
    steps["connect event"] = [_line(f) for f in _messages(await _quiet(sys_user))]
    sys_user.send(b"PUB $SYS.REQ.SERVER.PING.IDZ _INBOX.s 0\r\n\r\n")
    steps["$SYS answer"] = [_line(f) for f in _messages(await _quiet(sys_user))]

    await request("account info", "$JS.API.INFO", b"")
    cfg = json.dumps(
        {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_direct": True, "allow_atomic": True}
    )
    await request("stream create", "$JS.API.STREAM.CREATE.S", cfg.encode())
    await request("publish", "s.a", b"hi")
    await request("direct get", "$JS.API.DIRECT.GET.S", b'{"seq":1}')
    await request("msg get", "$JS.API.STREAM.MSG.GET.S", b'{"seq":1}')
    durable = b'{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}'
    await request("consumer create", "$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable)
    await request("pull", "$JS.API.CONSUMER.MSG.NEXT.S.D", b"1")
    hdr = b"NATS/1.0\r\nNats-Batch-Id: b\r\nNats-Batch-Sequence: 2\r\n\r\n"
    open_it = hdr.replace(b"Sequence: 2", b"Sequence: 1")
    await step(
        "batch abandoned",
        b"".join(b"HPUB s.b _INBOX.a %d %d\r\n%sx\r\n" % (len(h), len(h) + 1, h) for h in (open_it, hdr + b"")[:1])
        + b"HPUB s.b _INBOX.a %d %d\r\n%sx\r\n" % (len(hdr), len(hdr) + 1, hdr.replace(b"Sequence: 2", b"Sequence: 3")),
    )
    snap = b'{"deliver_subject":"_INBOX.a.snap"}'
    a.send(b"SUB _INBOX.a.snap 3\r\n")
    (archive,) = [
        f.split(b"\r\n", 1)[1][:-2]
        for f in await request("snapshot", "$JS.API.STREAM.SNAPSHOT.S", snap)
        if f.startswith(b"MSG _INBOX.a.snap ") and len(f.split(b"\r\n", 1)[1]) > 2
    ]
    await request("delete", "$JS.API.STREAM.DELETE.S", b"")
    restore = await request("restore", "$JS.API.STREAM.RESTORE.S", b'{"config":%s}' % cfg.encode())
    (answer,) = [f for f in restore if f.startswith(b"MSG _INBOX.a ")]
    upload = json.loads(answer.split(b"\r\n", 1)[1])["deliver_subject"]
    # One step: nats-server creates the stream when the archive's end is read, jsemu at the
    # empty chunk, so the stream's advisory comes one step apart.
    chunk = b"PUB %s _INBOX.a %d\r\n%s\r\n" % (upload.encode(), len(archive), archive)
    await step("restore upload", chunk + b"PUB %s _INBOX.a 0\r\n\r\n" % upload.encode())
    for client in (a, sys_user):
        await client.close()
    return steps


async def test_control_lines_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path):  # the system account's file: accounts SYS and A
        got = {side: await _script(port) for side, port in pair.ports.items()}
        assert list(got["jsemu"]) == list(got["real"])
        for name, real in got["real"].items():
            emu = got["jsemu"][name]
            if name == "delete":
                # The binary queues the deleted stream's and consumer's advisories on the
                # stream's queue, then quits that queue's loop: one can be lost (its select;
                # seen on a loaded machine). jsemu sends all five frames.
                assert len(emu) == 5 and set(real) <= set(emu), (emu, real)
            else:
                assert emu == real, name
        # The rule itself, so a change on both sides cannot pass unnoticed.
        assert got["real"]["$SYS answer"] == [b"MSG _INBOX.s 2  N"]
        assert b"MSG $JS.EVENT.ADVISORY.API 2  N" in got["real"]["account info"]
        assert b"MSG $JS.EVENT.ADVISORY.API 5  N" in got["real"]["account info"]
        assert b"MSG _INBOX.a 1 N" in got["real"]["account info"]
