"""pytest plugin (entry point ``pytest11``): jsemu servers as fixtures.

Fixtures (all function scoped; every server listens on a free port and uses no files, so
tests run in parallel under pytest-xdist):

* ``jsemu_server``: an async fixture, a :class:`jsemu.Server` started inside the test's
  event loop (needs pytest-asyncio, as async nats-py tests do anyway);
* ``jsemu_url``: that server's ``nats://`` URL;
* a server's ``urls``: every node's URL (``cluster_size=3``: three listeners, ``n1``..``n3``,
  each with its own server id in INFO; ``server.control.node_down("n1")`` takes one away);
  with ``http_port=-1``, ``monitor_urls``: every node's monitoring port;
* ``jsemu_thread_server``: a :class:`jsemu.ThreadedServer` for synchronous tests (its
  ``control`` runs each call on the server's thread);
* ``jsemu_factory``: ``await jsemu_factory(streams=[...], kv=[...], frozen_clock=ns,
  cluster_size=3, seed=7, users={...}, nkeys=[...], accounts={...}, tls=True,
  websocket=True, **ServerOptions)`` for servers set up in one line;
* ``jsemu_recorded`` / ``jsemu_recorder``: a recording proxy in front of the test's server, so a
  failing test's session replays against nats-server (:mod:`jsemu.testing.recording`).

For a session-scoped server, :func:`reset_server` empties it cheaply between tests.

When a test fails, its report gets a "jsemu server trace" section with the last client
protocol ops and JetStream API calls each of its servers saw (``--jsemu-trace N`` sets how
many, 0 turns it off).
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..app import Server, ThreadedServer
from ..config.js_limits import JsLimitsError, parse_account_jetstream
from ..config.server_config import apply_config, parse_config
from ..server.accounts import AccountConfig
from ..server.auth import Auth, User
from ..server.nkeys import is_valid_user_key
from ..server.options import ServerOptions
from ..server.websocket_options import WebSocketOptions
from .certificates import generate
from .operator import OperatorSetup
from .recording import register as _register_recording
from .recording import report_sections
from .trace import format_trace

try:  # pytest-asyncio provides async fixtures; without it only the sync fixtures work
    import pytest_asyncio

    _async_fixture: Any = pytest_asyncio.fixture
except ImportError:  # pragma: no cover - exercised only without pytest-asyncio
    _async_fixture = pytest.fixture

__all__ = ["create_kv", "prepare_server", "reset_server"]

_SERVERS_KEY = pytest.StashKey[list[Server]]()
_DEFAULT_TRACE = 200


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jsemu")
    group.addoption(
        "--jsemu-trace",
        type=int,
        default=_DEFAULT_TRACE,
        help="protocol ops and API calls of jsemu fixture servers shown for a failed test (0: off)",
    )
    group.addoption(
        "--jsemu-record",
        metavar="DIR",
        default=None,
        help="keep the session files of jsemu_recorded / jsemu_recorder in DIR (default: the test's tmp_path)",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.when != "call" or not report.failed:
        return
    report.sections.extend(report_sections(item))
    servers: list[Server] = item.stash.get(_SERVERS_KEY, [])
    for i, server in enumerate(servers):
        if server.trace:
            title = "jsemu server trace" + (f" ({i + 1})" if i else "") + f": {server.url}"
            report.sections.append((title, format_trace(server.trace)))


def _register(request: pytest.FixtureRequest, server: Server) -> None:
    size = request.config.getoption("--jsemu-trace", _DEFAULT_TRACE)
    if size:
        server.start_trace(size)
    request.node.stash.setdefault(_SERVERS_KEY, []).append(server)


# --- setting a server up ----------------------------------------------------------------


def create_kv(server: Server, bucket: str | dict[str, Any]) -> dict[str, Any]:
    """Create a KV bucket's stream as nats-py's ``create_key_value`` does (``history``,
    ``ttl`` in seconds, ``max_bytes``, ``max_value_size``, ``storage``, ``replicas``)."""
    spec = {"bucket": bucket} if isinstance(bucket, str) else dict(bucket)
    name = spec.pop("bucket")
    ttl = float(spec.pop("ttl", 0) or 0)
    window = min(120.0, ttl) if ttl else 120.0
    config = {
        "name": f"KV_{name}",
        "subjects": [f"$KV.{name}.>"],
        "allow_direct": spec.pop("direct", True),
        "allow_rollup_hdrs": True,
        "allow_msg_ttl": True,
        "deny_delete": True,
        "discard": "new",
        "duplicate_window": int(window * 1_000_000_000),
        "max_age": int(ttl * 1_000_000_000),
        "max_bytes": spec.pop("max_bytes", -1),
        "max_consumers": -1,
        "max_msg_size": spec.pop("max_value_size", -1),
        "max_msgs": -1,
        "max_msgs_per_subject": spec.pop("history", 1),
        "num_replicas": spec.pop("replicas", 1),
        "storage": spec.pop("storage", "file"),
    }
    if spec:
        raise TypeError(f"unknown KV bucket options: {', '.join(sorted(spec))}")
    return _create_stream(server, config)


def _create_stream(server: Server, config: dict[str, Any]) -> dict[str, Any]:
    if server.jetstream_api is None:
        raise ValueError("JetStream is off on this server")
    reply = server.jetstream_api.call(f"$JS.API.STREAM.CREATE.{config.get('name', '')}", config)
    if "error" in reply:
        raise ValueError(f"can not create stream {config.get('name')!r}: {reply['error']['description']}")
    return reply


def prepare_server(
    server: Server,
    *,
    streams: list[dict[str, Any]] = (),  # type: ignore[assignment]
    kv: list[str | dict[str, Any]] = (),  # type: ignore[assignment]
    frozen_clock: int | bool | None = None,
    seed: int | None = None,
) -> Server:
    """Pre-create streams (JSON API configs) and KV buckets, freeze the clock (at the given
    Unix ns, or now for ``True``) and seed the random choices, on a started server."""
    if seed is not None:
        server.control.seed(seed)
    if frozen_clock is not None and frozen_clock is not False:
        server.control.freeze_clock(None if frozen_clock is True else int(frozen_clock))
    for config in streams:
        _create_stream(server, config)
    for bucket in kv:
        create_kv(server, bucket)
    return server


def reset_server(server: Server) -> None:
    """Back to a fresh state without restarting: every stream gone, faults, policies,
    answers and the clock reset (for session-scoped servers)."""
    server.control.reset(streams=True)
    if server.trace is not None:
        server.trace.clear()


_SETUP_KEYS = frozenset(inspect.signature(prepare_server).parameters) - {"server"}


def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    setup = {k: kwargs.pop(k) for k in list(kwargs) if k in _SETUP_KEYS}
    return setup, kwargs


# --- fixtures ---------------------------------------------------------------------------


@_async_fixture  # type: ignore[untyped-decorator]
async def jsemu_server(request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    """A jsemu server started in the test's event loop (JetStream on, a free port)."""
    server = Server(ServerOptions())
    await server.start()
    _register(request, server)
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def jsemu_url(jsemu_server: Server) -> str:
    return jsemu_server.url


