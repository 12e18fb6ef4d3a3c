"""The endpoints that read their body with ``json.Unmarshal`` rather than the API's strict
decoder (``CONSUMER.UNPIN``, ``CONSUMER.RESET``) take exactly one JSON value: what follows
it is ``invalid character … after top-level value``, with Go's quoting of that character;
compared byte for byte with nats-server 2.15.1."""

from __future__ import annotations

import pytest
from support.pair import Pair

from .test_consumers import CREATE, _req, _stream_with

_TAILS = [b" x", b"{}", b'{"group":"A"}', b"]", b"\\", b"'", b"\x01", b"\x0b", b"\xc3\xa9", b"\xff", b"\xe2\x82"]


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [("CONSUMER.UNPIN.S.P", b'{"group":"A"}'), ("CONSUMER.RESET.S.P", b'{"seq":1}')],
    ids=["unpin", "reset"],
)
async def test_one_value_and_nothing_after_it(pair: Pair, endpoint: str, body: bytes) -> None:
    await _stream_with(pair, 1)
    cfg = {"durable_name": "P", "priority_policy": "pinned_client", "priority_groups": ["A"]}
    await pair.same(f"{CREATE}.P", _req(cfg))
    await pair.same(f"$JS.API.{endpoint}", body + b" \r\n\t")  # blanks after it are fine
    for tail in _TAILS:
        await pair.same(f"$JS.API.{endpoint}", body + tail)
