"""hypothesis: random (mostly broken) byte streams get the same answer from jsemu and nats-server.

Each example opens one connection to each server, sends the same bytes (in the same random
chunks) followed by a PING, and compares everything that comes back until the PONG, the close,
or a quiet period, with INFO frames normalised.
"""

from __future__ import annotations

import asyncio
import socket

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jsemu

PIECES = [
    b"PUB foo 3\r\n",
    b"PUB foo r 2\r\n",
    b"HPUB foo 12 14\r\n",
    b"NATS/1.0\r\n\r\n",
    b"SUB foo 1\r\n",
    b"SUB foo q 2\r\n",
    b"SUB foo..x 3\r\n",
    b"UNSUB 1\r\n",
    b"UNSUB 1 1\r\n",
    b"PING\r\n",
    b"PONG\r\n",
    b"+OK\r\n",
    b'CONNECT {"verbose":true}\r\n',
    b'CONNECT {"pedantic":false,"headers":true}\r\n',
    b"abc",
    b"hi",
    b"\r\n",
    b"\r",
    b"\n",
    b" ",
    b"\t",
    b"PUB",
    b"SUB",
    b"-1",
    b"99999999999",
    b"foo.*",
    b">",
    b"INFO {}\r\n",
    b"MSG",
    b"x" * 50,
]

# Whole valid ops, so that examples get past the first bytes and meet state.
VALID = [
    b"SUB foo 1\r\n",
    b"SUB foo.* 2\r\n",
    b"SUB > q 3\r\n",
    b"SUB _INBOX.x 4\r\n",
    b"PUB foo 2\r\nhi\r\n",
    b"PUB foo.bar _INBOX.x 0\r\n\r\n",
    b"PUB nobody _INBOX.x 1\r\nx\r\n",
    b"PUB foo.* 1\r\nx\r\n",
    b"HPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n",
    b"HPUB foo.bar 16 16\r\nNATS/1.0\r\nA:\r\n\r\n\r\n",
    b"UNSUB 1\r\n",
    b"UNSUB 2 1\r\n",
    b"PING\r\n",
]
stream = st.lists(
    st.one_of(
        st.sampled_from(VALID), st.sampled_from(VALID), st.sampled_from(PIECES), st.binary(min_size=1, max_size=4)
    ),
    min_size=1,
    max_size=12,
).map(b"".join)


def exchange(port: int, connect: bytes, data: bytes, chunks: list[int]) -> tuple[bytes, str]:
    """Returns what came back and how it ended: ``open``, ``closed`` or ``reset``.

    A server that closes with unread input makes the kernel send a reset, which may
    discard replies still in flight; the comparison allows for that.
    """
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        buf = b""
        while not buf.endswith(b"\r\n"):
            buf += sock.recv(4096)
        out = b""
        payload = connect + data + b"PING\r\n"
        pos = 0
        try:
            for size in chunks:
                sock.sendall(payload[pos : pos + size])
                pos += size
            sock.sendall(payload[pos:])
        except ConnectionError:
            pass
        sock.settimeout(0.4)
        while True:
            try:
                got = sock.recv(65536)
            except TimeoutError:
                return out, "open"
            except ConnectionError:
                return out, "reset"
            if not got:
                return out, "closed"
            out += got
    finally:
        sock.close()


def normalise(out: bytes) -> bytes:
    lines = out.split(b"\r\n")
    return b"\r\n".join(b"INFO" if line.startswith(b"INFO ") else line for line in lines)


@settings(
    max_examples=int(__import__("os").environ.get("JSEMU_DIFF_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=stream, chunks=st.lists(st.integers(1, 16), max_size=4), verbose=st.booleans())
def test_same_answer_as_real_server(real_server, data: bytes, chunks: list[int], verbose: bool) -> None:
    connect = b'CONNECT {"verbose":%b,"pedantic":true,"headers":true,"no_responders":true}\r\n' % (
        b"true" if verbose else b"false"
    )
    with jsemu.Server.in_thread() as emu:
        got = exchange(emu.port, connect, data, chunks)
    want = exchange(real_server.port, connect, data, chunks)
    got_out, want_out = normalise(got[0]), normalise(want[0])
    if "reset" in (got[1], want[1]):
        # Both must have ended the connection; a reset may cut the tail of the replies.
        assert got[1] != "open" and want[1] != "open", (got, want)
        assert got_out.startswith(want_out) or want_out.startswith(got_out), (got, want)
    else:
        assert (got_out, got[1]) == (want_out, want[1])


async def test_quiet_server_threads_do_not_leak() -> None:
    # Guard for the test above: a threaded server stops cleanly.
    with jsemu.Server.in_thread() as emu:
        reader, writer = await asyncio.open_connection("127.0.0.1", emu.port)
        assert (await reader.readline()).startswith(b"INFO ")
        writer.close()
