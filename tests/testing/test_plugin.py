"""The pytest plugin, run the way users run it: a test file in a fresh pytest session
(``pytester``) that only asks for the fixtures, with the plugin found by its entry point."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""


def test_async_server_url_and_nats_py(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        """
        import nats

        async def test_publish_and_get(jsemu_server, jsemu_url):
            assert jsemu_url == jsemu_server.url
            nc = await nats.connect(jsemu_url)
            js = nc.jetstream()
            await js.add_stream(name="S", subjects=["s.>"], allow_direct=True)
            await js.publish("s.a", b"hello")
            msg = await js.get_last_msg("S", "s.a", direct=True)
            assert msg.data == b"hello"
            await nc.close()

        async def test_fresh_server_per_test(jsemu_server):
            assert jsemu_server.jetstream.streams == {}
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_factory_precreates_and_freezes(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        """
        import nats

        T0 = 1_800_000_000_000_000_000

        async def test_factory(jsemu_factory):
            srv = await jsemu_factory(
                streams=[{"name": "ORDERS", "subjects": ["orders.>"], "storage": "memory"}],
                kv=["config", {"bucket": "profiles", "history": 5}],
                frozen_clock=T0,
                cluster_size=3,
                seed=7,
            )
            nc = await nats.connect(srv.url)
            js = nc.jetstream()
            info = await js.stream_info("ORDERS")
            assert info.config.subjects == ["orders.>"]
            kv = await js.key_value("profiles")
            await kv.put("joe", b"1")
            await kv.put("joe", b"2")
            assert (await kv.get("joe")).value == b"2"
            first = await js.get_msg("KV_profiles", seq=1, direct=True)
            assert first.data == b"1"  # history 5 kept the first value
            assert (await js.stream_info("KV_config")).config.max_msgs_per_subject == 1
            assert srv.control.now() == T0
            await nc.close()

        async def test_bad_stream_config_fails_loudly(jsemu_factory):
            try:
                await jsemu_factory(streams=[{"name": "S", "max_age": -1}])
            except ValueError as exc:
                assert str(exc) == "can not create stream 'S': max age can not be negative"
            else:
                raise AssertionError("expected ValueError")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_thread_server_for_sync_tests_and_reset(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        """
        import json, socket
        from jsemu.testing.plugin import prepare_server, reset_server

        def request(port, subject, payload=b""):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.recv(4096)
            sock.sendall(b'CONNECT {"verbose":false,"headers":true}\\r\\nSUB _INBOX.x 1\\r\\n')
            sock.sendall(b"PUB %s _INBOX.x %d\\r\\n%s\\r\\nPING\\r\\n" % (subject.encode(), len(payload), payload))
            data = b""
            while b"PONG" not in data.partition(b"MSG _INBOX.x")[2]:
                data += sock.recv(65536)
            sock.close()
            lines = data.partition(b"MSG _INBOX.x")[2].split(b"\\r\\n")
            return json.loads(lines[1])

        def test_sync(jsemu_thread_server):
            srv = jsemu_thread_server
            srv.call(prepare_server, srv.server, streams=[{"name": "S", "subjects": ["s"]}])
            assert request(srv.port, "$JS.API.STREAM.NAMES")["streams"] == ["S"]
            srv.control.freeze_clock(5_000_000_000)
            assert srv.control.now() == 5_000_000_000
            srv.call(reset_server, srv.server)
            assert request(srv.port, "$JS.API.STREAM.NAMES")["streams"] is None
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_failed_test_shows_what_the_server_saw(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        """
        import nats

        async def test_fails(jsemu_server):
            nc = await nats.connect(jsemu_server.url)
            await nc.request("$JS.API.STREAM.INFO.MISSING", b"", timeout=1)
            await nc.publish("orders.new", b"first order")
            await nc.flush()
            await nc.close()
            assert False, "on purpose"

        async def test_passes(jsemu_server):
            nc = await nats.connect(jsemu_server.url)
            await nc.publish("quiet", b"nothing to see")
            await nc.close()
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*jsemu server trace: nats://127.0.0.1:*",
            "cid=* CONNECT {*",
            "API $JS.API.STREAM.INFO.MISSING  -> *stream not found*",
            "cid=* PUB orders.new 11: first order",
        ]
    )
    assert "nothing to see" not in result.stdout.str()
    quiet = pytester.runpytest("-p", "no:cacheprovider", "--jsemu-trace", "0")
    assert "jsemu server trace" not in quiet.stdout.str()