@pytest.fixture
def jsemu_thread_server(request: pytest.FixtureRequest) -> Iterator[ThreadedServer[Server]]:
    """A jsemu server on its own loop in a background thread, for synchronous tests."""
    threaded = Server.in_thread()
    _register(request, threaded.server)
    try:
        yield threaded
    finally:
        threaded.stop()


def _account_users(accounts: dict[str, dict[str, Any]]) -> list[User]:
    """The users of ``accounts={"A": {"users": {"a": "pw"}, "jetstream": True}}``."""
    users = []
    for name, spec in accounts.items():
        unknown = set(spec) - {"users", "jetstream"}
        if unknown:
            raise ValueError(f"account {name!r}: unknown keys {sorted(unknown)} (users, jetstream)")
        users += [User(user, password, account=name) for user, password in spec.get("users", {}).items()]
    return users


def _account(name: str, spec: dict[str, Any]) -> AccountConfig:
    """``"jetstream"``: ``True``, ``"enabled"`` or a map of limits (``{"max_mem": 1024}``), read
    as the configuration file's account ``jetstream`` (``config_js_limits``)."""
    try:
        jetstream, limits = parse_account_jetstream(spec.get("jetstream", False))
    except JsLimitsError as exc:
        raise ValueError(f"account {name!r}: {exc.message}") from None
    return AccountConfig(name, jetstream=jetstream, limits=limits)


def _mint(setup: OperatorSetup, accounts: dict[str, dict[str, Any]]) -> None:
    """Accounts and users of ``jsemu_factory(operator=True, accounts={...})``."""
    for name, spec in accounts.items():
        claims = dict(spec)
        users: dict[str, dict[str, Any]] = claims.pop("users", {})
        jetstream = claims.pop("jetstream", None)
        if jetstream:
            claims["jetstream"] = {} if jetstream is True else dict(jetstream)
        try:
            setup.account(name, **claims)
        except TypeError as exc:
            raise ValueError(f"account {name!r}: {exc}") from None
        for user, user_claims in users.items():
            try:
                setup.user(user, name, **(user_claims or {}))
            except TypeError as exc:
                raise ValueError(f"user {user!r}: {exc}") from None


