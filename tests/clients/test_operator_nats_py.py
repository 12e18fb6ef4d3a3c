"""nats-py in operator mode on both servers, with JWTs minted for the test: a ``.creds`` file,
a JWT and signature callback pair, credentials given as strings (``user_credentials`` as a
``RawCredentials``-style pair of callbacks), a reconnect that signs the new server's nonce, a
refused user, request/reply under JWT permissions and JetStream account limits."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest
from nats.errors import NoRespondersError
from support.servers import KINDS, RealServer

from jsemu.protocol.jwt import KeyPair
from jsemu.testing.operator import OperatorSetup


def _setup(directory: Path) -> OperatorSetup:
    setup = OperatorSetup(directory)
    setup.account("APP", jetstream={"mem_storage": 1 << 20, "disk_storage": 0, "streams": 1, "consumer": 4})
    setup.user("app", "APP")
    setup.user("svc", "APP", pub={"allow": ["_INBOX.>"]}, sub={"allow": ["svc.>"]}, resp={"max": 1})
    setup.user("caller", "APP", pub={"allow": ["svc.>"]}, sub={"allow": ["_INBOX.>"]})
    return setup


@pytest.fixture(params=KINDS)
def operator_server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[RealServer, OperatorSetup]]:
    setup = _setup(tmp_path / "creds")
    server = RealServer(conf_text=setup.config_text(), jetstream=True, jsemu_process=request.param == "jsemu")
    server.kind = request.param  # type: ignore[attr-defined]
    server.url = f"nats://127.0.0.1:{server.port}"  # type: ignore[attr-defined]
    yield server, setup  # type: ignore[misc]
    server.stop()


async def test_creds_file_and_jetstream_limits(operator_server: tuple[RealServer, OperatorSetup]) -> None:
    server, setup = operator_server
    creds = setup.users["app"].creds_path
    nc = await nats.connect(server.url, user_credentials=str(creds))  # type: ignore[attr-defined]
    try:
        sub = await nc.subscribe("greet")
        await nc.publish("greet", b"hi")
        assert (await sub.next_msg(2)).data == b"hi"
        js = nc.jetstream(timeout=2)
        info = await js.account_info()
        assert info.limits.max_memory == 1 << 20 and info.limits.max_streams == 1
        await js.add_stream(name="ONE", subjects=["one"], storage="memory")
        with pytest.raises(nats.js.errors.APIError) as err:
            await js.add_stream(name="TWO", subjects=["two"], storage="memory")
        assert err.value.err_code == 10027  # maximum number of streams reached
    finally:
        await nc.close()


async def test_jwt_and_signature_callbacks(operator_server: tuple[RealServer, OperatorSetup]) -> None:
    server, setup = operator_server
    user = setup.users["app"]

    def user_jwt_cb() -> bytearray:
        return bytearray(user.jwt.encode())

    def signature_cb(nonce: str) -> bytes:
        return base64.b64encode(user.key.sign(nonce.encode()))

    nc = await nats.connect(server.url, user_jwt_cb=user_jwt_cb, signature_cb=signature_cb)  # type: ignore[attr-defined]
    try:
        assert await nc.flush(2) is None and nc.is_connected
    finally:
        await nc.close()


async def test_request_reply_under_jwt_permissions(operator_server: tuple[RealServer, OperatorSetup]) -> None:
    server, setup = operator_server
    svc = await nats.connect(server.url, user_credentials=str(setup.users["svc"].creds_path))  # type: ignore[attr-defined]
    caller = await nats.connect(server.url, user_credentials=str(setup.users["caller"].creds_path))  # type: ignore[attr-defined]
    try:

        async def answer(msg: nats.aio.msg.Msg) -> None:
            await msg.respond(b"pong:" + msg.data)

        await svc.subscribe("svc.ping", cb=answer)
        await svc.flush()
        try:
            reply = await caller.request("svc.ping", b"1", timeout=2)
        except NoRespondersError:
            # nats-server under load once answered 503 to the first request after the responder's
            # flush (its service import's interest not in place yet): asked once more.
            await asyncio.sleep(0.2)
            reply = await caller.request("svc.ping", b"1", timeout=2)
        assert reply.data == b"pong:1"
        with pytest.raises(NoRespondersError):
            await caller.request("svc.none", b"", timeout=2)
    finally:
        await svc.close()
        await caller.close()


async def test_refused_user_gets_authorization_violation(
    operator_server: tuple[RealServer, OperatorSetup], tmp_path: Path
) -> None:
    server, _ = operator_server
    stranger = OperatorSetup(tmp_path / "other")  # another operator's user
    stranger.account("X")
    creds = stranger.user("x", "X").creds_path
    errors: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    with pytest.raises(Exception):  # noqa: B017 - nats-py raises the server's -ERR or NoServers
        await nats.connect(
            server.url, user_credentials=str(creds), allow_reconnect=False, error_cb=on_error, connect_timeout=2
        )  # type: ignore[attr-defined]
    assert any("authorization violation" in str(e).lower() for e in errors)


async def test_reconnect_signs_the_new_nonce(operator_server: tuple[RealServer, OperatorSetup]) -> None:
    server, setup = operator_server
    kind = server.kind  # type: ignore[attr-defined]
    reconnected = asyncio.Event()

    async def on_reconnect() -> None:
        reconnected.set()

    nc = await nats.connect(
        server.url,  # type: ignore[attr-defined]
        user_credentials=str(setup.users["app"].creds_path),
        reconnected_cb=on_reconnect,
        reconnect_time_wait=0.2,
        max_reconnect_attempts=100,
    )
    port = server.port
    try:
        server.stop()
        again = RealServer(conf_text=setup.config_text(), jetstream=False, jsemu_process=kind == "jsemu", port=port)
        try:
            await asyncio.wait_for(reconnected.wait(), 15)
            sub = await nc.subscribe("after")
            await nc.publish("after", b"ok")
            assert (await sub.next_msg(2)).data == b"ok"
        finally:
            again.stop()
    finally:
        await nc.close()


def test_keys_sign_like_the_client() -> None:
    """nats-py signs with the nkeys package; our KeyPair reads the same seed."""
    import nkeys

    pair = KeyPair.create(20 << 3)
    assert nkeys.from_seed(bytearray(pair.seed.encode())).sign(b"n") == pair.sign(b"n")
