"""A real browser: headless Chromium (Debian's ``chromium``, driven by Playwright) loads a page
that uses the official nats.js v3 client over ``ws://``, and gets the same result from jsemu as
from nats-server 2.15.1.

``browser/page.html`` with the CommonJS packages of ``js/node_modules`` bundled into one script
(``support.cjs_bundle``) is served by a local ``http.server``. Against a server started with the
harnesses' ``websocket { port: -1, no_tls: true }`` block, the test (nats-py over TCP) puts a KV
key, subscribes and answers requests; the page subscribes and publishes to itself, publishes to
the TCP client, requests from it, reads the KV key and puts another, and shows its result in
``<pre id="result">`` / ``window.result``. A screenshot of each page is kept under the test's
``tmp_path`` (its path is printed, and recorded as the ``screenshot`` property).

One browser for the module. Skipped, with the reason, when Playwright or ``/usr/bin/chromium``
is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
import pytest_asyncio
from support.cjs_bundle import bundle

from . import test_kv_nats_js as kv_nats_js
from .test_websocket_nats_js import WS_KINDS, websocket_server

PAGE = Path(__file__).parent / "browser" / "page.html"
PACKAGES = ["@nats-io/nats-core", "@nats-io/jetstream", "@nats-io/kv"]
CHROMIUM = "/usr/bin/chromium"
NAME = "BROWSER1"
PAGE_TIMEOUT_MS = 20_000

#: What the page and the TCP side see, on either server (no ids, no timestamps).
EXPECTED: dict[str, Any] = {
    "page": {
        "info": {"headers": True, "jetstream": True, "proto": 1, "port_is_ws_port": True},
        "echo": {"subject": "browser1.echo", "data": "hi", "headers": {"X-From": ["browser"]}},
        "request": "pong:ping",
        "kv_get": {"key": "greeting", "value": "hello from tcp", "revision": 1, "operation": "PUT"},
        "kv_put": 2,
        "closed": None,
    },
    "tcp": {"from_page": "hello from the browser", "kv_from_browser": "yes"},
}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, node: str) -> Iterator[str]:
    """The page and its bundled client, served on a loopback port: the site's base URL."""
    root = tmp_path_factory.mktemp("site")
    shutil.copy(PAGE, root / "page.html")
    (root / "nats-bundle.js").write_text(bundle(kv_nats_js.JS_DIR / "node_modules", PACKAGES, "NATS"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


#: The session fixture of the ``node`` executable (``npm ci`` on first use): the bundle's packages.
node = kv_nats_js.node


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    """Headless Chromium, launched once for the module."""
    async_api = pytest.importorskip("playwright.async_api", reason="playwright not installed (the test extra)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} missing: apt-get install chromium (.ci/run does)")
    async with async_api.async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        await chromium.close()


async def run_page(browser: Any, site: str, kind: str, shot: Path) -> dict[str, Any]:
    """Start a ``kind`` server, prepare the TCP side, load the page against its ``ws://`` port."""
    srv = websocket_server(kind)
    try:
        nc = await nats.connect(f"nats://127.0.0.1:{srv.port}")
        try:
            kv = await nc.jetstream().create_key_value(bucket=f"KV{NAME}")
            await kv.put("greeting", b"hello from tcp")
            from_page = await nc.subscribe(f"{NAME.lower()}.from_page", max_msgs=1)

            async def pong(msg: Any) -> None:
                await msg.respond(b"pong:" + msg.data)

            await nc.subscribe(f"{NAME.lower()}.svc", cb=pong)
            await nc.flush()
            page_result = await load_page(browser, f"{site}/page.html?ws={srv.ws_url}&name={NAME}", shot)
            tcp: dict[str, Any] = {}
            if "error" not in page_result:
                tcp["from_page"] = (await from_page.next_msg(timeout=5)).data.decode()
                tcp["kv_from_browser"] = (await kv.get("from_browser")).value.decode()  # type: ignore[union-attr]
            return {"page": page_result, "tcp": tcp}
        finally:
            await nc.close()
    finally:
        srv.stop()


async def load_page(browser: Any, url: str, shot: Path) -> dict[str, Any]:
    """The page's ``window.result``, after a screenshot; the browser's console errors on a timeout."""
    from playwright.async_api import Error as PlaywrightError  # there when ``browser`` is

    page = await browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    try:
        await page.goto(url)
        try:
            await page.wait_for_function("window.result !== undefined", timeout=PAGE_TIMEOUT_MS)
        finally:
            await page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}")
        result: dict[str, Any] = await page.evaluate("window.result")
        return result
    except PlaywrightError as exc:
        pytest.fail(f"the page at {url} did not finish: {exc}\n" + "\n".join(problems), pytrace=False)
    finally:
        await page.close()


#: The run against nats-server, shared by the module's tests.
_REAL: dict[str, dict[str, Any]] = {}
_REAL_SHOT: dict[str, Path] = {}


async def real_result(browser: Any, site: str, shot: Path) -> dict[str, Any]:
    """nats-server's result, run once per module: a later caller gets a copy of its screenshot."""
    if "real" not in _REAL:
        _REAL["real"] = await run_page(browser, site, "real", shot)
        _REAL_SHOT["real"] = shot
    elif _REAL_SHOT["real"] != shot:
        shutil.copyfile(_REAL_SHOT["real"], shot)
    return _REAL["real"]


@pytest.mark.asyncio(loop_scope="module")  # the loop of the module's browser
@pytest.mark.parametrize("kind", WS_KINDS)
async def test_browser_page(
    browser: Any, site: str, kind: str, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """The page's result and what the TCP side saw: as expected on nats-server, and the same
    on jsemu as on nats-server."""
    shot = tmp_path / f"page-{kind}.png"
    record_property("screenshot", str(shot))
    if kind == "real":
        got = await real_result(browser, site, shot)
    else:
        got = await run_page(browser, site, kind, shot)
        assert got == await real_result(browser, site, tmp_path / "page-real.png"), "jsemu differs from nats-server"
    assert got == EXPECTED
    assert shot.stat().st_size > 0


def test_bundle_exports_the_client() -> None:
    """The bundle holds the three packages' entry modules and leaves out only what Node alone
    reaches (``crypto`` of tweetnacl, when ``self.crypto`` is absent)."""
    script = bundle(kv_nats_js.JS_DIR / "node_modules", PACKAGES, "NATS")
    for module in ("@nats-io/nats-core/lib/ws_transport.js", "@nats-io/kv/lib/kv.js", "tweetnacl/nacl-fast.js"):
        assert f'"{module}": function (module, exports, require)' in script
    assert "sourceMappingURL" not in script
    assert "@nats-io/transport-node" not in script
