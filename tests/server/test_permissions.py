"""Subject permissions side by side with nats-server 2.15.1, the same file given to both: which
publishes and subscriptions are refused (``-ERR 'Permissions Violation ...'``, the connection
stays), which messages a wildcard subscription receives past a deny list, and Direct Get in
both forms limited to the keys a user may read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nats
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.js.api import StreamConfig
from support.rawclient import RawClient

from jsemu.config.server_config import parse_config
from jsemu.server.permissions import Permissions, SubjectRules

from .test_auth import _pair

PERMS = """authorization {
  default_permissions: { publish: { deny: "secret.>" } }
  users: [
    {user: a, password: a, permissions: {
        publish: { allow: ["foo.*", "$JS.API.INFO", "_INBOX.>"], deny: "foo.bar" },
        subscribe: { allow: ["foo.>", "q.* grp", "w.* g.*"], deny: ["foo.x"] } }}
    {user: b, password: b, permissions: { publish: "bar", subscribe: ["bar", "_INBOX.>"] }}
    {user: c, password: c}
    {user: d, password: d, permissions: { publish: { deny: ">" }, subscribe: { deny: "x.>" } } }
  ]
}
"""

SESSIONS = {
    "a": b"PUB foo.x 1\r\na\r\nPUB foo.bar 1\r\na\r\nPUB foo.a.b 1\r\na\r\nPUB secret.x 1\r\na\r\n"
    b"SUB foo.x 1\r\nSUB foo.y 2\r\nSUB q.a 3\r\nSUB q.a grp 4\r\nSUB q.a other 5\r\nSUB foo.* 6\r\n"
    b"SUB > 7\r\nSUB w.a g.x 8\r\nSUB w.a h 9\r\nSUB foo.> 10\r\nPUB foo.x reply.x 1\r\na\r\n",
    "b": b"PUB bar 1\r\na\r\nPUB baz 1\r\na\r\nSUB baz 1\r\nSUB bar 2\r\nSUB bar q 3\r\n",
    "c": b"PUB secret.a 1\r\na\r\nPUB x 1\r\na\r\nSUB secret.a 1\r\n",
    "d": b"PUB secret.a 1\r\na\r\nSUB x.y 1\r\nSUB x.* 2\r\nSUB y 3\r\nSUB x.y q 4\r\n",
}


@pytest.mark.parametrize("verbose", [False, True])
async def test_violations_as_nats_server(verbose: bool, tmp_path: Path) -> None:
    async for pair in _pair(tmp_path, PERMS):
        got: dict[str, list[Any]] = {"real": [], "jsemu": []}
        for kind, port in pair.ports.items():
            for user, session in SESSIONS.items():
                client = await RawClient.connect(port, {"user": user, "pass": user, "verbose": verbose})
                got[kind].append((user, await client.exchange(session), client.eof))
                await client.close()
        assert got["jsemu"] == got["real"]
        assert any(b"Permissions Violation" in b"".join(frames) for _, frames, _ in got["real"])
        assert not any(eof for _, _, eof in got["real"])


async def test_wildcard_subscription_skips_denied_subjects(tmp_path: Path) -> None:
    """``foo.*`` is allowed for ``a`` but ``foo.x`` is denied: its messages are not delivered."""
    async for pair in _pair(tmp_path, PERMS):
        got = {}
        for kind, port in pair.ports.items():
            reader = await RawClient.connect(port, {"user": "a", "pass": "a", "verbose": False})
            writer = await RawClient.connect(port, {"user": "c", "pass": "c", "verbose": False})
            assert await reader.exchange(b"SUB foo.* 1\r\nSUB foo.> 2\r\n") == []
            await writer.exchange(b"PUB foo.x 1\r\nx\r\nPUB foo.y 1\r\ny\r\nPUB foo.x.z 1\r\nz\r\n")
            got[kind] = sorted(await reader.exchange())
            await reader.close()
            await writer.close()
        assert (
            got["jsemu"]
            == got["real"]
            == sorted([b"MSG foo.y 1 1\r\ny\r\n", b"MSG foo.y 2 1\r\ny\r\n", b"MSG foo.x.z 2 1\r\nz\r\n"])
        )


def _kv_conf(store: Path) -> str:
    return f"""jetstream {{ store_dir: "{store}" }}
