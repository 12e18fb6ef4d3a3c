"""The WebSocket side of a client connection, sans-I/O: the HTTP upgrade and the frames.

Theory of operation. A WebSocket client first sends an HTTP/1.1 ``GET`` with ``Upgrade:
websocket``; ``h11`` reads the request head (:class:`HandshakeReader`), and
:func:`check_upgrade` applies nats-server's checks in its order (``wsUpgrade``: method, Host,
Upgrade, Connection, key, version, origin), answering a refusal exactly as Go's
``http.Error`` does (status text as the body, ``Sec-Websocket-Version: 13``, a ``Date``) and
keeping the connection for another request, as Go's HTTP server does. A head ``h11`` cannot
read gets Go's own ``400 Bad Request`` with ``Connection: close``. An accepted upgrade gets
nats-server's ``101`` response byte for byte (``permessage-deflate`` when configured and
offered, then the configured headers).

After the upgrade the NATS protocol travels in binary frames (text frames are read the same
way). ``wsproto``'s frame decoder reads the client's frames (masking, fragmentation, control
frames, ``permessage-deflate``); :class:`WebSocketFrames` hands the payload bytes to the
same parser as a TCP client's, answers a ping with a pong and a close with a close (echoing
the client's status, as nats-server). Whatever the server writes in one flush goes out as
one binary frame (nats-server's ``wsCollapsePtoNB``), in frames of at most 4 KiB for a
browser (a ``User-Agent`` starting ``Mozilla/``), compressed (no context takeover) when
negotiated and more than 64 bytes. When the server closes a connection it sends a close
frame whose status follows the reason (:func:`close_frame_for`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import re
import struct
import zlib
from dataclasses import dataclass, field
from typing import cast
from urllib.parse import urlsplit

import h11
from wsproto.extensions import Extension, PerMessageDeflate
from wsproto.frame_protocol import (
    CloseReason,
    Frame,
    FrameDecoder,
    FrameProtocol,
    MessageDecoder,
    Opcode,
    ParseFailed,
)

__all__ = [
    "Accepted",
    "HandshakeReader",
    "HandshakeSettings",
    "Refused",
    "UpgradeRequest",
    "WebSocketFrames",
    "check_upgrade",
    "close_frame",
    "close_frame_for",
    "forwarded_for",
    "plain_text_on_tls",
]

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#: Control frames carry at most 125 bytes (RFC 6455 5.5).
_MAX_CONTROL = 125
#: nats-server's ``wsFrameSizeForBrowsers`` and ``wsCompressThreshold``.
BROWSER_FRAME_SIZE = 4096
COMPRESS_THRESHOLD = 64

#: Close statuses (RFC 6455 7.4.1), as nats-server names them.
NORMAL_CLOSURE = 1000
GOING_AWAY = 1001
PROTOCOL_ERROR = 1002
INVALID_PAYLOAD = 1007
POLICY_VIOLATION = 1008
MESSAGE_TOO_BIG = 1009
INTERNAL_ERROR = 1011

_PMC_RESPONSE = (
    b"Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"
)
#: Go's ``http.StatusText`` for the statuses a refusal uses.
_STATUS_TEXT = {400: "Bad Request", 403: "Forbidden", 405: "Method Not Allowed"}


@dataclass(frozen=True, slots=True)
class UpgradeRequest:
    """The request head: method, target and headers (names lower-cased, in order)."""

    method: str
    target: str
    http_version: str
    headers: list[tuple[str, str]]

    def values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]

    def get(self, name: str) -> str:
        """Go's ``Header.Get``: the first value, or empty."""
        found = self.values(name)
        return found[0] if found else ""

    def contains(self, name: str, token: str) -> bool:
        """nats-server's ``wsHeaderContains``: a comma-separated token, case-insensitive."""
        token = token.lower()
        return any(t.strip(" \t").lower() == token for v in self.values(name) for t in v.split(","))


@dataclass(frozen=True, slots=True)
class BadHttp:
    """A head Go's HTTP server cannot read: its answer, then the connection closes."""

    response: bytes


