"""jsemu-only: the control plane's faults, clock and the ``$JSEMU.API`` subject interface.

Clock tests are exact and sleep-free: the server's default clock is wall time that the
control plane can freeze, step and set.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.errors import NoRespondersError, TimeoutError

import jsemu
from jsemu.timefmt import format_ns

SECOND = 1_000_000_000
T0 = 1_800_000_000_000_000_000  # 2027-01-15T08:00:00Z


async def _json(nc: Client, subject: str, body: Any = b"") -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return json.loads((await nc.request(subject, data, timeout=2)).data)


async def _pub(nc: Client, subject: str, data: bytes = b"x") -> int:
    return int((await _json(nc, subject, data))["seq"])


# --- faults -------------------------------------------------------------------------------


async def test_drop_delay_and_status_faults() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        ctl = srv.control
        await _json(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "allow_direct": True})
        await _pub(nc, "s.a", b"v")
        get = json.dumps({"last_by_subj": "s.a"}).encode()

        ctl.drop("$JS.API.DIRECT.GET.>", count=2)
        for _ in range(2):
            with pytest.raises(TimeoutError):
                await nc.request("$JS.API.DIRECT.GET.S", get, timeout=0.2)
        assert (await nc.request("$JS.API.DIRECT.GET.S", get, timeout=1)).data == b"v"

        ctl.answer_status("$JS.API.DIRECT.GET.S", 408, "Request Timeout")
        reply = await nc.request("$JS.API.DIRECT.GET.S", get, timeout=1)
        assert reply.headers == {"Status": "408", "Description": "Request Timeout"}
        assert ctl.faults() == []

        ctl.delay("$JS.API.DIRECT.GET.S", 0.3)
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox)
        await nc.publish("$JS.API.DIRECT.GET.S", get, reply=inbox)
        with pytest.raises(TimeoutError):
            await sub.next_msg(timeout=0.1)
        late = await sub.next_msg(timeout=2)
        assert late.data == b"v"

        # A fault on a stream subject drops publishes; nothing is stored.
        ctl.drop("s.b")
        with pytest.raises(TimeoutError):
            await nc.request("s.b", b"lost", timeout=0.2)
        assert (await _json(nc, "$JS.API.STREAM.INFO.S"))["state"]["messages"] == 1
        await nc.close()


async def test_faults_never_touch_server_replies() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        srv.control.drop(">", count=0)  # every client message vanishes...
        with pytest.raises(TimeoutError):
            await nc.request("$JS.API.INFO", b"", timeout=0.2)
        srv.control.clear_faults()  # ...until cleared; nothing else was affected
        assert (await _json(nc, "$JS.API.INFO"))["streams"] == 0
        await nc.close()


# --- clock --------------------------------------------------------------------------------


async def test_max_age_start_time_and_up_to_time_follow_the_controlled_clock() -> None:
    async with jsemu.Server() as srv:
        nc = await nats.connect(srv.url)
        ctl = srv.control
        assert ctl.freeze_clock(T0) == T0
        await _json(
            nc,
            "$JS.API.STREAM.CREATE.S",
            {"name": "S", "subjects": ["s.>"], "allow_direct": True, "max_age": 10 * SECOND, "storage": "memory"},
        )
        for i in range(1, 5):  # seq i at T0 + i s
            ctl.advance_clock(seconds=1)
            await _pub(nc, f"s.{i}")
        msg = await nc.request("$JS.API.DIRECT.GET.S", b'{"seq":2}', timeout=1)
        assert msg.headers is not None and msg.headers["Nats-Time-Stamp"] == format_ns(T0 + 2 * SECOND)

        at_3 = format_ns(T0 + 3 * SECOND)
        msg = await nc.request("$JS.API.DIRECT.GET.S", json.dumps({"start_time": at_3}).encode(), timeout=1)
        assert msg.headers is not None and msg.headers["Nats-Sequence"] == "3"
        # up_to_time is exclusive: messages strictly before 3 s.
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox)
        await nc.publish("$JS.API.DIRECT.GET.S", json.dumps({"multi_last": [">"], "up_to_time": at_3}).encode(), inbox)
        seqs = []
        while True:
            m = await sub.next_msg(timeout=1)
            assert m.headers is not None
            if m.headers.get("Status") == "204":
                assert m.headers["Nats-UpTo-Sequence"] == "2"
                break
            seqs.append(m.headers["Nats-Sequence"])
        assert seqs == ["1", "2"]

        ctl.set_clock(T0 + 11 * SECOND - 1)  # seq 1 is 10 s - 1 ns old
        assert (await _json(nc, "$JS.API.STREAM.INFO.S"))["state"]["first_seq"] == 1
        ctl.advance_clock(1)  # exactly 10 s: expired
        state = (await _json(nc, "$JS.API.STREAM.INFO.S"))["state"]
        assert (state["first_seq"], state["messages"]) == (2, 3)
        ctl.advance_clock(seconds=100)
        state = (await _json(nc, "$JS.API.STREAM.INFO.S"))["state"]
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (0, 5, 4)

        ctl.resume_clock()
        before = ctl.now()
        await asyncio.sleep(0.01)
        assert ctl.now() > before  # running again, from where it was set
        await nc.close()


# --- over NATS ----------------------------------------------------------------------------


async def test_control_api_over_nats() -> None:
    async with jsemu.Server(cluster_size=3) as srv:
        nc = await nats.connect(srv.url)
        methods = await _json(nc, "$JSEMU.API.METHODS")
        assert methods["ok"] and "PAUSE" in methods["result"] and "ADVANCE_CLOCK" in methods["result"]
        await _json(
            nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3, "allow_direct": True}
        )
        assert await _json(nc, "$JSEMU.API.PAUSE", {"stream": "S", "peer": "n3"}) == {"ok": True, "result": None}
        await _pub(nc, "s.a")
        peers = await _json(nc, "$JSEMU.API.PEERS", {"stream": "S"})
        assert [p["lag"] for p in peers["result"]] == [0, 0, 1]
        assert await _json(nc, "$JSEMU.API.RESPONDER_POLICY", {"policy": "prefer", "prefer": ["n3"]}) == {
            "ok": True,
            "result": None,
        }
        reply = await nc.request("$JS.API.DIRECT.GET.S", b'{"last_by_subj":"s.a"}', timeout=1)
        assert reply.headers == {"Status": "404", "Description": "Message Not Found"}
        answers = await _json(nc, "$JSEMU.API.ANSWERS", {"clear": True})
        assert answers["result"] == [
            {"subject": "$JS.API.DIRECT.GET.S", "stream": "S", "peer": "n3", "answers_for": "S"}
        ]
        frozen = await _json(nc, "$JSEMU.API.FREEZE_CLOCK", {"at_ns": T0})
        assert frozen == {"ok": True, "result": T0}
        assert (await _json(nc, "$JSEMU.API.ADVANCE_CLOCK", {"seconds": 1.5}))["result"] == T0 + 1_500_000_000

        # Errors are JSON, never a dropped connection.
        assert await _json(nc, "$JSEMU.API.PAUSE", {"stream": "S"}) == {
            "ok": False,
            "error": "stream 'S' is not a mirror; name a peer to pause a replica",
        }
        bad_args = await _json(nc, "$JSEMU.API.PAUSE", {"streem": "S"})
        assert bad_args == {"ok": False, "error": "PAUSE: missing a required argument: 'stream'"}
        assert (await _json(nc, "$JSEMU.API.PAUSE", b"{nope"))["error"].startswith("invalid JSON")
        assert (await _json(nc, "$JSEMU.API.PAUSE", b"[1]"))["ok"] is False
        assert (await _json(nc, "$JSEMU.API.NOPE"))["error"] == "unknown control method 'NOPE'"
        assert (await _json(nc, "$JSEMU.API.RESET"))["ok"] is True
        with pytest.raises(NoRespondersError):
            await nc.request("$JS.API.DIRECT.GET.NOPE", b'{"seq":1}', timeout=1)
        await nc.close()