@_async_fixture  # type: ignore[untyped-decorator]
async def jsemu_factory(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    """``await jsemu_factory(**options)``: started servers, stopped after the test.

    Options are :class:`ServerOptions` fields (``cluster_size``, ``domain``, ``auth``, ...) plus
    ``streams``, ``kv``, ``frozen_clock`` and ``seed`` (see :func:`prepare_server`), and
    ``users={"alice": "secret"}``, ``nkeys=["U..."]`` (public user nkeys) or ``token="..."``
    for a server that requires them. ``accounts={"A": {"users": {"a": "pw"}, "jetstream": True}}``
    adds accounts (each its own subjects and JetStream, ``"jetstream": {"max_mem": 1024, ...}`` for
    its limits) with their users, as an ``accounts`` block does; ``streams``/``kv`` set-up reaches only ``$G``. ``tls=True`` (``"verify"``: client certificates
    required; ``"handshake_first"``) serves TLS with certificates generated for the test:
    ``server.url`` is ``tls://...`` and ``server.client_tls.context()`` is the client's
    ``ssl.SSLContext`` (its ``ca_file``, ``cert_file``, ``key_file`` for other clients).
    ``websocket=True`` opens a WebSocket port too (``websocket { port: -1, no_tls: true }``):
    ``server.ws_url`` is its ``ws://`` URL; ``websocket="tls"``: ``wss://`` with generated
    certificates (``server.client_tls`` as above).

    ``operator=True`` (or an :class:`~jsemu.testing.operator.OperatorSetup` of the test's own)
    serves operator mode with JWTs minted for the test: ``accounts`` then maps each account to
    its account JWT claims (``"jetstream": True`` or limits such as ``{"mem_storage": 1 << 20,
    "streams": 2}``, ``"conn"``, ``"signing_keys"``...) and ``"users"``, a map of user name to
    user JWT claims (``{"pub": {"allow": ["orders.>"]}, "subs": 10, "exp": ...}``). Without
    ``accounts``: account ``APP`` with JetStream and its user ``app``. ``server.operator`` is
    the set-up: ``server.operator.users["app"].creds_path`` is a ``.creds`` file for the client."""
    servers: list[Server] = []
    directories: list[tempfile.TemporaryDirectory[str]] = []

    async def make(**kwargs: Any) -> Server:
        setup, options = _split(dict(kwargs))
        users: dict[str, str] | None = options.pop("users", None)
        nkeys: list[str] | None = options.pop("nkeys", None)
        token: str | None = options.pop("token", None)
        tls: bool | str = options.pop("tls", False)
        websocket: bool | str = options.pop("websocket", False)
        accounts: dict[str, dict[str, Any]] | None = options.pop("accounts", None)
        operator: bool | OperatorSetup = options.pop("operator", False)
        if operator:
            if users is not None or nkeys is not None or token is not None:
                raise ValueError("operator mode takes users in accounts={...}, not users, nkeys or token")
            if setup.get("streams") or setup.get("kv"):
                raise ValueError("streams and kv set-up reach $G, which operator mode has no users in")
            directories.append(tempfile.TemporaryDirectory(prefix="jsemu-creds-"))
            minted = operator if isinstance(operator, OperatorSetup) else OperatorSetup(directories[-1].name)
            _mint(minted, accounts if accounts is not None else {"APP": {"jetstream": True, "users": {"app": {}}}})
            base = ServerOptions(**options)
            apply_config(parse_config(minted.config_text()), base)
            server = Server(base)
            server.operator = minted
            await server.start()
            servers.append(server)
            _register(request, server)
            return prepare_server(server, **setup)
        account_users = _account_users(accounts or {})
        if (users or nkeys or account_users) and token:
            raise ValueError("Can not have a token and a users array")
        if users is not None or token is not None or nkeys is not None or accounts is not None:
            auth = Auth(
                token=token or "", users={name: User(name, password) for name, password in (users or {}).items()}
            )
            for user in account_users:
                if user.name in auth.users:
                    raise ValueError(f"Duplicate user {user.name!r}")
                auth.users[user.name] = user
            options["accounts"] = [_account(name, spec) for name, spec in (accounts or {}).items()]
            for key in nkeys or ():
                if not is_valid_user_key(key):
                    raise ValueError(f"Not a valid public nkey for a user: {key!r}")
                auth.nkeys[key] = User(key)
            options["auth"] = auth
        client_tls = None
        if tls:
            if tls not in (True, "verify", "handshake_first"):
                raise ValueError(f"tls must be True, 'verify' or 'handshake_first', not {tls!r}")
            directories.append(tempfile.TemporaryDirectory(prefix="jsemu-tls-"))
            options["tls"], client_tls = generate(
                Path(directories[-1].name), verify=tls == "verify", handshake_first=tls == "handshake_first"
            )
        if websocket:
            if websocket not in (True, "tls"):
                raise ValueError(f"websocket must be True or 'tls', not {websocket!r}")
            ws_tls = None
            if websocket == "tls":
                directories.append(tempfile.TemporaryDirectory(prefix="jsemu-wss-"))
                ws_tls, client_tls = generate(Path(directories[-1].name))
            options["websocket"] = WebSocketOptions(host="127.0.0.1", no_tls=ws_tls is None, tls=ws_tls)
        server = Server(ServerOptions(**options))
        server.client_tls = client_tls
        await server.start()
        servers.append(server)
        _register(request, server)
        return prepare_server(server, **setup)

    try:
        yield make
    finally:
        for server in servers:
            await server.stop()
        for directory in directories:
            directory.cleanup()


jsemu_recorded, jsemu_recorder = _register_recording(_async_fixture)
