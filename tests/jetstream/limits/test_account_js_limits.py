"""Per-account JetStream limits side by side with nats-server 2.15.1, the same file given to
both: ``accounts { A: { jetstream: { max_mem, max_file, max_streams, max_consumers,
max_ack_pending, max_bytes_required, memory_max_stream_bytes, ... } } }`` and the server's
``jetstream { max_mem, max_file }``. Each limit's error in the server's order (10113, 10122,
10027, 10026, 10028 / 10047 at create and update, 10121 and the capped default of a
consumer's ``max_ack_pending``, 10023 then 10002 at publish), ``$JS.API.INFO``'s ``limits``
and usage, the parse errors of the account's ``jetstream`` block, and the start-up refusal
when the accounts' limits do not fit the server's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from config.test_cli_errors import _assert_one_line, _fatal, _jsemu, _real
from server.test_auth import Pair, _RealWithConfig
from support.rawclient import RawClient

import jsemu
from jsemu.cli import build_parser, serve_options
from jsemu.config.server_config import load_config
from jsemu.config.startup_errors import StartupError

_CONNECT = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}

CONF = """
jetstream {{ store_dir: "{store}", max_mem: 3000, max_file: 100000 }}
accounts {{
  A: {{
    users: [ {{user: a, password: a}} ]
    jetstream: {{ max_mem: 1000, max_streams: 3, max_consumers: 2, max_ack_pending: 5,
                 max_bytes_required: true, mem_max_stream_bytes: 700 }}
  }}
  B: {{ users: [ {{user: b, password: b}} ], jetstream: enabled }}
  C: {{ users: [ {{user: c, password: c}} ], jetstream: {{ MAX_MEM: 400, Disk: 2000, streams: 2 }} }}
}}
"""


async def _pair(tmp_path: Path, text: str) -> AsyncIterator[Pair]:
    conf = tmp_path / "server.conf"
    conf.write_text(text.format(store=tmp_path / "real-store"))
    real = _RealWithConfig(conf)
    options = jsemu.ServerOptions()
    load_config(conf, options)
    options.host, options.port, options.store_dir = "127.0.0.1", 0, None
    emu = jsemu.Server(options)
    await emu.start()
    try:
        yield Pair(real, real.port, emu)
    finally:
        await emu.stop()
        real.stop()


class Session:
    """One user's connection: requests answered on ``_INBOX.r``."""

    def __init__(self, client: RawClient) -> None:
        self.client = client

    @classmethod
    async def login(cls, port: int, user: str) -> Session:
        client = await RawClient.connect(port, {**_CONNECT, "user": user, "pass": user})
        client.send(b"SUB _INBOX.r 1\r\n")
        frames = await client.exchange()
        assert not client.eof, frames
        return cls(client)

    async def request(self, subject: str, body: Any = b"") -> dict[str, Any]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.client.send(f"PUB {subject} _INBOX.r {len(data)}\r\n".encode() + data + b"\r\n")
        while True:
            frame = await self.client.next_frame(5.0)
            assert frame is not None, f"no answer to {subject}"
            if frame.startswith((b"MSG ", b"HMSG ")):
                answer: dict[str, Any] = json.loads(frame.split(b"\r\n", 1)[1])
                return answer


def _brief(answer: dict[str, Any]) -> Any:
    """The error, or what the limits decide in an answer (names and times left out)."""
    if "error" in answer:
        return answer["error"]
    config = answer.get("config", {})
    keys = ("max_bytes", "max_consumers", "max_ack_pending", "storage")
    return {"seq": answer.get("seq"), **{k: config[k] for k in keys if k in config}}


def _info(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "api"}


def _stream(name: str, storage: str = "memory", **more: Any) -> tuple[str, dict[str, Any]]:
    return f"$JS.API.STREAM.CREATE.{name}", {"name": name, "subjects": [name.lower()], "storage": storage, **more}


def _consumer(stream: str, **config: Any) -> tuple[str, dict[str, Any]]:
    return f"$JS.API.CONSUMER.CREATE.{stream}", {"stream_name": stream, "config": {"ack_policy": "explicit", **config}}


