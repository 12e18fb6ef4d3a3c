"""Store mutations as typed records: what replication carries and the write-ahead log keeps.

Every state change a stream store makes on request is one record type here, registered on
the store method that carries it out (:func:`mutator`). Replication builds the record from
the leader's call and followers :meth:`Record.apply` it; the write-ahead log stores
:meth:`Record.encode` under the record's :attr:`Record.CODE`. The saved form depends on
codes and field positions only, never on Python names, so renaming a store method or a
field does not break a saved store. Consumer state can add its own records (new codes) to
the same mechanism.

A record's fields are the parameters of its store method, in order and with the same
defaults, so ``Record(*args, **kwargs)`` captures a call; ``tests/store/test_records.py``
checks that, and that no public store method mutates without a record.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import astuple, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .limits import StoreLimits

if TYPE_CHECKING:
    from .interface import Store

__all__ = [
    "RECORDS",
    "ROLLUP_ALL",
    "ROLLUP_NONE",
    "ROLLUP_SUBJECT",
    "SKIP_NO_INTEREST",
    "Append",
    "AppendBatch",
    "BatchMessage",
    "Compact",
    "LastTime",
    "Purge",
    "PurgeEx",
    "Record",
    "Remove",
    "Skip",
    "SkipMany",
    "UpdateLimits",
    "UpdateLimitsAt",
    "batched",
    "decode",
    "local_mutation",
    "mutator",
]

_F = TypeVar("_F", bound=Callable[..., Any])

_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_APPEND_HEAD = struct.Struct("<BI")

#: One message of an atomic batch: subject, header block, body and what to do with it
#: (:data:`ROLLUP_NONE`: store it; :data:`ROLLUP_SUBJECT` / :data:`ROLLUP_ALL`: store it, then
#: roll up; :data:`SKIP_NO_INTEREST`: use up its sequence only, as for an interest stream
#: nobody wants it on).
BatchMessage = tuple[bytes, bytes, bytes, int]
ROLLUP_NONE, ROLLUP_SUBJECT, ROLLUP_ALL, SKIP_NO_INTEREST = 0, 1, 2, 3

# StoreLimits in the log: JSON with these keys, in the limits' field order. The keys are the
# format; a renamed StoreLimits field keeps its key here.
_LIMIT_KEYS = (
    "max_msgs",
    "max_bytes",
    "max_age_ns",
    "max_msgs_per_subject",
    "max_msg_size",
    "discard_new",
    "discard_new_per_subject",
    "allow_msg_ttl",
    "stream_expires",
)
#: Keys added after logs were first written, with the value an older log means.
_LIMIT_DEFAULTS = {"allow_msg_ttl": False, "stream_expires": False}


def _put(kind: str, value: Any, out: list[bytes]) -> None:
    if kind == "q":
        out.append(_I64.pack(value))
    elif kind == "?":
        out.append(b"\x01" if value else b"\x00")
    elif kind == "b":
        value = bytes(value)
        out.append(_U32.pack(len(value)))
        out.append(value)
    elif kind == "o":  # bytes or None
        if value is None:
            out.append(_I32.pack(-1))
        else:
            value = bytes(value)
            out.append(_I32.pack(len(value)))
            out.append(value)
    elif kind == "M":  # a list of BatchMessage
        out.append(_U32.pack(len(value)))
        for subject, hdr, data, rollup in value:
            for part in (subject, hdr, data):
                _put("b", part, out)
            out.append(bytes((rollup,)))
    else:  # "L": StoreLimits
        text = json.dumps(dict(zip(_LIMIT_KEYS, astuple(value), strict=True)), separators=(",", ":"))
        _put("b", text.encode(), out)


def _get(kind: str, data: bytes, pos: int) -> tuple[Any, int]:
    if kind == "q":
        return _I64.unpack_from(data, pos)[0], pos + 8
    if kind == "?":
        return data[pos] != 0, pos + 1
    if kind == "b":
        (n,) = _U32.unpack_from(data, pos)
        pos += 4
        if pos + n > len(data):
            raise ValueError("truncated record")
        return data[pos : pos + n], pos + n
    if kind == "o":
        (n,) = _I32.unpack_from(data, pos)
        pos += 4
        if n < 0:
            return None, pos
        if pos + n > len(data):
            raise ValueError("truncated record")
        return data[pos : pos + n], pos + n
    if kind == "M":
        (count,) = _U32.unpack_from(data, pos)
        pos += 4
        messages: list[BatchMessage] = []
        for _ in range(count):
            subject, pos = _get("b", data, pos)
            hdr, pos = _get("b", data, pos)
            body, pos = _get("b", data, pos)
            messages.append((subject, hdr, body, data[pos]))
            pos += 1
        return messages, pos
    raw, pos = _get("b", data, pos)
    values = json.loads(raw)
    return StoreLimits(*(values[k] if k in values else _LIMIT_DEFAULTS[k] for k in _LIMIT_KEYS)), pos


@dataclass(frozen=True, slots=True)
class Record:
    """One mutation. ``CODE`` (a byte) and ``LAYOUT`` (one letter per field: ``q`` int64,
    ``?`` bool, ``b`` bytes, ``o`` bytes or None, ``L`` limits) are the saved format."""

    CODE: ClassVar[int] = 0
    LAYOUT: ClassVar[str] = ""
    #: The store method that carries this record out.
    METHOD: ClassVar[str] = ""

    def apply(self, store: Store) -> Any:
        """Carry the mutation out on ``store`` (through its method, so flavours differ as they should)."""
        return getattr(store, self.METHOD)(*self._values())

    def time_ns(self) -> int:
        """When the mutation happened, as far as the record says (0: it does not): the store
        applying it judges ``max_age`` and TTL expiry at the latest such time (``apply``)."""
        return 0

    def _values(self) -> tuple[Any, ...]:
        names: tuple[str, ...] = self.__match_args__
        return tuple(getattr(self, name) for name in names)

    @classmethod
    def of_call(cls, result: Any, *args: Any, **kwargs: Any) -> Record:
        """The record of a leader's call with these arguments that returned ``result``."""
        return cls(*args, **kwargs)

    def encode(self) -> bytes:
        out: list[bytes] = [bytes((self.CODE,))]
        for kind, value in zip(self.LAYOUT, self._values(), strict=True):
            _put(kind, value, out)
        return b"".join(out)


