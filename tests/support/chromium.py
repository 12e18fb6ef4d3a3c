"""Headless Chromium for tests that open a page: Debian's ``/usr/bin/chromium`` driven by
Playwright (``.ci/run`` installs both). ``launch_chromium`` skips the test, with the reason,
when either is missing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"


@contextmanager
def launch_chromium() -> Iterator[Any]:
    """A headless Chromium browser (Playwright's sync API), closed on exit."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (the test extra)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: apt-get install chromium (.ci/run does)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            browser.close()