# (user, subject, body): run in order on each server.
SCRIPT: list[tuple[str, str, Any]] = [
    ("a", "$JS.API.INFO", b""),
    ("b", "$JS.API.INFO", b""),
    ("c", "$JS.API.INFO", b""),
    ("a", *_stream("S1")),  # 10113: max_bytes required
    ("a", *_stream("S1", max_bytes=800)),  # 10122: over memory_max_stream_bytes
    ("a", *_stream("S1", max_bytes=600, max_consumers=5)),  # 10026: more consumers than the account's
    ("a", *_stream("S1", max_bytes=600)),
    ("a", *_stream("S1", max_bytes=600)),  # the same again: not counted twice by the account
    ("a", *_stream("S2", max_bytes=500)),  # 10028: 600 + 500 > 1000
    ("a", *_stream("S2", max_bytes=400, max_consumers=1)),
    ("a", *_stream("S3", storage="file", max_bytes=99000)),  # the account has no file limit
    ("a", *_stream("S4", max_bytes=10)),  # 10027: three streams already
    ("a", *_stream("S2", max_bytes=300)),  # 10058 after the limits
    ("a", *_consumer("S1")),  # max_ack_pending defaults to the account's 5
    ("a", *_consumer("S1", max_ack_pending=4)),
    ("a", *_consumer("S1")),  # 10026: per stream, the account's 2
    ("a", *_consumer("S2")),
    ("a", *_consumer("S2")),  # 10026: the stream's own 1
    ("a", *_consumer("S3", max_ack_pending=6)),  # 10121: over the account's 5
    ("a", "s1", b"x" * 300),
    ("a", "s1", b"x" * 300),  # S1 keeps one (max_bytes 600)
    ("a", "s2", b"x" * 300),
    ("a", "s2", b"x" * 300),  # 954 <= 1000; the account's 700 per stream is not checked at publish
    ("a", "$JS.API.STREAM.UPDATE.S1", {"name": "S1", "subjects": ["s1"], "storage": "memory", "max_bytes": 700}),
    ("a", "$JS.API.STREAM.UPDATE.S1", {"name": "S1", "subjects": ["s1"], "storage": "memory", "max_bytes": 701}),
    (
        "a",
        "$JS.API.STREAM.UPDATE.S2",
        {"name": "S2", "subjects": ["s2"], "storage": "memory", "max_bytes": 400, "max_consumers": 3},
    ),  # 10026 on update
    ("a", "$JS.API.INFO", b""),
    # B has no limits of its own: the server's hold, over every account's reservations.
    ("b", *_stream("T1", max_bytes=1500)),
    ("b", *_stream("T2", max_bytes=1500)),  # 10028: 1000 (A) + 1500 + 1500 > 3000
    ("b", *_stream("T2")),
    ("b", *_stream("T3", storage="file", max_bytes=1001)),  # 10047: 99000 (A) + 1001 > 100000
    ("b", *_stream("T3", storage="file", max_bytes=1000)),
    ("b", *_stream("T3", storage="file", max_bytes=1000)),  # the same again: 10047, the server counts it twice
    ("b", "$JS.API.STREAM.UPDATE.T1", {"name": "T1", "subjects": ["t1"], "storage": "memory", "max_bytes": 1900}),
    # C: aliases in any case; its memory is what its streams hold, the message counted in.
    ("c", *_stream("U1", storage="file")),  # 10047: the server's file storage is all reserved
    ("c", *_stream("U1")),
    ("c", *_stream("U2", max_bytes=500)),  # 10028: over C's 400
    ("c", *_stream("U2", max_bytes=99)),  # 10028: the server's 3000 are reserved
    ("c", "u1", b"z" * 300),
    ("c", "u1", b"z" * 300),  # 10002: 318 + 318 > 400
    *[("b", "t2", b"y" * 400) for _ in range(8)],  # 10023 once the server's memory holds more than 3000
    ("c", "u1", b"z" * 300),  # 10023 (the server's) before C's own 10002
    ("a", "$JS.API.INFO", b""),
    ("b", "$JS.API.INFO", b""),
    ("c", "$JS.API.INFO", b""),
]


async def _run(port: int) -> list[Any]:
    sessions = {user: await Session.login(port, user) for user in ("a", "b", "c")}
    out: list[Any] = []
    for user, subject, body in SCRIPT:
        answer = await sessions[user].request(subject, body)
        out.append(_info(answer) if subject == "$JS.API.INFO" else _brief(answer))
    for session in sessions.values():
        await session.client.close()
    return out


async def test_account_limits_as_nats_server(tmp_path: Path) -> None:
    got: dict[str, list[Any]] = {}
    async for pair in _pair(tmp_path, CONF):
        for kind, port in pair.ports.items():
            got[kind] = await _run(port)
    real = got["real"]
    assert real[0]["limits"]["max_streams"] == 3 and real[2]["limits"]["max_memory"] == 400
    codes = [step.get("err_code") for step in real if isinstance(step, dict)]
    for code in (10113, 10122, 10026, 10028, 10027, 10058, 10121, 10002, 10047, 10023):
        assert code in codes, code
    for index, (want, have) in enumerate(zip(real, got["jsemu"], strict=True)):
        assert have == want, (index, SCRIPT[index][:2])


@pytest.mark.parametrize(
    "block",
    [
        "{ bogus: 1 }",
        '{ max_streams: "x" }',
        "{ max_mem: 1.5 }",
        "{ Disk: true }",
        "{ max_bytes_required: 1 }",
        "{ cluster_traffic: nope }",
        "{ cluster_traffic: 1 }",
        "maybe",
        "5",
    ],
)
def test_account_jetstream_errors_as_nats_server(block: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(f"accounts {{\n  A: {{\n    jetstream: {block}\n  }}\n}}\n")
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]