@dataclass(frozen=True, slots=True)
class Append(Record):
    """A stored message; ``ts`` is the leader's timestamp once logged (followers copy it)."""

    CODE: ClassVar[int] = 1
    LAYOUT: ClassVar[str] = "bbbq"
    METHOD: ClassVar[str] = "append"
    subject: bytes
    hdr: bytes
    data: bytes
    ts: int = 0

    def apply(self, store: Store) -> Any:
        return store.append(self.subject, self.hdr, self.data, self.ts)

    def time_ns(self) -> int:
        return self.ts

    @classmethod
    def of_call(cls, result: Any, subject: bytes, hdr: bytes, data: bytes, ts: int = 0) -> Record:
        """Followers store the leader's timestamp (``result`` is ``(seq, ts)``)."""
        return cls(subject, hdr, data, result[1])

    def encode(self) -> bytes:
        """``Record.encode``, unrolled: a persisted stream encodes one per publish."""
        subject, hdr, data = bytes(self.subject), bytes(self.hdr), bytes(self.data)
        return b"".join(
            (
                _APPEND_HEAD.pack(1, len(subject)),
                subject,
                _U32.pack(len(hdr)),
                hdr,
                _U32.pack(len(data)),
                data,
                _I64.pack(self.ts),
            )
        )


@dataclass(frozen=True, slots=True)
class Skip(Record):
    CODE: ClassVar[int] = 2
    LAYOUT: ClassVar[str] = "q?"
    METHOD: ClassVar[str] = "skip_msg"
    seq: int = 0
    no_interest: bool = False


