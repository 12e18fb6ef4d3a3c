"""The JetStream API audit advisory side by side with nats-server: ``$JS.EVENT.ADVISORY.API``
(``io.nats.jetstream.advisory.v1.api_audit``).

Which requests send one (as the binary does): every request an API endpoint answers, errors
included, and one sent without a reply subject; not a message found by ``STREAM.MSG.GET``
(the server sends that one directly), not Direct Gets, not pull requests
(``CONSUMER.MSG.NEXT``), not subjects without an endpoint. The JSON is compared whole, with
the requesting client's block (``start``, ``host``, ``id``, ``acc``, ``user``, ``name``,
``lang``, ``ver``, ``rtt``, ``server``, ``kind``, ``client_type``), ``request`` (left out
when empty), ``response`` and ``domain``; only the event id, times, the client id, the
measured ``rtt`` (which must be there) and server names are normalised. Nothing is sent
while nobody listens.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from server.test_auth import _RealWithConfig
from support.pair import CONNECT, Pair, Side
from support.rawclient import RawClient

import jsemu
from jsemu.config.server_config import load_config

from .test_consumer_pause import Advisories

AUDIT = "$JS.EVENT.ADVISORY.API"
#: The requester tells the server who it is (these come back in the audit's client block).
REQUESTER = {**CONNECT, "name": "auditor", "lang": "python3", "version": "1.2.3"}
_CLIENT_ID = re.compile(r'("client":\{[^}]*"id":)\d+')
_RTT = re.compile(r'"rtt":\d+')


def _scrub(text: str) -> str:
    return _RTT.sub('"rtt":<rtt>', _CLIENT_ID.sub(r"\1<cid>", text.strip()))


async def _requesters(ports: list[int], connect: dict[str, object]) -> list[RawClient]:
    clients = []
    for port in ports:
        client = await RawClient.connect(port, connect)
        client.send(b"SUB _INBOX.audit 1\r\n")
        assert not await client.round_trip()
        clients.append(client)
    return clients


async def _step(
    clients: list[RawClient],
    adv: Advisories,
    subject: str,
    payload: bytes,
    n: int,
    reply: bool = True,
    answered: bool = True,
) -> list[str]:
    """The same request from each side's requester: equal replies, then ``n`` equal audits."""
    inbox = b" _INBOX.audit" if reply else b""
    answers = []
    for client, side in zip(clients, adv.sides, strict=True):
        frames = await client.exchange(b"PUB %s%s %d\r\n%s\r\n" % (subject.encode(), inbox, len(payload), payload))
        if reply and answered and not any(f.startswith(b"MSG") for f in frames):
            # The real server answers from another goroutine: a consumer create's reply came
            # more than 2 s late once under heavy load, so a long wait (only waited out on a bug).
            late = await client.next_frame(10.0)
            frames += [late] if late is not None else []
        # Payloads only: the size in the control line follows the server name's length.
        answers.append([side.scrub(f.split(b"\r\n", 1)[1].decode()) for f in frames if f.startswith(b"MSG")])
    assert answers[0] == answers[1], subject
    return await _audits(adv, n)


async def _audits(adv: Advisories, n: int) -> list[str]:
    """``n`` audit events from each side, equal once normalised (with an ``rtt`` in each).

    Compared in sorted order: nats-server sends the audit from its server send queue and a
    stream's advisories from that stream's own queue (two goroutines), so the order of a
    request's audit and its ``stream_action`` varies from run to run on the binary.
    """
    got = await asyncio.gather(*(Advisories._take(c, s, n) for c, s in zip(adv.clients, adv.sides, strict=True)))
    emu, real = (sorted(_scrub(t) for t in side) for side in got)
    assert emu == real
    assert len(real) == n, real
    for event in real:
        assert "api_audit" not in event or '"rtt":<rtt>' in event
    return real


