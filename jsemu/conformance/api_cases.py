"""The stream API part of the conformance table: sequences of ``$JS.API`` requests (and
publishes, which answer with a PubAck) whose JSON replies are compared byte for byte after
two normalisations: every RFC 3339 time except Go's zero time becomes ``<ts>``, and the
``leader`` of a ``cluster`` (the server's name) becomes ``<server>``.

Replies are recorded from nats-server into ``api_fixtures.json`` with
``python -m tests.conformance.record_api``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .runner import Run

__all__ = [
    "API_CASES",
    "API_FIXTURES",
    "LISTINGS",
    "ApiCase",
    "load_api_fixtures",
    "normalise",
    "own_streams",
    "run_api_case",
]

API_FIXTURES = Path(__file__).with_name("api_fixtures.json")

# Go's time.RFC3339Nano in UTC: the fraction, if any, has its trailing zeros trimmed; any other
# form ("...05.120Z") is left alone and so shows up as a difference.
_TS = re.compile(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{0,8}[1-9])?Z"')
_ZERO = '"0001-01-01T00:00:00Z"'
_LEADER = re.compile(r'"leader":"[^"]*"')

Step = tuple[str, Any]


@dataclass(frozen=True)
class ApiCase:
    id: str
    steps: tuple[Step, ...]
    #: Needs a server nobody else used (the account counters of $JS.API.INFO).
    fresh_server: bool = False
    doc: str = ""

    @property
    def streams(self) -> list[str]:
        prefix = "$JS.API.STREAM.CREATE."
        return sorted({s[len(prefix) :] for s, _ in self.steps if s.startswith(prefix)})


def normalise(reply: bytes) -> str:
    text = reply.decode("utf-8", "backslashreplace")
    text = _TS.sub(lambda m: m.group(0) if m.group(0) == _ZERO else '"<ts>"', text)
    return _LEADER.sub('"leader":"<server>"', text)


#: Requests whose replies list every stream of the account.
LISTINGS = frozenset({"$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST"})


def own_streams(reply: str, names: list[str]) -> str:
    """A NAMES or LIST reply with only the case's streams (and ``total`` counting those).

    On a server someone else uses, other streams are listed too; the case's own entries must
    still be right, in the same order. Both sides are re-encoded the same way (keys in their
    order), so only the other streams and the total are taken out of the comparison.
    """
    try:
        value = json.loads(reply)
    except ValueError:
        return reply
    listed = value.get("streams") if isinstance(value, dict) else None
    if not isinstance(listed, list):
        return reply

    def name(entry: Any) -> Any:
        return entry.get("config", {}).get("name") if isinstance(entry, dict) else entry

    value["streams"] = [entry for entry in listed if name(entry) in names]
    if "total" in value:
        value["total"] = len(value["streams"])
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _payload(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value).encode()


async def run_api_case(host: str, port: int, case: ApiCase) -> list[str]:
    """Each step's normalised reply, in order (each request waits for the previous reply)."""
    run = Run(host, port)
    try:
        out = []
        for subject, payload in case.steps:
            (reply,) = await run.api_many([(subject, _payload(payload), None)])
            out.append(normalise(reply))
        return out
    finally:
        await run.close()


def load_api_fixtures() -> dict[str, Any]:
    if not API_FIXTURES.exists():
        return {}
    data: dict[str, Any] = json.loads(API_FIXTURES.read_text())
    return data


def _create(name: str, **config: Any) -> Step:
    return (f"$JS.API.STREAM.CREATE.{name}", {"name": name, **config})


_MEM = {"storage": "memory"}

