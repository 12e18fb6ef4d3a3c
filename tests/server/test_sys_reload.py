"""``$SYS.REQ.SERVER.<id>.RELOAD`` side by side with nats-server 2.15.1, both as processes
started from the same configuration file, which each step then changes.

nats-server's ``reloadConfig`` runs ``Reload``, as SIGHUP does: done, the answer is the bare
envelope (``{"server": ...}``, no ``data``, no ``error``) and the log has SIGHUP's lines
(``Reloaded: ...`` per change, then ``Reloaded server configuration (<digest>)``); refused,
the answer's error is a 500 with the reason SIGHUP would log (an option that cannot change,
the file gone, the file unreadable) and nothing is logged. A body that does not decode is a
400; ``PING.RELOAD`` has no responder. A server without a configuration file cannot have a
system account user on nats-server; jsemu in-process answers nats-server's error for a reload
without a file (``test_an_in_process_server_has_no_file_to_reload``).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import nats

import jsemu
from jsemu.config.server_config import load_config
from jsemu.server.reload import NO_CONFIG_FILE
from tests.support.servers import KINDS, RealServer, StderrLines

CONF = """
server_name: srv-one
accounts {
  SYS: { users: [ {user: sys, password: sys} ] }
  A: { users: [ {user: a, password: a} ] }
}
system_account: SYS
"""


class _Lines(StderrLines):
    """Every line after start-up, kept."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.kept: list[str] = []

    def read(self) -> str:
        for line in self._stream:
            self.kept.append(line.rstrip())
        return ""


class _Logged(RealServer):
    lines: _Lines

    def _wait_ready(self) -> int:
        self.lines = _Lines(self.proc.stderr)
        self.proc.stderr = self.lines  # type: ignore[assignment]
        return super()._wait_ready()


def _info(port: int) -> dict[str, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        data = b""
        while b"\r\n" not in data:
            data += sock.recv(65536)
    info: dict[str, Any] = json.loads(data[5:].split(b"\r\n", 1)[0])
    return info


async def _ask(port: int, subject: str, body: bytes = b"") -> Any:
    nc = await nats.connect(f"nats://127.0.0.1:{port}", user="sys", password="sys")
    try:
        msg = await nc.request(subject, body, timeout=2)
        answer = json.loads(msg.data)
        return {k: v for k, v in answer.items() if k != "server"}
    except nats.errors.NoRespondersError:
        return "no responders"
    finally:
        await nc.close()


def _reload_lines(server: _Logged, since: int) -> list[str]:
    """The reload lines logged since line ``since``, without their prefix (pid, time) or digest."""
    time.sleep(0.1)  # the log is drained by another thread
    lines = [re.sub(r"^\[\d+\] \S+ \S+ ", "", line) for line in server.lines.kept[since:]]
    return [re.sub(r"\(sha256:\w*\)", "(digest)", line) for line in lines if "Reload" in line]


def _steps(server: _Logged) -> list[tuple[str, Any, list[str], int]]:
    """Each step's (name, answer without its server block, reload lines, max_payload after)."""
    conf = Path(server.tmp.name) / "server.conf"
    ask = f"$SYS.REQ.SERVER.{_info(server.port)['server_id']}.RELOAD"
    steps: list[tuple[str, Any, list[str], int]] = []

    def step(name: str, body: bytes = b"", subject: str = ask) -> None:
        since = len(server.lines.kept)
        answer = asyncio.run(_ask(server.port, subject, body))
        if isinstance(answer, dict) and "error" in answer:
            answer["error"]["description"] = answer["error"]["description"].replace(str(conf), "<conf>")
        steps.append((name, answer, _reload_lines(server, since), _info(server.port)["max_payload"]))

    step("unchanged")
    step("unchanged, {}", b"{}")
    step("a body that does not decode", b"{x")
    step("PING", subject="$SYS.REQ.SERVER.PING.RELOAD")
    conf.write_text(conf.read_text() + "max_payload: 2048\n")
    step("max_payload changed")
    conf.write_text(conf.read_text().replace("server_name: srv-one", "server_name: srv-two"))
    step("server_name cannot change")
    conf.write_text(conf.read_text().replace("server_name: srv-two", "server_name: srv-one"))
    conf.write_text(conf.read_text().replace("max_payload: 2048", "max_payload: 4096"))
    step("max_payload changed again")
    conf.unlink()
    step("the file gone")
    return steps


def test_reload_as_nats_server() -> None:
    got = {}
    for kind in KINDS:
        server = _Logged(conf_text=CONF, jetstream=False, jsemu_process=kind == "jsemu")
        try:
            got[kind] = _steps(server)
        finally:
            server.stop()
    assert got["jsemu"] == got["real"]
    changed = got["real"][4]
    assert changed[1] == {} and "[INF] Reloaded: max_payload = 2048" in changed[2] and changed[3] == 2048
    assert got["real"][5][1]["error"]["code"] == 500 and got["real"][5][2] == []


async def test_an_in_process_server_has_no_file_to_reload(tmp_path: Path) -> None:
    """Its options came from Python (here: read from a file once, as the pytest plugin may)."""
    conf = tmp_path / "server.conf"
    conf.write_text(CONF)
    options = jsemu.ServerOptions(jetstream=False)
    load_config(conf, options)
    options.host, options.port = "127.0.0.1", 0
    async with jsemu.Server(options) as srv:
        answer = await _ask(srv.port, f"$SYS.REQ.SERVER.{srv.server_id}.RELOAD")
    assert answer == {"error": {"code": 500, "description": NO_CONFIG_FILE}}
