"""Exports and imports of account JWTs, with activation tokens, side by side with nats-server
2.15.1: a public service and stream reach the importing account, a private service only with a
valid activation token (not with none, a token for another account, an expired one, or one
signed by a stranger), and a request to an import that did not hold finds no responders."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import nats
from nats.errors import NoRespondersError, TimeoutError
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, KeyPair
from jsemu.protocol.jwt.mint import activation_jwt
from jsemu.testing.operator import OperatorSetup


def _setup(tmp_path: Path) -> OperatorSetup:
    setup = OperatorSetup(tmp_path)
    exporter = setup.account(
        "EXP",
        exports=[
            {"name": "svc", "subject": "svc.>", "type": "service"},
            {"name": "feed", "subject": "feed.>", "type": "stream"},
            {"name": "priv", "subject": "priv.>", "type": "service", "token_req": True},
        ],
    )
    imp = KeyPair.create(PREFIX_ACCOUNT)
    key = exporter.key
    tokens = {
        "good": activation_jwt(imp.public_key, key, "priv.good"),
        "expired": activation_jwt(imp.public_key, key, "priv.expired", exp=int(time.time()) - 10),
    }
    imports: list[dict[str, Any]] = [
        {"name": "svc", "subject": "svc.x", "account": exporter.public_key, "type": "service"},
        {
            "name": "local",
            "subject": "svc.y",
            "account": exporter.public_key,
            "type": "service",
            "local_subject": "my.y",
        },
        {"name": "feed", "subject": "feed.>", "account": exporter.public_key, "type": "stream"},
        {"name": "none", "subject": "priv.none", "account": exporter.public_key, "type": "service"},
    ]
    for name, token in tokens.items():
        imports.append(
            {"name": name, "subject": f"priv.{name}", "account": exporter.public_key, "type": "service", "token": token}
        )
    setup.account("IMP", key=imp, imports=imports)
    # A token that does not fit its import makes the whole account JWT invalid (not loaded).
    for name, make in {
        "OTHER": lambda k: activation_jwt(KeyPair.create(PREFIX_ACCOUNT).public_key, key, "priv.x"),
        "SUBJECT": lambda k: activation_jwt(k.public_key, key, "priv.y"),
        "STRANGER": lambda k: activation_jwt(k.public_key, KeyPair.create(PREFIX_ACCOUNT), "priv.x"),
    }.items():
        k = KeyPair.create(PREFIX_ACCOUNT)
        bad = {"name": "x", "subject": "priv.x", "account": exporter.public_key, "type": "service", "token": make(k)}
        setup.account(name, key=k, imports=[bad])
        setup.user(name.lower(), name)
    setup.user("e", "EXP")
    setup.user("i", "IMP")
    return setup


async def _run(kind: str, setup: OperatorSetup) -> dict[str, Any]:
    server = RealServer(conf_text=setup.config_text(), jetstream=False, jsemu_process=kind == "jsemu")
    url = f"nats://127.0.0.1:{server.port}"
    seen: dict[str, Any] = {}
    try:
        e = await nats.connect(url, user_credentials=str(setup.users["e"].creds_path))
        i = await nats.connect(url, user_credentials=str(setup.users["i"].creds_path))

        async def answer(msg: Any) -> None:
            await msg.respond(b"from " + msg.subject.encode())

        await e.subscribe("svc.>", cb=answer)
        await e.subscribe("priv.>", cb=answer)
        feed = await i.subscribe("feed.>")
        await e.flush()
        await i.flush()
        await asyncio.sleep(0.1)
        for name in ("other", "subject", "stranger"):
            try:
                bad = await nats.connect(
                    url, user_credentials=str(setup.users[name].creds_path), allow_reconnect=False, connect_timeout=2
                )
                seen[name] = "connected"
                await bad.close()
            except Exception as exc:  # noqa: BLE001 - the server's refusal, compared
                seen[name] = str(exc)
        for subject in ["svc.x", "my.y", "svc.y", "priv.none", "priv.good", "priv.expired"]:
            try:
                seen[subject] = (await i.request(subject, b"", timeout=1)).data
            except NoRespondersError:
                seen[subject] = "no responders"
            except TimeoutError:
                seen[subject] = "timeout"
        await e.publish("feed.1", b"news")
        await e.flush()
        try:
            seen["feed"] = (await feed.next_msg(1)).data
        except TimeoutError:
            seen["feed"] = None
        await e.close()
        await i.close()
    finally:
        server.stop()
    return seen


async def test_exports_imports_and_activations(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    got = {kind: await _run(kind, setup) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    assert got["real"]["svc.x"] == b"from svc.x" and got["real"]["priv.good"] == b"from priv.good"
    assert got["real"]["priv.none"] == "no responders" and got["real"]["feed"] == b"news"
    assert got["real"]["other"] == "nats: 'Authorization Violation'"