authorization {{
  users: [
    {{user: admin, password: admin}}
    {{user: reader, password: reader, permissions: {{
        publish: "$JS.API.DIRECT.GET.KV_cfg.$KV.cfg.public.>",
        subscribe: "_INBOX.>" }}}}
  ]
}}
"""


def _shape(frames: list[bytes]) -> list[Any]:
    """A reply without its time stamps: the op, the status or payload."""
    out: list[Any] = []
    for frame in frames:
        _, _, rest = frame.partition(b"\r\n")
        if frame.startswith(b"HMSG"):
            headers = rest.split(b"\r\n\r\n", 1)
            out.append(("HMSG", headers[0].split(b"\r\n")[0], headers[1] if len(headers) > 1 else b""))
        else:
            out.append(frame)
    return out


async def test_direct_get_limited_to_allowed_keys(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async for pair in _pair(tmp_path, _kv_conf(store)):
        results = {}
        for kind, port in pair.ports.items():
            nc = await nats.connect(f"nats://127.0.0.1:{port}", user="admin", password="admin")
            js = nc.jetstream()
            await js.add_stream(
                StreamConfig(name="KV_cfg", subjects=["$KV.cfg.>"], allow_direct=True, max_msgs_per_subject=1)
            )
            await js.publish("$KV.cfg.public.colour", b"blue")
            await js.publish("$KV.cfg.secret.key", b"hunter2")
            await nc.close()
            body = json.dumps({"last_by_subj": "$KV.cfg.secret.key"}).encode()
            reader = await RawClient.connect(
                port, {"user": "reader", "pass": "reader", "verbose": False, "headers": True}
            )
            frames = await reader.exchange(
                b"SUB _INBOX.r 1\r\n"
                b"PUB $JS.API.DIRECT.GET.KV_cfg.$KV.cfg.public.colour _INBOX.r 0\r\n\r\n"
                b"PUB $JS.API.DIRECT.GET.KV_cfg.$KV.cfg.secret.key _INBOX.r 0\r\n\r\n"
                + b"PUB $JS.API.DIRECT.GET.KV_cfg _INBOX.r %d\r\n%s" % (len(body), body)
                + b"\r\nPUB $JS.API.STREAM.INFO.KV_cfg _INBOX.r 0\r\n\r\n"
            )
            await asyncio.sleep(0.2)
            frames += await reader.exchange()
            assert not reader.eof
            results[kind] = sorted(_shape(frames), key=repr)  # the real server answers Direct Get later
            await reader.close()
        assert results["jsemu"] == results["real"]
        assert ("HMSG", b"NATS/1.0", b"blue\r\n") in results["real"]
        assert len(results["real"]) == 4


_TOKENS = ["a", "b", "*", ">"]
_SUBJECT = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3).map(".".join)
_PATTERN = st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=3).map(".".join).filter(lambda s: ">" not in s[:-1])
_RULES = st.one_of(st.none(), st.lists(_PATTERN, min_size=1, max_size=3))


def _conf_list(rules: list[str]) -> str:
    return "[" + ", ".join(json.dumps(r) for r in rules) + "]"


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pub_allow=_RULES,
    pub_deny=_RULES,
    sub_allow=_RULES,
    sub_deny=_RULES,
    pubs=st.lists(_SUBJECT, min_size=1, max_size=6),
    subs=st.lists(_PATTERN, min_size=1, max_size=6),
)
def test_random_permissions_same_outcome(
    tmp_path_factory: pytest.TempPathFactory,
    pub_allow: list[str] | None,
    pub_deny: list[str] | None,
    sub_allow: list[str] | None,
    sub_deny: list[str] | None,
    pubs: list[str],
    subs: list[str],
) -> None:
    """Random allow/deny lists and random attempts: the same refusals from both servers."""
    parts = []
    for name, allow, deny in (("publish", pub_allow, pub_deny), ("subscribe", sub_allow, sub_deny)):
        inner = [f"{k}: {_conf_list(v)}" for k, v in (("allow", allow), ("deny", deny)) if v]
        if inner:
            parts.append(f"{name}: {{ {', '.join(inner)} }}")
    perms = f", permissions: {{ {', '.join(parts)} }}" if parts else ""
    conf = f"authorization {{ users: [ {{user: u, password: p{perms}}} ] }}\n"
    session = b"".join(f"PUB {s} 1\r\nx\r\n".encode() for s in pubs)
    session += b"".join(f"SUB {s} {i}\r\n".encode() for i, s in enumerate(subs))

    async def run() -> None:
        async for pair in _pair(tmp_path_factory.mktemp("perm"), conf):
            got = {}
            for kind, port in pair.ports.items():
                client = await RawClient.connect(port, {"user": "u", "pass": "p", "verbose": False})
                got[kind] = await client.exchange(session)
                await client.close()
            assert got["jsemu"] == got["real"], conf

    asyncio.run(run())


def test_rules_from_the_file() -> None:
    from jsemu.config.server_config import apply_config
    from jsemu.server.options import ServerOptions

    options = apply_config(parse_config(PERMS), ServerOptions())
    assert options.auth is not None
    perms = options.auth.users["a"].permissions
    assert isinstance(perms, Permissions) and isinstance(perms.pub_allow, SubjectRules)
    assert perms.can_publish(b"foo.x") and not perms.can_publish(b"foo.bar")
    assert options.auth.users["c"].permissions is not None  # the default permissions
    assert not options.auth.users["c"].permissions.can_publish(b"secret.x")


async def test_no_echo_holds_for_deny_filtered_wildcard_subscriptions(tmp_path: Path) -> None:
    """``echo: false``: a client's own messages do not come back, also not through a wildcard
    subscription whose messages pass the deny list (``foo.*`` for ``a``, ``foo.x`` denied)."""
    async for pair in _pair(tmp_path, PERMS):
        got = {}
        for kind, port in pair.ports.items():
            client = await RawClient.connect(port, {"user": "a", "pass": "a", "verbose": False, "echo": False})
            other = await RawClient.connect(port, {"user": "c", "pass": "c", "verbose": False})
            assert await client.exchange(b"SUB foo.* 1\r\nSUB foo.* grp 2\r\nSUB foo.y 3\r\n") == []
            frames = await client.exchange(b"PUB foo.y 4\r\nmine\r\n")
            await other.exchange(b"PUB foo.y 6\r\ntheirs\r\n")
            got[kind] = sorted(frames + await client.exchange())
            await client.close()
            await other.close()
        assert (
            got["jsemu"]
            == got["real"]
            == sorted([b"MSG foo.y 1 6\r\ntheirs\r\n", b"MSG foo.y 2 6\r\ntheirs\r\n", b"MSG foo.y 3 6\r\ntheirs\r\n"])
        )
