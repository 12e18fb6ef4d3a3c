"""What jsemu does not implement yet is refused with a clear error, never accepted and
ignored (``streams/refusals.py``: no stream setting is left since fast batch publish came,
``test_fast_batch.py``); and the request checks of snapshots and restores (their
transfers are in ``test_snapshot_restore.py``).

Bad requests get nats-server 2.15.1's answer (compared side by side); a request the real
server accepts gets, from jsemu only, the refusal (the real server's acceptance is checked
too, so the test notices when the difference is no longer one).
"""

from __future__ import annotations

import json
from typing import Any

from support.pair import Pair

API = "$JS.API.STREAM"


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
