"""Which server a system request is for: nats-server's ``EventFilterOptions`` and ``filterRequest``.

Every ``$SYS.REQ.SERVER...`` and ``$SYS.REQ.ACCOUNT...`` request body is decoded as Go's
``json.Unmarshal`` into a ``<Kind>EventOptions``: the endpoint's own options with the filter
fields embedded (``server_name``, ``cluster``, ``host``, ``exact_match``, ``tags``,
``domain``). A request sent to ``PING`` reaches every server of a cluster; each one decides
alone whether the filters name it and, if not, stays silent (so the asker, collecting
answers until a timeout, hears only the servers it chose). The names match by substring
unless ``exact_match``; every tag asked for must be one of the server's (a jsemu server has none:
its configuration refuses ``server_tags``); a domain must be the server's JetStream domain.

A body that does not decode is an error answer, never silence: the asker would read silence
as "no such server". Decoding errors keep Go's words (``json: cannot unmarshal ...``)
without nats-server's ``at offset N`` suffix, which its ``err.Error()`` does not carry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.gojson import GoJSONError, GoSyntaxError, scan_values
from ..protocol.gojson.decoder import decode_request
from ..protocol.gojson.types import T_BOOL, T_STRING, GoSlice, GoStruct, GoType

if TYPE_CHECKING:
    from .server import Server

__all__ = ["FILTER", "decode_options", "error_text", "options_struct", "selects_this_server"]

_TRUNCATED = "unexpected end of JSON input"
#: ``EventFilterOptions``: the fields every request body may carry to choose servers.
FILTER: dict[str, GoType] = {
    "server_name": T_STRING,
    "cluster": T_STRING,
    "host": T_STRING,
    "exact_match": T_BOOL,
    "tags": GoSlice(T_STRING),
    "domain": T_STRING,
}


def options_struct(go_name: str, options: dict[str, GoType]) -> GoStruct:
    """``server.<go_name>``: an endpoint's options with the filter embedded after them."""
    return GoStruct(go_name, options | FILTER)


def decode_options(body: bytes, struct: GoStruct) -> dict[str, Any]:
    """``json.Unmarshal(body, &options)``: one JSON value, unknown keys skipped; an empty
    body or ``null`` is no options. Raises :class:`GoJSONError`."""
    if not body:
        return {}
    try:
        values = list(scan_values(body))
    except GoSyntaxError:
        raise
    except GoJSONError:  # the scanner ran out of input: json.Unmarshal's checkValid words it so
        raise GoJSONError(_TRUNCATED) from None
    if len(values) > 1:
        first = body[values[1][0] : values[1][0] + 1].decode("latin-1")
        raise GoSyntaxError(f"invalid character '{first}' after top-level value", values[1][0])
    if body[values[0][0] : values[0][1]] == b"null":
        return {}
    return decode_request(body, struct, strict=False)


def error_text(exc: GoJSONError) -> str:
    """Go's ``err.Error()``: a syntax error without nats-server's ``at offset N``."""
    if isinstance(exc, GoSyntaxError):
        return exc.message
    text = str(exc)
    return text if text else _TRUNCATED


def selects_this_server(server: Server, options: dict[str, Any]) -> bool:
    """``filterRequest`` the other way round: whether the filters let this server answer."""
    opts = server.options
    mine = {"server_name": server.server_name, "host": opts.host, "cluster": server.info_cluster or ""}
    exact = bool(options.get("exact_match"))
    for key, value in mine.items():
        wanted = options.get(key) or ""
        if wanted and (wanted != value if exact else wanted not in value):
            return False
    if options.get("tags"):
        return False  # a jsemu server has no tags (``server_tags`` is refused at start-up)
    domain = options.get("domain") or ""
    return not domain or domain == opts.domain
