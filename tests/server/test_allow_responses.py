"""``allow_responses`` side by side with nats-server 2.15.1, the same file given to both: the
reply subjects of requests a user received become publishable (past its deny list), ``max``
uses each (a second request with the same reply uses one up, as ``deliverMsg`` checks a live
grant with the full publish check), ``expires``; without a ``publish`` block nothing else is
publishable. Expiry runs on the server's clock: advancing jsemu's clock expires a grant."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from config.test_cli_errors import _assert_one_line, _jsemu, _real
from support.rawclient import RawClient

import jsemu
from jsemu.protocol.go_duration import parse_duration
from jsemu.server.auth import Auth, User
from jsemu.server.permissions import Permissions, SubjectRules
from jsemu.server.responses import ResponsePermission

from .test_auth import _pair

CONF = """authorization {
  users: [
    {user: req, password: req}
    {user: svc, password: svc, permissions: {
        publish: { allow: "log", deny: "_INBOX.secret.>" },
        subscribe: "svc.>", allow_responses: { max: 2 } }}
    {user: one, password: one, permissions: { subscribe: "svc.>", allow_responses: true }}
    {user: fast, password: fast, permissions: {
        publish: "log", subscribe: "svc.>", allow_responses: { expires: "300ms", max: -1 } }}
  ]
}
"""

REQUESTS = (
    b"SUB _INBOX.> 1\r\n"
    b"PUB svc.x _INBOX.a 1\r\na\r\n"
    b"PUB svc.x _INBOX.secret.b 1\r\nb\r\n"
    b"PUB svc.x _INBOX.d 1\r\nd\r\nPUB svc.x _INBOX.d 1\r\nd\r\n"
    b"PUB svc.x log 1\r\nl\r\n"
)
ANSWERS = (
    b"PUB _INBOX.a 1\r\n1\r\nPUB _INBOX.a 1\r\n2\r\nPUB _INBOX.a 1\r\n3\r\n"
    b"PUB _INBOX.secret.b 1\r\n1\r\n"
    b"PUB _INBOX.d 1\r\n1\r\nPUB _INBOX.d 1\r\n2\r\n"
    b"PUB _INBOX.c 1\r\n1\r\nPUB log 1\r\n1\r\nPUB other 1\r\n1\r\n"
)


async def _session(port: int, user: str, wait: float = 0.0) -> tuple[list[bytes], list[bytes], list[bytes]]:
    """``user`` serves ``svc.>``; ``req`` asks; ``user`` answers (after ``wait``)."""
    svc = await RawClient.connect(port, {"user": user, "pass": user, "verbose": False})
    req = await RawClient.connect(port, {"user": "req", "pass": "req", "verbose": False})
    try:
        assert await svc.exchange(b"SUB svc.> 1\r\n") == []
        await req.exchange(REQUESTS)
        received = await svc.exchange()
        if wait:
            await asyncio.sleep(wait)
        answered = await svc.exchange(ANSWERS)
        return received, answered, sorted(await req.exchange())
    finally:
        await svc.close()
        await req.close()


@pytest.mark.parametrize("user", ["svc", "one", "fast"])
async def test_responses_as_nats_server(user: str, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, CONF):
        got = {kind: await _session(port, user) for kind, port in pair.ports.items()}
        assert got["jsemu"] == got["real"]
        answered = b"".join(got["real"][1])
        assert b"Permissions Violation" in answered and b"MSG _INBOX.a 1 1\r\n1\r\n" in got["real"][2]


async def test_grants_expire_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, CONF):
        got = {kind: await _session(port, "fast", wait=0.5) for kind, port in pair.ports.items()}
        assert got["jsemu"] == got["real"]
        assert got["real"][2] == []  # every grant had expired
        assert b'Publish to "_INBOX.a"' in b"".join(got["real"][1])


@pytest.mark.fake_only
async def test_grants_expire_on_the_servers_clock() -> None:
    """No sleeping: moving jsemu's clock past ``expires`` ends the grant."""
    perms = Permissions(pub_allow=SubjectRules([]), response=ResponsePermission(-1, 60 * 10**9))
    auth = Auth(users={"svc": User("svc", "svc", perms), "req": User("req", "req")})
    async with jsemu.Server(host="127.0.0.1", port=0, auth=auth) as srv:
        svc = await RawClient.connect(srv.port, {"user": "svc", "pass": "svc", "verbose": False})
        req = await RawClient.connect(srv.port, {"user": "req", "pass": "req", "verbose": False})
        await svc.exchange(b"SUB svc 1\r\n")
        await req.exchange(b"SUB r.> 1\r\nPUB svc r.1 0\r\n\r\nPUB svc r.2 0\r\n\r\n")
        await svc.exchange()
        assert await svc.exchange(b"PUB r.1 0\r\n\r\n") == []
        srv.control.advance_clock(61 * 10**9)
        assert await svc.exchange(b"PUB r.1 0\r\n\r\nPUB r.2 0\r\n\r\n") == [
            b"-ERR 'Permissions Violation for Publish to \"r.1\"'\r\n",
            b"-ERR 'Permissions Violation for Publish to \"r.2\"'\r\n",
        ]
        await svc.close()
        await req.close()


BAD = {
    "not-bool-or-map": "allow_responses: 5",
    "string": 'allow_responses: "x"',
    "max-string": 'allow_responses: {max: "x"}',
    "bad-expires": 'allow_responses: {expires: "zz"}',
    "expires-number": "allow_responses: {expires: 5}",
    "unknown-in-map": "allow_responses: {max: 2, bogus: 1}",
    "unknown-permission": "responses: true",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_allow_responses_refused_as_nats_server(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(f"authorization {{ users: [ {{user: a, password: b, permissions: {{{BAD[name]}}}}} ] }}\n")
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]


@pytest.mark.parametrize(
    ("text", "ns"),
    [("0", 0), ("1s", 10**9), ("1m30s", 90 * 10**9), ("-1.5h", -5400 * 10**9), ("300ms", 3 * 10**8), (".5us", 500)],
)
def test_go_durations(text: str, ns: int) -> None:
    assert parse_duration(text) == ns


@pytest.mark.parametrize(("text", "error"), [("zz", "invalid duration"), ("1", "missing unit"), ("1x", "unknown")])
def test_go_duration_errors(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.000806123, "806µs"), (0.001234567, "1.234567ms"), (0.0000005, "500ns"), (75.5, "1m15.5s"), (0, "0s")],
)
def test_connz_rtt_is_go_duration_string_after_get_rtt_truncation(seconds: float, text: str) -> None:
    """nats-server's ``getRTT`` keeps whole µs below 1ms, then ``time.Duration.String`` (no rounding)."""
    from jsemu.server.monitor import go_duration

    assert go_duration(seconds) == text