@dataclass(frozen=True, slots=True)
class SkipMany(Record):
    CODE: ClassVar[int] = 3
    LAYOUT: ClassVar[str] = "qq?"
    METHOD: ClassVar[str] = "skip_msgs"
    seq: int
    num: int
    no_interest: bool = False


@dataclass(frozen=True, slots=True)
class Remove(Record):
    CODE: ClassVar[int] = 4
    LAYOUT: ClassVar[str] = "q?"
    METHOD: ClassVar[str] = "remove"
    seq: int
    erase: bool = False


@dataclass(frozen=True, slots=True)
class Purge(Record):
    CODE: ClassVar[int] = 5
    METHOD: ClassVar[str] = "purge"


@dataclass(frozen=True, slots=True)
class PurgeEx(Record):
    CODE: ClassVar[int] = 6
    LAYOUT: ClassVar[str] = "oqq"
    METHOD: ClassVar[str] = "purge_ex"
    subject: bytes | None
    seq: int
    keep: int


@dataclass(frozen=True, slots=True)
class Compact(Record):
    CODE: ClassVar[int] = 7
    LAYOUT: ClassVar[str] = "q"
    METHOD: ClassVar[str] = "compact"
    seq: int


@dataclass(frozen=True, slots=True)
class UpdateLimits(Record):
    """New limits, without their time: what logs written before :class:`UpdateLimitsAt`
    hold. Read and applied (at the time of the records before it), never written."""

    CODE: ClassVar[int] = 8
    LAYOUT: ClassVar[str] = "L"
    METHOD: ClassVar[str] = "update_limits"
    limits: StoreLimits


@dataclass(frozen=True, slots=True)
class UpdateLimitsAt(Record):
    """New limits and the leader's time of the change: a replay or a follower expires by
    ``max_age`` up to that time under the old limits, as the leader did, and not by the
    limits of the moment it replays (a max_age lifted since must not expire anything)."""

    CODE: ClassVar[int] = 12
    LAYOUT: ClassVar[str] = "Lq"
    METHOD: ClassVar[str] = "update_limits"
    limits: StoreLimits
    ts: int = 0

    def time_ns(self) -> int:
        return self.ts

    @classmethod
    def of_call(cls, result: Any, limits: StoreLimits, ts: int = 0) -> Record:
        """Followers and the log keep the leader's time (``result``)."""
        return cls(limits, result)


@dataclass(frozen=True, slots=True)
class AppendBatch(Record):
    """A committed atomic batch (``allow_atomic``): all its messages in one record, so a
    follower or a replayed log stores the whole batch or none of it. ``ts`` is the leader's
    timestamp of every message of the batch once logged."""

    CODE: ClassVar[int] = 9
    LAYOUT: ClassVar[str] = "Mq"
    METHOD: ClassVar[str] = "append_batch"
    messages: list[BatchMessage]
    ts: int = 0

    @classmethod
    def of_call(cls, result: Any, messages: list[BatchMessage], ts: int = 0) -> Record:
        """Followers store the leader's timestamp (``result`` is ``(last seq, ts)``)."""
        return cls(list(messages), result[1])

    def time_ns(self) -> int:
        return self.ts


@dataclass(frozen=True, slots=True)
class AppendRun(Record):
    """Consecutive ``Append`` records of a log, read back as columns for a replay (never
    written: the log holds the ``Append`` records). A store takes the run in bulk where it
    can (``append_run``); otherwise each ``Append`` is applied in turn (``appends``)."""

    METHOD: ClassVar[str] = "append_run"
    subjects: list[bytes]
    hdrs: list[bytes]
    datas: list[bytes]
    tss: list[int]

    def apply(self, store: Store) -> Any:
        """True when the store took the whole run; False (nothing done) otherwise."""
        return store.append_run(self.subjects, self.hdrs, self.datas, self.tss)

    @property
    def count(self) -> int:
        return len(self.subjects)

    def time_ns(self) -> int:
        return max(self.tss, default=0)

    def appends(self) -> list[Append]:
        return list(map(Append, self.subjects, self.hdrs, self.datas, self.tss))

    def encode(self) -> bytes:
        raise TypeError("an AppendRun is read from a log, never written to one")


