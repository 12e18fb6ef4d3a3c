"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a missing
anchor, a page left out of the navigation or a missing snippet fails it), and the built site
has the navigation and Material's search."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.doc_blocks import DOCS, ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs and mkdocs-material are not installed: pip install -e '.[docs]' (the test extra has them)",
)


def _nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def test_every_page_is_in_the_navigation_once() -> None:
    import yaml  # mkdocs brings it

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    assert sorted(nav) == sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    env["NO_MKDOCS_2_WARNING"] = "1"  # Material's banner about MkDocs 2, not a build warning
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    home = (site / "index.html").read_text()
    assert 'class="md-nav' in home and "md-search" in home  # Material's navigation and search box
    assert (site / "search" / "search_index.json").exists()
    control = (site / "reference" / "control-plane" / "index.html").read_text()
    assert 'id="advance_clock"' in control
    architecture = (site / "architecture" / "index.html").read_text()
    assert "Three walks, bytes to reply" in architecture  # jsemu/ARCHITECTURE.md, included
