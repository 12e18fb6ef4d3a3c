"""Planted bugs in the rest of the WebSocket port: ``wss://`` (``server/websocket_tls_port.py``),
``X-Forwarded-For``, ``advertise`` and the cluster's ``ws_connect_urls``."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_PROTO = "jsemu/protocol/websocket.py"
_TLS = "tests/server/test_websocket_tls.py"
_FORWARDED = "tests/server/test_websocket_forwarded.py"
_LIMITS = "tests/server/test_websocket_limits.py"
_CLUSTER = "tests/server/test_websocket_cluster.py::test_websocket_urls_in_a_cluster_as_nats_server"

MUTATIONS: list[Mutation] = [
    Mutation(
        "wss_plain_http_silent",
        "protocol",
        _PROTO,
        '_HTTP_STARTS = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")\n',
        '_HTTP_STARTS = (b"HEAD ", b"POST ", b"PUT /", b"OPTIO")\n',
        (f"{_TLS}::test_plain_text_on_the_wss_port_as_nats_server",),
        "a plain GET on the wss:// port closed without Go's 400 answer",
    ),
    Mutation(
        "wss_alert_record_not_tls",
        "server",
        "jsemu/server/websocket_tls_port.py",
        "        if first[0] in _TLS_FIRST:\n",
        "        if first[0] == 0x15:\n",
        (f"{_TLS}::test_wss_upgrade_info_and_round_trip_as_nats_server",),
        "a TLS ClientHello on the wss:// port taken for plain text",
    ),
    Mutation(
        "xff_zone_accepted",
        "protocol",
        _PROTO,
        "    if \"%\" in value:  # Go's ParseIP takes no zone; Python's ip_address does\n",
        '    if "%%" in value:\n',
        (f"{_FORWARDED}::test_forwarded_for_parsing",),
        "an IPv6 address with a zone taken (Go's net.ParseIP refuses it)",
    ),
    Mutation(
        "xff_ipv6_not_bracketed",
        "server",
        "jsemu/server/websocket_transport.py",
        "            peer = f\"{f'[{forwarded}]' if ':' in forwarded else forwarded}/{peer}\"\n",
        '            peer = f"{forwarded}/{peer}"\n',
        (f"{_FORWARDED}::test_forwarded_for_names_the_client_in_log_lines_as_nats_server",),
        "an IPv6 X-Forwarded-For address logged without brackets",
    ),
    Mutation(
        "ws_log_name_cid",
        "server",
        "jsemu/server/websocket_transport.py",
        '        return f"{peer} - wid:{cid}"\n',
        '        return f"{peer} - cid:{cid}"\n',
        (f"{_FORWARDED}::test_forwarded_for_names_the_client_in_log_lines_as_nats_server",),
        "a WebSocket client logged as cid (nats-server: wid)",
    ),
    Mutation(
        "ws_urls_not_in_route_info",
        "server",
        "jsemu/server/cluster.py",
        '            if ws_urls:\n                info["ws_connect_urls"] = ws_urls\n',
        "            pass\n",
        (f"{_CLUSTER}[jsemu-real]",),
        "the route INFO without ws_connect_urls: a nats-server peer's WebSocket clients never hear of jsemu's port",
    ),
    Mutation(
        "ws_client_gets_tcp_urls",
        "server",
        "jsemu/server/server.py",
        "        urls = node.ws_info_urls if ws else node.info_urls\n",
        "        urls = node.info_urls\n",
        (f"{_CLUSTER}[jsemu-jsemu]",),
        "a WebSocket client's INFO connect_urls are the TCP client URLs",
    ),
    Mutation(
        "ws_advertise_ignored",
        "server",
        "jsemu/server/server.py",
        "        if ws.options.advertise:\n            return [join_host_port(*parse_host_port(ws.options.advertise, ws.port))]\n",
        "",
        (f"{_CLUSTER}[jsemu-real]",),
        "the websocket block's advertise not what the cluster is told",
    ),
    Mutation(
        "varz_without_ws_connect_urls",
        "server",
        "jsemu/server/monitor.py",
        '    urls = [("connect_urls", node.info_urls), ("ws_connect_urls", node.ws_info_urls)]\n',
        '    urls = [("connect_urls", node.info_urls)]\n',
        (f"{_CLUSTER}[jsemu-jsemu]",),
        "/varz without ws_connect_urls in a cluster",
    ),
    Mutation(
        "ws_inflate_unlimited",
        "protocol",
        _PROTO,
        "        self.limit = max_payload\n",
        "        self.limit = max_payload * 100\n",
        (_LIMITS,),
        "a compressed message inflates past max_payload without a close",
    ),
    Mutation(
        "ws_compressed_size_unlimited",
        "protocol",
        _PROTO,
        "        self.compressed_limit = min(max_payload * _COMPRESSED_MULTIPLE, _COMPRESSED_CAP)\n",
        "        self.compressed_limit = _COMPRESSED_CAP\n",
        (_LIMITS,),
        "more than 8 x max_payload compressed bytes taken",
    ),
    Mutation(
        "ws_inflated_prefix_dropped",
        "protocol",
        _PROTO,
        "                chunks.append(self._deflate.kept)  # parsed up to max_payload, as nats-server\n",
        "                pass\n",
        (_LIMITS,),
        "what inflated up to max_payload is not parsed before the close (nats-server parses it)",
    ),
    Mutation(
        "ws_text_frames_utf8_checked",
        "protocol",
        _PROTO,
        "        self._message_decoder = _RawMessages()\n",
        "        pass\n",
        ("tests/server/test_websocket_frames.py::test_frames_as_nats_server",),
        "a text frame that is not UTF-8 closed with 1007 (nats-server reads its bytes)",
    ),
    Mutation(
        "ws_close_status_not_echoed_sequences",
        "protocol",
        _PROTO,
        "                    out.reply += close_frame(None if code == 1005 else int(code), reason)\n",
        "                    out.reply += close_frame(1000, reason)\n",
        ("tests/server/test_websocket_frame_sequences.py",),
        "a client's close status answered with 1000, seen by the generated sequences",
    ),
]
