"""``/jsz`` with consumers against the real nats-server's: ``consumers=true`` (which implies
the stream details), nested under ``accounts=true&streams=true``, with ``config=true``; the
consumer counts of ``/jsz`` and ``$JS.API.INFO`` as consumers come and go."""

from __future__ import annotations

import json
from typing import Any

import nats
from server.test_monitoring import _fetch, _go_format, _keys, both  # noqa: F401 - both is the fixture

_PATHS = (
    "/jsz?consumers=true",
    "/jsz?accounts=true&streams=true&consumers=true",
    "/jsz?streams=true&consumers=true&config=true",
    "/jsz?accounts=true",
)
_TIMES = ("created", "ts", "last_active", "now", "first_ts", "last_ts", "server_id", "leader", "store_dir")


def _stable(value: Any) -> Any:
    """The value without the times and ids of this run (and machine-dependent limits)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _TIMES and k not in ("max_memory", "max_storage")}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _detail_keys(doc: Any) -> list[Any]:
    """The key structure (names and order) of every stream's and consumer's detail."""
    return [_keys(s) for a in doc.get("account_details", []) for s in a.get("stream_detail", [])]


async def _traffic(port: int) -> tuple[Any, list[int]]:
    nc = await nats.connect(f"nats://127.0.0.1:{port}")
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"], storage="memory")
    await js.add_stream(name="EMPTY", subjects=["e"], storage="memory")
    for i in range(3):
        await js.publish("s.a", b"x%d" % i)
    await js.add_consumer("S", durable_name="Z", deliver_subject="pp")  # created first, listed first
    psub = await js.pull_subscribe("s.>", durable="D")
    msgs = await psub.fetch(2)
    await msgs[0].ack()
    await js.add_consumer("S", durable_name="GONE")
    counts = [(await js.account_info()).consumers]
    await js.delete_consumer("S", "GONE")
    await nc.flush()
    counts.append((await js.account_info()).consumers)
    return nc, counts


async def test_jsz_consumer_detail_matches_nats_server(both: Any) -> None:  # noqa: F811
    (emu_port, emu_http), (real_port, real_http) = both
    emu_nc, emu_counts = await _traffic(emu_port)
    real_nc, real_counts = await _traffic(real_port)
    try:
        assert emu_counts == real_counts == [3, 2]
        for path in _PATHS:
            emu_body = (await _fetch(emu_http, path))[2]
            real_body = (await _fetch(real_http, path))[2]
            emu, real = json.loads(emu_body), json.loads(real_body)
            assert emu_body == _go_format(emu, False), path
            for doc in (emu, real):  # the server lists streams in Go map order (random)
                for account in doc.get("account_details", []):
                    account.get("stream_detail", []).sort(key=lambda s: s["name"])
            assert _keys(emu) == _keys(real), path
            assert _detail_keys(emu) == _detail_keys(real), path
            assert _stable(emu) == _stable(real), path
        jsz = json.loads((await _fetch(emu_http, "/jsz?consumers=true"))[2])
        assert jsz["consumers"] == 2
        detail = jsz["account_details"][0]["stream_detail"]
        assert [s["name"] for s in detail] == ["EMPTY", "S"]
        assert "consumer_detail" not in detail[0]  # omitted when a stream has none
        z, d = detail[1]["consumer_detail"]
        assert (z["name"], d["name"]) == ("Z", "D")  # in creation order
        assert (d["delivered"]["stream_seq"], d["ack_floor"]["stream_seq"], d["num_ack_pending"]) == (2, 1, 1)
        assert "config" not in d
    finally:
        await emu_nc.close()
        await real_nc.close()