class HandshakeReader:
    """Request heads from the bytes of a connection (``h11``), one at a time."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> UpgradeRequest | BadHttp | None:
        """The next request head (``None``: not complete yet); :attr:`rest` is what follows it."""
        self._buffer += data
        conn = h11.Connection(h11.SERVER)
        conn.receive_data(self._buffer)
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            return BadHttp(_go_bad_request(str(exc), _bad_header_name(self._buffer)))
        if event is h11.NEED_DATA:
            return None
        assert isinstance(event, h11.Request)
        if any(_CTL.search(value) for _, value in event.headers):  # Go's ValidHeaderFieldValue
            return BadHttp(_go_bad_request(""))
        hosts = [value for name, value in event.headers if name.lower() == b"host"]
        if len(hosts) > 1:
            return BadHttp(_go_bad_request("", detail="too many Host headers"))
        if hosts and not _HOST.fullmatch(hosts[0]):  # Go's httpguts.ValidHostHeader
            return BadHttp(_go_bad_request("", detail="malformed Host header"))
        self._buffer = conn.trailing_data[0]
        return UpgradeRequest(
            event.method.decode("latin-1"),
            event.target.decode("latin-1"),
            event.http_version.decode("latin-1"),
            [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in event.headers],
        )

    @property
    def rest(self) -> bytes:
        """Bytes received after the last request head."""
        return self._buffer

    def timed_out(self) -> bytes:
        """Go's answer when the handshake timeout cuts a request head short: at the deadline
        Go's line reader hands over the unfinished line as a whole one, so a line that does
        not parse (``GE``, a header without a colon) gets ``400 Bad Request``; a line that
        does, or none, a silent close (the next read is the timeout)."""
        buffer = self._buffer
        if not buffer or buffer.endswith(b"\n"):
            return b""
        head, newline, line = buffer.rpartition(b"\n")
        pattern = _HEADER_LINE if newline and head.strip(b"\r") else _REQUEST_LINE
        return b"" if pattern.fullmatch(line.rstrip(b"\r")) else _go_bad_request("")


#: What Go's ``parseRequestLine`` and ``readMIMEHeader`` take as a request line and a header line.
_TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_REQUEST_LINE = re.compile(_TOKEN + rb" [^ ]+ HTTP/[0-9]\.[0-9]")
_HEADER_LINE = re.compile(_TOKEN + rb":.*")


#: Control characters Go refuses in a header value (``httpguts.ValidHeaderFieldValue``).
_CTL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
#: The bytes Go takes in a Host header (``validHostByte``).
_HOST = re.compile(rb"[A-Za-z0-9!$%&'()*+,\-.:;=\[\]_~]*")


def _bad_header_name(buffer: bytes) -> bool:
    """Whether Go says ``invalid header name``: the request line reads, and the first header
    line that does not has a colon and a name of token characters and spaces (other bytes
    in a name, or no colon, are a malformed line: a plain 400)."""
    first, *lines = buffer.split(b"\n")
    if not _REQUEST_LINE.fullmatch(first.rstrip(b"\r")):
        return False
    for line in lines:
        line = line.removesuffix(b"\r")
        if not line:
            break
        name, colon, _ = line.partition(b":")
        if not colon or re.fullmatch(_TOKEN, name):
            if colon:
                continue
            return False
        return re.fullmatch(rb"[!#$%&'*+.^_`|~0-9A-Za-z \t-]+", name) is not None
    return False


def _go_bad_request(h11_error: str, bad_name: bool = False, detail: str = "") -> bytes:
    """Go's ``net/http`` answer to a request it cannot parse (then it closes)."""
    text = "400 Bad Request"
    if detail:
        text += ": " + detail
    elif h11_error.startswith("Missing mandatory Host"):
        text += ": missing required Host header"
    elif bad_name:
        text += ": invalid header name"
    return (f"HTTP/1.1 {text}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n{text}").encode()


@dataclass(frozen=True, slots=True)
class HandshakeSettings:
    """What the checks and the response depend on (the ``websocket {}`` block)."""

    compression: bool = False
    same_origin: bool = False
    allowed_origins: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    tls: bool = False
    #: Cookie name -> the CONNECT option its value stands in for (``user``, ``pass``,
    #: ``auth_token``, ``jwt``): ``user_cookie``, ``pass_cookie``, ``token_cookie``, ``jwt_cookie``.
    cookies: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Refused:
    """A refusal: ``reason`` for the log, ``status`` for the response (:meth:`response`)."""

    status: int
    reason: str

    def response(self, date: str) -> bytes:
        """Go's ``http.Error`` with nats-server's ``Sec-Websocket-Version`` header; ``date``
        is the ``Date`` header's value (``email.utils.formatdate(usegmt=True)``)."""
        body = _STATUS_TEXT[self.status] + "\n"
        return (
            f"HTTP/1.1 {self.status} {_STATUS_TEXT[self.status]}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Sec-Websocket-Version: 13\r\n"
            "X-Content-Type-Options: nosniff\r\n"
            f"Date: {date}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n{body}"
        ).encode()


