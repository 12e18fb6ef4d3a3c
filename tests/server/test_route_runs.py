"""Messages over a route in runs (``server/route_batch.py``), byte for byte against nats-server:
a raw socket plays the other server of the cluster, a client pipelines runs of publishes, and
what crosses the route (and what reaches the client from it) must be what nats-server sends,
frame by frame, whatever the batching inside."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cluster import Node, start_node
from support.servers import KINDS

from .test_routes import Wire, _kind, _no_info, _route, _sync

ACCOUNTS = """
accounts {
  A { users [{user: a, password: a}] }
  B { users [{user: b, password: b}] }
}
"""


@pytest.fixture(scope="module", params=KINDS)
def node(request: pytest.FixtureRequest) -> Iterator[Node]:
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "accounts.conf"
        conf.write_text(ACCOUNTS)
        n = start_node(_kind(request.param), extra=["-c", str(conf)])
        yield n
        n.stop()


def _login(node: Node, user: str) -> Wire:
    c = Wire(node.port)
    c.until(b"\r\n")
    c.send(
        b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"user":"%b","pass":"%b"}\r\n'
        % ((user.encode(),) * 2)
    )
    c.send(b"PING\r\n")
    c.until(b"PONG\r\n")
    return c


def _rmsg(account: bytes, subject: bytes, reply: bytes | None, body: bytes) -> bytes:
    mid = b" " + reply if reply else b""
    return b"RMSG %b %b%b %d\r\n%b\r\n" % (account, subject, mid, len(body), body)


def _until_pong(w: Wire) -> bytes:
    w.send(b"PING\r\n")
    return w.until(b"PONG\r\n")[: -len(b"PONG\r\n")]


def _pubs(subject: bytes, reply: bytes | None, bodies: list[bytes]) -> bytes:
    mid = b" " + reply if reply else b""
    return b"".join(b"PUB %b%b %d\r\n%b\r\n" % (subject, mid, len(b), b) for b in bodies)


BODIES = [b"m%02d" % i for i in range(40)]
MIXED = [b"", b"a\r\nb", b"RMSG A s 1\r\n", b"x" * 300, b"12"]


def test_runs_of_publishes_cross_the_route(node: Node) -> None:
    """A client's pipelined runs (one subject; with a reply; mixed subjects, replies and
    sizes; a header in the middle) reach the route as nats-server frames them, in order."""
    w = _route(node)
    c = _login(node, "a")
    try:
        _sync(w)
        w.send(b"RS+ A s\r\nRS+ A t.*\r\n")
        _sync(w)
        wire = _pubs(b"s", None, BODIES) + _pubs(b"s", b"r", BODIES)
        mixed = [
            (b"t.1" if i % 3 else b"s", b"r%d" % (i % 2) if i % 4 else None, body) for i, body in enumerate(MIXED * 4)
        ]
        wire += b"".join(_pubs(s, r, [b]) for s, r, b in mixed)
        wire += (
            b"HPUB s 12 14\r\nNATS/1.0\r\n\r\nhi\r\n" + _pubs(b"s", None, BODIES[:10]) + _pubs(b"none", None, BODIES)
        )
        c.send(wire + b"PING\r\n")
        c.until(b"PONG\r\n")
        want = b"".join(_rmsg(b"A", b"s", None, b) for b in BODIES)
        want += b"".join(_rmsg(b"A", b"s", b"r", b) for b in BODIES)
        want += b"".join(_rmsg(b"A", s, r, b) for s, r, b in mixed)
        want += b"HMSG A s 12 14\r\nNATS/1.0\r\n\r\nhi\r\n" + b"".join(_rmsg(b"A", b"s", None, b) for b in BODIES[:10])
        assert _until_pong(w) == want
    finally:
        w.close()
        c.close()


def test_runs_in_two_accounts_name_their_account(node: Node) -> None:
    """The same subject in two accounts: each run's frames name its own account."""
    w = _route(node)
    a, b = _login(node, "a"), _login(node, "b")
    try:
        _sync(w)
        w.send(b"RS+ A s\r\nRS+ B s\r\n")
        _sync(w)
        for client in (a, b, a):
            client.send(_pubs(b"s", None, BODIES[:20]) + b"PING\r\n")
            client.until(b"PONG\r\n")
        want = b"".join(_rmsg(acc, b"s", None, body) for acc in (b"A", b"B", b"A") for body in BODIES[:20])
        assert _until_pong(w) == want
    finally:
        for x in (w, a, b):
            x.close()


