"""Sessions recorded from nats-py programs (``programs.py``) against nats-server 2.15.1 replay
against jsemu and against nats-server itself with no difference; a difference planted in jsemu
(a fault rule) or in the recording is reported at the frame where it is.

Each program is recorded once per module, through ``jsemu.sessions.Recorder`` in front of a fresh
``nats-server -js``; every replay gets a fresh server of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.servers import RealServer

import jsemu
from jsemu.sessions import Recorder, read_session, replay
from jsemu.sessions.format import Session
from jsemu.sessions.replayer import expected_frames
from jsemu.sessions.targets import server_at

from .programs import PROGRAMS


async def _record(name: str, path: Path) -> None:
    real = await asyncio.to_thread(RealServer)
    try:
        async with Recorder(f"nats://127.0.0.1:{real.port}", path) as recorder:
            await PROGRAMS[name](recorder.url)
            await asyncio.sleep(0.1)  # the last close reaches the file
    finally:
        await asyncio.to_thread(real.stop)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    folder = tmp_path_factory.mktemp("sessions")
    paths = {name: folder / f"{name}.jsonl" for name in PROGRAMS}

    async def record_all() -> None:
        for name, path in paths.items():
            await _record(name, path)

    asyncio.run(record_all())
    yield paths


@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("target", ["spawn-jsemu", "spawn-real"])
async def test_recorded_session_replays_without_difference(
    recordings: dict[str, Path], program: str, target: str
) -> None:
    session = read_session(recordings[program])
    async with server_at(target, _nats_server()) as (host, port):
        result = await replay(session, host, port)
    assert [d.describe() for d in result.differences] == []
    assert result.frames >= 8


def _nats_server() -> str:
    from support.servers import nats_server_binary

    return nats_server_binary()


def _rank(session: Session, conn: int, predicate: str) -> tuple[int, int]:
    """(1-based rank, file line) of the first expected frame of ``conn`` whose view has ``predicate``."""
    for i, frame in enumerate(expected_frames(session.connections[conn])):
        if predicate in frame.view:
            return i + 1, frame.line
    raise AssertionError(f"no frame with {predicate!r}")


async def test_fault_planted_in_jsemu_is_reported_at_its_frame(recordings: dict[str, Path]) -> None:
    """jsemu answers the first Direct Get batch request with a 503 (a fault rule): the replay
    names that request's first reply, the line it was recorded at and the request before it."""
    session = read_session(recordings["direct_batch"])
    rank, line = _rank(session, 1, "\nr1")
    async with jsemu.Server() as srv:
        srv.control.answer_status("$JS.API.DIRECT.GET.READINGS", 503)
        result = await replay(session, "127.0.0.1", srv.port)
    assert len(result.differences) == 1
    d = result.differences[0]
    assert (d.conn, d.frame, d.line) == (1, rank, line)
    assert "r1" in d.expected and "503" in d.got
    assert d.after.startswith("PUB $JS.API.DIRECT.GET.READINGS ")
    assert d.describe().splitlines()[0] == (f"conn 1: frame {rank} (recorded at line {line}, after client `{d.after}`)")


async def test_difference_planted_in_the_recording_is_reported(recordings: dict[str, Path], tmp_path: Path) -> None:
    """The subscriber's second message edited in the file (same length): replay names that
    frame on the subscriber's connection and nothing on the publisher's."""
    lines = recordings["pubsub"].read_text().splitlines(keepends=True)
    for i, text in enumerate(lines):
        record = json.loads(text)
        if record.get("dir") == "s2c" and "order 1" in record.get("data", ""):
            record["data"] = record["data"].replace("order 1", "order 9")
            lines[i] = json.dumps(record) + "\n"
            conn, line = record["conn"], i + 1
            break
    planted = tmp_path / "planted.jsonl"
    planted.write_text("".join(lines))
    session = read_session(planted)
    rank, at = _rank(session, conn, "order 9")
    assert at == line
    async with jsemu.Server() as srv:
        result = await replay(session, "127.0.0.1", srv.port)
    assert [(d.conn, d.frame, d.line) for d in result.differences] == [(conn, rank, line)]
    assert "order 9" in result.differences[0].expected and "order 1" in result.differences[0].got


async def test_missing_and_extra_frames(recordings: dict[str, Path], tmp_path: Path) -> None:
    """A frame jsemu does not send within the timeout (a dropped publish), and a frame the
    recording lacks (the file cut before the last reply), are each reported."""
    session = read_session(recordings["pubsub"])
    async with jsemu.Server() as srv:
        srv.control.drop("orders.2")
        result = await replay(session, "127.0.0.1", srv.port, timeout=1.0)
    [d] = result.differences
    assert "order 2" in d.expected and d.got == "(nothing within 1 s)"
    lines = recordings["kv"].read_text().splitlines(keepends=True)
    last_reply = max(i for i, text in enumerate(lines) if json.loads(text).get("dir") == "s2c")
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:last_reply]))  # the last reply and the close record: a recording cut short
    async with jsemu.Server() as srv:
        result = await replay(read_session(cut), "127.0.0.1", srv.port, timeout=1.0)
    [d] = result.differences
    assert d.expected == "(nothing: the recording has no more frames)" and d.got.startswith("MSG _INBOX.")


async def test_recorded_pace_keeps_the_recorded_gaps(recordings: dict[str, Path], tmp_path: Path) -> None:
    """``pace="recorded"``: no client chunk is sent before its recorded time (the session is
    stretched to a second first, so the pacing shows above the replay's own time)."""
    lines = recordings["pubsub"].read_text().splitlines()
    stretched = [lines[0]]
    for text in lines[1:]:
        record = json.loads(text)
        record["t"] = round(record["t"] * 1.0 / max(json.loads(lines[-1])["t"], 1e-3), 6)  # the last at 1 s
        stretched.append(json.dumps(record))
    path = tmp_path / "stretched.jsonl"
    path.write_text("\n".join(stretched) + "\n")
    session = read_session(path)
    async with jsemu.Server() as srv:
        loop = asyncio.get_running_loop()
        start = loop.time()
        result = await replay(session, "127.0.0.1", srv.port, pace="recorded")
        took = loop.time() - start
    assert result.ok, [d.describe() for d in result.differences]
    last_send = max(c.t for conn in session.connections.values() for c in conn.chunks if c.dir == "c2s")
    assert took >= last_send > 0.5


async def test_upstream_down_is_recorded_as_a_server_close(tmp_path: Path) -> None:
    """Nothing listens upstream: the client's connection is closed, the file says the server did."""
    path = tmp_path / "down.jsonl"
    async with Recorder("nats://127.0.0.1:1", path) as recorder:
        reader, writer = await asyncio.open_connection("127.0.0.1", recorder.port)
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
    [conn] = read_session(path).connections.values()
    assert (conn.chunks, conn.closed_by) == ([], "server")
