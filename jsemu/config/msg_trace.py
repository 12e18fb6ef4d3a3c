"""An account's ``msg_trace`` (or ``trace_dest``) value, read as nats-server 2.15.1 reads it
(``parseAccountMsgTrace``).

``msg_trace: "trace.subj"`` or ``msg_trace: { dest: "trace.subj", sampling: 50 }`` (a number
or ``"50%"``, 1 to 100): a message published in the account with a sampled W3C
``traceparent`` header, and no ``Nats-Trace-Dest``, is traced to ``dest``
(``server/msg_trace.py``). A destination without a sampling traces every such message; a
sampling without a destination is dropped with a warning. Errors are nats-server's, word
for word (its ``Ttrace`` typo too).
"""

from __future__ import annotations

import logging
from typing import Any

from ..protocol.gojson.runes import go_quote
from ..subjects import is_valid_subject, subject_is_literal
from .go_types import go_type

__all__ = ["MsgTraceError", "parse_msg_trace"]

log = logging.getLogger("jsemu.config")


class MsgTraceError(Exception):
    """A refused value: its message, and the key path (below the account) of the token."""

    def __init__(self, message: str, key: tuple[str, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


def _dest(value: Any, field: str, key: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise MsgTraceError(f"Field {go_quote(field)} should be a string, got {go_type(value)}", key)
    if not (is_valid_subject(value) and subject_is_literal(value)):
        raise MsgTraceError(f"Trace destination {go_quote(value)} is not valid", key)
    return value


def _sampling(value: Any, field: str, key: tuple[str, ...]) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise MsgTraceError(
            f"Trace destination sampling field {go_quote(field)} should be an integer or a percentage, "
            f"got {go_type(value)}",
            key,
        )
    if isinstance(value, str):
        text = value.removesuffix("%")
        # Go's strconv.Atoi: an optional sign and ASCII digits only.
        digits = text[1:] if text[:1] in ("+", "-") else text
        if not digits or not digits.isascii() or not digits.isdigit():
            raise MsgTraceError(f"Invalid trace destination sampling value {go_quote(value)}", key)
        number = int(text)
    else:
        number = value
    if number <= 0 or number > 100:
        raise MsgTraceError(f"Ttrace destination sampling value {number} is invalid, needs to be [1..100]", key)
    return number


def parse_msg_trace(value: Any, top_key: str, where: str = "") -> tuple[str, int]:
    """The destination and sampling percentage (0 without a destination)."""
    dest, sampling = "", 0
    if isinstance(value, str):
        dest = _dest(value, top_key, ())
    elif isinstance(value, dict):
        for field, item in value.items():
            name = field.lower()
            if name == "dest":
                dest = _dest(item, field, (field,))
            elif name == "sampling":
                sampling = _sampling(item, field, (field,))
            else:
                raise MsgTraceError(
                    f"Unknown field {go_quote(field)} parsing account message trace map/struct {go_quote(top_key)}",
                    (field,),
                )
    else:
        raise MsgTraceError(
            f"Expected account message trace {go_quote(top_key)} to be a string or a map/struct, got {go_type(value)}",
            (),
        )
    if dest and not sampling:
        sampling = 100
    elif sampling and not dest:
        log.warning("%sTrace destination sampling ignored since no destination was set", where)
        sampling = 0
    return dest, sampling
