"""A traced message that came over a route (ADR-41 across a cluster of processes).

The server a client published on sends the message to each route with interest with a
``Nats-Trace-Hop`` header (``1``, ``2``, ... per route; ``server/msg_trace.py``), and lists
each as an ``eg`` event of kind 1 (``ROUTER``: the route's connection id, the remote
server's name, the hop); its event gets ``hops``, the number of routes. The server at the
other end traces what it does with the message as nats-server's ``initMsgTrace`` does for a
ROUTER connection: an ``in`` event of kind 1 (the route, the origin server's name), its own
local egress events, and its own event to the same destination, which crosses back as an
ordinary routed message (one space in ``MSG``, unlike the origin's own). ``Nats-Trace-Only``
holds there too; no permission applies to a route's destination.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.trace_headers import TRACE_DEST, TRACE_ONLY, TRACE_ORIGIN_ACCOUNT, is_trace_only, trace_headers
from ..subjects import is_valid_subject, subject_is_literal
from .msg_trace import KIND_ROUTER, TRACE_HOP, MsgTrace, route_traced

if TYPE_CHECKING:
    from .routing import Router

__all__ = ["deliver_traced_from_route"]


def deliver_traced_from_route(
    router: Router, route: Any, subject: bytes, reply: bytes | None, hdr: int, msg: bytes, queues: tuple[bytes, ...]
) -> bool:
    """Whether the routed message was a trace request, handled here (delivered locally, the
    event sent); False leaves it to ``deliver_from_route``."""
    found = trace_headers(msg[:hdr])
    if found is None:
        return False
    headers, external = found
    if TRACE_ORIGIN_ACCOUNT in headers:
        return False
    only = False
    if external:
        if router.msg_trace_dest is None:
            return False
        dest = router.msg_trace_dest.decode()
    else:
        values = headers.get(TRACE_ONLY)
        only = values is not None and is_trace_only(values[0])
        dest = headers[TRACE_DEST.decode()][0]
    if not (is_valid_subject(dest) and subject_is_literal(dest)):
        return only  # a trace-only message that cannot be traced is not delivered either
    hop = headers.get(TRACE_HOP.decode(), [""])[0]
    trace = MsgTrace(router, dest.encode(), only, headers, len(msg), hop)
    trace.add(
        "in",
        kind=KIND_ROUTER,
        cid=route.rid,
        name=route.remote_name or None,
        acc=router.name,
        subj=subject.decode("utf-8", "replace"),
    )
    try:
        route_traced(trace, router, route, subject, reply, hdr, msg, from_route=queues)
    finally:
        trace.send(route.server)
    return True
