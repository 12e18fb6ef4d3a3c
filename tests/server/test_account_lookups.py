"""Accounts nobody has used yet, in operator mode (``jsemu/server/account_lookups.py``), side by
side with nats-server 2.15.1: both run as processes from the same configuration.

Captured on the binary (memory and full resolvers alike): an account whose JWT the resolver
has (preloaded) is not registered until something looks it up, so ``$SYS.REQ.ACCOUNT.<key>.INFO``
answers ``{"code":500,"description":"Account <key> does not exist"}``, the per-account JSZ
``account "<key>" not found``, ``/accountz?acc=<key>`` a 400 with the same words, and ``/accountz``
lists only ``$G`` and the system account. A user logging in registers its account and the
accounts it imports from; a ``CONNZ`` request for the account registers it; ``SUBSZ``, ``JSZ``,
``INFO`` and ``/jsz?acc=`` do not. With configured accounts (no operator) every account answers
from the start (``test_sys_server_requests.py``).
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.js.api import StorageType

from jsemu.testing.operator import OperatorSetup
from tests.support.servers import KINDS, RealServer

_JS = {"mem_storage": -1, "disk_storage": -1}


class _Server:
    def __init__(self, kind: str, setup: OperatorSetup) -> None:
        self.kind = kind
        self.setup = setup
        conf = 'server_name: s1\nhttp: "127.0.0.1:-1"\n' + setup.config_text()
        self.proc = RealServer(jetstream=True, jsemu_process=kind == "jsemu", conf_text=conf)
        self.keys = {name: account.public_key for name, account in setup.accounts.items()}

    def get(self, path: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(self.proc.monitor_url + path, timeout=5) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def state(self) -> dict[str, Any]:
        """What each view says of each account: exists or the error, with keys as names."""
        return asyncio.run(self._state())

    async def _state(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        nc = await nats.connect(self.url, user_credentials=str(self.setup.users["admin"].creds_path))
        try:
            for name in ("X", "I", "U", "C"):
                key = self.keys[name]
                for kind in ("INFO", "JSZ"):
                    msg = await nc.request(f"$SYS.REQ.ACCOUNT.{key}.{kind}", b"", timeout=5)
                    answer = json.loads(msg.data)
                    out[f"{name} {kind}"] = answer.get("error") or "exists"
                status, body = self.get(f"/accountz?acc={key}")
                out[f"{name} /accountz?acc"] = (status, body if status != 200 else "exists")
        finally:
            await nc.close()
        status, page = self.get("/accountz")
        out["/accountz"] = sorted(page["accounts"])
        return json.loads(self._names(json.dumps(out)))

    def _names(self, text: str) -> str:
        for name, key in self.keys.items():
            text = text.replace(key, f"<{name}>")
        return text

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.proc.port}"

    def connz(self, name: str) -> None:
        async def ask() -> None:
            nc = await nats.connect(self.url, user_credentials=str(self.setup.users["admin"].creds_path))
            await nc.request(f"$SYS.REQ.ACCOUNT.{self.keys[name]}.CONNZ", b"", timeout=5)
            await nc.close()

        asyncio.run(ask())

    def login(self, user: str) -> None:
        async def connect() -> None:
            nc = await nats.connect(self.url, user_credentials=str(self.setup.users[user].creds_path))
            await nc.flush()
            await nc.close()

        asyncio.run(connect())


def _setup(tmp: Path, resolver: str) -> OperatorSetup:
    setup = OperatorSetup(tmp)
    setup.resolver = resolver
    setup.user("admin", "SYS")
    exporter = setup.account("X", jetstream=_JS, exports=[{"subject": "svc", "type": "service"}])
    setup.account("I", jetstream=_JS, imports=[{"subject": "svc", "account": exporter.public_key, "type": "service"}])
    setup.account("U", jetstream=_JS)
    setup.account("C")
    setup.user("ui", "I")
    return setup


@pytest.fixture(params=["", "full"], ids=["memory", "full"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, _Server]]:
    setup = _setup(tmp_path, request.param)
    started: list[_Server] = []
    try:
        for kind in KINDS:
            started.append(_Server(kind, setup))
        yield {server.kind: server for server in started}
    finally:
        for server in started:
            server.proc.stop()


def _same(pair: dict[str, _Server]) -> dict[str, Any]:
    states = {kind: server.state() for kind, server in pair.items()}
    assert states["jsemu"] == states["real"]
    return states["real"]


def test_unused_accounts_are_not_registered(pair: dict[str, _Server]) -> None:
    first = _same(pair)
    assert first["U INFO"] == {"code": 500, "description": "Account <U> does not exist"}
    assert first["/accountz"] == ["$G", "<SYS>"]
    for server in pair.values():
        server.connz("C")
    assert _same(pair)["C INFO"] == "exists"
    for server in pair.values():
        server.login("ui")
    last = _same(pair)
    assert last["X INFO"] == last["I INFO"] == "exists"  # the importer, and the account it imports from
    assert last["U JSZ"] == {"code": 500, "description": 'account "<U>" not found'}


def _info(port: int, setup: OperatorSetup, name: str) -> Any:
    async def ask() -> Any:
        nc = await nats.connect(f"nats://127.0.0.1:{port}", user_credentials=str(setup.users["admin"].creds_path))
        try:
            msg = await nc.request(f"$SYS.REQ.ACCOUNT.{setup.accounts[name].public_key}.INFO", b"", timeout=5)
        finally:
            await nc.close()
        answer = json.loads(msg.data)
        return answer.get("error") or "exists"

    return asyncio.run(ask())


@pytest.mark.parametrize("kind", KINDS)
def test_store_folders_register_at_start(kind: str, tmp_path: Path) -> None:
    """After a restart, an account with a file stream in the store is registered (nats-server
    looks up each account folder when JetStream starts); one with only memory streams is not."""
    setup = OperatorSetup(tmp_path)
    setup.user("admin", "SYS")
    for name in ("F", "M"):
        setup.account(name, jetstream=_JS)
        setup.user(name.lower(), name)
    conf = 'server_name: s1\nhttp: "127.0.0.1:-1"\n' + setup.config_text()
    store = str(tmp_path / "store")

    async def make(port: int) -> None:
        for user, storage in (("f", StorageType.FILE), ("m", StorageType.MEMORY)):
            creds = str(setup.users[user].creds_path)
            nc = await nats.connect(f"nats://127.0.0.1:{port}", user_credentials=creds)
            await nc.jetstream().add_stream(name="S", subjects=["s"], storage=storage)
            await nc.close()

    first = RealServer(jetstream=True, jsemu_process=kind == "jsemu", conf_text=conf, store_dir=store)
    try:
        asyncio.run(make(first.port))
    finally:
        first.stop()
    again = RealServer(jetstream=True, jsemu_process=kind == "jsemu", conf_text=conf, store_dir=store)
    try:
        assert _info(again.port, setup, "F") == "exists"
        key = setup.accounts["M"].public_key
        assert _info(again.port, setup, "M") == {"code": 500, "description": f"Account {key} does not exist"}
    finally:
        again.stop()