@dataclass(frozen=True, slots=True)
class Accepted:
    """The upgrade: the ``101`` response and what the connection's frames depend on."""

    response: bytes
    compress: bool
    browser: bool
    #: ``Nats-No-Masking: true`` asked and answered: the client's frames come unmasked.
    no_masking: bool = False
    #: CONNECT options the configured cookies carry (used where the CONNECT has none).
    connect_defaults: dict[str, str] = field(default_factory=dict)
    #: The ``X-Forwarded-For`` address, when its first header is one IP address (the
    #: client's log name shows it before the socket's peer, as nats-server's).
    forwarded_for: str = ""


def check_upgrade(request: UpgradeRequest, settings: HandshakeSettings) -> Accepted | Refused:
    """nats-server's ``wsUpgrade`` checks, in its order."""
    if request.method != "GET":
        return Refused(405, "request method must be GET")
    if not request.get("host"):
        return Refused(400, "'Host' missing in request")
    if not request.contains("upgrade", "websocket"):
        return Refused(400, "invalid value for header 'Upgrade'")
    if not request.contains("connection", "Upgrade"):
        return Refused(400, "invalid value for header 'Connection'")
    key = request.get("sec-websocket-key")
    if not key:
        return Refused(400, "key missing")
    try:
        if len(base64.b64decode(key, validate=True)) != 16:
            raise ValueError(key)
    except (ValueError, binascii.Error):
        return Refused(400, "invalid websocket key")
    if not request.contains("sec-websocket-version", "13"):
        return Refused(400, "invalid version")
    origin_error = _check_origin(request, settings)
    if origin_error:
        return Refused(403, f"origin not allowed: {origin_error}")
    compress = settings.compression and _offers_deflate(request)
    no_masking = request.get("nats-no-masking") == "true"
    accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest())
    response = (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
    )
    response += accept + b"\r\n"
    if compress:
        response += _PMC_RESPONSE
    if no_masking:
        response += b"Nats-No-Masking: true\r\n"
    for name, value in settings.headers:
        response += f"{name}: {value}\r\n".encode()
    response += b"\r\n"
    browser = request.get("user-agent").startswith("Mozilla/")
    cookies = _cookie_options(request, settings.cookies)
    return Accepted(response, compress, browser, no_masking, cookies, forwarded_for(request))


def forwarded_for(request: UpgradeRequest) -> str:
    """nats-server's ``X-Forwarded-For`` (``wsUpgrade``): the first such header's whole value
    if Go's ``net.ParseIP`` takes it (one address: no list, no port, no IPv6 zone), else empty."""
    values = request.values("x-forwarded-for")
    if not values:
        return ""
    value = values[0]
    if "%" in value:  # Go's ParseIP takes no zone; Python's ip_address does
        return ""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return ""
    return value


