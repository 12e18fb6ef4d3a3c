"""The errors the Go decoders raise: ``str(err)`` is what the client reads.

nats-server answers a request it cannot decode with ``"invalid JSON: " + err.Error()``,
so these carry Go's text verbatim: :class:`GoSyntaxError` from the scanner,
:class:`GoUnmarshalTypeError` from the decoder, a plain :class:`GoJSONError` for the
rest (``unexpected EOF``, unknown fields, a custom ``UnmarshalJSON``'s own text, a
``time.ParseError``).
"""

from __future__ import annotations

__all__ = ["GoJSONError", "GoSyntaxError", "GoUnmarshalTypeError"]


class GoJSONError(ValueError):
    """The input is not valid JSON, or a value does not fit its Go field type.

    ``str(err)`` is the text nats-server puts after ``"invalid JSON: "``.
    """


class GoSyntaxError(GoJSONError):
    """A ``*json.SyntaxError``: ``message`` is Go's text, ``offset`` its Offset;
    ``str()`` adds nats-server's ``" at offset N"``."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at offset {offset}")
        self.message = message
        self.offset = offset


class GoUnmarshalTypeError(GoJSONError):
    """A ``*json.UnmarshalTypeError``: ``json: cannot unmarshal <what> into Go struct field
    <Root>.<path> of type <type>``, where ``<path>`` is the JSON pointer of the value with
    ``/`` replaced by ``.`` (names as written in the input, array indexes as numbers), or
    ``... into Go value of type <type>`` at the top level."""

    def __init__(self, value: str, type_name: str, struct: str = "", field_path: str = "") -> None:
        if struct or field_path:
            # Go's heuristic: a last token that looks like an array index means
            # the value was not a struct field.
            last = field_path[field_path.rfind(".") + 1 :]
            into = "" if last and last.strip("0123456789") == "" else "Go struct field "
            text = f"json: cannot unmarshal {value} into {into}{struct}.{field_path} of type {type_name}"
        else:
            text = f"json: cannot unmarshal {value} into Go value of type {type_name}"
        super().__init__(text)
        self.value = value
        self.type_name = type_name
        self.struct = struct
        self.field = field_path
