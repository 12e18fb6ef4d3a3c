"""The NATS-based account resolver (``resolver: {type: full | cache, dir}``) side by side with
nats-server 2.15.1, the same JWTs given to both: ``$SYS.REQ.CLAIMS.UPDATE`` and the per-account
update subjects (stored, refused, skipped), ``CLAIMS.LOOKUP`` (the JWT, an empty message, no
responders for the cache), ``CLAIMS.LIST``, ``CLAIMS.DELETE`` (the operator's signed request, the
refusal texts, ``.jwt.deleted``), ``CLAIMS.PACK``, the directory's files, a user of an account
pushed after start logging in (JetStream included), the clients of a deleted account closed, and
the directory read again at restart."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import nats
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import PREFIX_ACCOUNT, PREFIX_OPERATOR, KeyPair, encode
from jsemu.protocol.jwt.mint import account_jwt
from jsemu.testing.operator import MintedAccount, OperatorSetup


def resolver_conf(setup: OperatorSetup, block: str) -> str:
    sys_account = setup.accounts["SYS"]
    return (
        f"operator: {setup.operator_jwt}\nsystem_account: {setup.system.public_key}\n"
        f"resolver: {{ {block} }}\nresolver_preload: {{\n  {sys_account.public_key}: {sys_account.jwt}\n}}\n"
    )


class Names:
    """Account keys shown as names, so both servers' answers compare."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def key(self, name: str) -> str:
        return next(k for k, n in self.names.items() if n == name)

    def __call__(self, text: str) -> str:
        for key, name in self.names.items():
            text = text.replace(key, name)
        return text


async def ask(nc: Any, subject: str, body: str | bytes, names: Names, count: int = 1) -> list[Any]:
    """The replies to one request (up to ``count``, then ``TIMEOUT``), JSON answers with the
    server block reduced to its keys, headers shown (an empty reply vs no responders)."""
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    await nc.publish(subject, body.encode() if isinstance(body, str) else body, reply=inbox)
    out: list[Any] = []
    for _ in range(count):
        try:
            msg = await sub.next_msg(timeout=1.5)
        except nats.errors.TimeoutError:
            out.append("TIMEOUT")
            break
        text = msg.data.decode()
        if text.startswith("{"):
            answer = json.loads(text)
            if isinstance(answer.get("server"), dict):
                answer["server"] = sorted(answer["server"])
            if isinstance(answer.get("data"), list):  # CLAIMS.LIST: in key order, so by name here
                answer["data"] = sorted(names(key) for key in answer["data"])
            out.append((list(answer), names(json.dumps(answer))))
        else:
            headers = names(json.dumps({str(k): v for k, v in (msg.headers or {}).items()}, sort_keys=True))
            if "|" in text:  # a CLAIMS.PACK line: key|jwt
                text = names(text.split("|")[0]) + "|a JWT"
            out.append((headers, names(text[:30]) if not text.startswith("eyJ") else "a JWT"))
    await sub.unsubscribe()
    return out


