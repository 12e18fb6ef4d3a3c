"""Authentication side by side with nats-server 2.15.1: the same configuration file given to
both, the same CONNECTs (and no CONNECT), the same answers: accepted (``PONG``), refused
(``-ERR 'Authorization Violation'`` then the close), timed out; INFO's ``auth_required``;
nats-py with user/password and token; a hostile CONNECT closes only its own connection."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import bcrypt
import nats
import pytest
from support.rawclient import RawClient
from support.servers import RealServer

import jsemu
from jsemu.config.server_config import load_config

HASH = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode().replace("$2b$", "$2a$", 1)

CONFIGS = {
    "user-pass": "authorization { user: alice, password: wonder }\n",
    "token": 'authorization { token: "t0k3n" }\n',
    "bcrypt-token": f'authorization {{ token: "{HASH}" }}\n',
    "users": f"""authorization {{
  users: [
    {{user: alice, password: wonder}}
    {{user: bob, password: "{HASH}"}}
  ]
}}
""",
    "no-auth-user": """authorization {
  users = [
    { user: alice, password: wonder },
    { user: guest, password: "" }
  ]
}
no_auth_user: guest
""",
}

ATTEMPTS: list[dict[str, Any]] = [
    {},
    {"user": "alice", "pass": "wonder"},
    {"user": "alice", "pass": "wrong"},
    {"user": "alice"},
    {"user": "bob", "pass": "s3cret"},
    {"user": "bob", "pass": HASH},  # the hash itself is not the password
    {"user": "nobody", "pass": "wonder"},
    {"user": "guest"},
    {"auth_token": "t0k3n"},
    {"auth_token": "s3cret"},
    {"auth_token": "wrong"},
    {"auth_token": "t0k3n", "user": "alice", "pass": "wonder"},
    {"pass": "wonder"},
]


class Pair:
    """The same file served by nats-server (a process) and jsemu (in this loop)."""

    def __init__(self, real: subprocess.Popen[str] | RealServer, real_port: int, emu: jsemu.Server) -> None:
        self.real, self.real_port, self.emu = real, real_port, emu

    @property
    def ports(self) -> dict[str, int]:
        return {"real": self.real_port, "jsemu": self.emu.port}


async def _pair(tmp_path: Path, text: str) -> AsyncIterator[Pair]:
    conf = tmp_path / "server.conf"
    conf.write_text(text)
    real = _RealWithConfig(conf)
    options = jsemu.ServerOptions(host="127.0.0.1", port=0, jetstream=False)
    load_config(conf, options)
    options.host, options.port = "127.0.0.1", 0
    emu = jsemu.Server(options)
    await emu.start()
    try:
        yield Pair(real, real.port, emu)
    finally:
        await emu.stop()
        real.stop()


class _RealWithConfig(RealServer):
    """nats-server with this exact file (``RealServer`` writes its own)."""

    def __init__(self, conf: Path) -> None:
        import tempfile

        from support.servers import nats_server_binary

        self.tmp = tempfile.TemporaryDirectory(prefix="jsemu-real-")
        args = [nats_server_binary(), "-c", str(conf), "-a", "127.0.0.1", "-p", "-1"]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.port = self._wait_ready()


async def _attempt(port: int, connect: dict[str, Any] | bytes | None, then: bytes = b"") -> tuple[list[bytes], bool]:
    """CONNECT (if given) and PING: the frames after INFO and whether the server closed."""
    client = await RawClient.connect(port, connect)
    try:
        frames = await client.exchange(then)
        return frames, client.eof
    finally:
        await client.close()


@pytest.mark.parametrize("name", sorted(CONFIGS))
async def test_connect_attempts_as_nats_server(name: str, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, CONFIGS[name]):
        outcomes: dict[str, list[Any]] = {"real": [], "jsemu": []}
        for kind, port in pair.ports.items():
            first = await RawClient.connect(port)
            keys = list(first.info)
            # auth_required right after headers (nats-server leaves it out with a no_auth_user).
            outcomes[kind].append(("INFO", keys[keys.index("headers") + 1], first.info.get("auth_required")))
            await first.close()
            for attempt in ATTEMPTS:
                outcomes[kind].append((attempt, *await _attempt(port, {"verbose": False, **attempt})))
            # No CONNECT at all: a PING first.
            outcomes[kind].append(("PING first", *await _attempt(port, None)))
        assert outcomes["jsemu"] == outcomes["real"]
        # The attempts are not all alike: the test can tell refused from accepted.
        assert {o[2] for o in outcomes["real"][1:]} == {True, False}
        assert outcomes["jsemu"][0][2] is (None if "no_auth_user" in CONFIGS[name] else True)


async def test_auth_timeout_closes_silent_client(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, "authorization { user: a, password: b, timeout: 0.5 }\n"):
        got = {}
        for kind, port in pair.ports.items():
            client = await RawClient.connect(port)
            loop = asyncio.get_running_loop()
            start = loop.time()
            got[kind] = await client.read_until_closed(5.0)
            assert 0.4 < loop.time() - start < 2.0
            await client.close()
        assert got["jsemu"] == got["real"] == [b"-ERR 'Authentication Timeout'\r\n"]


async def test_connect_in_time_is_not_timed_out(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, "authorization { user: a, password: b, timeout: 0.3 }\n"):
        for port in pair.ports.values():
            client = await RawClient.connect(port, {"user": "a", "pass": "b", "verbose": False})
            await asyncio.sleep(0.6)
            assert await client.exchange() == [] and not client.eof
            await client.close()


async def test_hostile_connect_closes_only_that_connection(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, CONFIGS["user-pass"]):
        hostile: list[bytes] = [
            b'CONNECT {"user":1,"pass":2}\r\n',
            b'CONNECT {"user":["alice"],"pass":"wonder"}\r\n',
            b'CONNECT {"user":"alice","pass":"' + b"x" * 100_000 + b'"}\r\n',
            b'CONNECT {"user":"alice","pass":"wonder"\r\n',
            b"CONNECT\r\n",
            b'CONNECT {"user":"alice","pass":null}\r\n',
        ]
        for kind, port in pair.ports.items():
            good = await RawClient.connect(port, {"user": "alice", "pass": "wonder", "verbose": False})
            good.send(b"SUB x 1\r\n")
            assert await good.exchange() == []
            results = []
            for line in hostile:
                client = await RawClient.connect(port)
                client.send(line)
                results.append(await client.read_until_closed(5.0))
                await client.close()
            good.send(b"PUB x 2\r\nhi\r\n")
            assert await good.exchange() == [b"MSG x 1 2\r\nhi\r\n"], kind
            await good.close()
            if kind == "real":
                real_results = results
            else:
                assert results == real_results


@pytest.mark.parametrize(
    ("conf", "connect"),
    [
        (CONFIGS["user-pass"], {"user": "alice", "password": "wonder"}),
        (CONFIGS["token"], {"token": "t0k3n"}),
        (CONFIGS["users"], {"user": "bob", "password": "s3cret"}),
    ],
)
async def test_nats_py_with_credentials(conf: str, connect: dict[str, str], tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, conf):
        for kind, port in pair.ports.items():
            nc = await nats.connect(f"nats://127.0.0.1:{port}", allow_reconnect=False, **connect)  # type: ignore[arg-type]
            sub = await nc.subscribe("greet")
            await nc.publish("greet", b"hello")
            msg = await sub.next_msg(timeout=2)
            assert msg.data == b"hello", kind
            await nc.close()
            errors: list[Exception] = []
            with pytest.raises(Exception) as refused:
                await nats.connect(
                    f"nats://127.0.0.1:{port}",
                    allow_reconnect=False,
                    connect_timeout=2,
                    error_cb=_collect(errors),
                )
            assert "Authorization Violation" in str(refused.value) + "".join(map(str, errors)), kind


async def test_include_and_listen(tmp_path: Path) -> None:
    """``include`` (relative to the including file) brings the authorization block in."""
    (tmp_path / "auth.conf").write_text(CONFIGS["user-pass"])
    text = 'listen: "127.0.0.1:-1"\ninclude "auth.conf"\n'
    options = load_config(_write(tmp_path / "main.conf", text), jsemu.ServerOptions(port=4222))
    assert (options.host, options.port) == ("127.0.0.1", 0)
    assert options.auth is not None and options.auth.user is not None and options.auth.user.name == "alice"
    async for pair in _pair(tmp_path, 'include "auth.conf"\n'):
        for port in pair.ports.values():
            assert (await _attempt(port, {"verbose": False}))[1] is True
            assert (await _attempt(port, {"verbose": False, "user": "alice", "pass": "wonder"}))[1] is False


def _collect(errors: list[Exception]) -> Callable[[Exception], Awaitable[None]]:
    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    return on_error


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_serve_flags_user_pass_and_token() -> None:
    from jsemu.cli import build_parser, serve_options

    opts = serve_options(build_parser().parse_args(["serve", "--user", "u", "--pass", "p"]))
    assert opts.auth is not None and opts.auth.authenticate({"user": "u", "pass": "p"}) is not None
    assert opts.auth.authenticate({"user": "u", "pass": "x"}) is None
    opts = serve_options(build_parser().parse_args(["serve", "--auth", "tok"]))
    assert opts.auth is not None and opts.auth.authenticate({"auth_token": "tok"}) is not None
    assert opts.auth.authenticate({}) is None
    assert serve_options(build_parser().parse_args(["serve"])).auth is None
