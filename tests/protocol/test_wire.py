"""Byte-level behaviour of the core protocol, run against jsemu and the real nats-server.

Every expectation below was read off nats-server 2.15.1; both servers must produce it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.rawclient import RawClient

QUIET = {"verbose": False, "pedantic": False}
HDRS = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True}
UNKNOWN = b"-ERR 'Unknown Protocol Operation'\r\n"

# (connect options, bytes sent, frames expected before the PONG, closed afterwards)
CASES: dict[str, tuple[dict[str, Any] | bytes, bytes, list[bytes], bool]] = {
    "pub_sub": (QUIET, b"SUB foo 1\r\nPUB foo 5\r\nhello\r\n", [b"MSG foo 1 5\r\nhello\r\n"], False),
    "reply": (QUIET, b"SUB foo 1\r\nPUB foo bar 2\r\nhi\r\n", [b"MSG foo 1 bar 2\r\nhi\r\n"], False),
    "empty_payload": (QUIET, b"SUB foo 1\r\nPUB foo 0\r\n\r\n", [b"MSG foo 1 0\r\n\r\n"], False),
    "lowercase_ops": (QUIET, b"sub foo 1\r\npub foo 2\r\nhi\r\n", [b"MSG foo 1 2\r\nhi\r\n"], False),
    "tabs": (QUIET, b"SUB\tfoo\t1\r\nPUB\tfoo\t2\r\nhi\r\n", [b"MSG foo 1 2\r\nhi\r\n"], False),
    "extra_spaces": (QUIET, b"SUB   foo    1\r\nPUB  foo   2\r\nhi\r\n", [b"MSG foo 1 2\r\nhi\r\n"], False),
    "lf_only_control_line": (QUIET, b"SUB foo 1\nPUB foo 2\r\nhi\r\n", [b"MSG foo 1 2\r\nhi\r\n"], False),
    "lf_only_payload_end": (QUIET, b"SUB foo 1\nPUB foo 2\nhi\n", [UNKNOWN], True),
    "wildcards": (
        QUIET,
        b"SUB foo.* 1\r\nSUB foo.> 2\r\nSUB > 3\r\nPUB foo.bar 1\r\na\r\nPUB foo.bar.baz 1\r\nb\r\nPUB foo 1\r\nc\r\n",
        [
            b"MSG foo.bar 3 1\r\na\r\n",
            b"MSG foo.bar 2 1\r\na\r\n",
            b"MSG foo.bar 1 1\r\na\r\n",
            b"MSG foo.bar.baz 3 1\r\nb\r\n",
            b"MSG foo.bar.baz 2 1\r\nb\r\n",
            b"MSG foo 3 1\r\nc\r\n",
        ],
        False,
    ),
    "literal_star_token": (
        QUIET,
        b"SUB foo* 1\r\nPUB foo* 1\r\na\r\nPUB foox 1\r\nb\r\n",
        [b"MSG foo* 1 1\r\na\r\n"],
        False,
    ),
    "unsub": (QUIET, b"SUB foo 1\r\nUNSUB 1\r\nPUB foo 1\r\na\r\n", [], False),
    "unsub_max": (
        QUIET,
        b"SUB foo 1\r\nUNSUB 1 2\r\nPUB foo 1\r\na\r\nPUB foo 1\r\nb\r\nPUB foo 1\r\nc\r\n",
        [b"MSG foo 1 1\r\na\r\n", b"MSG foo 1 1\r\nb\r\n"],
        False,
    ),
    "unsub_max_already_reached": (
        QUIET,
        b"SUB foo 1\r\nPUB foo 1\r\na\r\nUNSUB 1 1\r\nPUB foo 1\r\nb\r\n",
        [b"MSG foo 1 1\r\na\r\n"],
        False,
    ),
    "unsub_bad_max_unsubscribes": (QUIET, b"SUB foo 1\r\nUNSUB 1 x\r\nPUB foo 1\r\na\r\n", [], False),
    "unsub_zero": (QUIET, b"SUB foo 1\r\nUNSUB 1 0\r\nPUB foo 1\r\nb\r\n", [], False),
    "unsub_unknown_sid": (QUIET, b"UNSUB 99\r\n", [], False),
    "duplicate_sid_ignored": (
        QUIET,
        b"SUB foo 1\r\nSUB bar 1\r\nPUB foo 1\r\na\r\nPUB bar 1\r\nb\r\n",
        [b"MSG foo 1 1\r\na\r\n"],
        False,
    ),
    "invalid_sub_subjects": (
        QUIET,
        b"SUB foo..bar 1\r\nSUB foo.>.bar 2\r\nSUB foo. 3\r\nSUB .foo 4\r\nSUB foo.*.> 5\r\nPUB foo.x.y 1\r\na\r\n",
        [b"-ERR 'Invalid Subject'\r\n"] * 4 + [b"MSG foo.x.y 5 1\r\na\r\n"],
        False,
    ),
    "sys_queue_forbidden": (
        QUIET,
        b"SUB foo _sys_ 1\r\n",
        [b'-ERR \'Permissions Violation for Subscription to "foo" using queue "_sys_"\'\r\n'],
        False,
    ),
    "queue_names_are_not_subjects": (
        QUIET,
        b"SUB foo q.* 1\r\nSUB foo q* 2\r\nPUB foo 1\r\na\r\n",
        [b"MSG foo 1 1\r\na\r\n", b"MSG foo 2 1\r\na\r\n"],
        False,
    ),
    "nrg_publish_forbidden": (
        QUIET,
        b"SUB > 1\r\nPUB $NRG.x 1\r\na\r\n",
        [b"-ERR 'Permissions Violation for Publish to \"$NRG.x\"'\r\n"],
        False,
    ),
    "reserved_replies": (
        QUIET,
        b"SUB > 1\r\nPUB foo _R_.x 1\r\na\r\nPUB foo $JS.ACK.a.b.c 1\r\na\r\n",
        [
            b"-ERR 'Permissions Violation for Publish with Reply of \"_R_.x\"'\r\n",
            b"-ERR 'Permissions Violation for Publish with Reply of \"$JS.ACK.a.b.c\"'\r\n",
        ],
        False,
    ),
    "wildcard_publish_not_pedantic": (
        QUIET,
        b"SUB foo.* 1\r\nPUB foo.* 1\r\na\r\n",
        [b"MSG foo.* 1 1\r\na\r\n"],
        False,
    ),
    "empty_token_publish_not_delivered": (QUIET, b"SUB > 1\r\nPUB foo..bar 1\r\na\r\nPUB .x 1\r\na\r\n", [], False),
    "pong_and_ok_ignore_rest_of_line": (
        QUIET,
        b"SUB foo 1\r\nPONG abc\r\n+OKzz\r\nPUB foo 1\r\na\r\n",
        [b"MSG foo 1 1\r\na\r\n"],
        False,
    ),
    "client_info_and_ok_ignored": (QUIET, b"INFO {}\r\n+OK\r\nPONG\r\n", [], False),
    # verbose and pedantic
    "defaults_are_verbose": (
        b"CONNECT {}\r\n",
        b"SUB foo 1\r\nPUB foo 1\r\na\r\nUNSUB 1\r\n",
        [b"+OK\r\n", b"+OK\r\n", b"+OK\r\n", b"MSG foo 1 1\r\na\r\n", b"+OK\r\n"],
        False,
    ),
    "verbose_bad_sub": (
        {"verbose": True},
        b"SUB foo..x 1\r\nUNSUB 9\r\n",
        [b"+OK\r\n", b"-ERR 'Invalid Subject'\r\n", b"+OK\r\n"],
        False,
    ),
    "no_connect_defaults": (
        None,
        b"SUB foo 1\r\nPUB foo 1\r\na\r\n",
        [b"+OK\r\n", b"+OK\r\n", b"MSG foo 1 1\r\na\r\n"],
        False,
    ),  # type: ignore[dict-item]
    "pedantic_publish": (
        {"pedantic": True, "verbose": False},
        b"SUB > 1\r\nPUB foo.* 1\r\na\r\nPUB foo..b 1\r\na\r\nPUB foo.> r 1\r\na\r\n",
        [
            b"-ERR 'Invalid Publish Subject'\r\n",
            b"MSG foo.* 1 1\r\na\r\n",
            b"-ERR 'Invalid Publish Subject'\r\n",
            b"-ERR 'Invalid Publish Subject'\r\n",
            b"MSG foo.> 1 r 1\r\na\r\n",
        ],
        False,
    ),
    "pedantic_verbose_order": (
        {"pedantic": True, "verbose": True},
        b"SUB > 1\r\nPUB foo.* 1\r\na\r\n",
        [b"+OK\r\n", b"+OK\r\n", b"-ERR 'Invalid Publish Subject'\r\n", b"+OK\r\n", b"MSG foo.* 1 1\r\na\r\n"],
        False,
    ),
    "pedantic_reply_not_checked": (
        {"pedantic": True, "verbose": False},
        b"SUB > 1\r\nPUB foo a.* 1\r\na\r\n",
        [b"MSG foo 1 a.* 1\r\na\r\n"],
        False,
    ),
    "connect_keys_case_insensitive": (b'CONNECT {"VERBOSE":false,"Pedantic":false}\r\n', b"SUB foo 1\r\n", [], False),
    # A second CONNECT decodes over the first one's options (verbose stays off) and drops
    # the connection's subscriptions.
    "second_connect_drops_subs": (QUIET, b"SUB foo 1\r\nCONNECT {}\r\nPUB foo 1\r\na\r\n", [], False),
    "second_connect_changes_options": (
        QUIET,
        b'CONNECT {"verbose":true}\r\nSUB foo 1\r\n',
        [b"+OK\r\n", b"+OK\r\n"],
        False,
    ),
    "echo_off": ({**QUIET, "echo": False}, b"SUB foo 1\r\nPUB foo 1\r\na\r\n", [], False),
    # headers
    "hpub": (
        HDRS,
        b"SUB foo 1\r\nHPUB foo 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n",
        [b"HMSG foo 1 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n"],
        False,
    ),
    "hpub_reply": (
        HDRS,
        b"SUB foo 1\r\nHPUB foo r 12 12\r\nNATS/1.0\r\n\r\n\r\n",
        [b"HMSG foo 1 r 12 12\r\nNATS/1.0\r\n\r\n\r\n"],
        False,
    ),
    "hpub_header_not_parsed": (
        HDRS,
        b"SUB foo 1\r\nHPUB foo 4 6\r\nabcdhi\r\n",
        [b"HMSG foo 1 4 6\r\nabcdhi\r\n"],
        False,
    ),
    "hpub_zero_header_is_msg": (HDRS, b"SUB foo 1\r\nHPUB foo 0 2\r\nab\r\n", [b"MSG foo 1 2\r\nab\r\n"], False),
    "hpub_without_headers_closes": (QUIET, b"HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n", [], True),
    "hpub_header_larger_than_total": (HDRS, b"HPUB foo 22 10\r\n", [], True),
    "hmsg_from_client": ({**HDRS, "verbose": True}, b"HMSG foo 1 0 0\r\n\r\n", [b"+OK\r\n", b"+OK\r\n"], False),
    # no responders
    "no_responders": (
        HDRS,
        b"SUB _INBOX.x 1\r\nPUB nobody _INBOX.x 2\r\nhi\r\n",
        [b"HMSG _INBOX.x 1 38 38\r\nNATS/1.0 503\r\nNats-Subject: nobody\r\n\r\n\r\n"],
        False,
    ),
    "no_responders_wildcard_inbox": (
        HDRS,
        b"SUB _INBOX.* 7\r\nPUB svc.a _INBOX.x 2\r\nhi\r\n",
        [b"HMSG _INBOX.x 7 37 37\r\nNATS/1.0 503\r\nNats-Subject: svc.a\r\n\r\n\r\n"],
        False,
    ),
    "no_responders_echo_off": (
        {**HDRS, "echo": False},
        b"SUB foo 1\r\nPUB foo foo 1\r\na\r\n",
        [b"HMSG foo 1 35 35\r\nNATS/1.0 503\r\nNats-Subject: foo\r\n\r\n\r\n"],
        False,
    ),
    "no_responders_needs_inbox_sub": (HDRS, b"PUB nobody _INBOX.x 2\r\nhi\r\n", [], False),
    "no_responders_not_asked": (QUIET, b"SUB _INBOX.x 1\r\nPUB nobody _INBOX.x 2\r\nhi\r\n", [], False),
    # errors that close the connection
    "unknown_op": (QUIET, b"FOO\r\n", [UNKNOWN], True),
    "unknown_op_no_newline": (QUIET, b"PUX", [UNKNOWN], True),
    "empty_line": (QUIET, b"\r\n", [UNKNOWN], True),
    "msg_from_client": (QUIET, b"MSG foo 1 1\r\na\r\n", [UNKNOWN], True),
    "unsub_without_args": (QUIET, b"UNSUB\r\n", [UNKNOWN], True),
    "payload_longer_than_size": (QUIET, b"PUB foo 3\r\nhello\r\n", [UNKNOWN], True),
    "payload_shorter_than_size": (QUIET, b"SUB foo 1\r\nPUB foo 5\r\nhi\r\nPING\r\n", [UNKNOWN], True),
    "pub_missing_size": (QUIET, b"PUB foo\r\n", [], True),
    "pub_too_many_args": (QUIET, b"PUB foo bar 5 6\r\n", [], True),
    "pub_bad_size": (QUIET, b"PUB foo abc\r\nxx\r\n", [], True),
    "pub_negative_size": (QUIET, b"PUB foo -1\r\n", [], True),
    "pub_size_ten_digits": (QUIET, b"PUB foo 0000000001\r\na\r\n", [], True),
    "sub_missing_sid": (QUIET, b"SUB foo\r\n", [], True),
    "sub_too_many_args": (QUIET, b"SUB foo q 1 2\r\n", [], True),
    "client_err_closes": (QUIET, b"-ERR 'foo'\r\n", [], True),
    "max_payload": (QUIET, b"PUB foo 2000000\r\n", [b"-ERR 'Maximum Payload Violation'\r\n"], True),
    "hpub_max_payload": (HDRS, b"HPUB foo 12 1048577\r\n", [b"-ERR 'Maximum Payload Violation'\r\n"], True),
    "control_line_4096_ok": (QUIET, b"SUB " + b"a" * 4094 + b" 1\r\n", [], False),
    "control_line_4097": (
        QUIET,
        b"SUB " + b"a" * 4095 + b" 1\r\n",
        [b"-ERR 'maximum control line exceeded'\r\n"],
        True,
    ),
    "control_line_no_newline": (QUIET, b"SUB " + b"a" * 5000, [b"-ERR 'maximum control line exceeded'\r\n"], True),
    "connect_bad_json": (b"CONNECT {bad\r\n", b"", [], True),
    "connect_wrong_type": (b'CONNECT {"verbose":"yes"}\r\n', b"", [], True),
    "connect_trailing_garbage": (b'CONNECT {"verbose":false} x\r\n', b"", [], True),
    "connect_account": (
        b'CONNECT {"verbose":false,"account":"A"}\r\n',
        b"",
        [b"-ERR 'Authorization Violation'\r\n"],
        True,
    ),
    "connect_protocol_2": ({"protocol": 2}, b"", [b"-ERR 'invalid client protocol'\r\n"], True),
    "connect_protocol_negative": ({"protocol": -1}, b"", [b"-ERR 'invalid client protocol'\r\n"], True),
    "no_responders_without_headers": (
        {"no_responders": True},
        b"",
        [b"-ERR 'no responders requires headers support'\r\n"],
        True,
    ),
    "ops_before_error_are_answered": (
        QUIET,
        b"SUB foo 1\r\nPUB foo 1\r\na\r\nBAD\r\n",
        [b"MSG foo 1 1\r\na\r\n", UNKNOWN],
        True,
    ),
}


# Cases whose frames come from one trie node holding several queue groups or several
# subscriptions: nats-server keeps those in a Go map, so their order is random there.
UNORDERED = {"queue_names_are_not_subjects"}


@pytest.mark.parametrize("case", list(CASES))
async def test_wire_case(server, case: str) -> None:
    connect, data, expected, closed = CASES[case]
    client = await RawClient.connect(server.port, connect)
    try:
        frames = await client.exchange(data)
        if closed:
            frames += await client.read_until_closed()
        if case in UNORDERED:
            assert sorted(frames) == sorted(expected)
        else:
            assert frames == expected
        assert client.eof == closed
    finally:
        await client.close()


async def test_queue_group_delivers_to_one_member(server) -> None:
    client = await RawClient.connect(server.port, QUIET)
    frames = await client.exchange(b"SUB foo q 1\r\nSUB foo q 2\r\nSUB foo 3\r\n" + b"PUB foo 1\r\na\r\n" * 50)
    # Per publish: the plain subscriber first, then exactly one queue member.
    plain, queued = frames[0::2], frames[1::2]
    assert len(frames) == 100
    assert all(f == b"MSG foo 3 1\r\na\r\n" for f in plain), plain
    assert all(f in (b"MSG foo 1 1\r\na\r\n", b"MSG foo 2 1\r\na\r\n") for f in queued), queued
    assert {f.split()[2] for f in queued} == {b"1", b"2"}  # both members get some
    await client.close()


async def test_queue_group_across_connections(server) -> None:
    members = [await RawClient.connect(server.port, QUIET) for _ in range(3)]
    for m in members:
        await m.exchange(b"SUB work workers 1\r\n")
    pub = await RawClient.connect(server.port, QUIET)
    await pub.exchange(b"PUB work 1\r\nx\r\n" * 30)
    counts = [len(await m.exchange()) for m in members]
    assert sum(counts) == 30
    for c in [*members, pub]:
        await c.close()


async def test_headers_stripped_for_client_without_headers(server) -> None:
    old = await RawClient.connect(server.port, QUIET)
    await old.exchange(b"SUB foo 1\r\n")
    new = await RawClient.connect(server.port, HDRS)
    await new.exchange(b"HPUB foo 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n")
    assert await old.exchange() == [b"MSG foo 1 2\r\nhi\r\n"]
    await old.close()
    await new.close()


async def test_info_fields(server) -> None:
    client = await RawClient.connect(server.port)
    info = client.info
    assert list(info)[:10] == [
        "server_id",
        "server_name",
        "version",
        "proto",
        "git_commit",
        "go",
        "host",
        "port",
        "headers",
        "max_payload",
    ]
    assert info["version"] == "2.15.1"
    assert info["proto"] == 1 and info["headers"] is True and info["max_payload"] == 1048576
    assert info["jetstream"] is True
    assert info["port"] == server.port
    assert info["client_ip"] == "127.0.0.1"
    assert isinstance(info["client_id"], int)
    assert info["api_lvl"] == 5
    assert len(info["server_id"]) == 56 and info["server_id"][0] == "N"
    assert len(info["xkey"]) == 56 and info["xkey"][0] == "X"
    assert list(info)[-3:] == ["client_ip", "api_lvl", "xkey"]
    assert info["server_name"] == info["server_id"]  # no name given: nats-server names itself by its id
    await client.close()


async def test_async_info_after_first_pong(server) -> None:
    client = await RawClient.connect(server.port, {**QUIET, "protocol": 1})
    assert await client.exchange() == []
    frame = await client.next_frame()
    assert frame is not None and frame.startswith(b"INFO ") and frame.endswith(b"} \r\n")
    info = json.loads(frame[5:])
    assert info["connect_info"] is True and info["remote_account"] == "$G"
    assert list(info)[-5:] == ["client_ip", "connect_info", "remote_account", "api_lvl", "xkey"]
    # Only after the first PING.
    assert await client.exchange() == []
    assert await client.next_frame(0.3) is None
    await client.close()


async def test_no_async_info_for_protocol_zero(server) -> None:
    client = await RawClient.connect(server.port, QUIET)
    assert await client.exchange() == []
    assert await client.next_frame(0.3) is None
    await client.close()


async def test_split_writes_anywhere(server) -> None:
    client = await RawClient.connect(server.port, HDRS)
    data = (
        b"SUB foo 1\r\nPUB foo r 5\r\nhello\r\nHPUB foo 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n"
        + b"PUB foo 3\r\n\r\n\n\r\n"
    )
    import asyncio

    for i in range(len(data)):
        client.send(data[i : i + 1])
        await client.writer.drain()
        if i % 7 == 0:
            await asyncio.sleep(0)
    frames = await client.exchange()
    assert frames == [
        b"MSG foo 1 r 5\r\nhello\r\n",
        b"HMSG foo 1 18 20\r\nNATS/1.0\r\nA: b\r\n\r\nhi\r\n",
        b"MSG foo 1 3\r\n\r\n\n\r\n",
    ]
    await client.close()


async def test_payload_at_max(server) -> None:
    client = await RawClient.connect(server.port, QUIET)
    payload = b"x" * 1048576
    frames = await client.exchange(b"SUB foo 1\r\nPUB foo 1048576\r\n" + payload + b"\r\n")
    assert frames == [b"MSG foo 1 1048576\r\n" + payload + b"\r\n"]
    await client.close()


async def test_configured_max_payload(server_factory) -> None:
    srv = await server_factory(max_payload=100)
    client = await RawClient.connect(srv.port, QUIET)
    assert client.info["max_payload"] == 100
    frames = await client.exchange(b"SUB foo 1\r\nPUB foo 100\r\n" + b"x" * 100 + b"\r\nPUB foo 101\r\n")
    frames += await client.read_until_closed()
    assert frames == [b"MSG foo 1 100\r\n" + b"x" * 100 + b"\r\n", b"-ERR 'Maximum Payload Violation'\r\n"]


async def test_configured_max_payload_hpub(server_factory) -> None:
    """The limit counts header and payload of an HPUB together: exactly max_payload passes."""
    srv = await server_factory(max_payload=100)
    client = await RawClient.connect(srv.port, HDRS)
    hdr = b"NATS/1.0\r\nA: b\r\n\r\n"
    body = b"x" * (100 - len(hdr))
    frames = await client.exchange(
        b"SUB foo 1\r\nHPUB foo %d 100\r\n%s%s\r\nHPUB foo %d 101\r\n" % (len(hdr), hdr, body, len(hdr))
    )
    frames += await client.read_until_closed()
    assert frames == [b"HMSG foo 1 %d 100\r\n%s%s\r\n" % (len(hdr), hdr, body), b"-ERR 'Maximum Payload Violation'\r\n"]
    await client.close()


async def test_ping_ignores_rest_of_line(server) -> None:
    client = await RawClient.connect(server.port, QUIET)
    client.send(b"PINGxyz garbage\r\n")
    assert await client.next_frame() == b"PONG\r\n"
    assert await client.exchange() == []
    await client.close()
