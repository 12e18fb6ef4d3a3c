"""A reload (SIGHUP) of the ``accounts`` block, side by side with nats-server 2.15.1.

Captured from nats-server (``accountsOption``, ``reloadAuthorization``): every reload logs
``Reloaded: authorization users`` and ``Reloaded: accounts`` whatever changed, and nothing
else for users, accounts, imports or exports. A user added can log in at once; a new account
too. A client whose user is gone (removed, or its account removed) or now in another account
is closed without a word (``clientHasMovedToDifferentAccount``); nats-server looks only in
the ``users`` and ``nkeys`` lists, so a client of a single ``user``/``password``, or one that
sent a name a server without users never asked for, is closed by any reload too, and a client
of the ``no_auth_user`` is closed when that user moves. A changed password costs the client
``-ERR 'Authorization Violation'`` and an ``authentication error`` line; changed permissions
remove the subscriptions they no longer allow, as for plain users. An import removed stops
working for connected clients (a request gets no responders), one added starts. The
``no_auth_user`` cannot change (``config reload not supported for NoAuthUser: old=, new=a1``).
Clients of the accounts left alone keep their connection and subscriptions.

On routed servers, an account a reload adds is routed at once (its messages cross the routes).

nats-server also enables, disables and re-limits an account's JetStream on reload; jsemu
refuses that (``... the JetStream of accounts by jsemu yet``), checked on jsemu alone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.cluster import free_port, start_node, wait_routes

from app.test_lame_duck_process import PROGRAMS, Proc, _client, _read, procs

__all__ = ["procs"]

_FEEDS = "exports: [{stream: feed.>}, {service: svc.>}]"
_IMPORTS = "imports: [{stream: {account: A, subject: feed.>}}, {service: {account: A, subject: svc.>}}]"
_A = "{user: a1, password: a1}, {user: a2, password: a2}"
_B = "{user: b1, password: b1}"
_NORMAL = [
    (re.compile(rb"_R_\.\w+\.\w+"), b"_R_"),
    (re.compile(rb'"rtt":\d+'), b'"rtt":0'),
    (re.compile(rb"HMSG svc\.q 1 _R_ \d+ \d+"), b"HMSG svc.q 1 _R_ N N"),
]


def _accounts(a: str = _A, b: str = _B, imports: str = _IMPORTS, a_extra: str = "", more: str = "") -> str:
    return f"accounts {{\n  A: {{ users: [{a}], {_FEEDS} {a_extra} }}\n  B: {{ users: [{b}], {imports} }}\n{more}}}\n"


def _reload(proc: Proc, conf: Path, text: str) -> list[str]:
    conf.write_text(text)
    mark = len(proc.lines)
    proc.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not any(
        "Reloaded server configuration" in x or "Failed to reload" in x for x in proc.since(mark)
    ):
        time.sleep(0.02)
    lines = [re.sub(r"sha256:[0-9a-f]{64}", "sha256:…", x) for x in proc.since(mark)]
    return [re.sub(r"127\.0\.0\.1:\d+ - cid:\d+", "ADDR", x) for x in lines]


def _ask(sock: socket.socket, data: bytes = b"") -> bytes:
    """``data`` then a PING: what the server sent up to its PONG (or to the close)."""
    try:
        sock.sendall(data + b"PING\r\n")
        got = _read(sock, until=b"PONG\r\n", timeout=2)
    except OSError as exc:
        return f"<{type(exc).__name__}>".encode()
    got = got.replace(b"PING\r\n", b"")  # the server's own keep-alive, whenever it comes
    for pattern, repl in _NORMAL:
        got = pattern.sub(repl, got)
    return got if got.endswith(b"PONG\r\n") else got + b"<closed>"


def _probe(clients: dict[str, socket.socket]) -> dict[str, bytes]:
    """A message on ``feed.x`` in A (B imports the stream), then a request from B on ``svc.q``
    (B imports the service from A); what each client has seen, in a fixed order."""
    out = {"a2 pub": _ask(clients["a2"], b"PUB feed.x 2\r\nhi\r\n")}
    out["b1 feed"] = _ask(clients["b1"])
    out["b1 request"] = _ask(clients["b1"], b"PUB svc.q _INBOX.b 1\r\nq\r\n")
    for name, sock in clients.items():
        if name not in ("a2", "b1"):
            out[name] = _ask(sock)
    return out


def _user(port: int, name: str) -> socket.socket:
    return _client(port, {"user": name, "pass": name, "verbose": False, "headers": True, "no_responders": True})


def _run(kind: str, tmp: Path, procs: list[Proc]) -> dict[str, object]:
    (tmp / kind).mkdir()
    conf = tmp / kind / "accounts.conf"
    conf.write_text(_accounts())
    proc = Proc(kind, ["-c", str(conf)])
    procs.append(proc)
    c = {name: _user(proc.port, name) for name in ("a1", "a2", "b1")}
    _ask(c["a1"], b"SUB svc.> 1\r\nSUB feed.> 2\r\n")
    _ask(c["b1"], b"SUB feed.> 1\r\nSUB _INBOX.b 2\r\n")
    out: dict[str, object] = {"start": _probe(c)}

    out["add a3, C"] = _reload(
        proc, conf, _accounts(a=_A + ", {user: a3, password: a3}", more="  C: { users: [{user: c1, password: c1}] }\n")
    )
    c["a3"], c["c1"] = _user(proc.port, "a3"), _user(proc.port, "c1")
    out["add a3, C probe"] = _probe(c)
    more_c = "  C: { users: [{user: c1, password: c1}] }\n"
    a3 = _A + ", {user: a3, password: a3}"
    out["no imports"] = _reload(proc, conf, _accounts(a=a3, imports="", more=more_c))
    out["no imports probe"] = _probe(c)
    out["imports back"] = _reload(proc, conf, _accounts(a=a3, more=more_c))
    out["imports back probe"] = _probe(c)
    out["a2 password"] = _reload(proc, conf, _accounts(a=a3.replace("password: a2", "password: zz"), more=more_c))
    out["a2 password probe"] = _ask(c.pop("a2"))
    c["a2"] = c["a1"]  # a1 publishes from here on
    out["a3 to B, no C"] = _reload(
        proc, conf, _accounts(a="{user: a1, password: a1}", b=_B + ", {user: a3, password: a3}")
    )
    out["a3 to B, no C probe"] = _probe(c)
    del c["a3"], c["c1"]
    perms = "{user: a1, password: a1, permissions: {subscribe: feed.>}}"
    out["a1 perms"] = _reload(proc, conf, _accounts(a=perms))
    out["a1 perms probe"] = _probe(c)
    out["no_auth_user"] = _reload(proc, conf, _accounts(a=perms) + "no_auth_user: a1\n")
    return out


def test_accounts_reload_as_nats_server(tmp_path: Path, procs: list[Proc]) -> None:
    got = {kind: _run(kind, tmp_path, procs) for kind in PROGRAMS}
    assert got["jsemu"] == got["real"]
    real = got["real"]
    ok = ['[INF] Trapped "hangup" signal', "[INF] Reloaded: authorization users", "[INF] Reloaded: accounts"]
    assert real["add a3, C"] == [*ok, "[INF] Reloaded server configuration (sha256:…)"]
    request = b'HMSG svc.q 1 _R_ N N\r\nNATS/1.0\r\nNats-Request-Info: {"acc":"B","rtt":0}\r\n\r\nq\r\nPONG\r\n'
    assert real["add a3, C probe"]["a1"] == b"MSG feed.x 2 2\r\nhi\r\n" + request  # type: ignore[index]
    no_responders = b"HMSG _INBOX.b 2 37 37\r\nNATS/1.0 503\r\nNats-Subject: svc.q\r\n\r\n\r\nPONG\r\n"
    assert real["no imports probe"]["b1 feed"] == b"PONG\r\n"  # type: ignore[index]
    assert real["no imports probe"]["b1 request"] == no_responders  # type: ignore[index]
    assert real["imports back probe"]["b1 feed"] == b"MSG feed.x 1 2\r\nhi\r\nPONG\r\n"  # type: ignore[index]
    assert real["a2 password"][3] == '[ERR] ADDR - "A/user:a2" - authentication error - User "a2"'  # type: ignore[index]
    assert real["a2 password probe"] == b"-ERR 'Authorization Violation'\r\n<closed>"
    assert real["a3 to B, no C probe"]["a3"] == real["a3 to B, no C probe"]["c1"] == b"<closed>"  # type: ignore[index]
    assert real["a1 perms"][3] == '[INF] Removed sub "svc.>" (sid "1") for User "a1" - not authorized'  # type: ignore[index]
    assert real["no_auth_user"][1] == (
        "[ERR] Failed to reload server configuration: config reload not supported for NoAuthUser: old=, new=a1"
    )


def _clients_through_reloads(
    kind: str, tmp: Path, procs: list[Proc], before: str, afters: list[str], connects: dict[str, dict[str, object]]
) -> list[dict[str, bytes]]:
    """A server on ``before``, a client for each of ``connects``, then each reload in turn:
    what each client still open sees after it."""
    tmp.mkdir(exist_ok=True)
    conf = tmp / f"{kind}.conf"
    conf.write_text(before)
    proc = Proc(kind, ["-c", str(conf)])
    procs.append(proc)
    socks = {label: _client(proc.port, {"verbose": False, **connect}) for label, connect in connects.items()}
    seen = []
    for after in afters:
        lines = _reload(proc, conf, after)
        assert lines[-1] == "[INF] Reloaded server configuration (sha256:…)", lines
        seen.append({label: _ask(sock) for label, sock in socks.items()})
    return seen


_X = {"user": "x", "pass": "y"}
_NO_AUTH_USER = "accounts {{ A: {{users: [{a}]}}, B: {{users: [{b}]}} }}\nno_auth_user: x\n"
_CASES = {
    "no users": ("max_payload: 1000\n", ["max_payload: 2000\n"], {"a name": _X, "anonymous": {}}),
    "single user": ("authorization {user: x, password: y}\n", ["authorization {user: x, password: y}\n"], {"x": _X}),
    "token": ("authorization {token: t}\n",) * 2
    + ({"token": {"auth_token": "t"}, "and a name": {"user": "x", "auth_token": "t"}},),
    "users removed": ("authorization {users: [{user: x, password: y}]}\n", ["max_payload: 2000\n"], {"x": _X}),
    "no_auth_user": (
        _NO_AUTH_USER.format(a="{user: x, password: y}", b=""),
        [
            _NO_AUTH_USER.format(a="{user: x, password: y}", b="{user: z, password: z}"),  # x stays in A
            _NO_AUTH_USER.format(a="", b="{user: x, password: y}"),  # x moves to B
        ],
        {"anonymous": {}},
    ),
}


def test_which_clients_a_reload_closes_as_nats_server(tmp_path: Path, procs: list[Proc]) -> None:
    runs = [(kind, name) for kind in PROGRAMS for name in _CASES]

    def run(case: tuple[str, str]) -> list[dict[str, bytes]]:
        before, afters, connects = _CASES[case[1]]
        if isinstance(afters, str):
            afters = [afters]
        return _clients_through_reloads(case[0], tmp_path / case[1].replace(" ", "_"), procs, before, afters, connects)

    with ThreadPoolExecutor(len(runs)) as pool:  # a process each: side by side in a few seconds
        got: dict[str, dict[str, object]] = {kind: {} for kind in PROGRAMS}
        for (kind, name), seen in zip(runs, pool.map(run, runs), strict=True):
            got[kind][name] = seen
    assert got["jsemu"] == got["real"]
    closed, pong = b"<closed>", b"PONG\r\n"
    assert got["real"] == {
        "no users": [{"a name": closed, "anonymous": pong}],
        "single user": [{"x": closed}],
        "token": [{"token": pong, "and a name": closed}],
        "users removed": [{"x": closed}],
        "no_auth_user": [{"anonymous": pong}, {"anonymous": closed}],
    }


def test_account_jetstream_change_refused(tmp_path: Path, procs: list[Proc]) -> None:
    """nats-server enables, disables and re-limits an account's JetStream on reload; jsemu says
    it cannot yet, and leaves everything as it was."""
    conf = tmp_path / "js.conf"
    js = f"jetstream: {{store_dir: {json.dumps(str(tmp_path / 'js'))}}}\n"
    conf.write_text(_accounts(a_extra=", jetstream: enabled", more="") + js)
    proc = Proc("jsemu", ["-c", str(conf)])
    procs.append(proc)
    for text in (_accounts() + js, _accounts(a_extra=", jetstream: {max_mem: 1M}") + js):
        refused = "config reload not supported for the JetStream of accounts by jsemu yet"
        assert _reload(proc, conf, text)[1:] == [f"[ERR] Failed to reload server configuration: {refused}"]


@pytest.mark.parametrize("kind", PROGRAMS)
def test_account_added_by_reload_is_routed(kind: str, tmp_path: Path) -> None:
    """Two routed servers each reload a new account C: a message published in C on one
    reaches C's subscriber on the other (nats-server: at once; jsemu: C joins the cluster)."""
    ports = [free_port(), free_port()]

    def write(i: int, extra: str) -> Path:
        conf = tmp_path / f"{i}.conf"
        route = f"nats://127.0.0.1:{ports[1 - i]}"
        conf.write_text(
            f'cluster {{ name: c, listen: "127.0.0.1:{ports[i]}", routes: ["{route}"] }}\n'
            f"accounts {{\n  A: {{users: [{{user: a, password: a}}]}}\n  {extra}\n}}\n"
        )
        return conf

    nodes = [start_node(kind, extra=["-c", str(write(i, ""))], flags=False) for i in (0, 1)]
    try:
        wait_routes(nodes)
        for i, node in enumerate(nodes):
            write(i, "C: {users: [{user: c, password: c}]}")
            mark = len(node.lines)
            os.kill(node.proc.pid, signal.SIGHUP)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not any("Reloaded server" in x for x in node.lines[mark:]):
                time.sleep(0.02)
        sub = _user(nodes[0].port, "c")
        _ask(sub, b"SUB x 1\r\n")
        pub = _user(nodes[1].port, "c")
        deadline = time.monotonic() + 5
        got = b""
        while b"MSG" not in got and time.monotonic() < deadline:  # until the interest has crossed
            _ask(pub, b"PUB x 2\r\nhi\r\n")
            time.sleep(0.05)
            got += _ask(sub)
        assert b"MSG x 1 2\r\nhi\r\n" in got, got
    finally:
        for node in nodes:
            node.stop()
