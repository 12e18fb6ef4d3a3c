"""The console in a real browser: headless Chromium opens ``/console`` of a jsemu filled by
the test and the test reads what the page shows: stream names and counts, a message's
payload found by subject, a consumer's pending count, the clock frozen after a click, a
live-tail line appearing after a publish.

A screenshot of each page goes to the test's ``tmp_path``; with ``JSEMU_WRITE_SCREENSHOTS=1``
also to ``docs/images/`` (the pictures of ``docs/guides/console.md``). Skipped when
Playwright or ``/usr/bin/chromium`` is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from support.chromium import launch_chromium

from jsemu import Server

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
TIMEOUT_MS = 15_000


async def _fill(url: str) -> None:
    nc = await nats.connect(url, name="shop")
    js = nc.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"], allow_direct=True)
    for i in range(30):
        region = ("eu", "us", "asia")[i % 3]
        await js.publish(
            f"orders.{region}", json.dumps({"order": i, "region": region}).encode(), headers={"Shop": "demo"}
        )
    await js.add_stream(name="AUDIT", subjects=["audit.>"])
    for i in range(7):
        await js.publish("audit.login", f"user{i} logged in".encode())
    sub = await js.pull_subscribe("orders.eu", durable="billing", stream="ORDERS")
    for msg in await sub.fetch(4):
        await msg.ack()
    kv = await js.create_key_value(bucket="settings", history=5)
    await kv.put("theme", b"dark")
    await kv.put("theme", b"light")
    await kv.put("lang", b"en")
    await nc.close()


def _publish(port: int, subject: str, payload: bytes) -> None:
    """One publish from a raw client (Playwright's sync API holds this thread's event loop)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"CONNECT {}\r\nPUB %s %d\r\n%s\r\nPING\r\n" % (subject.encode(), len(payload), payload))
        data = b""
        while b"PONG" not in data:
            chunk = sock.recv(4096)
            assert chunk, data
            data += chunk


@pytest.fixture(scope="module")
def filled() -> Iterator[Any]:
    threaded = Server.in_thread(jetstream=True, http_port=-1)
    try:
        asyncio.run(_fill(f"nats://127.0.0.1:{threaded.port}"))
        yield threaded
    finally:
        threaded.stop()


def _shot(page: Any, tmp_path: Path, name: str) -> None:
    page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
    if os.environ.get("JSEMU_WRITE_SCREENSHOTS") == "1":
        page.screenshot(path=str(DOCS_IMAGES / f"{name}.png"), full_page=False)


def test_the_console_shows_the_server_in_a_browser(filled: Any, tmp_path: Path) -> None:
    base = filled.monitor_urls[0]
    errors: list[str] = []
    with launch_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        page.goto(f"{base}/console")
        page.wait_for_selector("[data-test=clock-state]")
        assert page.inner_text("[data-test=clock-state]") == "running"
        _shot(page, tmp_path, "console-overview")

        # Streams: names and message counts.
        page.goto(f"{base}/console#/streams")
        page.wait_for_selector("[data-test=stream-name]")
        names = page.locator("[data-test=stream-name]").all_inner_texts()
        counts = page.locator("[data-test=stream-messages]").all_inner_texts()
        assert dict(zip(names, counts)) == {"AUDIT": "7", "KV_settings": "3", "ORDERS": "30"}
        _shot(page, tmp_path, "console-streams")

        # A stream: its consumer's pending count, and a message found by subject.
        page.click("[data-test=stream-name] >> text=ORDERS")
        page.wait_for_selector("[data-test=consumer-pending]")
        assert page.inner_text("[data-test=consumer-pending]") == "6"  # 10 on orders.eu, 4 delivered
        form = page.locator("[data-test=browse-form]")
        form.locator("select[name=mode]").select_option("last")
        form.locator("input[name=subject]").fill("orders.us")
        form.locator("select[name=view]").select_option("json")
        page.click("[data-test=browse]")
        page.wait_for_selector("[data-test=message-payload]")
        assert page.inner_text("[data-test=message-subject]") == "orders.us"
        assert json.loads(page.inner_text("[data-test=message-payload]")) == {"order": 28, "region": "us"}
        assert "Shop: demo" in page.inner_text("[data-test=message-headers]")
        _shot(page, tmp_path, "console-messages")

        # The control plane: freeze the clock with a click; the request it stands for is shown.
        page.goto(f"{base}/console#/control")
        page.wait_for_selector("[data-test=clock-state]")
        assert page.inner_text("[data-test=request-FREEZE_CLOCK]") == "$JSEMU.API.FREEZE_CLOCK {}"
        assert page.inner_text("[data-test=clock-state]") == "running"
        page.click("[data-test=do-FREEZE_CLOCK]")
        page.wait_for_selector("[data-test=clock-state]:text('frozen')")
        assert filled.server.account_jetstreams["$G"].clock.frozen
        _shot(page, tmp_path, "console-control")
        page.click("[data-test=do-RESUME_CLOCK]")
        page.wait_for_selector("[data-test=clock-state]:text('running')")

        # The live tail: a line appears after a publish.
        page.goto(f"{base}/console#/tail")
        page.fill("input[name=subject]", "orders.>")
        page.click("[data-test=tail-start]")
        page.wait_for_selector("[data-test=tail-status]:text('tailing orders.>')")
        _publish(filled.port, "orders.eu", b"fresh order")
        line = page.wait_for_selector("[data-test=tail-line]")
        assert line is not None and "orders.eu fresh order" in line.inner_text()
        _shot(page, tmp_path, "console-tail")
        page.close()
    assert errors == []


def test_a_server_with_accounts_shows_each_accounts_streams_and_why_it_shows_less(tmp_path: Path) -> None:
    from jsemu.config.server_config import load_config
    from jsemu.server.options import ServerOptions

    (tmp_path / "store").mkdir()
    conf = tmp_path / "server.conf"
    conf.write_text(
        f"jetstream {{ store_dir: {json.dumps(str(tmp_path / 'store'))} }}\nhttp_port: -1\n"
        "accounts { A: { jetstream: enabled, users: [{user: a, password: a}] },"
        " B: { jetstream: enabled, users: [{user: b, password: b}] } }\n"
    )
    threaded = Server.in_thread(load_config(conf, ServerOptions(port=0)))
    try:

        async def fill() -> None:
            for user in ("a", "b"):
                nc = await nats.connect(f"nats://127.0.0.1:{threaded.port}", user=user, password=user)
                await nc.jetstream().add_stream(name=f"S{user.upper()}", subjects=[f"{user}.>"], storage="memory")
                await nc.close()

        asyncio.run(fill())
        with launch_chromium() as browser:
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(f"{threaded.monitor_urls[0]}/console")
            assert "requires client authentication" in page.inner_text("[data-test=restricted]")
            page.wait_for_selector("[data-test=account]:not([hidden])")
            page.goto(f"{threaded.monitor_urls[0]}/console#/streams")
            page.wait_for_selector("[data-test=stream-name]")
            assert page.locator("[data-test=stream-name]").all_inner_texts() == ["SA"]
            page.select_option("[data-test=account]", "B")
            page.wait_for_selector("[data-test=stream-name]:text('SB')")
            assert page.locator("[data-test=stream-name]").all_inner_texts() == ["SB"]
            page.close()
    finally:
        threaded.stop()
