"""``NATS_SERVER_API`` (the server side of the API coverage page) cannot miss an endpoint:
every ``$JS.API.`` subject in the nats-server 2.15.1 binary's string table and every
``$JS.API.`` constant of its Go source (``tests/tools/data/jetstream_api_subjects.go.txt``,
the constants block of ``server/jetstream_api.go``; no other file of ``server/`` spells a
``$JS.API.`` subject) must be listed, and every listed one must be in the binary.

Go keeps its string literals back to back without separators, so a subject read from the
binary may run into the next string (``STREAM.LISTNATS``, ``META.RESCUEJetStream``), and
``$JS.API.`` also occurs as an 8-byte immediate in machine code (``$JS.API.H9``). Tokens
are therefore read as runs of at least two capitals, ``*``, ``>`` or ``%s`` (a ``Sprintf``
template, read as ``*``), and a subject counts as listed when

* a listed pattern matches it token by token (a template's ``*`` as a token);
* it is ``$JS.API.>`` or a prefix the server tests subjects against (``$JS.API.ACCOUNT.``,
  ``$JS.API.DIRECT.GET``, ``$JS.API.CONSUMER.MSG.NEXT.``: no wildcard, and a listed subject
  starts with it) or a domain mapping's ``<FAMILY>.>``;
* it is a listed literal subject with capitals of the next string glued to its last token.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from jsemu.tools.api_coverage import NATS_SERVER_API

GO_SOURCE = Path(__file__).parent / "data" / "jetstream_api_subjects.go.txt"
LISTED = [subject for _, subject, _ in NATS_SERVER_API]
_BINARY_SUBJECT = re.compile(rb"\$JS\.API((?:\.(?:[A-Z][A-Z_]+|\*|>|%s))+\.?)")
_GO_CONSTANT = re.compile(r'^\s*(\w+)\s*=\s*"\$JS\.API(\.[^"]*)?"', re.MULTILINE)


def _binary() -> bytes:
    binary = Path(sys.executable).parent / "nats-server"
    if not binary.exists():
        pytest.skip("nats-server binary not installed (the test extra brings it)")
    return binary.read_bytes()


def _matches(pattern: str, subject: str) -> bool:
    """``pattern`` (``*``, trailing ``>``) matches ``subject``, whose ``*`` are tokens."""
    pt, st = pattern.split("."), subject.split(".")
    for i, token in enumerate(pt):
        if token == ">":
            return len(st) > i
        if i >= len(st) or (token != "*" and token != st[i]):
            return False
    return len(st) == len(pt)


def covered(subject: str, listed: list[str]) -> bool:
    """Whether ``subject`` (after ``$JS.API.``, templates as ``%s``) is one of ``listed``."""
    subject = subject.replace("%s", "*")
    if subject == ">":
        return True  # jsAllAPI, the API's own filter
    if any(_matches(p, subject) for p in listed):
        return True
    wild = "*" in subject or ">" in subject
    if not wild and any(p.startswith(subject) and p != subject for p in listed):
        return True  # a prefix the server tests subjects against
    family = re.fullmatch(r"([A-Z_]+)\.>", subject)
    if family is not None:
        return any(p.startswith(family.group(1) + ".") for p in listed)  # a domain mapping
    head, _, last = subject.rpartition(".")
    for cut in range(len(last) - 1, 1, -1):  # glued to the capitals of the next string
        if not wild and f"{head}.{last[:cut]}".lstrip(".") in listed:
            return True
    return False


def binary_subjects(data: bytes) -> set[str]:
    return {m.group(1).decode()[1:] for m in _BINARY_SUBJECT.finditer(data)}


def go_constants(text: str) -> dict[str, str]:
    """Go constant -> subject after ``$JS.API.`` (empty for ``$JS.API`` itself)."""
    return {m.group(1): (m.group(2) or "")[1:] for m in _GO_CONSTANT.finditer(text)}


def test_every_subject_in_the_binary_is_listed() -> None:
    found = binary_subjects(_binary())
    assert {"CONSUMER.RESET.%s.%s", "CONSUMER.MSG.NEXT.%s.%s", "STREAM.CREATE.*"} <= found
    missing = sorted(s for s in found if not covered(s, LISTED))
    assert not missing, f"$JS.API subjects of the nats-server binary not in NATS_SERVER_API: {missing}"


def test_every_listed_subject_is_in_the_binary() -> None:
    data = _binary()

    def spelt(subject: str) -> bool:
        template = subject.replace("*", "%s").replace(">", "%s")
        return any(b"$JS.API." + s.encode() in data for s in (subject, template))

    assert [s for s in LISTED if not spelt(s)] == []


def test_every_constant_of_the_go_source_is_listed() -> None:
    constants = go_constants(GO_SOURCE.read_text())
    assert constants["JSApiConsumerResetT"] == "CONSUMER.RESET.%s.%s"
    exported = {name: s for name, s in constants.items() if name[0].isupper() and s}
    missing = sorted(f"{name} {s}" for name, s in exported.items() if not covered(s, LISTED))
    assert not missing, f"$JS.API constants of jetstream_api.go not in NATS_SERVER_API: {missing}"
    # the unexported ones are the API filter and the prefixes subjects are tested against
    others = {s for name, s in constants.items() if not name[0].isupper() and s}
    assert others == {">", "ACCOUNT.", "DIRECT.GET", "CONSUMER.MSG.NEXT."}
    assert all(s == ">" or any(p.startswith(s) for p in LISTED) for s in others)
    # the constants the table names are the source's (the empty ones: seen only in the binary)
    named = [(name, s) for name, s, _ in NATS_SERVER_API if name]
    assert [(name, s) for name, s in named if not _matches(s, constants.get(name, "-").replace("%s", "*"))] == []


@pytest.mark.parametrize(
    ("subject", "listed"),
    [
        ("CONSUMER.RESET.%s.%s", False),  # a template of a missing endpoint
        ("STREAM.NOPE.*", False),
        ("STREAM.LISTNATS", True),  # glued to the next string
        ("STREAM.NAMESN", True),
        ("STREAM.LISTX.*", False),
        ("ACCOUNT.", True),  # a prefix
        ("STREAM.>", True),  # a domain mapping
        ("NOPE.>", False),
    ],
)
def test_the_rules_of_covered(subject: str, listed: bool) -> None:
    without = [s for s in LISTED if not s.startswith("CONSUMER.RESET")]
    assert covered(subject, without) is listed