API_CASES: tuple[ApiCase, ...] = (
    ApiCase(
        "api-lifecycle",
        (
            _create("S", subjects=["s.>"], **_MEM),
            ("$JS.API.STREAM.INFO.S", None),
            ("$JS.API.STREAM.NAMES", None),
            ("$JS.API.STREAM.LIST", None),
            _create("S", subjects=["s.>"], **_MEM),
            _create("S", subjects=["s.x"], **_MEM),
            ("$JS.API.STREAM.DELETE.S", None),
            ("$JS.API.STREAM.INFO.S", None),
            ("$JS.API.STREAM.DELETE.S", None),
        ),
        doc="create (and again: idempotent, different: 10058), info, names, list, delete",
    ),
    ApiCase(
        "api-create-errors",
        (
            ("$JS.API.STREAM.CREATE.A", {"name": "B", **_MEM}),
            ("$JS.API.STREAM.CREATE.A", b"{not json"),
            ("$JS.API.STREAM.CREATE.A", None),
            _create("A", subjects=["a"], max_age=5, **_MEM),
            _create("A", subjects=["a", "a"], **_MEM),
            _create("A", subjects=["a.*", "a.b"], **_MEM),
            _create("A", subjects=[">"], **_MEM),
            _create("A", mirror_direct=True, **_MEM),
            _create("A", subjects=["a"], num_replicas=3, **_MEM),
            _create("A", subjects=["a"], discard_new_per_subject=True, **_MEM),
            _create("A", subjects=["a"], sealed=True, **_MEM),
            _create("A", subjects=["a"], deny_purge=True, allow_rollup_hdrs=True, **_MEM),
            _create("OK", subjects=["ok.>"], **_MEM),
            _create("A", subjects=["ok.x"], **_MEM),
        ),
        doc="name mismatch, bad JSON, empty request and invalid configs, each with its error",
    ),
    ApiCase(
        "api-publish-and-get",
        (
            _create("S", subjects=["s.>"], max_msgs_per_subject=2, **_MEM),
            ("s.a", b"one"),
            ("s.a", b"two"),
            ("s.b", b"three"),
            ("s.a", b"four"),
            ("$JS.API.STREAM.MSG.GET.S", {"seq": 1}),
            ("$JS.API.STREAM.MSG.GET.S", {"seq": 2}),
            ("$JS.API.STREAM.MSG.GET.S", {"last_by_subj": "s.a"}),
            ("$JS.API.STREAM.MSG.GET.S", {"next_by_subj": "s.b", "seq": 1}),
            ("$JS.API.STREAM.MSG.GET.S", {"seq": 99}),
            ("$JS.API.STREAM.MSG.GET.S", {"seq": 1, "last_by_subj": "s.a"}),
            ("$JS.API.STREAM.INFO.S", {"subjects_filter": ">"}),
        ),
        doc="PubAcks, per-subject limit, regular get by seq / last / next, errors, subject details",
    ),
    ApiCase(
        "api-delete-purge",
        (
            _create("S", subjects=["s.>"], **_MEM),
            *((f"s.{i % 3}", b"x%d" % i) for i in range(9)),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 2}),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 2}),
            ("$JS.API.STREAM.MSG.DELETE.S", {"seq": 5, "no_erase": True}),
            ("$JS.API.STREAM.INFO.S", {"deleted_details": True}),
            ("$JS.API.STREAM.PURGE.S", {"filter": "s.0", "keep": 1}),
            ("$JS.API.STREAM.PURGE.S", {"seq": 8}),
            ("$JS.API.STREAM.INFO.S", {"deleted_details": True}),
            ("$JS.API.STREAM.PURGE.S", None),
            ("$JS.API.STREAM.INFO.S", None),
        ),
        doc="message deletes, filtered and sequence purges, full purge",
    ),
    ApiCase(
        "api-update",
        (
            _create("S", subjects=["s.>"], **_MEM),
            *((f"s.{i}", b"x") for i in range(5)),
            ("$JS.API.STREAM.UPDATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory", "max_msgs": 2}),
            ("$JS.API.STREAM.UPDATE.S", {"name": "S", "subjects": ["s.>"], "storage": "file"}),
            ("$JS.API.STREAM.UPDATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_direct": True}),
            ("$JS.API.STREAM.UPDATE.X", {"name": "X", "storage": "memory"}),
            ("$JS.API.STREAM.UPDATE.S", {"name": "S", "subjects": ["s.>"], "storage": "memory", "sealed": True}),
            ("s.9", b"after seal"),
        ),
        doc="limits applied at once, refused changes, sealing",
    ),
    ApiCase(
        "api-empty-and-kv",
        (
            _create("S", subjects=["s.>"], allow_rollup_hdrs=True, **_MEM),
            ("s.a", b""),
            ("$JS.API.STREAM.MSG.GET.S", {"seq": 1}),
            _create("K", subjects=["k.>"], max_msgs_per_subject=1, allow_direct=True, **_MEM),
            ("$JS.API.STREAM.INFO.K", None),
        ),
        doc="an empty message, a KV-like stream",
    ),
    ApiCase(
        "api-mirror-config",
        (
            _create("S", subjects=["s.>"], allow_direct=True, **_MEM),
            _create("M", mirror={"name": "S"}, **_MEM),
            _create("M2", mirror={"name": "S"}, subjects=["m"], **_MEM),
            _create("M3", mirror={"name": "S", "filter_subject": "s.a", "subject_transforms": [{"src": "s.b"}]}),
            _create("X", sources=[{"name": "S"}, {"name": "S"}], **_MEM),
        ),
        doc="a mirror's create reply (mirror_direct forced), mirror and source config errors",
    ),
    ApiCase(
        "api-account-info",
        (
            ("$JS.API.INFO", None),
            _create("S", subjects=["s"], max_bytes=1000, **_MEM),
            _create("F", subjects=["f"], max_bytes=2000),
            ("s", b"hello"),
            ("$JS.API.STREAM.INFO.NOPE", None),
            ("$JS.API.INFO", None),
        ),
        fresh_server=True,
        doc="account usage and API counters (errors counted)",
    ),
)
