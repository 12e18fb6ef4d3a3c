"""The write deadline (``write_deadline``): a client whose socket does not take its output
in time is cut as a slow consumer.

Why a watch rather than a socket timeout: nats-server writes a connection's pending output in
batches, each under ``SetWriteDeadline(now + write_deadline)``, and closes a client whose batch
is not written in time (``Slow Consumer (Write Deadline)``: no ``-ERR``, a notice in the log,
counted in /varz). asyncio writes what the socket takes and buffers the rest, so here a batch is
what was handed to the transport when output first stayed buffered: it must have left the
buffer by the deadline, else the client is cut. A batch that did leave in time while more is
buffered starts the next one. The deadline is a timer on the server's clock
(``Server.timers``), armed only while output is buffered, so a client that keeps up costs
nothing, and a controlled clock moved past the deadline fires it at once.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from ..protocol.go_duration import format_duration

if TYPE_CHECKING:
    from .connection import ClientConnection

__all__ = ["WRITE_DEADLINE_REASON", "cut_slow_writer", "watch_writes"]

log = logging.getLogger("jsemu.server")

#: Go's ``ClosedState`` text, the reason /connz and the disconnect event give.
WRITE_DEADLINE_REASON = "Slow Consumer (Write Deadline)"
#: nats-server counts its output in pooled buffers of up to 64 KiB (``chunks`` in its notice).
_CHUNK = 65536


def watch_writes(conn: ClientConnection, buffered: int) -> None:
    """Start a batch: the ``buffered`` bytes the transport holds must be written by the deadline."""
    server = conn.server
    conn.write_mark = conn.handed
    conn.write_batch = buffered
    conn.write_timer = server.timers.at(server.clock.now_ns() + server.write_deadline_ns, partial(_due, conn))


def _due(conn: ClientConnection) -> None:
    """The deadline of the open batch: go on with the next batch, or cut the client."""
    conn.write_timer = None
    transport = conn.transport
    if conn.closed or transport is None:
        return
    buffered = transport.get_write_buffer_size()
    if conn.handed - buffered >= conn.write_mark:  # the batch was written in time
        if buffered:
            watch_writes(conn, buffered)
        return
    cut_slow_writer(conn, conn.write_batch)


def cut_slow_writer(conn: ClientConnection, attempted: int) -> None:
    """``handleWriteTimeout`` for a client: logged, counted (unless it never sent CONNECT on
    a server that expects one), closed without a word."""
    server = conn.server
    if conn.connect_received or server.options.auth is None:
        server.slow_consumers += 1
        log.info(
            "%s - Slow Consumer Detected: WriteDeadline of %s exceeded with %d chunks of %d total bytes.",
            conn.log_name(),
            format_duration(server.write_deadline_ns),
            max(1, -(-attempted // _CHUNK)),
            attempted,
        )
    conn.cut(WRITE_DEADLINE_REASON)
