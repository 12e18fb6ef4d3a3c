"""A clean stop leaves each file stream's log compacted to its columns (so the next start
loads them in bulk and replays nothing), and the stream comes back the same: messages,
headers, deletes, subjects and the duplicate window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats

import jsemu
from jsemu.store.column_snapshot import Columns
from jsemu.store.records import Compact, UpdateLimitsAt
from jsemu.store.wal import read_log

STREAMS = Path("jetstream") / "$G" / "streams"


async def _api(nc: Any, subject: str, body: Any = b"") -> dict[str, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return json.loads((await nc.request(subject, data, timeout=5)).data)


async def _contents(nc: Any) -> tuple[Any, ...]:
    info = await _api(nc, "$JS.API.STREAM.INFO.C", {"deleted_details": True, "subjects_filter": ">"})
    msgs = []
    for seq in range(info["state"]["first_seq"], info["state"]["last_seq"] + 1):
        reply = await _api(nc, "$JS.API.STREAM.MSG.GET.C", {"seq": seq})
        msg = reply.get("message", {})
        msgs.append((msg.get("subject"), msg.get("data"), msg.get("hdrs"), msg.get("time")))
    return info["state"], msgs


async def test_a_clean_stop_leaves_columns_that_the_next_start_loads(tmp_path: Path) -> None:
    wal = tmp_path / STREAMS / "C" / "msgs.wal"
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        js = nc.jetstream()
        await js.add_stream(name="C", subjects=["c.>"])
        for i in range(150):  # about 150 KiB logged: more than a clean stop leaves as records
            headers = {"Nats-Msg-Id": f"m{i}"} if i % 3 == 0 else None
            await js.publish(f"c.{i % 4}", b"%04d" % i * 256, headers=headers)
        await _api(nc, "$JS.API.STREAM.MSG.DELETE.C", {"seq": 7})
        await _api(nc, "$JS.API.STREAM.MSG.DELETE.C", {"seq": 148})
        before = await _contents(nc)
        assert [type(r) for r in read_log(wal).records].count(Columns) == 0  # still records, one by one
        await nc.close()
    contents = read_log(wal, runs=True)
    assert [type(r) for r in contents.records] == [UpdateLimitsAt, Compact, Columns, UpdateLimitsAt]
    assert contents.records[2].count == 148
    async with jsemu.Server(store_dir=str(tmp_path)) as srv:
        nc = await nats.connect(srv.url)
        assert await _contents(nc) == before
        reply = await nc.request("c.0", b"again", headers={"Nats-Msg-Id": "m144"}, timeout=5)
        retry = json.loads(reply.data)
        assert retry == {"stream": "C", "seq": 145, "duplicate": True}
        await nc.close()
