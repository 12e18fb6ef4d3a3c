"""``jsemu_factory(operator=setup)`` with ``setup.resolver = "full"``: an in-process server with the
NATS-based resolver, as a test of ``nsc push``-like code would use it: an account pushed by a system
account user is there for its users at once, and :meth:`OperatorSetup.delete_request` deletes it
(its client closed, ``.jwt.deleted`` left in the directory). The wire answers themselves are
compared with nats-server in ``test_operator_resolver.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats
import pytest

from jsemu.testing.operator import OperatorSetup


@pytest.mark.asyncio
async def test_push_then_delete_in_process(jsemu_factory: Any, tmp_path: Path) -> None:
    setup = OperatorSetup(tmp_path)
    setup.resolver = "full"
    setup.user("admin", "SYS")
    srv = await jsemu_factory(operator=setup, accounts={})
    admin = await nats.connect(srv.url, user_credentials=str(setup.users["admin"].creds_path))
    late = setup.account("LATE", jetstream={"streams": 1})
    user = setup.user("late", "LATE")
    answer = json.loads((await admin.request("$SYS.REQ.CLAIMS.UPDATE", late.jwt.encode(), timeout=2)).data)
    assert answer["data"] == {"account": late.public_key, "code": 200, "message": "jwt updated"}
    nc = await nats.connect(srv.url, user_credentials=str(user.creds_path), allow_reconnect=False)
    assert (await nc.jetstream().add_stream(name="L", subjects=["l"])).config.name == "L"
    answer = json.loads((await admin.request("$SYS.REQ.CLAIMS.DELETE", setup.delete_request("LATE").encode())).data)
    assert answer["data"] == {"code": 200, "message": "deleted 1 accounts"}
    assert (tmp_path / "jwt" / f"{late.public_key}.jwt.deleted").exists()
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(srv.url, user_credentials=str(user.creds_path), allow_reconnect=False)
    await admin.close()
    await nc.close()


def test_resolver_needs_a_directory() -> None:
    setup = OperatorSetup()
    setup.resolver = "cache"
    with pytest.raises(ValueError, match="directory"):
        setup.config_text()
