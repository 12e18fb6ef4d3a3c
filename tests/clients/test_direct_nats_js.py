"""nats.js v3 Direct Get (``@nats-io/jetstream``'s ``jsm.direct``) sees the same results from jsemu as
from nats-server 2.15.1. **NEEDS DIRECT GET** (ADR-31, including batch and multi-last requests).

``js/direct_check.mjs <url> <stream> <file|memory>`` creates a stream with ``allow_direct: true``,
publishes twelve messages in two groups 50 ms apart (several subjects, headers, empty payloads),
deletes seqs 4 and 7, then calls ``jsm.direct.getMessage`` (``seq``, ``last_by_subj``,
``next_by_subj``, ``start_time``), ``jsm.direct.getBatch`` (``batch``, ``max_bytes``,
``next_by_subj``, ``start_time``, paging by sequence) and ``jsm.direct.getLastMessagesFor``
(``multi_last`` with wildcards, ``up_to_seq``, ``up_to_time``, ``batch``, ``max_bytes``), plus
error cases (a stream without ``allow_direct``, an unknown stream, invalid request combinations)
and prints one JSON object: subjects, sequences, payloads, headers (not ``Nats-Time-Stamp``),
pending counts, last sequences and error names/codes. Each message's ``ts_ok`` says whether its
``Nats-Time-Stamp`` equals the ``time`` that STREAM.MSG.GET reports for its sequence.

It runs once against the shared real server and once against a fresh ``jsemu.Server`` with the same
stream name, for each storage; the two objects must be equal. The Node setup (``node`` fixture,
``npm ci``) is the one of :mod:`tests.clients.test_kv_nats_js`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import jsemu

from . import test_kv_nats_js as kv_nats_js

#: The session fixture of the ``node`` executable (``npm ci`` on first use), shared with the KV tests.
node = kv_nats_js.node
JS_DIR = kv_nats_js.JS_DIR
RUN_TIMEOUT = kv_nats_js.RUN_TIMEOUT

SCRIPT = JS_DIR / "direct_check.mjs"
STORAGES = pytest.mark.parametrize("storage", ["file", "memory"])


async def run_direct_check(node: str, url: str, stream: str, storage: str) -> dict[str, Any]:
    """Run ``direct_check.mjs`` against ``url``."""
    return await kv_nats_js.run_script(node, SCRIPT.name, url, stream, storage)


#: storage -> (stream, result) of the run against the real server, shared by both tests of a storage.
_REAL: dict[str, tuple[str, dict[str, Any]]] = {}


async def real_result(node: str, real_server: Any, storage: str) -> tuple[str, dict[str, Any]]:
    if storage not in _REAL:
        stream = f"S{uuid.uuid4().hex[:10]}"
        url = f"nats://127.0.0.1:{real_server.port}"
        _REAL[storage] = stream, await run_direct_check(node, url, stream, storage)
    return _REAL[storage]


def _walk(value: Any, key: str) -> Iterator[Any]:
    """Every value of ``key`` in nested dicts and lists."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                yield v
            yield from _walk(v, key)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, key)


def _msgs(res: dict[str, Any], label: str) -> list[tuple[int, int, int]]:
    """(seq, pending, lastSequence) of the messages of a batch step."""
    return [(m["seq"], m["pending"], m["lastSequence"]) for m in res[label]["ok"]["msgs"]]


def _end(res: dict[str, Any], label: str) -> Any:
    return res[label]["ok"]["end"]


NOT_FOUND = {"error": {"name": "JetStreamStatusError", "message": "message not found", "code": 404}}
BAD_REQUEST = {"error": {"name": "JetStreamStatusError", "message": "bad request", "code": 408}}
NO_RESPONDERS = {"error": {"name": "JetStreamStatusError", "message": "no responders", "code": 503}}


