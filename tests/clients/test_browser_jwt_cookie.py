"""A real browser with ``jwt_cookie``: headless Chromium loads a page that sets the cookie
``jwt`` to a user JWT and connects with nats.js v3 over ``ws://`` without a JWT of its own, to
nats-server 2.15.1 and to jsemu in operator mode (``websocket { jwt_cookie: jwt }``). With the
user's seed (``nkeyAuthenticator`` signs the nonce) the page gets its message back; without
it, both servers refuse it the same way; a bearer user needs no signature.

Skipped, with the reason, when Playwright or ``/usr/bin/chromium`` is missing.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from support.cjs_bundle import bundle
from support.servers import KINDS, RealServer

from jsemu.testing.operator import OperatorSetup

from . import test_kv_nats_js as kv_nats_js
from .test_browser_nats_js import PACKAGES, _QuietHandler, browser, load_page, node

__all__ = ["browser", "node"]  # the module's fixtures, from the nats.js browser test

PAGE = Path(__file__).parent / "browser" / "cookie_page.html"
SETUP = OperatorSetup()
SETUP.account("APP")
USER = SETUP.user("u", "APP")
BEARER = SETUP.user("b", "APP", bearer_token=True)


@pytest.fixture(scope="module")
def cookie_site(tmp_path_factory: pytest.TempPathFactory, node: str) -> Iterator[str]:
    root = tmp_path_factory.mktemp("cookie-site")
    shutil.copy(PAGE, root / "cookie_page.html")
    (root / "nats-bundle.js").write_text(bundle(kv_nats_js.JS_DIR / "node_modules", PACKAGES, "NATS"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


CASES = {"signed": (USER, True), "unsigned": (USER, False), "bearer": (BEARER, False)}


@pytest.mark.asyncio(loop_scope="module")
async def test_browser_jwt_cookie_as_nats_server(browser: Any, cookie_site: str, tmp_path: Path) -> None:
    got: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        server = RealServer(
            conf_text=SETUP.config_text(),
            jetstream=False,
            websocket="port: -1, no_tls: true, jwt_cookie: jwt",
            jsemu_process=kind == "jsemu",
        )
        try:
            got[kind] = {}
            for name, (user, signed) in CASES.items():
                query = {"ws": server.ws_url, "jwt": user.jwt, **({"seed": user.seed} if signed else {})}
                url = f"{cookie_site}/cookie_page.html?{urlencode(query)}"
                got[kind][name] = await load_page(browser, url, tmp_path / f"{kind}-{name}.png")
        finally:
            server.stop()
    assert got["jsemu"] == got["real"]
    assert got["real"]["signed"] == {"echo": "hi"}
    assert got["real"]["bearer"] == {"echo": "hi"}
    assert "error" in got["real"]["unsigned"]