def _cookie_options(request: UpgradeRequest, names: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Go's ``Request.Cookies`` (``name=value`` pairs of every ``Cookie`` header, a quoted
    value unquoted; the last of a name wins, as nats-server's loop) for the configured names."""
    if not names:
        return {}
    wanted: dict[str, str] = {}
    for name, option in names:
        wanted.setdefault(name, option)
    found: dict[str, str] = {}
    for header in request.values("cookie"):
        for pair in header.split(";"):
            name, sep, value = pair.strip().partition("=")
            if not sep or name not in wanted:
                continue
            if len(value) > 1 and value[0] == value[-1] == '"':
                value = value[1:-1]
            found[wanted[name]] = value
    return found


def _offers_deflate(request: UpgradeRequest) -> bool:
    """``wsPMCExtensionSupport(header, true)``: any parameter named ``permessage-deflate``."""
    for value in request.values("sec-websocket-extensions"):
        for extension in value.split(","):
            for param in extension.strip(" \t").split(";"):
                if param.strip(" \t").lower() == "permessage-deflate":
                    return True
    return False


def _host_port(tls: bool, hostport: str) -> tuple[str, str]:
    """Go's ``net.SplitHostPort``, the scheme's port when there is none (``wsGetHostAndPort``)."""
    default = "443" if tls else "80"
    if hostport.startswith("["):
        end = hostport.find("]")
        rest = hostport[end + 1 :]
        return hostport[1:end].lower(), rest[1:] if rest.startswith(":") else default
    if hostport.count(":") == 1:
        host, port = hostport.split(":")
        return host.lower(), port
    return hostport.lower(), default


def _check_origin(request: UpgradeRequest, settings: HandshakeSettings) -> str:
    """nats-server's ``checkOrigin``: the error text, or empty when the origin is accepted."""
    if not settings.same_origin and not settings.allowed_origins:
        return ""
    origin = request.get("origin") or request.get("sec-websocket-origin")
    if not origin:
        return ""
    if not origin.startswith("/") and "://" not in origin:
        return f'parse "{origin}": invalid URI for request'
    parts = urlsplit(origin)
    oh, op = _host_port(parts.scheme == "https", parts.netloc)
    if settings.same_origin:
        rh, rp = _host_port(settings.tls, request.get("host"))
        if oh != rh or op != rp or parts.scheme.lower() != ("https" if settings.tls else "http"):
            return "not same origin"
    if settings.allowed_origins:
        for allowed in settings.allowed_origins:
            a = urlsplit(allowed)
            ah, ap = _host_port(a.scheme == "https", a.netloc)
            if ah == oh and a.scheme == parts.scheme and ap == op:
                return ""
        return "not in the allowed list"
    return ""


#: The first five bytes of a request Go's TLS server recognises as plain HTTP
#: (``tlsRecordHeaderLooksLikeHTTP``), and its answer to one (then it closes).
_HTTP_STARTS = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")
_HTTP_ON_TLS = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"


def plain_text_on_tls(head: bytes) -> bytes:
    """What Go's HTTP server answers when the first five bytes on its TLS port are ``head``
    (not a TLS record): Go's 400 for what looks like HTTP, nothing (a silent close) else."""
    return _HTTP_ON_TLS if head[:5] in _HTTP_STARTS else b""


# --- frames ------------------------------------------------------------------------------


def _header(first: int, length: int) -> bytes:
    """A server frame's header (never masked)."""
    if length < 126:
        return bytes((first, length))
    if length < 65536:
        return struct.pack("!BBH", first, 126, length)
    return struct.pack("!BBQ", first, 127, length)


def close_frame(status: int | None, text: str = "") -> bytes:
    """A close frame (``None``: no status), its text cut as nats-server's ``wsCreateCloseMessage``."""
    if status is None:
        return b"\x88\x00"
    body = text.encode()
    if len(body) > _MAX_CONTROL - 2:
        body = body[: _MAX_CONTROL - 5] + b"..."
    payload = struct.pack("!H", status) + body
    return _header(0x88, len(payload)) + payload


#: The error a connection closes with (its ``-ERR`` text, or a slow consumer's reason) ->
#: nats-server's ``ClosedState``: status (``wsEnqueueCloseMessage``) and text.
_CLOSE_FOR = {
    None: (NORMAL_CLOSURE, "Client Closed"),
    "Authorization Violation": (POLICY_VIOLATION, "Authentication Failure"),
    "User Authentication Expired": (POLICY_VIOLATION, "Authentication Expired"),
    "Authentication Timeout": (POLICY_VIOLATION, "Authentication Timeout"),
    "Slow Consumer": (POLICY_VIOLATION, "Slow Consumer (Pending Bytes)"),
    "Slow Consumer (Write Deadline)": (POLICY_VIOLATION, "Slow Consumer (Write Deadline)"),
    "maximum connections exceeded": (POLICY_VIOLATION, "Maximum Connections Exceeded"),
    "Maximum Control Line Exceeded": (POLICY_VIOLATION, "Maximum Control Line Exceeded"),
    "Maximum Payload Violation": (MESSAGE_TOO_BIG, "Maximum Message Payload Exceeded"),
    "Stale Connection": (GOING_AWAY, "Stale Connection"),
    "Server Shutdown": (GOING_AWAY, "Server Shutdown"),
}


def close_frame_for(error: str | None) -> bytes:
    """The close frame nats-server sends when it closes a client for ``error``."""
    if error is not None and error.startswith("Maximum Control Line Exceeded"):
        error = "Maximum Control Line Exceeded"
    status, text = _CLOSE_FOR.get(error, (PROTOCOL_ERROR, "Parse Error"))
    return close_frame(status, text)


#: wsproto's texts for a bad frame -> nats-server's (``wsReadLoop``, ``wsHandleControlFrame``).
_PROTOCOL_ERRORS = {
    "server received unexpected unmasked frame": "mask bit missing",
    "Reserved bit set unexpectedly": "RSV2 and RSV3 must be clear",
    "Control frame with payload len > 125": "control frame length bigger than maximum allowed of 125 bytes",
    "Invalid attempt to fragment control frame": "control frame does not have final bit set",
    "unexpected CONTINUATION": "invalid continuation frame",
    "CLOSE with 1 byte payload": "close frame payload cannot be 1 byte",
    "8-byte payload length with non-zero MSB": "invalid 64-bit payload length",
}


class _RawMessages(MessageDecoder):
    """wsproto's message reassembly without its UTF-8 check of text frames: nats-server reads
    a text frame's bytes as a binary frame's (invalid UTF-8 is the NATS parser's business)."""

    def process_frame(self, frame: Frame) -> Frame:
        if frame.opcode is Opcode.TEXT:
            frame = Frame(Opcode.BINARY, frame.payload, frame.frame_finished, frame.message_finished)
        return super().process_frame(frame)


class _Decoder(FrameProtocol):
    """wsproto's frames, keeping a refused close frame's status for nats-server's text
    (``invalid close status code N``), which wsproto's error leaves out; text frames as bytes."""

    close_code = 0

    def __init__(self, client: bool, extensions: list[Extension]) -> None:
        super().__init__(client, extensions)
        self._message_decoder = _RawMessages()

    def _process_close(self, frame: Frame) -> Frame:
        if len(frame.payload) >= 2:
            self.close_code = struct.unpack("!H", bytes(frame.payload[:2]))[0]  # type: ignore[arg-type]
        return super()._process_close(frame)


@dataclass(slots=True)
class Received:
    """What a read of frames gave: NATS protocol bytes, frames to answer with, and whether
    the connection is over (a close frame or a protocol error)."""

    data: bytes = b""
    reply: bytes = b""
    closing: bool = False


#: nats-server's ``wsMaxMsgPayloadMultiple`` and ``wsMaxMsgPayloadLimit``: what a compressed
#: message may carry before it is inflated.
_COMPRESSED_MULTIPLE = 8
_COMPRESSED_CAP = 64 * 1024 * 1024


class _CappedDeflate(PerMessageDeflate):
    """``permessage-deflate`` with nats-server's limits on a compressed message
    (``wsDecompressAndParse``): at most 8 x ``max_payload`` compressed (64 MiB at most), at
    most ``max_payload`` once inflated, so a small frame that inflates to gigabytes costs
    nothing. Past a limit the message fails with 1009; what was inflated up to
    ``max_payload`` is kept (:attr:`kept`) for the parser, as nats-server parses it."""

    def __init__(self, max_payload: int) -> None:
        super().__init__(client_no_context_takeover=True, server_no_context_takeover=True)
        self.limit = max_payload
        self.compressed_limit = min(max_payload * _COMPRESSED_MULTIPLE, _COMPRESSED_CAP)
        self.compressed = 0
        self.inflated = 0
        self.kept = b""

    def frame_inbound_payload_data(self, proto: FrameDecoder | FrameProtocol, data: bytes) -> bytes | CloseReason:
        if not self._inbound_compressed or not self._inbound_is_compressible:
            return data
        self.compressed += len(data)
        if self.compressed > self.compressed_limit:
            return CloseReason.MESSAGE_TOO_BIG
        assert self._decompressor is not None
        room = self.limit - self.inflated
        try:
            out = self._decompressor.decompress(bytes(data), room + 1)
        except zlib.error:
            return CloseReason.INVALID_FRAME_PAYLOAD_DATA
        self.inflated += len(out)
        if self.inflated > self.limit:
            self.kept = out[:room]
            return CloseReason.MESSAGE_TOO_BIG
        return out

    def frame_inbound_complete(self, proto: FrameDecoder | FrameProtocol, fin: bool) -> bytes | CloseReason | None:
        result = super().frame_inbound_complete(proto, fin)
        if fin:
            if isinstance(result, bytes) and self.inflated + len(result) > self.limit:
                self.kept = result[: self.limit - self.inflated]
                return CloseReason.MESSAGE_TOO_BIG
            self.compressed = self.inflated = 0
        return result


class WebSocketFrames:
    """One upgraded connection's frames (the server side)."""

    __slots__ = ("_compressor", "_decoder", "_deflate", "browser", "compress")

    def __init__(self, compress: bool, browser: bool, no_masking: bool = False, max_payload: int = 1 << 20) -> None:
        self.compress = compress
        self.browser = browser
        extensions: list[Extension] = []
        self._deflate: _CappedDeflate | None = None
        if compress:
            self._deflate = deflate = _CappedDeflate(max_payload)
            deflate.accept("permessage-deflate")
            extensions.append(deflate)
        # A "client" decoder reads unmasked frames (``Nats-No-Masking``); the decoder never
        # writes (frames out are built here), so only its reading side matters.
        self._decoder = _Decoder(client=no_masking, extensions=extensions)
        self._compressor: zlib._Compress | None = None

    def receive(self, data: bytes) -> Received:
        """Decode what arrived; the payloads of data frames come out as they arrive."""
        out = Received()
        chunks: list[bytes] = []
        decoder = self._decoder
        decoder.receive_bytes(data)
        try:
            for frame in decoder.received_frames():
                opcode = frame.opcode
                if opcode is Opcode.BINARY or opcode is Opcode.CONTINUATION:  # text frames too (_RawMessages)
                    chunks.append(bytes(frame.payload))  # type: ignore[arg-type]
                elif opcode is Opcode.PING:
                    payload = bytes(frame.payload)  # type: ignore[arg-type]
                    out.reply += _header(0x8A, len(payload)) + payload
                elif opcode is Opcode.CLOSE:
                    code, reason = cast("tuple[int, str]", frame.payload)
                    out.reply += close_frame(None if code == 1005 else int(code), reason)
                    out.closing = True
                    break
        except ParseFailed as exc:
            if exc.code == MESSAGE_TOO_BIG and self._deflate is not None:
                chunks.append(self._deflate.kept)  # parsed up to max_payload, as nats-server
                out.reply += close_frame_for("Maximum Payload Violation")
            elif exc.code == INVALID_PAYLOAD:
                out.reply += close_frame(INVALID_PAYLOAD, "invalid utf8 body in close frame")
            else:
                text = str(exc)
                if text.startswith("Invalid opcode"):
                    text = f"unknown opcode {int(text.rsplit('x', 1)[1], 16)}"
                elif text == "Reserved bit set unexpectedly" and not self.compress:
                    # wsproto does not say which bit; without compression RSV1 is the one a
                    # client sets (nats-server checks RSV2 and RSV3 first: the rare case).
                    text = "compressed frame received without negotiated permessage-deflate"
                elif text.startswith("expected CONTINUATION"):
                    text = "new message started before final frame for previous message was received"
                elif text != "CLOSE with 1 byte payload" and text.startswith(("CLOSE with", "remote CLOSE")):
                    text = f"invalid close status code {decoder.close_code}"
                out.reply += close_frame(PROTOCOL_ERROR, _PROTOCOL_ERRORS.get(text, text))
            out.closing = True
        out.data = b"".join(chunks)
        return out

    def frame(self, data: bytes) -> bytes:
        """What the server flushes, as nats-server frames it."""
        if self.compress and len(data) > COMPRESS_THRESHOLD:
            compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
            body = compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
            body = body[:-4]
            if self.browser and len(body) > BROWSER_FRAME_SIZE:
                return self._split(body, compressed=True)
            return _header(0xC2, len(body)) + body
        if self.browser and len(data) > BROWSER_FRAME_SIZE:
            return self._split(data, compressed=False)
        return _header(0x82, len(data)) + data

    def _split(self, data: bytes, compressed: bool) -> bytes:
        """Frames of at most 4 KiB: whole messages each, or (compressed) one message in
        fragments, only the first marked compressed."""
        parts = []
        size = BROWSER_FRAME_SIZE
        for start in range(0, len(data), size):
            chunk = data[start : start + size]
            if compressed:
                first = 0x40 | 0x02 if start == 0 else 0x00
                fin = 0x80 if start + size >= len(data) else 0x00
                parts.append(_header(first | fin, len(chunk)))
            else:
                parts.append(_header(0x82, len(chunk)))
            parts.append(chunk)
        return b"".join(parts)
