"""The Go types a request is declared with, for the decoder to decode into.

A request struct is written once as a value (``GoStruct("StreamConfigRequest", {...})``
in ``jetstream/api/requests.py`` and beside the handlers) and says everything the
decoder needs: JSON names with Go's case-insensitive matching (:meth:`GoStruct.field_for`),
each field's type, its zero value, and the type names that appear in error texts
(``reflect.Type.String()``: ``*server.StreamSource``, ``map[string]string``). Types with
their own ``UnmarshalJSON`` are :class:`GoEnum` values carrying that method as a function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .runes import go_fold

__all__ = [
    "GO_ZERO_TIME_NS",
    "T_ANY",
    "T_BOOL",
    "T_DURATION",
    "T_FLOAT32",
    "T_FLOAT64",
    "T_INT",
    "T_INT8",
    "T_INT16",
    "T_INT32",
    "T_INT64",
    "T_STRING",
    "T_TIME",
    "T_UINT",
    "T_UINT8",
    "T_UINT16",
    "T_UINT32",
    "T_UINT64",
    "GoEnum",
    "GoMap",
    "GoPointer",
    "GoScalar",
    "GoSlice",
    "GoStruct",
    "GoType",
]


class GoType:
    """A Go type that JSON can be decoded into."""

    __slots__ = ()

    @property
    def type_name(self) -> str:
        """``reflect.Type.String()``, as in error messages."""
        raise NotImplementedError

    def zero(self) -> Any:
        """The Go zero value (used for new slice and map elements)."""
        raise NotImplementedError


@dataclass(frozen=True)
class GoScalar(GoType):
    """A predeclared (or time) type: ``kind`` is bool, string, int, uint, float, time or any."""

    name: str
    kind: str
    bits: int = 64

    @property
    def type_name(self) -> str:
        return self.name

    def zero(self) -> Any:
        return _SCALAR_ZERO[self.kind]


# time.Time{} (January 1, year 1, 00:00:00 UTC) as Unix nanoseconds.
GO_ZERO_TIME_NS = -62135596800 * 1_000_000_000

_SCALAR_ZERO: dict[str, Any] = {
    "bool": False,
    "string": "",
    "int": 0,
    "uint": 0,
    "float": 0.0,
    "time": GO_ZERO_TIME_NS,
    "any": None,
}

T_BOOL = GoScalar("bool", "bool")
T_STRING = GoScalar("string", "string")
T_INT = GoScalar("int", "int", 64)
T_INT8 = GoScalar("int8", "int", 8)
T_INT16 = GoScalar("int16", "int", 16)
T_INT32 = GoScalar("int32", "int", 32)
T_INT64 = GoScalar("int64", "int", 64)
T_UINT = GoScalar("uint", "uint", 64)
T_UINT8 = GoScalar("uint8", "uint", 8)
T_UINT16 = GoScalar("uint16", "uint", 16)
T_UINT32 = GoScalar("uint32", "uint", 32)
T_UINT64 = GoScalar("uint64", "uint", 64)
T_FLOAT32 = GoScalar("float32", "float", 32)
T_FLOAT64 = GoScalar("float64", "float", 64)
#: ``time.Duration``: v1 decodes it as an int64 of nanoseconds.
T_DURATION = GoScalar("time.Duration", "int", 64)
#: ``time.Time``: an RFC 3339 string, decoded to Unix nanoseconds.
T_TIME = GoScalar("time.Time", "time")
#: ``any``: plain Python values (numbers as float, like Go's float64).
T_ANY = GoScalar("interface {}", "any")


@dataclass(frozen=True)
class GoSlice(GoType):
    elem: GoType

    @property
    def type_name(self) -> str:
        return "[]" + self.elem.type_name

    def zero(self) -> Any:
        return None


@dataclass(frozen=True)
class GoMap(GoType):
    """``map[string]elem``."""

    elem: GoType

    @property
    def type_name(self) -> str:
        return "map[string]" + self.elem.type_name

    def zero(self) -> Any:
        return None


@dataclass(frozen=True)
class GoPointer(GoType):
    """``*elem``: ``null`` sets it to None; otherwise decodes into the pointee
    (allocated if nil, merged into if not)."""

    elem: GoType

    @property
    def type_name(self) -> str:
        return "*" + self.elem.type_name

    def zero(self) -> Any:
        return None


def _qualified(go_name: str, package: str) -> str:
    return go_name if "." in go_name or not package else f"{package}.{go_name}"


@dataclass(frozen=True, eq=False)
class GoStruct(GoType):
    """A struct: ``fields`` maps JSON names to types, in declaration order (embedded
    structs flattened in). ``go_name`` is the type name (the root of error paths),
    ``package`` qualifies it in type names (``server.StreamConfigRequest``); a
    ``go_name`` with a dot is taken as already qualified."""

    go_name: str
    fields: Mapping[str, GoType]
    package: str = "server"
    _folded: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        folded: dict[str, str] = {}
        for name in self.fields:
            folded.setdefault(go_fold(name), name)  # the first field wins, like Go's order
        object.__setattr__(self, "_folded", folded)

    @property
    def type_name(self) -> str:
        return _qualified(self.go_name, self.package)

    @property
    def root_name(self) -> str:
        """``reflect.Type.Name()``: the name without its package."""
        return self.go_name.rpartition(".")[2]

    def zero(self) -> Any:
        return {}

    def field_for(self, key: str) -> str | None:
        if key in self.fields:
            return key
        return self._folded.get(go_fold(key))


@dataclass(frozen=True, eq=False)
class GoEnum(GoType):
    """A type with its own ``UnmarshalJSON``: ``parse`` gets the raw JSON text of
    the value (``null`` included; invalid UTF-8 bytes as surrogate escapes, so
    :func:`go_quote` gives Go's ``%q`` of the data) and returns the Go value or
    raises :class:`GoJSONError` with the method's exact error text (Go returns it
    unwrapped)."""

    go_name: str
    parse: Callable[[str], Any]
    package: str = "server"
    zero_value: Any = None

    @property
    def type_name(self) -> str:
        return _qualified(self.go_name, self.package)

    def zero(self) -> Any:
        return self.zero_value