def test_accepted_account_jetstream_forms(tmp_path: Path) -> None:
    """Every key nats-server 2.15.1 takes (its aliases, any case) sets its limit."""
    conf = tmp_path / "server.conf"
    conf.write_text(
        "accounts {\n  A: { jetstream: { MEM: 1K, store: 2K, Streams: 3, consumers: 4, max_ack_pending: 5,\n"
        "    max_stream_bytes: true, memory_max_stream_bytes: 6, disk_max_stream_bytes: 7,"
        " cluster_traffic: owner } }\n"
        "  B: { jetstream: {} }\n  C: { jetstream: disabled }\n}\n"
    )
    real = _real("-c", str(conf), "-t")
    assert real.returncode == 0, real.stderr
    options = load_config(conf, jsemu.ServerOptions())
    a, b, c = options.accounts
    assert a.limits.to_json() == {
        "max_memory": 1000,
        "max_storage": 2000,
        "max_streams": 3,
        "max_consumers": 4,
        "max_ack_pending": 5,
        "memory_max_stream_bytes": 6,
        "storage_max_stream_bytes": 7,
        "max_bytes_required": True,
    }
    assert (a.jetstream, b.jetstream, c.jetstream) == (True, True, False)
    assert b.limits.max_memory == -1 and not b.limits.max_bytes_required


@pytest.mark.parametrize(
    ("server", "accounts"),
    [
        ("max_mem: 300", "A: { jetstream: { max_mem: 200 } }, B: { jetstream: { max_mem: 200 } }"),
        (
            "max_mem: 300, max_file: 1000",
            "A: { jetstream: { max_mem: 200, max_file: 2000 } }, B: { jetstream: enabled }",
        ),
    ],
    ids=["memory", "file"],
)
def test_accounts_that_do_not_fit_the_server_do_not_start(server: str, accounts: str, tmp_path: Path) -> None:
    """nats-server adds the accounts' limits up as it enables them, memory before file."""
    conf = tmp_path / "server.conf"
    conf.write_text(f'jetstream {{ store_dir: "{tmp_path / "store"}", {server} }}\naccounts {{ {accounts} }}\n')
    real = _real("-c", str(conf), "-p", "-1")
    assert real.returncode == 1, real.stderr
    with pytest.raises(ValueError, match="insufficient"):
        jsemu.Server(load_config(conf, jsemu.ServerOptions()))
    # Checked before it runs: a jsemu that started would serve until the test times out.
    with pytest.raises(StartupError) as refused:
        serve_options(build_parser().parse_args(["serve", "-c", str(conf), "-p", "-1"]))
    assert refused.value.fatal
    emu = _jsemu("-c", str(conf), "-p", "-1")
    assert emu.returncode == 1
    assert _fatal(emu) == _fatal(real)


async def test_size_units_as_nats_server(tmp_path: Path) -> None:
    """nats-server's size suffixes: ``K`` is 1000, ``KB`` / ``Ki`` / ``KiB`` 1024, and so on up."""
    conf = (
        'jetstream {{ store_dir: "{store}", max_mem: 1G }}\n'
        "accounts {{ A: {{ users: [ {{user: a, password: a}} ], jetstream: {{ max_mem: 1MiB, max_file: 3ki,"
        " max_consumers: 2Mb, max_streams: 2k, max_ack_pending: 1K, memory_max_stream_bytes: 1m }} }} }}\n"
    )
    got = {}
    async for pair in _pair(tmp_path, conf):
        for kind, port in pair.ports.items():
            session = await Session.login(port, "a")
            got[kind] = (await session.request("$JS.API.INFO"))["limits"]
            await session.client.close()
    assert got["real"]["max_memory"] == 1 << 20 and got["real"]["max_ack_pending"] == 1000
    assert got["jsemu"] == got["real"]


async def test_jsz_account_details_reserve_the_account_limits(tmp_path: Path) -> None:
    """/jsz?accounts=true: each account's ``reserved_memory`` / ``reserved_storage`` are its
    ``max_mem`` / ``max_file`` (no limit: Go's uint64 of -1)."""
    from server.test_accounts import _real_with_monitor
    from server.test_monitoring import _fetch

    conf = tmp_path / "server.conf"
    conf.write_text(
        f'jetstream {{ store_dir: "{tmp_path / "real-store"}" }}\nhttp_port: -1\n'
        "accounts { A: { jetstream: { max_mem: 1M, max_streams: 3 } }, B: { jetstream: { max_file: 5KB } } }\n"
    )
    real, _, real_http = _real_with_monitor(conf)
    try:
        options = load_config(conf, jsemu.ServerOptions())
        options.host, options.port, options.store_dir, options.http_port = "127.0.0.1", 0, None, -1
        async with jsemu.Server(options) as emu:
            assert emu.monitor is not None
            got = {}
            for kind, http in (("real", real_http), ("jsemu", emu.monitor.port)):
                jsz = json.loads((await _fetch(http, "/jsz?accounts=true"))[2])
                got[kind] = sorted(
                    (d["name"], d["reserved_memory"], d["reserved_storage"]) for d in jsz["account_details"]
                )
    finally:
        real.terminate()
        real.wait(10)
    assert got["real"] == [("A", 1_000_000, (1 << 64) - 1), ("B", (1 << 64) - 1, 5120)]
    assert got["jsemu"] == got["real"]
