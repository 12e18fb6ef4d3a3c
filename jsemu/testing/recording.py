"""Session recording for tests: what a test's clients said to jsemu, in a file that replays
against nats-server, to tell a jsemu bug from a client bug.

* ``jsemu_recorded``: the ``jsemu_server`` of the test behind a recording proxy
  (:class:`jsemu.sessions.Recorder`); connect clients to ``jsemu_recorded.url``
  (``.server`` is the server, ``.path`` the session file);
* ``jsemu_recorder``: ``url = await jsemu_recorder(server)`` puts a recording proxy in front
  of any server (one from ``jsemu_factory``, say), one session file per call.

The files go to the test's ``tmp_path`` (pytest keeps the last three runs), or to
``--jsemu-record DIR`` (named after the test). When a test fails, its report gets a
"jsemu session recording" section naming each file and the command that replays it against
nats-server: ``jsemu replay FILE --spawn-real``. If nats-server answers as the recording says,
the client did what it was told and jsemu answered as nats-server does: look at the client
or the test; if it differs, the first difference is where jsemu is wrong.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..app import Server
from ..sessions import Recorder

__all__ = ["RecordedSession", "report_sections"]

_RECORDINGS_KEY = pytest.StashKey[list[Path]]()


@dataclass(frozen=True)
class RecordedSession:
    url: str  # the proxy: connect clients here
    server: Server
    path: Path  # the session file


def _folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    chosen = request.config.getoption("--jsemu-record", None)
    if not chosen:
        return tmp_path
    folder = Path(chosen)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _path(request: pytest.FixtureRequest, folder: Path, n: int) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)[:120]
    return folder / f"{name}{'' if n == 1 else f'-{n}'}.jsonl"


async def recorder_for(request: pytest.FixtureRequest, folder: Path, server: Server, n: int) -> Recorder:
    recorder = Recorder(server.url, _path(request, folder, n))
    await recorder.start()
    request.node.stash.setdefault(_RECORDINGS_KEY, []).append(recorder.out)
    return recorder


def report_sections(item: pytest.Item) -> list[tuple[str, str]]:
    """The failed test's report section naming its recordings, if it has any."""
    paths = item.stash.get(_RECORDINGS_KEY, [])
    if not paths:
        return []
    lines = [f"{p}\n  replay against nats-server: jsemu replay {p} --spawn-real" for p in paths]
    return [("jsemu session recording", "\n".join(lines))]


def register(async_fixture: Callable[..., object]) -> tuple[object, object]:
    """The two fixtures, made with the plugin's async fixture decorator."""

    async def jsemu_recorded(
        request: pytest.FixtureRequest, jsemu_server: Server, tmp_path: Path
    ) -> AsyncIterator[RecordedSession]:
        """``jsemu_server`` behind a recording proxy: ``.url``, ``.server``, ``.path``."""
        recorder = await recorder_for(request, _folder(request, tmp_path), jsemu_server, 1)
        try:
            yield RecordedSession(recorder.url, jsemu_server, recorder.out)
        finally:
            await recorder.stop()

    async def jsemu_recorder(
        request: pytest.FixtureRequest, tmp_path: Path
    ) -> AsyncIterator[Callable[[Server], Awaitable[str]]]:
        """``url = await jsemu_recorder(server)``: a recording proxy in front of ``server``."""
        recorders: list[Recorder] = []
        folder = _folder(request, tmp_path)

        async def record(server: Server) -> str:
            recorders.append(await recorder_for(request, folder, server, len(recorders) + 1))
            return recorders[-1].url

        try:
            yield record
        finally:
            for recorder in recorders:
                await recorder.stop()

    return async_fixture(jsemu_recorded), async_fixture(jsemu_recorder)
