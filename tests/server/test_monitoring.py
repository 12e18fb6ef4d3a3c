"""The HTTP monitoring port against the real nats-server's: same endpoints, same keys in
the same order, same values wherever they do not describe the machine or the moment."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest
from support.servers import nats_server_binary

import jsemu
import jsemu.config.server_config

_MONITOR = re.compile(r"Starting http monitor on [^:]+:(\d+)")
_CLIENT = re.compile(r"Listening for client connections on [^:]+:(\d+)")


class RealWithMonitor:
    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-mon-")
        conf = Path(self.tmp.name) / "m.conf"
        conf.write_text("http_port: -1\n")
        args = [nats_server_binary(), "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", self.tmp.name, "-c", str(conf)]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        assert self.proc.stderr is not None
        self.http_port = self.port = 0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (self.http_port and self.port):
            line = self.proc.stderr.readline()
            if m := _MONITOR.search(line):
                self.http_port = int(m.group(1))
            if m := _CLIENT.search(line):
                self.port = int(m.group(1))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.tmp.cleanup()


@pytest.fixture
async def both() -> AsyncIterator[tuple[tuple[int, int], tuple[int, int]]]:
    real = RealWithMonitor()
    async with jsemu.Server(http_port=-1) as srv:
        assert srv.monitor is not None
        yield (srv.port, srv.monitor.port), (real.port, real.http_port)
    real.stop()


def _get(port: int, path: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type"), exc.read().decode()


async def _fetch(port: int, path: str) -> tuple[int, str, str]:
    return await asyncio.to_thread(_get, port, path)


def _go_format(value: Any, flat: bool) -> str:
    """Go's ``json.Marshal`` (flat) or ``json.MarshalIndent(v, "", "  ")``."""
    if flat:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    else:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _keys(value: Any) -> Any:
    """The key structure (names and order) of a JSON value."""
    if isinstance(value, dict):
        return [(k, _keys(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_keys(v) for v in value[:1]]
    return None


async def _same_traffic(port: int) -> None:
    nc = await nats.connect(f"nats://127.0.0.1:{port}", name="probe")
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"], storage="memory", allow_direct=True, max_bytes=1000)
    for i in range(3):
        await js.publish("s.a", b"x%d" % i)
    await nc.subscribe("foo.*")
    await nc.flush()
    # Stay connected: /connz must show this client.
    _CLIENTS.append(nc)


_CLIENTS: list[Any] = []


async def test_monitoring_endpoints_match_nats_server(both: Any) -> None:
    (emu_port, emu_http), (real_port, real_http) = both
    await _same_traffic(emu_port)
    await _same_traffic(real_port)
    try:
        for path in ("/varz", "/jsz", "/jsz?streams=true", "/jsz?streams=true&config=true", "/connz", "/healthz"):
            emu_status, emu_type, emu_body = await _fetch(emu_http, path)
            real_status, real_type, real_body = await _fetch(real_http, path)
            assert (emu_status, emu_type) == (real_status, real_type) == (200, "application/json"), path
            emu, real = json.loads(emu_body), json.loads(real_body)
            assert _keys(emu) == _keys(real), path
            # Indentation and spacing follow Go's MarshalIndent (flat for /healthz).
            flat = path == "/healthz"
            assert real_body == _go_format(real, flat), path
            assert emu_body == _go_format(emu, flat), path
        varz = [json.loads((await _fetch(p, "/varz"))[2]) for p in (emu_http, real_http)]
        for key in ("version", "proto", "max_payload", "max_pending", "max_control_line", "ping_interval", "ping_max"):
            assert varz[0][key] == varz[1][key], key
        for key in ("connections", "total_connections", "in_msgs", "in_client_msgs", "out_msgs", "system_account"):
            assert varz[0][key] == varz[1][key], key
        assert varz[0]["jetstream"]["stats"]["memory"] == varz[1]["jetstream"]["stats"]["memory"]
        assert varz[0]["jetstream"]["stats"]["reserved_memory"] == varz[1]["jetstream"]["stats"]["reserved_memory"]
        jsz = [json.loads((await _fetch(p, "/jsz?streams=true"))[2]) for p in (emu_http, real_http)]
        for key in ("memory", "storage", "accounts", "streams", "consumers", "messages", "bytes", "total"):
            assert jsz[0][key] == jsz[1][key], key
        details = [j["account_details"][0]["stream_detail"][0] for j in jsz]
        assert details[0]["name"] == details[1]["name"] == "S"
        for key in ("messages", "bytes", "first_seq", "last_seq", "num_subjects"):
            assert details[0]["state"][key] == details[1]["state"][key], key
        connz = [json.loads((await _fetch(p, "/connz"))[2]) for p in (emu_http, real_http)]
        conns = [c["connections"][0] for c in connz]
        for key in ("cid", "kind", "type", "ip", "in_msgs", "out_msgs", "subscriptions", "name", "lang"):
            assert conns[0][key] == conns[1][key], key
        assert [(await _fetch(p, "/healthz"))[2] for p in (emu_http, real_http)] == ['{"status":"ok"}'] * 2
        missing = [await _fetch(p, "/nope") for p in (emu_http, real_http)]
        assert missing[0] == missing[1] == (404, "text/plain; charset=utf-8", "404 page not found\n")
    finally:
        for nc in _CLIENTS:
            await nc.close()
        _CLIENTS.clear()


async def test_configured_store_limits_are_reported(tmp_path: Path) -> None:
    conf = tmp_path / "js.conf"
    conf.write_text("jetstream {\n  store_dir: " + str(tmp_path) + "\n  max_memory_store: 1GB\n  domain: hub\n}\n")
    options = jsemu.ServerOptions(http_port=-1)
    jsemu.config.server_config.load_config(conf, options)
    async with jsemu.Server(options) as srv:
        assert srv.monitor is not None
        jsz = json.loads((await _fetch(srv.monitor.port, "/jsz"))[2])
        assert jsz["config"]["max_memory"] == 1 << 30
        assert jsz["config"]["store_dir"] == str(tmp_path / "jetstream")
        assert jsz["config"]["domain"] == "hub"


async def test_store_dir_not_made_yet_is_reported(tmp_path: Path) -> None:
    """Only memory streams used: ``store_dir`` does not exist yet, and /varz and /jsz still answer."""
    store = tmp_path / "not" / "yet"
    async with jsemu.Server(jsemu.ServerOptions(http_port=-1, jetstream=True, store_dir=str(store))) as srv:
        assert srv.monitor is not None
        for path in ("/varz", "/jsz"):
            status, _, body = await _fetch(srv.monitor.port, path)
            assert status == 200, body
        jsz = json.loads((await _fetch(srv.monitor.port, "/jsz"))[2])
        assert jsz["config"]["store_dir"] == str(store / "jetstream")
        assert jsz["config"]["max_storage"] > 0
