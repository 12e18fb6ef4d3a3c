"""Random stream configs: create, update and publish against both servers, replies equal.

A seeded generator mixes valid and invalid values for every config field (limits around
their edges, enum spellings, conflicting flags, odd subjects), so the order of the checks in
``checkStreamCfg`` and in the update rules is exercised beyond the hand-written tables.
``JSEMU_RANDOM_CONFIGS`` sets the number of configs (default 120).
"""

from __future__ import annotations

import os
import random
from typing import Any

SEED = 20261122
COUNT = int(os.environ.get("JSEMU_RANDOM_CONFIGS", "120"))

_INTS = [-2, -1, 0, 1, 2, 5, 100, 1 << 31, (1 << 31) - 1, -(1 << 31)]
_DURATIONS = [-1, 0, 1, 99_999_999, 100_000_000, 1_000_000_000, 120_000_000_000, 3_600_000_000_000]
_SUBJECTS = ["a", "a.b", "a.*", "a.>", "b.*.c", ">", "*", "$JS.API.x", "$SYS.x", "c d", "", "a..b", "x.y.z"]


def _maybe(rng: random.Random, value: Any, p: float = 0.35) -> Any:
    return value if rng.random() < p else None


def random_config(rng: random.Random, name: str, create: bool) -> dict[str, Any]:
    candidates: dict[str, Any] = {
        "subjects": _maybe(rng, rng.sample(_SUBJECTS, rng.randint(0, 3)), 0.8),
        "retention": _maybe(rng, rng.choice(["limits", "interest", "workqueue", "Limits", "bogus"]), 0.3),
        "max_consumers": _maybe(rng, rng.choice(_INTS)),
        "max_msgs": _maybe(rng, rng.choice(_INTS)),
        "max_bytes": _maybe(rng, rng.choice(_INTS)),
        "max_age": _maybe(rng, rng.choice(_DURATIONS)),
        "max_msgs_per_subject": _maybe(rng, rng.choice(_INTS)),
        "max_msg_size": _maybe(rng, rng.choice(_INTS)),
        "discard": _maybe(rng, rng.choice(["old", "new", "NEW", "x"]), 0.4),
        # Creates always use memory storage: under load nats-server 2.15.1 now and then fails a
        # file-stream create with 10049 "error creating store for stream" (seen in CI); file
        # storage is covered by the other tests. Updates may still ask for "file".
        "storage": "memory" if create else rng.choice(["file", "memory", None]),
        "num_replicas": _maybe(rng, rng.choice([-1, 0, 1, 3, 6]), 0.2),
        "no_ack": _maybe(rng, rng.choice([True, False]), 0.2),
        "duplicate_window": _maybe(rng, rng.choice(_DURATIONS)),
        "allow_direct": _maybe(rng, rng.choice([True, False]), 0.5),
        "mirror_direct": _maybe(rng, True, 0.1),
        "discard_new_per_subject": _maybe(rng, rng.choice([True, False]), 0.3),
        "deny_delete": _maybe(rng, rng.choice([True, False]), 0.3),
        "deny_purge": _maybe(rng, rng.choice([True, False]), 0.3),
        "allow_rollup_hdrs": _maybe(rng, rng.choice([True, False]), 0.4),
        "allow_msg_ttl": _maybe(rng, rng.choice([True, False]), 0.2),
        "subject_delete_marker_ttl": _maybe(rng, rng.choice([0, 500_000_000, 1_000_000_000, -1]), 0.15),
        "compression": _maybe(rng, rng.choice(["none", "s2", ""]), 0.2),
        "description": _maybe(rng, rng.choice(["", "d", "x" * 5000]), 0.15),
        "metadata": _maybe(rng, rng.choice([{}, {"k": "v"}, {"_nats.ver": "1"}]), 0.2),
        "first_seq": _maybe(rng, rng.choice([0, 1, 10]), 0.15),
        "pedantic": _maybe(rng, True, 0.1),
    }
    cfg: dict[str, Any] = {"name": name}
    cfg.update({k: v for k, v in candidates.items() if v is not None})
    return cfg


async def test_random_create_update_publish(pair: Any) -> None:
    rng = random.Random(SEED)
    for i in range(COUNT):
        name = f"R{i}"
        cfg = random_config(rng, name, create=True)
        created = await pair.same(f"$JS.API.STREAM.CREATE.{name}", cfg)
        if not isinstance(created, dict) or "error" in created:
            continue
        subjects = created["config"].get("subjects") or []
        literal = next((s for s in subjects if "*" not in s and ">" not in s), None)
        if literal:
            for n in range(3):
                # No reply at all for a no_ack stream: the old short wait.
                await pair.same(literal, f"m{n}".encode(), {"Nats-Msg-Id": f"id{n % 2}"}, timeout=2.0)
        update = random_config(rng, name, create=False)
        await pair.same(f"$JS.API.STREAM.UPDATE.{name}", update)
        await pair.same(f"$JS.API.STREAM.INFO.{name}", {"subjects_filter": ">", "deleted_details": True})
        await pair.same(f"$JS.API.STREAM.DELETE.{name}")
        # nats-server removes a deleted file stream in the background; a create racing that
        # removal can fail with 10049 "error creating store for stream" (a real-server flake).
        await pair.settle()
    await pair.same("$JS.API.INFO")
