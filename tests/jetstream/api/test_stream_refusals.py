"""What jsemu does not implement yet is refused with a clear error, never accepted and
ignored: fast batch publish; and the request checks of snapshots and restores (their
transfers are in ``test_snapshot_restore.py``).

Bad requests get nats-server 2.15.1's answer (compared side by side); a request the real
server accepts gets, from jsemu only, the refusal (the real server's acceptance is checked
too, so the test notices when the difference is no longer one).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.pair import Pair

API = "$JS.API.STREAM"


@pytest.mark.parametrize(
    ("field", "what"),
    [
        ("allow_batched", "fast batch publish (allow_batched)"),
    ],
)
async def test_unimplemented_stream_settings_are_refused(pair: Pair, field: str, what: str) -> None:
    name = f"RF_{field}"
    cfg: dict[str, Any] = {"name": name, "subjects": [f"rf.{field}"], "storage": "memory"}
    # the server's own checks come first: a mirror with the setting is the server's error
    await pair.same(f"{API}.CREATE.M{name}", {"name": f"M{name}", "mirror": {"name": name}, field: True})
    emu, real = await pair.each(f"{API}.CREATE.{name}", {**cfg, field: True})
    assert real.get("did_create") is True, real
    assert emu["error"] == {"code": 500, "err_code": 10052, "description": f"jsemu does not implement {what} yet"}
    # created without it, then updated to it: refused, the stream stays as it was
    cfg = {"name": f"U{name}", "subjects": [f"urf.{field}"], "storage": "memory"}
    await pair.same(f"{API}.CREATE.U{name}", cfg)
    emu, real = await pair.each(f"{API}.UPDATE.U{name}", {**cfg, field: True})
    assert real["config"][field] is True, real
    assert emu["error"]["description"] == f"jsemu does not implement {what} yet"
    assert field not in (await emu_only(pair, f"{API}.INFO.U{name}"))["config"]


async def emu_only(pair: Pair, subject: str, payload: bytes = b"") -> Any:
    """A request to jsemu alone, its reply parsed."""
    return json.loads(await pair.emu.request(subject, payload, None, 2.0, scrub=False))


SNAPSHOT_BAD: list[tuple[str, bytes]] = [
    ("S", b""),
    ("S", b"{}"),
    ("S", b"garbage"),
    ("S", b"[]"),
    ("S", b'{"deliver_subject":""}'),
    ("S", b'{"deliver_subject":"x.*"}'),
    ("S", b'{"deliver_subject":"x.>"}'),
    ("S", b'{"deliver_subject":"a..b"}'),
    ("S", b'{"deliver_subject":"x","chunk_size":"big"}'),
    ("S", b'{"deliver_subject":"x","nope":1}'),
    ("NOPE", b'{"deliver_subject":"x"}'),
    ("NOPE", b"garbage"),
    ("NOPE", b""),
]

RESTORE_BAD: list[tuple[str, bytes]] = [
    ("RQ", b""),
    ("RQ", b"{}"),
    ("RQ", b"garbage"),
    ("RQ", b'{"config":{"name":"Z"}}'),
    ("RQ", b'{"config":{"name":"RQ","max_msgs":"x"}}'),
    ("RQ", b'{"config":{"name":"RQ"},"state":{"messages":-1}}'),
    ("RQ", b'{"config":{"name":"RQ"},"nope":1}'),
    ("S", b'{"config":{"name":"S"}}'),
]


async def test_snapshot_and_restore_request_checks(pair: Pair) -> None:
    await pair.create("S", subjects=["snap.>"], storage="memory")
    for stream, body in SNAPSHOT_BAD:
        await pair.same(f"{API}.SNAPSHOT.{stream}", body)
    for stream, body in RESTORE_BAD:
        await pair.same(f"{API}.RESTORE.{stream}", body)
