"""The code blocks of README.md and of the documentation site (``docs/**/*.md``), as the
documentation tests run them.

Each fenced block carries a marker on the line before it, which says how it is checked
(``readme-test`` in README.md, ``doc-test`` in the site's pages; either name works anywhere):

* ``<!-- doc-test: run -->``: a Python script, run as written (``tests/docs/test_blocks.py``);
* ``<!-- doc-test: pytest -->``: a test module, run by pytest in an empty directory;
* ``<!-- doc-test: spark -->``: run by ``tests/pipeline/test_pipeline.py`` in its Spark session;
* ``<!-- doc-test: standalone -->``: run by ``tests/pipeline_standalone`` on its Spark standalone cluster;
* ``<!-- doc-test: fragment (why) -->`` or ``output (what)``: not run, with the reason.

``nats://127.0.0.1:4222`` in a block that runs is replaced by the URL of a server the test
started, so no fixed port is taken. A block without a marker fails the documentation tests,
and so does a fence the parser does not see as a block (an indented one, say), so no example
escapes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEV_URL", "DOCS", "KINDS", "README", "ROOT", "Block", "all_blocks", "blocks", "pages", "runnable"]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: The documentation site's sources (``mkdocs.yml`` at the top level builds them).
DOCS = ROOT / "docs"
#: The address the examples use for a running server (``jsemu serve``'s default).
DEV_URL = "nats://127.0.0.1:4222"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!-- (?:readme|doc)-test: (run|pytest|spark|standalone|fragment|output)\b\s*(.*?)\s*-->\s*\Z")
#: Fence lines the block pattern must account for (two per block).
FENCE_LINE = re.compile(r"^\s*```", re.MULTILINE)
KINDS = ("run", "pytest", "spark", "standalone")


@dataclass(frozen=True)
class Block:
    page: str  # the file, relative to the repository's top
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
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """README.md, then every page of the site in path order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def blocks(text: str | None = None, page: Path = README) -> list[Block]:
    """The fenced blocks of ``page`` (or of ``text``, named after ``page``)."""
    text = page.read_text() if text is None else text
    name = page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        line = text.count("\n", 0, m.start()) + 1
        kind, note = (marker.group(1), marker.group(2)) if marker else ("", "")
        out.append(Block(name, line, m.group(1), m.group(2), kind, note))
    return out


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page=page)]


def runnable(kind: str) -> list[Block]:
    return [b for b in all_blocks() if b.kind == kind]
