"""Which monitoring endpoint a request target names, as nats-server's Go ``net/http`` mux decides.

nats-server registers each endpoint (``/varz``, ``/connz``, ...) as an exact pattern on Go's
``http.ServeMux``, and ``/`` as the catch-all whose handler (``HandleRoot``) answers 404 for any
path but ``/`` itself. So, with nats-server 2.15.1:

* the target is split at its first ``?`` only: a ``#`` is part of the path (``/varz#f`` is 404);
* a path with a ``%`` not followed by two hex digits is a bad request (Go's bare 400);
* the mux works on the *escaped* path (Go's ``URL.EscapedPath``): the path as sent when every
  character of it may stand in a path (``validEncoded``), else the decoded path escaped anew
  (``/%2F#f`` holds a ``#``: decoded to ``//#f``, escaped to ``//%23f``, so redirected to ``/%23f``);
* an escaped path that is not clean (``//varz``, ``/varz//``, ``/varz/.``, ``/a/../varz``) is
  answered ``307 Temporary Redirect`` to its cleaned form (Go's ``cleanPath``: ``path.Clean``,
  keeping a trailing slash), the query kept: ``/%2e/varz`` is clean (and 404);
* a clean path matches an endpoint segment by segment, each segment percent-decoded
  (``/var%7a`` is ``/varz``; ``/varz%2F`` is not, nor is ``/varz/``: a trailing slash is 404).
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

__all__ = [
    "BAD_REQUEST",
    "bad_escape",
    "clean_path",
    "endpoint",
    "escaped_path",
    "location_header",
    "redirect",
    "redirect_body",
]

#: Go's ``net/http`` answer to a request it cannot parse, as it writes it (no length, no newline).
BAD_REQUEST = (
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
)

_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Go's validEncoded: the characters a path may hold as sent.
_VALID = re.compile(r"[A-Za-z0-9\-_.~!$&'()*+,;=:@\[\]%/]*")
# Go's htmlReplacer (``html.escape`` writes ``'`` and ``"`` otherwise).
_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;"})
# What Go's escape(path, encodePath) leaves alone (besides letters, digits and "-._~").
_PATH_SAFE = "$&+,/:;=@"


def bad_escape(target: str) -> bool:
    """Whether the path of ``target`` has a ``%`` that starts no escape."""
    return _BAD_ESCAPE.search(_split(target)[0]) is not None


def _split(target: str) -> tuple[str, str]:
    path, _, query = target.partition("?")
    return path, query


def escaped_path(path: str) -> str:
    """Go's ``URL.EscapedPath`` of a request path (characters stand for bytes: latin-1)."""
    if _VALID.fullmatch(path):
        return path
    return quote(unquote(path, encoding="latin-1"), safe=_PATH_SAFE, encoding="latin-1")


def clean_path(path: str) -> str:
    """Go's ``http.cleanPath``: rooted, ``.``, ``..`` and repeated slashes resolved, a trailing
    slash kept (except on ``/``)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    cleaned = "/" + "/".join(parts)
    if path.endswith("/") and cleaned != "/":
        cleaned += "/"
    return cleaned


def redirect(target: str) -> str | None:
    """The ``Location`` of the redirect nats-server answers for ``target``; None when its path
    is clean."""
    path, query = _split(target)
    escaped = escaped_path(path)
    cleaned = clean_path(escaped)
    if cleaned == escaped:
        return None
    return f"{cleaned}?{query}" if query else cleaned


def location_header(location: str) -> bytes:
    """The ``Location`` header line: Go's ``hexEscapeNonASCII`` (lowercase hex)."""
    value = "".join(c if c < "\x80" else f"%{ord(c):x}" for c in location)
    return b"Location: " + value.encode("latin-1") + b"\r\n"


def redirect_body(location: str) -> bytes:
    """Go's ``http.Redirect`` body for a GET."""
    href = location.translate(_HTML_ESCAPES)
    return f'<a href="{href}">Temporary Redirect</a>.\n\n'.encode("latin-1")


def endpoint(target: str) -> tuple[str, str]:
    """(the path as matched against endpoints, the raw query) of a clean ``target``: each segment
    percent-decoded; a segment that decodes to a ``/`` matches nothing (an empty path)."""
    path, query = _split(target)
    segments = [unquote(s) for s in escaped_path(path).split("/")]
    if any("/" in s for s in segments):
        return "", query
    return "/".join(segments), query