async def full_resolver(kind: str, tmp: Path) -> list[Any]:
    setup = OperatorSetup(tmp / "creds")
    setup.user("admin", "SYS")
    names = Names()
    names.names[setup.system.public_key] = "SYS"
    names.names[setup.operator.public_key] = "OP"
    new = KeyPair.create(PREFIX_ACCOUNT)
    names.names[new.public_key] = "NEW"
    other = KeyPair.create(PREFIX_ACCOUNT)
    names.names[other.public_key] = "OTHER"
    new_jwt = account_jwt(new.public_key, setup.operator, "NEW", jetstream={"streams": 2})
    directory = tmp / "jwt"
    block = f'type: full, dir: "{directory}", allow_delete: true, interval: "2m", limit: 1000'
    seen: list[Any] = []
    server = RealServer(conf_text=resolver_conf(setup, block), jetstream=True, jsemu_process=kind == "jsemu")
    url = f"nats://127.0.0.1:{server.port}"
    try:
        seen.append(("files at start", " ".join(sorted(names(f) for f in os.listdir(directory)))))
        admin = await nats.connect(url, user_credentials=str(setup.users["admin"].creds_path))
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{new.public_key}.CLAIMS.LOOKUP", "", names))
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{setup.system.public_key}.CLAIMS.LOOKUP", "", names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.LIST", "", names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", "garbage", names))
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{new.public_key}.CLAIMS.UPDATE", "garbage", names))
        # Claims of no known type: nats-server's Decode checks them as a v1 token.
        untyped = new_jwt.split(".")[0] + ".bnVsbA." + new_jwt.split(".")[2]
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", untyped, names))
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{other.public_key}.CLAIMS.UPDATE", new_jwt, names))
        seen.append(await ask(admin, f"$SYS.ACCOUNT.{new.public_key}.CLAIMS.UPDATE", new_jwt, names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", new_jwt, names))
        rogue = KeyPair.create(PREFIX_OPERATOR)
        names.names[rogue.public_key] = "ROGUE"
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", account_jwt(other.public_key, rogue, "R"), names))
        seen.append(("files", " ".join(sorted(names(f) for f in os.listdir(directory)))))
        seen.append((directory / f"{new.public_key}.jwt").read_text() == new_jwt)
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{new.public_key}.CLAIMS.LOOKUP", "", names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.LIST", "", names))
        # A user of the account pushed after start logs in, with the JetStream its JWT gives.
        setup.accounts["NEW"] = MintedAccount("NEW", new, new_jwt)
        setup.accounts["OTHER"] = MintedAccount("OTHER", other, "")
        user = setup.user("newuser", "NEW")
        nc = await nats.connect(url, user_credentials=str(user.creds_path), allow_reconnect=False)
        js = nc.jetstream()
        await js.add_stream(name="S1", subjects=["s1"])
        await js.add_stream(name="S2", subjects=["s2"])
        try:
            await js.add_stream(name="S3", subjects=["s3"])
        except nats.js.errors.APIError as exc:
            seen.append(("third stream", exc.err_code, exc.description))
        # A user of the account signed by an untrusted operator is refused.
        untrusted = setup.user("untrusted", "OTHER")
        try:
            await nats.connect(
                url, user_credentials=str(untrusted.creds_path), allow_reconnect=False, max_reconnect_attempts=0
            )
            seen.append("untrusted account's user logged in")
        except Exception as exc:  # noqa: BLE001 - the refusal's text is what is compared
            seen.append(("untrusted account's user", str(exc)))
        # Deletes: refusals, then the account gone, its file renamed, its client closed.
        op = setup.operator
        closed: list[str] = []

        async def on_error(exc: Exception) -> None:
            closed.append(str(exc))

        watcher = await nats.connect(
            url, user_credentials=str(user.creds_path), allow_reconnect=False, error_cb=on_error
        )
        request = {"sub": op.public_key, "nats": {"accounts": [setup.system.public_key]}}
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.DELETE", encode(request, op), names))
        request = {"sub": new.public_key, "nats": {"accounts": [new.public_key]}}
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.DELETE", encode(request, op), names))
        request = {"sub": rogue.public_key, "nats": {"accounts": [new.public_key]}}
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.DELETE", encode(request, rogue), names))
        for bad in ({}, {"accounts": "x"}, {"accounts": ["nope"]}, {"accounts": [1]}):
            request = {"sub": op.public_key, "nats": bad}
            seen.append(await ask(admin, "$SYS.REQ.CLAIMS.DELETE", encode(request, op), names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.DELETE", "garbage", names))
        request = {"sub": op.public_key, "nats": {"accounts": [new.public_key], "type": "generic"}}
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.DELETE", encode(request, op), names))
        for _ in range(40):
            if watcher.is_closed or closed:
                break
            await asyncio.sleep(0.05)
        seen.append(("client of the deleted account", watcher.is_closed, str(watcher.last_error)))
        seen.append(("files after delete", " ".join(sorted(names(f) for f in os.listdir(directory)))))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.LIST", "", names))
        try:
            await nats.connect(
                url, user_credentials=str(user.creds_path), allow_reconnect=False, max_reconnect_attempts=0
            )
            seen.append("deleted account's user logged in")
        except Exception as exc:  # noqa: BLE001
            seen.append(("deleted account's user", str(exc)))
        seen.append(sorted(map(str, await ask(admin, "$SYS.REQ.CLAIMS.PACK", "", names, count=4))))
        await nc.close()
        await watcher.close()
        await admin.close()
    finally:
        server.stop()
    return seen


async def test_full_resolver_as_nats_server(tmp_path: Path) -> None:
    got = {kind: await full_resolver(kind, tmp_path / kind) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    flat = json.dumps(got["real"])
    assert "jwt updated" in flat and "deleted 1 accounts" in flat and ".jwt.deleted" in flat


async def restart(kind: str, tmp: Path) -> list[Any]:
    """An account pushed before a restart is there after it (the directory read at start);
    without ``allow_delete`` a delete request is refused."""
    setup = OperatorSetup(tmp / "creds")
    setup.user("admin", "SYS")
    names = Names()
    names.names[setup.system.public_key] = "SYS"
    names.names[setup.operator.public_key] = "OP"
    setup.account("LATE", jetstream={})
    names.names[setup.accounts["LATE"].public_key] = "LATE"
    user = setup.user("late", "LATE")
    block = f'type: full, dir: "{tmp / "jwt"}"'
    seen: list[Any] = []
    for round_ in range(2):
        server = RealServer(conf_text=resolver_conf(setup, block), jetstream=True, jsemu_process=kind == "jsemu")
        url = f"nats://127.0.0.1:{server.port}"
        try:
            admin = await nats.connect(url, user_credentials=str(setup.users["admin"].creds_path))
            if round_ == 0:
                seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", setup.accounts["LATE"].jwt, names))
                request = {"sub": setup.operator.public_key, "nats": {"accounts": [names.key("LATE")]}}
                seen.append(await ask(admin, "$SYS.REQ.CLAIMS.DELETE", encode(request, setup.operator), names))
            seen.append(await ask(admin, "$SYS.REQ.CLAIMS.LIST", "", names))
            nc = await nats.connect(url, user_credentials=str(user.creds_path), allow_reconnect=False)
            seen.append((await nc.request("$JS.API.INFO", b"", timeout=2)).data != b"")
            await nc.close()
            await admin.close()
        finally:
            server.stop()
    return seen


async def test_directory_kept_across_restart(tmp_path: Path) -> None:
    got = {kind: await restart(kind, tmp_path / kind) for kind in KINDS}
    assert got["jsemu"] == got["real"]


async def cache_resolver(kind: str, tmp: Path) -> list[Any]:
    setup = OperatorSetup(tmp / "creds")
    setup.user("admin", "SYS")
    names = Names()
    names.names[setup.system.public_key] = "SYS"
    new = KeyPair.create(PREFIX_ACCOUNT)
    names.names[new.public_key] = "NEW"
    new_jwt = account_jwt(new.public_key, setup.operator, "NEW")
    directory = tmp / "jwt"
    seen: list[Any] = []
    conf = resolver_conf(setup, f'type: cache, dir: "{directory}", limit: 10')
    server = RealServer(conf_text=conf, jetstream=True, jsemu_process=kind == "jsemu")
    url = f"nats://127.0.0.1:{server.port}"
    try:
        admin = await nats.connect(url, user_credentials=str(setup.users["admin"].creds_path))
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{new.public_key}.CLAIMS.LOOKUP", "", names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", "garbage", names))
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{new.public_key}.CLAIMS.UPDATE", "x.y", names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", new_jwt, names))
        seen.append(await ask(admin, f"$SYS.REQ.ACCOUNT.{new.public_key}.CLAIMS.UPDATE", new_jwt, names))
        sys_again = account_jwt(setup.system.public_key, setup.operator, "SYS", extra={"tags": ["v2"]})
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", sys_again, names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.LIST", "", names))
        seen.append(("files", " ".join(sorted(names(f) for f in os.listdir(directory)))))
        await admin.close()
    finally:
        server.stop()
    return seen