@dataclass(frozen=True, slots=True)
class LastTime(Record):
    """The stream's last timestamp where no stored message carries it any more (its last
    messages deleted, or all of them): a compacted log writes it after the live messages,
    as nats-server's state keeps ``last_ts`` across a restart."""

    CODE: ClassVar[int] = 11
    LAYOUT: ClassVar[str] = "q"
    METHOD: ClassVar[str] = "restore_last_ts"
    ts: int

    def time_ns(self) -> int:
        return self.ts


#: Record type by code: the records a store writes.
RECORDS: dict[int, type[Record]] = {
    cls.CODE: cls
    for cls in (Append, Skip, SkipMany, Remove, Purge, PurgeEx, Compact, UpdateLimitsAt, AppendBatch, LastTime)
}
#: Record types older logs hold and a store no longer writes: still decoded.
_RETIRED: dict[int, type[Record]] = {UpdateLimits.CODE: UpdateLimits}


def _decode_append(data: bytes) -> Append:
    """``decode`` for an ``Append``, unrolled: a restart decodes one per stored message."""
    try:
        (n,) = _U32.unpack_from(data, 1)
        pos = 5 + n
        subject = data[5:pos]
        (n,) = _U32.unpack_from(data, pos)
        pos += 4
        hdr = data[pos : pos + n]
        pos += n
        (n,) = _U32.unpack_from(data, pos)
        pos += 4
        body = data[pos : pos + n]
        pos += n
        (ts,) = _I64.unpack_from(data, pos)
    except struct.error as exc:
        raise ValueError("bad Append record") from exc
    if pos + 8 != len(data):
        raise ValueError("bad Append record: length mismatch")
    return Append(subject, hdr, body, ts)


def decode(data: bytes) -> Record:
    """The record :meth:`Record.encode` wrote; ValueError for anything else."""
    if data[:1] == b"\x01":
        return _decode_append(data)
    cls = (RECORDS.get(data[0]) or _RETIRED.get(data[0])) if data else None
    if cls is None:
        raise ValueError(f"unknown record type {data[:1]!r}")
    values = []
    pos = 1
    try:
        for kind in cls.LAYOUT:
            value, pos = _get(kind, data, pos)
            values.append(value)
    except (
        struct.error,
        IndexError,
        KeyError,
        TypeError,
        ValueError,
        UnicodeDecodeError,
        json.JSONDecodeError,
    ) as exc:
        raise ValueError(f"bad {cls.__name__} record") from exc
    if pos != len(data):
        raise ValueError(f"bad {cls.__name__} record: {len(data) - pos} bytes left over")
    return cls(*values)


# --- registration on the store ------------------------------------------------------------


def mutator(record: type[Record]) -> Callable[[_F], _F]:
    """Marks the store method that carries ``record`` out: a logging store logs its calls."""

    def mark(fn: _F) -> _F:
        fn.__record__ = record  # type: ignore[attr-defined]
        fn.__mutation__ = "logged"  # type: ignore[attr-defined]
        return fn

    return mark


def batched(record: type[Record]) -> Callable[[_F], _F]:
    """Marks a fast form of ``record``'s method (several at once, fewer checks): a logging
    store must override it to go through the logged method or refuse."""

    def mark(fn: _F) -> _F:
        fn.__record__ = record  # type: ignore[attr-defined]
        fn.__mutation__ = "batched"  # type: ignore[attr-defined]
        return fn

    return mark


def local_mutation(fn: _F) -> _F:
    """Marks a state change every copy makes on its own (``max_age`` expiry on its clock, as
    each nats-server replica's store expires on its own timer): never logged."""
    fn.__mutation__ = "local"  # type: ignore[attr-defined]
    return fn
