"""The code blocks of README.md, as the README tests run them.

Each fenced block carries a marker on the line before it, which says how it is checked:

* ``<!-- readme-test: run -->``: a Python script, run as written (``tests/test_readme.py``);
* ``<!-- readme-test: pytest -->``: a test module, run by pytest in an empty directory;
* ``<!-- readme-test: spark -->``: run by ``tests/pipeline/test_pipeline.py`` in its Spark session;
* ``<!-- readme-test: fragment (why) -->`` or ``output (what)``: not run, with the reason.

``nats://127.0.0.1:4222`` in a block that runs is replaced by the URL of a server the test
started, so no fixed port is taken. A block without a marker fails the README test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEV_URL", "README", "Block", "blocks", "runnable"]

README = Path(__file__).resolve().parent.parent / "README.md"
#: The address the README's examples use for a running server (``jsemu serve``'s default).
DEV_URL = "nats://127.0.0.1:4222"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!-- readme-test: (run|pytest|spark|fragment|output)\b\s*(.*?)\s*-->\s*\Z")
KINDS = ("run", "pytest", "spark")


@dataclass(frozen=True)
class Block:
    line: int
    lang: str
    code: str
    kind: str  # run, pytest, spark, fragment, output; "" when unmarked
    note: str

    def with_url(self, url: str) -> str:
        """The code with the dev server's address replaced by ``url``."""
        return self.code.replace(DEV_URL, url)

    @property
    def name(self) -> str:
        return f"README.md:{self.line}"


def blocks(text: str | None = None) -> list[Block]:
    text = README.read_text() if text is None else text
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        line = text.count("\n", 0, m.start()) + 1
        kind, note = (marker.group(1), marker.group(2)) if marker else ("", "")
        out.append(Block(line, m.group(1), m.group(2), kind, note))
    return out


def runnable(kind: str) -> list[Block]:
    return [b for b in blocks() if b.kind == kind]