def test_a_run_to_a_lone_remote_queue_group_names_it(node: Node) -> None:
    """A remote queue group that is the publish subject's one target: every frame names it
    (a route's fast lane is for plain interest only)."""
    w = _route(node)
    c = _login(node, "a")
    try:
        _sync(w)
        w.send(b"RS+ A q g 1\r\n")
        _sync(w)
        c.send(_pubs(b"q", None, BODIES[:20]) + b"PING\r\n")
        c.until(b"PONG\r\n")
        assert _until_pong(w) == b"".join(b"RMSG A q | g %d\r\n%b\r\n" % (len(x), x) for x in BODIES[:20])
    finally:
        w.close()
        c.close()


def test_runs_from_the_route_reach_local_subscribers(node: Node) -> None:
    """Runs of RMSG frames (one subject; with a reply; mixed; to a subscription with an
    UNSUB limit) reach the local subscribers as nats-server delivers them."""
    c = _login(node, "a")
    c.send(b"SUB s 1\r\nSUB t.* 2\r\nSUB u 3\r\nUNSUB 3 5\r\nPING\r\n")
    c.until(b"PONG\r\n")
    w = _route(node)
    try:
        _sync(w)
        mixed = [
            (b"t.1" if i % 3 else b"s", b"r%d" % (i % 2) if i % 4 else None, body) for i, body in enumerate(MIXED * 4)
        ]
        w.send(
            b"".join(_rmsg(b"A", b"s", None, x) for x in BODIES)
            + b"".join(_rmsg(b"A", b"s", b"r", x) for x in BODIES)
            + b"".join(_rmsg(b"A", s, r, x) for s, r, x in mixed)
            + b"".join(_rmsg(b"A", b"u", None, x) for x in BODIES[:10])
            + b"".join(_rmsg(b"B", b"s", None, x) for x in BODIES[:10])
        )
        _sync(w)

        def msg(subject: bytes, sid: bytes, reply: bytes | None, body: bytes) -> bytes:
            mid = b" " + reply if reply else b""
            return b"MSG %b %b%b %d\r\n%b\r\n" % (subject, sid, mid, len(body), body)

        want = b"".join(msg(b"s", b"1", None, x) for x in BODIES)
        want += b"".join(msg(b"s", b"1", b"r", x) for x in BODIES)
        want += b"".join(msg(s, b"1" if s == b"s" else b"2", r, x) for s, r, x in mixed)
        want += b"".join(msg(b"u", b"3", None, x) for x in BODIES[:5])
        assert _no_info(_until_pong(c)) == want
    finally:
        w.close()
        c.close()


def test_runs_from_the_route_beside_route_interest_and_a_queue_group(node: Node) -> None:
    """A subject the route itself is interested in (the other server's subscribers) and a
    local queue group listens on: a run without queues reaches the plain subscribers only,
    and a client with two subscriptions gets each message on both before the next one."""
    c = _login(node, "a")
    c.send(b"SUB v 1\r\nSUB v qg 2\r\nSUB v 3\r\nPING\r\n")
    c.until(b"PONG\r\n")
    w = _route(node)
    try:
        _sync(w)
        w.send(b"RS+ A v\r\n")
        _sync(w)
        w.send(b"".join(_rmsg(b"A", b"v", b"r" if i >= 20 else None, x) for i, x in enumerate(BODIES)))
        _sync(w)
        got = _no_info(_until_pong(c))
        # each message on both before the next; which of the two comes first is nats-server's
        # choice per message (not fixed), so each pair is compared as a set
        pairs = [
            {b"MSG v %b%b %d\r\n%b\r\n" % (sid, b" r" if i >= 20 else b"", len(x), x) for sid in (b"1", b"3")}
            for i, x in enumerate(BODIES)
        ]
        at = 0
        for pair in pairs:
            first = next(frame for frame in pair if got.startswith(frame, at))
            second = (pair - {first}).pop()
            assert got.startswith(second, at + len(first)), (at, got[at : at + 200])
            at += len(first) + len(second)
        assert at == len(got)
    finally:
        w.close()
        c.close()


def test_runs_from_the_route_skip_a_local_queue_group(node: Node) -> None:
    """One plain subscriber beside the route's own interest and a queue group of another
    client: the run goes to the plain subscriber alone (its frames name no queue)."""
    c, q = _login(node, "a"), _login(node, "a")
    c.send(b"SUB w 1\r\nPING\r\n")
    c.until(b"PONG\r\n")
    q.send(b"SUB w qg 1\r\nPING\r\n")
    q.until(b"PONG\r\n")
    w = _route(node)
    try:
        _sync(w)
        w.send(b"RS+ A w\r\n")
        _sync(w)
        w.send(b"".join(_rmsg(b"A", b"w", None, x) for x in BODIES))
        _sync(w)
        assert _no_info(_until_pong(c)) == b"".join(b"MSG w 1 %d\r\n%b\r\n" % (len(x), x) for x in BODIES)
        assert _no_info(_until_pong(q)) == b""
    finally:
        for x in (w, c, q):
            x.close()
