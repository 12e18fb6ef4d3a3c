"""What always differs between two runs of the same session, taken out before frames are compared.

Theory of operation
-------------------
A server frame becomes a *view*, a short text that holds what a conforming server must repeat:

* ``INFO``: its JSON without the fields that name the process or the connection
  (:data:`INFO_VOLATILE`: server id and name, nonce, client id and address, port, host,
  version, Go version, commit, xkey, the cluster URLs; and the TLS flags, since a replay is
  plain TCP), keys sorted;
* ``MSG``/``HMSG``: subject, sid, reply; the header block's lines with time stamps replaced; the
  payload, when it is JSON, re-encoded with sorted keys and every RFC 3339 time (other than Go's
  zero time) replaced by ``<time>`` (so the JetStream API's field order and its ``created``,
  ``ts``, ``last_active``, ... never count), else the payload's bytes;
* ``+OK``, ``-ERR``, ``PONG``, anything else: the control line; ``PING`` from the server is
  left out altogether (when a server pings is a matter of time, and the replayer answers);
* the server closing the connection is a frame too, ``<closed by the server>``.

Names the server chose at random are then matched up, not compared (:class:`Aliases`): the
server id and name from INFO; the time stamp token of a ``$JS.ACK`` reply subject; and a word
that differs only by being one random-looking word for another (an ephemeral consumer's name)
where a server puts the names it makes up (:func:`aliasable`: a token of a message's subject or
reply, a JSON string under :data:`NAME_KEYS`), provided the recorded word never appeared in
what the client had sent (a name the client chose must come back exactly). A message's data
is never matched up this way: a planted ``"data"`` difference is a difference. A learnt pair is applied to every later
expected frame, and to the client's later control lines before they are sent (an ack goes to
the ``$JS.ACK`` subject this server chose, a fetch names the consumer this server named).
Client-chosen inboxes need no mapping: the replayer re-sends the client's own bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..protocol.frames import Frame

__all__ = ["CLOSED", "INFO_VOLATILE", "NAME_KEYS", "Aliases", "aliasable", "view"]

INFO_VOLATILE = frozenset(
    {
        "server_id",
        "server_name",
        "nonce",
        "client_id",
        "client_ip",
        "port",
        "host",
        "version",
        "go",
        "git_commit",
        "xkey",
        "connect_urls",
        "ws_connect_urls",
        "ip",
        # a replay is plain TCP; `jsemu record` shows its client an upstream's TLS INFO without
        # these only until CONNECT (later INFOs pass through untouched)
        "tls_required",
        "tls_verify",
        "tls_available",
    }
)
CLOSED = "<closed by the server>"
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
_ZERO_TIME = "0001-01-01T00:00:00Z"
_WORD = re.compile(r"[A-Za-z0-9_-]+")
_WORD_BYTES = re.compile(rb"[A-Za-z0-9_-]+")
_RANDOM_WORD = re.compile(r"[A-Za-z0-9]{6,}")
#: JSON keys whose string values may hold a name the server made up.
NAME_KEYS = frozenset({"name", "durable_name", "consumer", "leader", "server_id", "server_name", "peer"})
_ACK_TS = 7  # $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>


def _times(value: Any) -> Any:
    if isinstance(value, str):
        return "<time>" if value != _ZERO_TIME and _TIME.fullmatch(value) else value
    if isinstance(value, dict):
        return {k: _times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_times(v) for v in value]
    return value


def _payload(data: bytes) -> str:
    if data[:1] in (b"{", b"["):
        try:
            return json.dumps(_times(json.loads(data)), sort_keys=True, separators=(",", ":"))
        except (ValueError, RecursionError):
            pass
    return data.decode("utf-8", "backslashreplace")


def _header(block: bytes) -> str:
    text = block.decode("utf-8", "backslashreplace")
    return _TIME.sub(lambda m: m.group() if m.group() == _ZERO_TIME else "<time>", text.rstrip("\r\n"))


def _ack_reply(reply: bytes) -> tuple[str, str]:
    """(the reply as compared, its time stamp token or "")."""
    text = reply.decode("utf-8", "backslashreplace")
    if not text.startswith("$JS.ACK."):
        return text, ""
    tokens = text.split(".")
    ts_at = _ACK_TS if len(tokens) == 9 else (_ACK_TS + 2 if len(tokens) >= 11 else -1)
    if ts_at < 0:
        return text, ""
    ts, tokens[ts_at] = tokens[ts_at], "<ts>"
    return ".".join(tokens), ts


def info_fields(frame: Frame) -> dict[str, Any]:
    try:
        info = json.loads(frame.line[4:])
    except ValueError:
        return {}
    return info if isinstance(info, dict) else {}


def view(frame: Frame) -> tuple[str, str]:
    """(the frame's view, its ``$JS.ACK`` time stamp token or ""); ("", "") for a server PING."""
    op = frame.op.upper()
    if op == b"PING":
        return "", ""
    if op == b"INFO":
        info = {k: v for k, v in info_fields(frame).items() if k not in INFO_VOLATILE}
        return "INFO " + json.dumps(info, sort_keys=True, separators=(",", ":")), ""
    if not frame.is_msg:
        return frame.line.decode("utf-8", "backslashreplace"), ""
    reply, ts = _ack_reply(frame.reply)
    head = " ".join(
        x for x in (op.decode(), frame.subject.decode("utf-8", "backslashreplace"), frame.sid.decode(), reply) if x
    )
    parts = [head]
    if op == b"HMSG":
        parts.append(_header(frame.header))
    parts.append(_payload(frame.payload))
    return "\n".join(parts), ts


def _names(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in NAME_KEYS and isinstance(v, str):
                out.update(_WORD.findall(v))
            else:
                _names(v, out)
    elif isinstance(value, list):
        for v in value:
            _names(v, out)


def aliasable(frame: Frame) -> frozenset[str]:
    """The words of a recorded frame that may stand for a server-chosen name (see the module)."""
    if not frame.is_msg:
        return frozenset()
    out = set(_WORD.findall(frame.subject.decode("utf-8", "replace")))
    out.update(_WORD.findall(frame.reply.decode("utf-8", "replace")))
    if frame.payload[:1] == b"{":
        try:
            _names(json.loads(frame.payload), out)
        except (ValueError, RecursionError):
            pass
    return frozenset(out)


class Aliases:
    """Recorded name -> replayed name, for the names the server chose (see the module)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self._taken: set[str] = set()
        self._encoded: dict[bytes, bytes] = {}  # names, as bytes, for the client's lines
        #: Words the client has sent so far: never aliased.
        self.client_words: set[str] = set()

    def learn(self, recorded: str, replayed: str) -> bool:
        if not recorded or recorded == replayed:
            return True
        known = self.names.get(recorded)
        if known is not None:
            return known == replayed
        if replayed in self._taken:
            return False
        self.names[recorded] = replayed
        self._taken.add(replayed)
        self._encoded[recorded.encode()] = replayed.encode()
        return True

    def learn_info(self, recorded: Frame, replayed: Frame) -> None:
        want, got = info_fields(recorded), info_fields(replayed)
        for key in ("server_id", "server_name"):
            a, b = want.get(key), got.get(key)
            if isinstance(a, str) and isinstance(b, str):
                self.learn(a, b)

    def saw_client(self, line: bytes) -> None:
        self.client_words.update(_WORD.findall(line.decode("utf-8", "replace")))

    def apply(self, text: str) -> str:
        if not self.names:
            return text
        return _WORD.sub(lambda m: self.names.get(m.group(), m.group()), text)

    def rewrite_client(self, line: bytes) -> bytes:
        """A client control line with the learnt names in it replaced."""
        if not self._encoded:
            return line
        names = self._encoded
        return _WORD_BYTES.sub(lambda m: names.get(m.group(), m.group()), line)

    def match(self, expected: str, got: str, names: frozenset[str] = frozenset()) -> bool:
        """Whether ``got`` is ``expected`` up to server-chosen names (words of ``names``, the
        recorded frame's :func:`aliasable`); learns the new pairs."""
        expected = self.apply(expected)
        if expected == got:
            return True
        a, b = _WORD.split(expected), _WORD.split(got)
        if len(a) != len(b) or a != b:  # the text between words must agree
            return False
        wa, wb = _WORD.findall(expected), _WORD.findall(got)
        pairs = []
        for x, y in zip(wa, wb, strict=True):
            if x == y:
                continue
            if (
                len(x) != len(y)
                or x not in names
                or not _RANDOM_WORD.fullmatch(x)
                or not _RANDOM_WORD.fullmatch(y)
                or x in self.client_words
                or y in self.client_words
            ):
                return False
            pairs.append((x, y))
        saved = dict(self.names), set(self._taken), dict(self._encoded)
        if all(self.learn(x, y) for x, y in pairs):
            return True
        self.names, self._taken, self._encoded = saved
        return False
