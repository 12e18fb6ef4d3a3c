"""nkey users inside accounts side by side with nats-server 2.15.1, the same file given to
both: ``accounts { A: { users: [ {nkey: U...} ] } }``. The signed nonce logs the user in to
its account (INFO's ``remote_account``), the account's subjects and JetStream are the
user's, the user's permissions hold, and an unknown or wrongly signed nkey is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from config.test_cli_errors import _assert_one_line, _jsemu, _real
from support.rawclient import RawClient, normalise

from .test_auth import _pair
from .test_nkeys import KEY1, KEY2, KEY3, SEED1, SEED2, SEED3, _sign

CONF = f"""accounts {{
  A: {{ users: [ {{nkey: {KEY1}}}, {{user: a, password: a}} ], jetstream: enabled }}
  B: {{ users: [ {{nkey: {KEY2}, permissions: {{ publish: ["x.>", "$JS.API.>"], subscribe: ["x.>", "_INBOX.>"] }}}} ] }}
}}
jetstream: enabled
"""

_BASE = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True, "protocol": 1}


async def _login(port: int, seed: str | None, key: str | None, signer: str | None = None) -> RawClient:
    """CONNECT as ``key`` signed with ``signer`` (``seed``'s key by default), or as user ``a``."""
    client = await RawClient.connect(port)
    opts: dict[str, Any] = dict(_BASE)
    if key is None:
        opts.update(user="a", **{"pass": "a"})
    else:
        opts.update(nkey=key, sig=_sign(signer or seed or "", client.info["nonce"]))
    client.send(b"CONNECT %s\r\n" % json.dumps(opts).encode())
    return client


async def _accounts_seen(port: int) -> list[Any]:
    seen: list[Any] = []
    a1 = await _login(port, SEED1, KEY1)
    b = await _login(port, SEED2, KEY2)
    a2 = await _login(port, None, None)
    for client in (a1, b, a2):
        frames = await client.exchange()
        frames.append(await client.next_frame(1.0) or b"")  # the INFO after the first PONG
        infos = [json.loads(f[5:]) for f in frames if f.startswith(b"INFO ")]
        seen.append([info.get("remote_account") for info in infos])
    # A's two users share a subject space; B's user (allowed x.>) sees nothing of it.
    for client in (b, a2):
        client.send(b"SUB x.> 1\r\n")
        await client.exchange()
    a1.send(b"PUB x.1 2\r\nhi\r\n")
    await a1.exchange()
    seen.append(("a2", normalise(await a2.exchange()), "b", normalise(await b.exchange())))
    # B's permissions: a publish outside x.> (and the API) is refused, the connection stays.
    seen.append(("b-pub-y", await b.exchange(b"PUB y 1\r\nz\r\n"), b.eof))
    # JetStream: A has it, B does not.
    for client in (a1, b):
        client.send(b"SUB _INBOX.r 9\r\nPUB $JS.API.INFO _INBOX.r 0\r\n\r\n")
        frame: bytes | None = b""
        while frame is not None and not frame.startswith((b"MSG _INBOX.r", b"-ERR")):
            frame = await client.next_frame(3.0)
        assert frame is not None
        body = json.loads(frame.split(b"\r\n", 1)[1]) if frame.startswith(b"MSG") else frame
        seen.append(body.get("error", "info") if isinstance(body, dict) else body)
    for client in (a1, b, a2):
        await client.close()
    # Refused: a key nobody configured, a key signed by another seed.
    for seed, key, signer in ((SEED3, KEY3, None), (SEED1, KEY1, SEED2)):
        client = await _login(port, seed, key, signer)
        seen.append(("refused", await client.exchange(), client.eof))
        await client.close()
    return seen


async def test_nkey_users_in_accounts_as_nats_server(tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, CONF):
        got = {kind: await _accounts_seen(port) for kind, port in pair.ports.items()}
        real = got["real"]
        assert real[:3] == [["A"], ["B"], ["A"]], real
        assert real[3][1] and not real[3][3], real  # a2 got x.1, b did not
        assert got["jsemu"] == real


@pytest.mark.parametrize(
    "text",
    [
        f"accounts {{\n  A: {{ users: [ {{nkey: {KEY1}}} ] }}\n  B: {{ users: [ {{nkey: {KEY1}}} ] }}\n}}\n",
        f"accounts {{\n  A: {{ users: [ {{nkey: {KEY1}}}, {{nkey: {KEY1}}} ] }}\n}}\n",
        f"authorization {{ users: [ {{nkey: {KEY1}}} ] }}\naccounts {{\n  A: {{ users: [ {{nkey: {KEY1}}} ] }}\n}}\n",
        "accounts {\n  A: { users: [ {nkey: UBAD} ] }\n}\n",
    ],
    ids=["two-accounts", "one-account", "authorization-and-account", "bad-key"],
)
def test_account_nkey_config_errors_as_nats_server(text: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(text)
    real, emu = _real("-c", str(conf), "-p", "-1"), _jsemu("-c", str(conf), "-p", "-1")
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    got, want = _assert_one_line(emu), real.stderr.strip().splitlines()[0]
    if text.count("users:") > 1:
        # Users in two blocks: nats-server meets them in Go's random map order, naming line 3 eleven
        # times in 12 runs and the other user (2:8, or 1:0 for the authorization block) once. jsemu
        # names the usual one; the rest of the line must agree.
        position = re.compile(r":\d+:\d+: ")
        assert ":3:8: " in got, got
        assert position.sub(":N: ", got) == position.sub(":N: ", want), (got, want)
        return
    assert got == want
