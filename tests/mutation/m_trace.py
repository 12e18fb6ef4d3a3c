"""Planted bugs in message tracing (``server/msg_trace.py``, its stream and import hooks, the
``msg_trace`` account setting), each caught by the differential tests against nats-server."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_EVENTS = "tests/server/test_msg_trace.py::test_trace_events_as_nats_server"
_JS = "tests/server/test_msg_trace.py::test_jetstream_trace_events_as_nats_server"
_HEADERS = "tests/server/test_msg_trace.py::test_header_combinations_as_nats_server"

MUTATIONS: list[Mutation] = [
    Mutation(
        "trace_only_delivers",
        "server",
        "jsemu/server/msg_trace.py",
        "    if trace.only:\n        trace.egress(conn, sub)\n        return True\n",
        "",
        (_EVENTS,),
        "Nats-Trace-Only ignored for clients: the message is delivered as well as traced",
    ),
    Mutation(
        "trace_fast_lane",
        "server",
        "jsemu/server/connection.py",
        "                if hdr > 0 and may_trace(account, hdr, msg):  # ADR-41",
        "                if False:  # ADR-41",
        (_JS,),
        "a traced publish to a stream takes the fast lane: stored, but no trace event",
    ),
    Mutation(
        "trace_stream_keeps_dest",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        "            block = set_header(block, TRACE_DEST, TRACE_DISABLED)\n",
        "            pass\n",
        (_JS,),
        "a stored message keeps Nats-Trace-Dest: a Direct Get of it shows the live destination",
    ),
    Mutation(
        "trace_js_no_nointerest",
        "jetstream",
        "jsemu/jetstream/streams/stream.py",
        '            if no_interest:\n                traced["nointerest"] = True\n',
        "",
        (_JS,),
        "the js event of an interest stream without consumers misses nointerest",
    ),
    Mutation(
        "trace_parent_any_flags",
        "protocol",
        "jsemu/protocol/trace_headers.py",
        "return -128 <= flags <= 127 and flags & 1 == 1",
        "return -128 <= flags <= 127",
        (_EVENTS, _HEADERS),
        "a traceparent without the sampled flag is traced",
    ),
    Mutation(
        "trace_egress_no_queue",
        "server",
        "jsemu/server/msg_trace.py",
        'queue=sub.queue.decode("utf-8", "replace") if sub.queue else None,',
        "queue=None,",
        (_EVENTS,),
        "an egress to a queue subscriber does not name its queue",
    ),
    Mutation(
        "trace_dest_not_checked",
        "server",
        "jsemu/server/msg_trace.py",
        "    if perms is not None and not perms.can_publish(dest_bytes):\n",
        "    if False:\n",
        (_EVENTS,),
        "a destination the publisher may not publish to gets the trace anyway",
    ),
    Mutation(
        "trace_service_import_traced_on",
        "server",
        "jsemu/server/imports.py",
        '            trailer = TRACE_DEST + b": " + TRACE_DISABLED + b"\\r\\n"\n',
        '            trailer = b""\n',
        (_EVENTS,),
        "a request crossing a service import loses its trace header instead of carrying it as disabled",
    ),
    Mutation(
        "trace_sampling_default_zero",
        "config",
        "jsemu/config/msg_trace.py",
        "    if dest and not sampling:\n        sampling = 100\n",
        "    if dest and not sampling:\n        sampling = 0\n",
        ("tests/config/test_msg_trace_config.py",),
        "a msg_trace destination without a sampling traces nothing",
    ),
    Mutation(
        "trace_route_no_hop_header",
        "server",
        "jsemu/server/msg_trace.py",
        "hop_hdr, hop_msg = moved_header(hdr, msg, TRACE_HOP, nhop)",
        "hop_hdr, hop_msg = hdr, msg",
        ("tests/server/test_msg_trace_routes.py",),
        "a traced message crosses a route without Nats-Trace-Hop",
    ),
    Mutation(
        "trace_route_ingress_as_client",
        "server",
        "jsemu/server/msg_trace_routes.py",
        "        kind=KIND_ROUTER,\n",
        "        kind=0,\n",
        ("tests/server/test_msg_trace_routes.py",),
        "the far server's ingress event says the message came from a client",
    ),
    Mutation(
        "trace_oversized_untraced",
        "protocol",
        "jsemu/protocol/parser.py",
        "                        failed.oversized = (subject, size, buf[pos : pos + hdr])\n",
        "                        pass\n",
        ("tests/server/test_msg_trace.py::test_oversized_publish_is_traced_as_nats_server",),
        "an HPUB over the maximum payload that asked for a trace gets none",
    ),
    Mutation(
        "trace_unsampled_not_disabled",
        "server",
        "jsemu/server/msg_trace.py",
        "    if trace is _NOT_SAMPLED or (trace is None and not skip and TRACE_ORIGIN_ACCOUNT in found[0]):",
        "    if trace is None and not skip and TRACE_ORIGIN_ACCOUNT in found[0]:",
        ("tests/server/test_msg_trace.py::test_sampling_as_nats_server",),
        "a traceparent publish the sampling left out is delivered without 'trace disabled'",
    ),
    Mutation(
        "trace_api_only_answered",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        "return False if trace.only else self.deliver(sub, subject, reply, hdr, msg)",
        "return self.deliver(sub, subject, reply, hdr, msg)",
        (_JS,),
        "a trace-only JetStream API request is answered (nats-server's API import stops it)",
    ),
]

MUTATIONS.append(
    Mutation(
        "trace_dropped_publish_skips_pedantic_check",
        "server",
        "jsemu/server/connection.py",
        '        if self.pedantic and not is_valid_literal_subject(subject.decode("latin-1")):\n'
        "            self.send(encode_err(ERR_INVALID_PUBLISH_SUBJECT))\n"
        "        if trace is not None and trace is DROPPED:\n"
        "            return  # trace only",
        "        if trace is not None and trace is DROPPED:\n"
        "            return\n"
        '        if self.pedantic and not is_valid_literal_subject(subject.decode("latin-1")):\n'
        "            self.send(encode_err(ERR_INVALID_PUBLISH_SUBJECT))\n"
        "        if False:\n"
        "            return  # trace only",
        ("tests/server/test_msg_trace.py::test_header_combinations_as_nats_server",),
        "a trace-only HPUB to a wildcard subject with no valid destination gets no 'Invalid Publish Subject'",
    )
)
