"""Planted bugs in the WebSocket port (``jsemu/protocol/websocket.py``,
``jsemu/server/websocket_listener.py`` and ``websocket_transport.py``, ``config/websocket.py``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_PROTO = "jsemu/protocol/websocket.py"
_LISTENER = "jsemu/server/websocket_listener.py"
_HANDSHAKE = "tests/server/test_websocket_handshake.py"
_FRAMES = "tests/server/test_websocket_frames.py"
_CLIENTS = "tests/server/test_websocket_clients.py"
_CONFIG = "tests/config/test_websocket_config.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "ws_method_not_checked",
        "protocol",
        _PROTO,
        '    if request.method != "GET":\n',
        '    if request.method not in ("GET", "POST"):\n',
        (f"{_HANDSHAKE}::test_upgrades_and_refusals_as_nats_server",),
        "a POST upgrade is accepted (nats-server: 405 Method Not Allowed)",
    ),
    Mutation(
        "ws_key_length_not_checked",
        "protocol",
        _PROTO,
        "        if len(base64.b64decode(key, validate=True)) != 16:\n",
        "        if len(base64.b64decode(key, validate=True)) < 1:\n",
        (f"{_HANDSHAKE}::test_upgrades_and_refusals_as_nats_server",),
        "a Sec-WebSocket-Key that is not 16 bytes is accepted",
    ),
    Mutation(
        "ws_refusal_closes",
        "server",
        _LISTENER,
        "                if not reader.rest:\n                    return\n                continue\n",
        "                raw.close()\n                return\n",
        (f"{_HANDSHAKE}::test_a_refused_request_leaves_the_connection_for_the_next_as_nats_server",),
        "a refused upgrade closes the connection (Go's HTTP server keeps it for the next request)",
    ),
    Mutation(
        "ws_origin_port_ignored",
        "protocol",
        _PROTO,
        "            if ah == oh and a.scheme == parts.scheme and ap == op:\n",
        "            if ah == oh and a.scheme == parts.scheme:\n",
        (f"{_HANDSHAKE}::test_allowed_origins_alone_as_nats_server",),
        "an allowed origin matches on another port",
    ),
    Mutation(
        "ws_deflate_always",
        "protocol",
        _PROTO,
        "    compress = settings.compression and _offers_deflate(request)\n",
        "    compress = settings.compression\n",
        (f"{_HANDSHAKE}::test_origins_compression_and_headers_as_nats_server",),
        "permessage-deflate answered to a client that did not offer it",
    ),
    Mutation(
        "ws_pong_empty",
        "protocol",
        _PROTO,
        "                    out.reply += _header(0x8A, len(payload)) + payload\n",
        "                    out.reply += _header(0x8A, 0)\n",
        (f"{_FRAMES}::test_frames_as_nats_server",),
        "a pong without the ping's payload",
    ),
    Mutation(
        "ws_close_not_echoed",
        "protocol",
        _PROTO,
        "                    out.reply += close_frame(None if code == 1005 else int(code), reason)\n",
        '                    out.reply += close_frame(1000, "")\n',
        (f"{_FRAMES}::test_frames_as_nats_server",),
        "a client's close answered with 1000 instead of its own status and text",
    ),
    Mutation(
        "ws_max_payload_close_code",
        "protocol",
        _PROTO,
        '    "Maximum Payload Violation": (MESSAGE_TOO_BIG, "Maximum Message Payload Exceeded"),\n',
        '    "Maximum Payload Violation": (PROTOCOL_ERROR, "Maximum Message Payload Exceeded"),\n',
        (f"{_FRAMES}::test_frames_as_nats_server",),
        "a payload over max_payload closes with 1002 (nats-server: 1009)",
    ),
    Mutation(
        "ws_auth_close_code",
        "protocol",
        _PROTO,
        '    "Authorization Violation": (POLICY_VIOLATION, "Authentication Failure"),\n',
        '    "Authorization Violation": (PROTOCOL_ERROR, "Authentication Failure"),\n',
        (f"{_CLIENTS}::test_authentication_applies_to_websocket_clients_as_nats_server",),
        "an authorization violation closes with 1002 (nats-server: 1008 Authentication Failure)",
    ),
    Mutation(
        "ws_compress_small",
        "protocol",
        _PROTO,
        "        if self.compress and len(data) > COMPRESS_THRESHOLD:\n",
        "        if self.compress:\n",
        (f"{_FRAMES}::test_compressed_frames_as_nats_server",),
        "a flush of 64 bytes or less compressed (nats-server sends it plain)",
    ),
    Mutation(
        "ws_unmasked_accepted",
        "protocol",
        _PROTO,
        "        self._decoder = _Decoder(client=no_masking, extensions=extensions)\n",
        "        self._decoder = _Decoder(client=not no_masking, extensions=extensions)\n",
        (f"{_FRAMES}::test_frames_as_nats_server", f"{_FRAMES}::test_hostile_frames_close_that_client_only"),
        "the decoder takes the client side: masked frames refused, unmasked ones read",
    ),
    Mutation(
        "ws_info_client_port",
        "server",
        _LISTENER,
        '        info["port"] = self.port\n',
        "",
        (f"{_FRAMES}::test_frames_as_nats_server", f"{_CLIENTS}::test_nats_py_over_websocket_as_nats_server"),
        "a WebSocket client's INFO names the client port, not the WebSocket one",
    ),
    Mutation(
        "ws_no_tls_not_required",
        "config",
        "jsemu/config/websocket.py",
        '        raise WebSocketConfigError(None, "websocket requires TLS configuration")\n',
        '        raise WebSocketConfigError("", "websocket requires TLS configuration")\n',
        (f"{_CONFIG}::test_bad_websocket_block_as_nats_server",),
        "the missing-TLS error placed at the block (nats-server's validation errors have no position)",
    ),
    Mutation(
        "ws_connz_type",
        "server",
        "jsemu/server/monitor.py",
        '                "type": "websocket" if conn.info_base is not None else "nats",\n',
        '                "type": "nats",\n',
        (f"{_FRAMES}::test_monitoring_shows_websocket_clients_as_nats_server",),
        "/connz shows a WebSocket client as type nats",
    ),
]

MUTATIONS += [
    Mutation(
        "ws_auth_override_ignored",
        "server",
        _LISTENER,
        "        conn.auth_source = listener.auth\n",
        "",
        (f"{_CLIENTS}::test_websocket_authorization_block_as_nats_server",),
        "WebSocket clients authenticate against the server's authorization, not the block's",
    ),
    Mutation(
        "ws_auth_override_keeps_server_token",
        "server",
        "jsemu/server/websocket_options.py",
        "            token=self.token,\n",
        "            token=self.token or base.token,\n",
        (f"{_CLIENTS}::test_websocket_authorization_block_as_nats_server",),
        "the block's user does not replace the server's token (nats-server replaces all three)",
    ),
    Mutation(
        "ws_auth_required_not_shown",
        "server",
        _LISTENER,
        '        if self.options.auth_override and "auth_required" not in info:\n',
        "        if False:\n",
        (f"{_CLIENTS}::test_websocket_authorization_block_as_nats_server",),
        "a WebSocket client's INFO does not say auth_required when only the block requires it",
    ),
]

MUTATIONS += [
    Mutation(
        "ws_cookie_overrides_connect",
        "server",
        "jsemu/server/connection.py",
        "                if not opts.get(key):\n                    opts[key] = value\n",
        "                opts[key] = value\n",
        (f"{_CLIENTS}::test_cookies_stand_in_for_connect_credentials_as_nats_server",),
        "a cookie's value replaces the CONNECT's own credentials (nats-server: only where the CONNECT has none)",
    ),
    Mutation(
        "ws_no_masking_not_answered",
        "protocol",
        _PROTO,
        '    no_masking = request.get("nats-no-masking") == "true"\n',
        "    no_masking = False\n",
        (f"{_HANDSHAKE}::test_upgrades_and_refusals_as_nats_server",),
        "Nats-No-Masking asked and not answered",
    ),
]

MUTATIONS += [
    Mutation(
        "ws_shutdown_close_frame",
        "server",
        _LISTENER,
        '                conn.transport.close_frame = close_frame_for("Server Shutdown")\n',
        "                conn.transport.close_frame = close_frame_for(None)\n",
        (f"{_CLIENTS}::test_server_shutdown_close_frame_as_nats_server",),
        "a stopping server closes WebSocket clients with 1000 Client Closed (nats-server: 1001 Server Shutdown)",
    ),
]

MUTATIONS += [
    Mutation(
        "ws_browser_frames_unlimited",
        "protocol",
        _PROTO,
        "        if self.browser and len(data) > BROWSER_FRAME_SIZE:\n            return self._split(data, compressed=False)\n",
        "",
        (f"{_FRAMES}::test_browser_frames_at_most_4_kib_as_nats_server",),
        "a browser gets one large frame (nats-server: frames of at most 4 KiB)",
    ),
]