async def test_api_audit_events(pair: Pair) -> None:
    ports = [_port(pair.emu), _port(pair.real)]
    clients = await _requesters(ports, REQUESTER)
    adv = await Advisories.listen(pair, (AUDIT,))
    try:
        (info,) = await _step(clients, adv, "$JS.API.INFO", b"", 1)
        head = (
            '{"type":"io.nats.jetstream.advisory.v1.api_audit","id":"<id>","timestamp":"<ts>","server":"<server>",'
            '"client":{"start":"<ts>","host":"127.0.0.1","id":<cid>,"acc":"$G","name":"auditor","lang":"python3",'
            '"ver":"1.2.3","rtt":<rtt>,"server":"<server>","kind":"Client","client_type":"nats"},'
            '"subject":"$JS.API.INFO","response":"{\\"type\\":\\"io.nats.jetstream.api.v1.account_info_response\\"'
        )
        assert info.startswith(head), info
        cfg = json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_direct": True}).encode()
        (created,) = await _step(clients, adv, "$JS.API.STREAM.CREATE.S", cfg, 1)
        assert '"request":"{\\"name\\": \\"S\\", \\"subjects\\": [\\"s.\\u003e\\"]' in created
        await _step(clients, adv, "$JS.API.STREAM.INFO.S", b"", 1)
        for client in clients:  # one message to get
            await client.exchange(b"PUB s.a 2\r\nhi\r\n")
        await _step(clients, adv, "$JS.API.DIRECT.GET.S", b'{"seq":1}', 0)  # Direct Get: none
        # A found message is sent outside the API response path (no audit), a miss through it.
        await _step(clients, adv, "$JS.API.STREAM.MSG.GET.S", b'{"seq":1}', 0)
        await _step(clients, adv, "$JS.API.STREAM.MSG.GET.S", b'{"seq":9}', 1)
        durable = b'{"stream_name":"S","config":{"durable_name":"D","ack_policy":"explicit"}}'
        await _step(clients, adv, "$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable, 1)
        await _step(clients, adv, "$JS.API.CONSUMER.MSG.NEXT.S.D", b'{"batch":1}', 0)  # pull: none
        await _step(clients, adv, "$JS.API.NOPE", b"", 0, answered=False)  # no endpoint: none
        (failed,) = await _step(clients, adv, "$JS.API.CONSUMER.DELETE.S.NOPE", b"", 1)  # an error
        assert '\\"err_code\\":10014' in failed
        await _step(clients, adv, "$JS.API.STREAM.NAMES", b"", 1, reply=False)  # no reply: still one
    finally:
        await adv.close()
        for client in clients:
            await client.close()


async def test_api_audit_sent_only_with_a_listener(pair: Pair) -> None:
    """Without a subscriber nothing goes out; a subscriber that came later gets the next one."""
    await pair.same("$JS.API.INFO")
    adv = await Advisories.listen(pair, (AUDIT,))
    try:
        await pair.same("$JS.API.INFO")
        (event,) = await _audits(adv, 1)
        assert '"subject":"$JS.API.INFO"' in event
        for client in adv.clients:
            client.send(b"UNSUB 90\r\n")
            assert not await client.round_trip()
        await pair.same("$JS.API.INFO")
        await _audits(adv, 0)
    finally:
        await adv.close()


CONF = """
jetstream {{ store_dir: "{store}", domain: hub }}
authorization {{ users: [ {{user: bob, password: pw}} ] }}
"""


async def test_api_audit_user_and_domain(tmp_path: Path) -> None:
    confs = []
    for side in ("real", "emu"):
        conf = tmp_path / f"{side}.conf"
        conf.write_text(CONF.format(store=tmp_path / f"store-{side}"))
        confs.append(conf)
    real = _RealWithConfig(confs[0])
    options = jsemu.ServerOptions()
    load_config(confs[1], options)
    options.host, options.port = "127.0.0.1", 0
    emu = jsemu.Server(options)
    await emu.start()
    login = {**REQUESTER, "user": "bob", "pass": "pw"}
    try:
        clients = await _requesters([emu.port, real.port], login)
        listeners = [await RawClient.connect(port, login) for port in (emu.port, real.port)]
        for client in listeners:
            client.send(f"SUB {AUDIT} 90\r\nSUB $JS.EVENT.ADVISORY.STREAM.> 91\r\n".encode())
            assert not await client.round_trip()
        sides = [Side("jsemu", clients[0]), Side("real", clients[1])]
        adv = Advisories(listeners, sides)
        try:
            cfg = b'{"name":"S","subjects":["s.*"],"storage":"memory"}'
            events = await _step(clients, adv, "$JS.API.STREAM.CREATE.S", cfg, 2)
            stream_created = next(e for e in events if "stream_action" in e)
            audit = next(e for e in events if "api_audit" in e)
            assert stream_created.endswith('"action":"create","domain":"hub"}')
            assert '"acc":"$G","user":"bob","name":"auditor"' in audit
            assert audit.endswith('"domain":"hub"}')
        finally:
            for client in clients + listeners:
                await client.close()
    finally:
        await emu.stop()
        real.stop()


def _port(side: Side) -> int:
    port: int = side.client.writer.get_extra_info("peername")[1]
    return port
