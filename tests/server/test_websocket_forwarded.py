"""``X-Forwarded-For`` on the WebSocket upgrade, side by side with nats-server 2.15.1.

nats-server takes the first ``X-Forwarded-For`` header's whole value when Go's
``net.ParseIP`` reads it as one address, and shows it only in its log lines' name of the
client (``1.2.3.4/127.0.0.1:5555 - wid:7``, IPv6 in brackets): ``/connz`` ``ip`` and INFO
``client_ip`` stay the socket's peer. A list, a port, a zone or junk is ignored. WebSocket
clients are ``wid`` in the log where TCP ones are ``cid``."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import urllib.request

import pytest
from support.servers import RealServer
from support.wsclient import CONNECT, WsClient, frame, info_of

import jsemu
from jsemu.config.server_config import apply_config, parse_config
from jsemu.protocol.websocket import UpgradeRequest, forwarded_for

_VALUES = ["1.2.3.4", "::1", "2001:db8::7", "::ffff:10.0.0.1", "1.2.3.4, 5.6.7.8", "junk", "fe80::1%eth0", "1.2.3.4:80"]
#: The cases whose log line is compared: nats-server logs ``maximum connections exceeded``
#: once a second or two at most (``RateLimitErrorf``), so they are spaced by this much there.
_LOGGED = (0, 1, 4, 9)
_RATE_LIMIT = 2.1
_CONF = "max_connections: 1\nhttp_port: -1\nwebsocket { port: -1, no_tls: true }"


class _Logged(RealServer):
    """nats-server whose log lines after start-up are kept."""

    lines: list[str]

    def _wait_ready(self) -> int:
        self.lines = []
        stream = self.proc.stderr

        class Keep:
            def readline(self) -> str:
                assert stream is not None
                return stream.readline()

            def read(inner) -> str:
                assert stream is not None
                for line in stream:
                    self.lines.append(line.rstrip())
                return ""

        self.proc.stderr = Keep()  # type: ignore[assignment]
        return super()._wait_ready()


async def _case(port: int, monitor: str, extra: str, refuse: bool) -> tuple[str, str, int, bytes]:
    """A client (the one ``max_connections`` allows): its INFO ``client_ip`` and ``/connz`` ip;
    then (``refuse``) a second one with the same headers, refused (the log has a line of it),
    its port and what it got."""
    client = await WsClient.connect(port, extra)
    first, _ = await client.frames(quiet=0.2)
    client.send(frame(2, CONNECT + b"PING\r\n"))
    await client.until(b"PONG\r\n")
    connz = json.loads(await asyncio.to_thread(_get, f"{monitor}/connz"))
    answer, local_port = b"", 0
    if refuse:
        refused = await WsClient.connect(port, extra)
        answer = (await refused.until(b"-ERR")).partition(b"-ERR")[2]
        local_port = refused.writer.get_extra_info("sockname")[1]
        refused.close()
    client.close()
    for _ in range(100):  # gone before the next case connects
        if not json.loads(await asyncio.to_thread(_get, f"{monitor}/connz"))["num_connections"]:
            break
        await asyncio.sleep(0.02)
    (conn,) = connz["connections"]
    return info_of(first[0].text())["client_ip"], conn["ip"], local_port, answer


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        data: bytes = response.read()
    return data


def _normal(line: str, port: int) -> str:
    line = re.sub(r"^\[\d+\] \S+ \S+ (\[ERR\] )?", "", line)
    return re.sub(r"wid:\d+", "wid:N", line.replace(f":{port} ", ":PORT "))


async def test_forwarded_for_names_the_client_in_log_lines_as_nats_server(caplog: pytest.LogCaptureFixture) -> None:
    cases = [f"X-Forwarded-For: {v}\r\n" for v in _VALUES] + [
        "",
        "X-Forwarded-For: 8.8.8.8\r\nX-Forwarded-For: 9.9.9.9\r\n",
    ]
    real = _Logged(jetstream=False, conf_text=_CONF)
    options = jsemu.ServerOptions(host="127.0.0.1", port=0, jetstream=False)
    apply_config(parse_config(_CONF), options)
    options.host, options.port, options.http_port = "127.0.0.1", 0, -1
    emu = jsemu.Server(options)
    await emu.start()
    caplog.set_level(logging.WARNING, logger="jsemu.server")
    try:
        assert emu.websocket is not None
        sides = {
            "jsemu": (emu.websocket.port, emu.monitor_urls[0]),
            "real": (int(real.ws_url.rsplit(":", 1)[1]), real.monitor_url),
        }
        got: dict[str, list[object]] = {}
        for kind, (port, monitor) in sides.items():
            results = []
            for i, extra in enumerate(cases):
                refuse = i in _LOGGED
                client_ip, ip, local, answer = await _case(port, monitor, extra, refuse)
                needle = f":{local} "
                found: list[str] = []
                for _ in range(100 if refuse else 0):
                    logged = real.lines if kind == "real" else [r.getMessage() for r in caplog.records]
                    found = [line for line in logged if needle in line and "maximum connections" in line]
                    if found:
                        break
                    await asyncio.sleep(0.02)
                results.append((extra, client_ip, ip, answer, _normal(found[0], local) if found else ""))
                if refuse and kind == "real" and i != _LOGGED[-1]:
                    await asyncio.sleep(_RATE_LIMIT)
            got[kind] = results
        assert got["jsemu"] == got["real"]
        lines = [line for *_, line in got["real"]]
        assert lines[0] == "1.2.3.4/127.0.0.1:PORT - wid:N - maximum connections exceeded"
        assert lines[1] == "[::1]/127.0.0.1:PORT - wid:N - maximum connections exceeded"
        assert lines[4] == "127.0.0.1:PORT - wid:N - maximum connections exceeded"
        assert lines[9].startswith("8.8.8.8/")
    finally:
        await emu.stop()
        real.stop()


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1.2.3.4"], "1.2.3.4"),
        (["1.2.3.4", "5.6.7.8"], "1.2.3.4"),
        (["01.2.3.4"], ""),  # Go's ParseIP refuses leading zeros
        (["1.2.3.4 "], ""),
        ([""], ""),
        (["::ffff:1.2.3.4"], "::ffff:1.2.3.4"),
        (["fe80::1%lo"], ""),
        ([], ""),
    ],
)
def test_forwarded_for_parsing(values: list[str], expected: str) -> None:
    request = UpgradeRequest("GET", "/", "1.1", [("x-forwarded-for", v) for v in values])
    assert forwarded_for(request) == expected
