"""The ``$JS.API`` registry: handlers register for a subject pattern with a decorator.

A handler takes the service and an :class:`ApiRequest` and returns the response body as
a dict (the ``type`` key first; counted in the account's API statistics), raw bytes (sent
as is and not counted, like the server's direct sends), or None for no reply. Requests to API
subjects without a handler get no reply at all, as from the real server.

The registry is the one source of what jsemu answers: dispatch, the not-enabled answers and
README's coverage table all read it. Handlers live in the family modules that
``api/table.py`` names; ask the table, which imports them all, rather than this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ...protocol.gojson import GoJSONError
from ...protocol.headers import api_level_too_high
from ...version import API_LEVEL
from ..errors import ApiError, ApiErrors, api_error, response_type
from ..requests import decode_request

if TYPE_CHECKING:
    from ..service import JetStream

__all__ = [
    "OWN_SUBSCRIPTIONS",
    "REFUSED",
    "ApiRequest",
    "QuietError",
    "api",
    "find_handler",
    "find_pattern",
    "find_system_handler",
    "is_empty_request",
    "is_json_object_or_array",
    "registered_patterns",
    "response_type",
    "system_api",
    "system_patterns",
]

API_PREFIX = "$JS.API."


@dataclass(slots=True)
class ApiRequest:
    subject: str
    tokens: list[str]  # the subject split on "."
    reply: bytes | None
    hdr: bytes
    data: bytes

    def token(self, index: int) -> str:
        """``tokenAt`` (1-based, as the server counts): empty when missing."""
        return self.tokens[index - 1] if 0 < index <= len(self.tokens) else ""

    def decode(self, struct: Any) -> dict[str, Any]:
        """Strict decode (``unmarshalRequest``); a failure is the 10025 error."""
        try:
            return decode_request(self.data, struct, strict=True)
        except GoJSONError as exc:
            raise api_error(ApiErrors.JSInvalidJSONErr, err=str(exc)) from None

    def check_api_level(self) -> None:
        """``errorOnRequiredApiLevel``: a header asking for a newer API than ours."""
        if self.hdr and api_level_too_high(self.hdr, API_LEVEL):
            raise api_error(ApiErrors.JSRequiredApiLevelErr)


Response = dict[str, Any] | bytes | None
Handler = Callable[["JetStream", ApiRequest], Response]
H = TypeVar("H", bound=Handler)

_HANDLERS: list[tuple[tuple[str, ...], Handler]] = []

#: ``$JS.API`` endpoints answered outside this registry, by subscriptions of their own
#: (pattern after ``$JS.API.`` -> who subscribes); the API coverage table lists them too.
OWN_SUBSCRIPTIONS: dict[str, str] = {
    "DIRECT.GET.*": "DirectGetResponder (queue group _sys_, while allow_direct)",
    "DIRECT.GET.*.>": "DirectGetResponder (queue group _sys_, while allow_direct)",
    "CONSUMER.MSG.NEXT.*.*": "each consumer (processNextMsgReq)",
    "CONSUMER.RESET.*.*": "each consumer (processResetReq)",
}


#: Patterns whose handler makes the server's request checks, then refuses what jsemu does not
#: implement with a clear error (the API coverage table says so).
REFUSED: set[str] = set()


def registered_patterns() -> list[str]:
    """The patterns handlers registered with :func:`api` and :func:`system_api`, in
    registration order."""
    return [".".join(tokens) for tokens, _ in _HANDLERS] + [".".join(tokens) for tokens, _ in _SYSTEM_HANDLERS]


#: The system account's endpoints (``systemSubscribe``): handlers that see the whole server,
#: registered with :func:`system_api`. Their requests come from any account (the handler
#: decides who is answered), so ``find_pattern`` never returns them.
_SYSTEM_HANDLERS: list[tuple[tuple[str, ...], Callable[..., Any]]] = []
S = TypeVar("S", bound=Callable[..., Any])


def system_patterns() -> list[str]:
    """The patterns registered with :func:`system_api`."""
    return [".".join(tokens) for tokens, _ in _SYSTEM_HANDLERS]


def system_api(pattern: str) -> Callable[[S], S]:
    """Register a system account handler for ``$JS.API.<pattern>``."""
    tokens = tuple(pattern.split("."))

    def register(fn: S) -> S:
        _SYSTEM_HANDLERS.append((tokens, fn))
        return fn

    return register


def find_system_handler(tokens: list[str]) -> Callable[..., Any] | None:
    """The system account handler whose pattern matches the tokens after ``$JS.API``."""
    for pattern, fn in _SYSTEM_HANDLERS:
        if len(pattern) == len(tokens) and all(p == "*" or p == t for p, t in zip(pattern, tokens, strict=True)):
            return fn
    return None


def api(pattern: str, refused: bool = False) -> Callable[[H], H]:
    """Register a handler for ``$JS.API.<pattern>`` (``*`` matches one token, a trailing
    ``>`` one or more); ``refused``: it only checks and refuses (see :data:`REFUSED`)."""
    tokens = tuple(pattern.split("."))
    if refused:
        REFUSED.add(pattern)

    def register(fn: H) -> H:
        _HANDLERS.append((tokens, fn))
        return fn

    return register


def find_handler(tokens: list[str]) -> Handler | None:
    """The handler whose pattern matches the tokens after ``$JS.API``."""
    found = find_pattern(tokens)
    return found[1] if found is not None else None


def find_pattern(tokens: list[str]) -> tuple[str, Handler] | None:
    """The registered pattern (and its handler) that matches the tokens after ``$JS.API``."""
    for pattern, fn in _HANDLERS:
        if pattern[-1] == ">":
            # A trailing ">" takes one or more tokens (a create subject's filter).
            if len(tokens) < len(pattern):
                continue
            head = pattern[:-1]
            if all(p == "*" or p == t for p, t in zip(head, tokens)):
                return ".".join(pattern), fn
            continue
        if len(pattern) != len(tokens):
            continue
        if all(p == "*" or p == t for p, t in zip(pattern, tokens, strict=True)):
            return ".".join(pattern), fn
    return None


def is_json_object_or_array(data: bytes) -> bool:
    """``isJSONObjectOrArray``: first non-space byte is ``{`` or ``[``."""
    stripped = data.lstrip(b" \t\r\n")
    return stripped[:1] in (b"{", b"[")


def is_empty_request(data: bytes) -> bool:
    """``isEmptyRequest``: no bytes, ``{}``, or any JSON object without keys."""
    if not data or data == b"{}":
        return True
    import json

    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(value, dict) and not value


class QuietError(dict):  # type: ignore[type-arg]
    """An error reply the server sends through its success path, so the account's API
    error counter does not count it (e.g. a failed message delete)."""


def error_response(type_suffix: str, err: ApiError, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": response_type(type_suffix), "error": err.as_dict()}
    out.update(extra)
    return out