async def test_cache_resolver_as_nats_server(tmp_path: Path) -> None:
    got = {kind: await cache_resolver(kind, tmp_path / kind) for kind in KINDS}
    assert got["jsemu"] == got["real"]


async def full_store(kind: str, tmp: Path) -> list[Any]:
    """``limit``: a full resolver's directory refuses a new account once it holds that many."""
    setup = OperatorSetup(tmp / "creds")
    setup.user("admin", "SYS")
    names = Names()
    names.names[setup.system.public_key] = "SYS"
    seen: list[Any] = []
    server = RealServer(
        conf_text=resolver_conf(setup, f'type: full, dir: "{tmp / "jwt"}", limit: 2'),
        jetstream=False,
        jsemu_process=kind == "jsemu",
    )
    try:
        admin = await nats.connect(
            f"nats://127.0.0.1:{server.port}", user_credentials=str(setup.users["admin"].creds_path)
        )
        for name in ("ONE", "TWO"):
            account = setup.account(name)
            names.names[account.public_key] = name
            seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", account.jwt, names))
        again = setup.account("ONE", extra={"tags": ["v2"]})
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.UPDATE", again.jwt, names))
        seen.append(await ask(admin, "$SYS.REQ.CLAIMS.LIST", "", names))
        await admin.close()
    finally:
        server.stop()
    return seen


async def test_full_store_limit(tmp_path: Path) -> None:
    got = {kind: await full_store(kind, tmp_path / kind) for kind in KINDS}
    assert got["jsemu"] == got["real"]
    assert "jwt store is full" in json.dumps(got["real"])
