"""An exporter's account JWT re-issued while its imports are wired, side by side with nats-server
2.15.1: new export ``revocations`` (by importer key and ``*``) stop the stream and service imports
whose activation tokens they cover, for clients already subscribed; a changed
``account_token_position`` stops an import the new position no longer lets in; revocations taken
back (and the old position) bring the imports back; revocations issued before the token leave it be."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.protocol.jwt.mint import activation_jwt
from jsemu.testing.operator import OperatorSetup

#: When the activation tokens were issued.
ISSUED = int(time.time()) - 100


def _exports(revocations: dict[str, dict[str, int]], position: int) -> list[dict[str, Any]]:
    def rev(name: str) -> dict[str, Any]:
        return {"revocations": revocations[name]} if revocations.get(name) else {}

    return [
        {"name": "s", "subject": "s.>", "type": "stream", "token_req": True, **rev("s")},
        {"name": "q", "subject": "q.>", "type": "service", "token_req": True, **rev("q")},
        {"name": "w", "subject": "w.>", "type": "stream", "token_req": True, **rev("w")},
        {"name": "tp", "subject": "tp.*.*", "type": "service", "account_token_position": position},
        {"name": "ts", "subject": "ts.*.*", "type": "stream", "account_token_position": position},
    ]


def _setup(tmp_path: Path, resolver: str = "") -> tuple[OperatorSetup, dict[str, str]]:
    setup = OperatorSetup(tmp_path)
    setup.resolver = resolver
    imp, exp = KeyPair.create(PREFIX_ACCOUNT), KeyPair.create(PREFIX_ACCOUNT)
    setup.account("EXP", key=exp, exports=_exports({}, 2))
    ek, ik = exp.public_key, imp.public_key

    def token(subject: str, kind: str) -> str:
        return activation_jwt(ik, exp, subject, kind, iat=ISSUED)

    setup.account(
        "IMP",
        key=imp,
        imports=[
            {"name": "s", "subject": "s.>", "account": ek, "type": "stream", "token": token("s.>", "stream")},
            {"name": "q", "subject": "q.>", "account": ek, "type": "service", "token": token("q.>", "service")},
            {"name": "w", "subject": "w.>", "account": ek, "type": "stream", "token": token("w.>", "stream")},
            {"name": "tp", "subject": f"tp.{ik}.x", "account": ek, "type": "service", "local_subject": "tp"},
            {"name": "ts", "subject": f"ts.{ik}.x", "account": ek, "type": "stream", "local_subject": "ts"},
        ],
    )
    setup.user("e", "EXP")
    setup.user("i", "IMP")
    setup.user("sys", "SYS")
    conf = setup.config_text()
    after = ISSUED + 10
    updates = {
        "revoked": _exports({"s": {ik: after}, "q": {ik: after}, "w": {"*": after}}, 3),
        "before-token": _exports({"s": {ik: ISSUED - 10}, "q": {"*": ISSUED - 10}, "w": {ik: ISSUED - 1}}, 2),
        "taken-back": _exports({}, 2),
    }
    jwts = {name: setup.account("EXP", key=exp, exports=exports).jwt for name, exports in updates.items()}
    setup.account("EXP", key=exp, exports=updates["revoked"])
    revoked_conf = setup.config_text()  # the imports refused at start
    return setup, {"conf": conf, "revoked-conf": revoked_conf, **jwts}


async def _probe(exporter: Any, importer: Any, got: list[str]) -> dict[str, Any]:
    """What gets through each import: the stream messages the importer's subscriber sees, and
    the answer to a request on each service import."""
    got.clear()
    for subject in ("s.a", "w.a", "ts.IK.x"):
        await exporter.publish(subject, b"m")
    await exporter.flush()
    out: dict[str, Any] = {}
    for name, subject in (("q", "q.a"), ("tp", "tp")):
        try:
            out[name] = (await importer.request(subject, b"r", timeout=0.5)).data.decode()
        except NoRespondersError:
            out[name] = "no responders"
        except NatsTimeout:
            out[name] = "timeout"
    await asyncio.sleep(0.2)
    out["stream"] = sorted(got)
    return out


async def _run(kind: str, setup: OperatorSetup, jwts: dict[str, str], conf: str, steps: list[str]) -> dict[str, Any]:
    server = RealServer(conf_text=jwts[conf], jsemu_process=kind == "jsemu")
    url = f"nats://127.0.0.1:{server.port}"
    seen: dict[str, Any] = {}
    ik = setup.accounts["IMP"].public_key
    try:
        exporter = await nats.connect(url, user_credentials=str(setup.users["e"].creds_path))
        importer = await nats.connect(url, user_credentials=str(setup.users["i"].creds_path))
        admin = await nats.connect(url, user_credentials=str(setup.users["sys"].creds_path))
        got: list[str] = []

        async def take(msg: Any) -> None:
            got.append(msg.subject.replace(ik, "IK"))

        async def answer(msg: Any) -> None:
            await msg.respond(msg.subject.replace(ik, "IK").encode())

        for subject in ("s.>", "w.>", "ts"):
            await importer.subscribe(subject, cb=take)
        await exporter.subscribe("q.>", cb=answer)
        await exporter.subscribe("tp.*.x", cb=answer)
        await exporter.flush()
        await importer.flush()

        class Publisher:  # the exporter publishes ts.<importer key>.x
            async def publish(self, subject: str, body: bytes) -> None:
                await exporter.publish(subject.replace("IK", ik), body)

            async def flush(self) -> None:
                await exporter.flush()

        seen["start"] = await _probe(Publisher(), importer, got)
        key = setup.accounts["EXP"].public_key
        for name in steps:
            reply = await admin.request(f"$SYS.REQ.ACCOUNT.{key}.CLAIMS.UPDATE", jwts[name].encode(), timeout=2)
            body = json.loads(reply.data)
            seen[f"{name}-reply"] = body.get("data", body.get("error"))
            seen[name] = await _probe(Publisher(), importer, got)
        seen["connected"] = (exporter.is_connected, importer.is_connected)
        for nc in (exporter, importer, admin):
            await nc.close()
    finally:
        server.stop()
    return seen


@pytest.mark.parametrize("resolver", ["", "full"])
async def test_exporter_update_rechecks_wired_imports(tmp_path: Path, resolver: str) -> None:
    setup, jwts = _setup(tmp_path, resolver)
    steps = ["revoked", "before-token", "taken-back"]
    got = {kind: await _run(kind, setup, jwts, "conf", steps) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    real = got["real"]
    assert real["revoked"] == {"q": "no responders", "tp": "no responders", "stream": []}
    assert real["start"] == real["before-token"] == real["taken-back"]
    assert real["start"]["stream"] == ["s.a", "ts", "w.a"]


async def test_imports_refused_at_start_come_back(tmp_path: Path) -> None:
    """Imports the exporter's revocations refused at start are wired once it takes them back
    (nats-server refreshes the accounts whose imports were incomplete)."""
    setup, jwts = _setup(tmp_path)
    steps = ["taken-back", "revoked"]
    got = {kind: await _run(kind, setup, jwts, "revoked-conf", steps) for kind in KINDS}
    assert got["jsemu"] == got["real"]