@STORAGES
async def test_direct_nats_js_on_real_server(node: str, real_server: Any, storage: str) -> None:
    """The script itself works: spot checks of what nats-server answers."""
    stream, res = await real_result(node, real_server, storage)
    root = stream.lower()
    assert res["add"] == {"allow_direct": True, "storage": storage}
    assert [a["seq"] for a in res["publish"]] == list(range(1, 13))
    assert res["gap.ok"] is True
    # Every message read through Direct Get carries the timestamp STREAM.MSG.GET reports.
    assert set(_walk(res, "ts_ok")) == {True} and set(_walk(res, "has_ts")) == {True}

    assert res["get.seq.2"]["ok"]["headers"] == {
        "X-H": ["1"],
        "X-Multi": ["x", "y"],
        "Nats-Stream": [stream],
        "Nats-Subject": [f"{root}.b"],
        "Nats-Sequence": ["2"],
    }
    assert (res["get.seq.3"]["ok"]["data"], res["get.seq.3"]["ok"]["headers"]["Nats-Sequence"]) == ("", ["3"])
    assert res["get.seq.4"] == res["get.seq.7"] == res["get.seq.99"] == {"ok": None}
    assert res["get.last.a"]["ok"]["seq"] == 12 and res["get.last.c.*"]["ok"]["seq"] == 9
    assert res["get.last.del"] == {"ok": None}
    assert res["get.next.a.2"]["ok"]["seq"] == 8 and res["get.next.c.*.4"]["ok"]["seq"] == 6
    assert res["get.start_time.ts8"]["ok"]["seq"] == 8 and res["get.start_time.gap.date"]["ok"]["seq"] == 8
    assert res["get.start_time.future"] == {"ok": None}
    assert res["get.seq.0"] == {"error": {"name": "JetStreamStatusError", "message": "empty request", "code": 408}}
    assert res["get.seq.and.start_time"] == BAD_REQUEST

    assert _msgs(res, "batch.seq1.3") == [(1, 9, 0), (2, 8, 1), (3, 7, 2)]
    assert _msgs(res, "batch.max_bytes.50") == [(1, 9, 0), (2, 8, 1)]
    assert _msgs(res, "batch.next.a.2") == [(1, 2, 0), (8, 1, 1)]
    assert _msgs(res, "batch.start_time.ts6.next.a") == [(8, 1, 0), (12, 0, 8)]
    assert _end(res, "batch.seq99.2") == _end(res, "batch.start_time.future") == NOT_FOUND
    assert _end(res, "batch.seq.and.start_time") == BAD_REQUEST
    assert [p["seqs"] for p in res["batch.paging"]["ok"]] == [[1, 2, 3], [5, 6, 8], [9, 10, 11], [12], []]

    assert _msgs(res, "multi.all") == [(6, 4, 0), (9, 3, 6), (10, 2, 9), (11, 1, 10), (12, 0, 11)]
    assert _msgs(res, "multi.all.batch.2") == [(6, 4, 0), (9, 3, 6)]
    assert _msgs(res, "multi.all.up_to_seq.7") == [(1, 3, 0), (3, 2, 1), (5, 1, 3), (6, 0, 5)]
    assert _msgs(res, "multi.all.up_to_time.ts6") == [(1, 2, 0), (3, 1, 1), (5, 0, 3)]
    # nats-server 2.15.1: an up_to_seq past the last sequence finds nothing in a file stream,
    # but everything in a memory stream.
    assert bool(_msgs(res, "multi.all.up_to_seq.50")) == (storage == "memory")
    assert _end(res, "multi.up_to_seq.and.time") == BAD_REQUEST

    assert res["err.get.nd"] == {
        "error": {"name": "RequestError", "message": f"no responders: '$JS.API.DIRECT.GET.{stream}_ND'"}
    }
    assert _end(res, "err.batch.nd") == _end(res, "err.batch.unknown") == NO_RESPONDERS
    assert res["after.purge.get.last.a.new"]["ok"]["seq"] == 13


@STORAGES
async def test_direct_nats_js_same_on_jsemu(node: str, real_server: Any, storage: str) -> None:
    """The script prints the same JSON against jsemu as against nats-server."""
    stream, expected = await real_result(node, real_server, storage)
    async with jsemu.Server() as srv:
        got = await run_direct_check(node, srv.url, stream, storage)
    differing = [
        f"{key}:\n  real:  {json.dumps(expected.get(key))}\n  jsemu: {json.dumps(got.get(key))}"
        for key in [*expected, *(k for k in got if k not in expected)]
        if expected.get(key) != got.get(key)
    ]
    assert not differing, "direct_check.mjs results differ at\n" + "\n".join(differing)
