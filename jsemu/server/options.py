"""Server options, with nats-server's defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..protocol.go_duration import format_duration
from ..protocol.parser import MAX_CONTROL_LINE, MAX_PAYLOAD
from .accounts import AccountConfig
from .auth import Auth
from .subject_mapping import MappingSpec
from .tls import TlsOptions
from .websocket_options import WebSocketOptions

__all__ = ["DEFAULT_WRITE_DEADLINE", "SYSTEM_JETSTREAM", "ClusterOptions", "ServerOptions"]

#: nats-server's ``DEFAULT_FLUSH_DEADLINE`` (seconds): the write deadline when none (or 0) is set.
DEFAULT_WRITE_DEADLINE = 10.0

#: nats-server's ``DEFAULT_LAME_DUCK_DURATION`` and ``DEFAULT_LAME_DUCK_GRACE_PERIOD`` (nanoseconds).
DEFAULT_LAME_DUCK_DURATION = 120 * 10**9
DEFAULT_LAME_DUCK_GRACE_PERIOD = 10 * 10**9

#: nats-server's fatal start-up line for ``jetstream: enabled`` on the system account.
SYSTEM_JETSTREAM = "Not allowed to enable JetStream on the system account"


@dataclass
class ClusterOptions:
    """A cluster of server processes over routes (nats-server's ``cluster {}`` block and
    ``--cluster``/``--routes`` flags; ``server/cluster.py``)."""

    #: The cluster's name; None: one is made up at start (nats-server's dynamic name).
    name: str | None = None
    host: str = "0.0.0.0"
    #: The route port (0: a random one, as nats-server's ``-1``).
    port: int = 6222
    #: Route URLs to connect to (``nats://host:port`` or ``nats-route://...``), retried forever.
    routes: list[str] = field(default_factory=list)
    #: Do not tell clients about the other servers (no ``connect_urls`` from peers).
    no_advertise: bool = False
    #: ``advertise``: the route URL (``host[:port]``) peers are told and gossip instead of the
    #: listener's (``server/advertise.py``); empty: the listener's.
    advertise: str = ""
    #: Retries of a route learned from a peer (implicit); configured routes are retried for ever.
    connect_retries: int = 0
    #: ``authorization { user, password, timeout }`` required of routes connecting here (and sent to routes).
    user: str | None = None
    password: str | None = None
    auth_timeout: float = 2.0
    #: ``ping_interval`` / ``ping_max`` of the block (None: the server's ``ping_interval`` and
    #: ``ping_max``); routes PING every min(interval, 30 s) however long it is.
    ping_interval: float | None = None
    ping_max: int | None = None
    #: Whether a listen address was given (``--cluster``, ``listen``, ``port``): without one,
    #: a cluster name alone makes no cluster.
    listen_set: bool = False


@dataclass
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = 0
    server_name: str | None = None
    max_payload: int = MAX_PAYLOAD
    max_control_line: int = MAX_CONTROL_LINE
    #: Client connections at once; one more gets INFO, ``-ERR 'maximum connections exceeded'``
    #: and is closed (nats-server's default: 64K).
    max_connections: int = 64 * 1024
    #: Subscriptions per connection (0: no limit); one more gets ``-ERR 'maximum
    #: subscriptions exceeded'`` and the connection stays.
    max_subscriptions: int = 0
    #: Seconds between server PINGs to an idle client (nats-server: 2 minutes).
    ping_interval: float = 120.0
    #: Unanswered PINGs before the connection is closed as stale.
    max_pings_out: int = 2
    #: Outbound bytes a client may have pending before it is cut as a slow consumer.
    max_pending: int = 64 * 1024 * 1024
    #: Seconds a client's socket has to take a batch of buffered output before the client is
    #: cut as a slow consumer (``server/write_deadline.py``); 0: the default, 10 s. Negative,
    #: as in nats-server, cuts every client at its first write.
    write_deadline: float = DEFAULT_WRITE_DEADLINE
    jetstream: bool = True
    domain: str | None = None
    store_dir: str | None = None
    #: JetStream's memory and file storage limits (bytes); -1: nats-server's defaults
    #: (75% of the machine's memory, 75% of the free disk), not enforced; a set limit is
    #: enforced as nats-server's (``jetstream/limits/storage.py``).
    max_memory_store: int = -1
    max_file_store: int = -1
    http_port: int | None = None
    #: ``client_advertise``: the client URL (``host[:port]``) INFO and ``connect_urls`` give
    #: instead of the listener's (``server/advertise.py``); empty: the listener's.
    client_advertise: str = ""
    #: Servers in the simulated JetStream cluster; 1 is a standalone server (R1 only, as
    #: nats-server without a cluster). With more, streams may have up to this many replicas.
    cluster_size: int = 1
    cluster_name: str | None = None
    #: Client authentication (``None``: anybody may connect, INFO has no ``auth_required``).
    auth: Auth | None = None
    #: TLS on the client port (``None``: plain connections).
    tls: TlsOptions | None = None
    #: The WebSocket port (``websocket { }``; ``None``: none).
    websocket: WebSocketOptions | None = None
    #: Configured accounts (``accounts { ... }``); users outside them are in ``$G``.
    accounts: list[AccountConfig] = field(default_factory=list)
    #: The global account's ``mappings`` (the top level of a file; ``subject_mapping.py``).
    mappings: tuple[MappingSpec, ...] = ()
    #: The system account (``system_account``): its users may ask ``$SYS.REQ.SERVER...``
    #: and hear ``$SYS.ACCOUNT...`` events (``server/system_account.py``).
    system_account: str = "$SYS"
    #: Routes to other server processes (None: no cluster port).
    cluster: ClusterOptions | None = None
    #: Lame duck mode (``server/lame_duck.py``, nanoseconds): clients are closed over
    #: ``lame_duck_duration`` minus the grace period, which comes first.
    lame_duck_duration: int = DEFAULT_LAME_DUCK_DURATION
    lame_duck_grace_period: int = DEFAULT_LAME_DUCK_GRACE_PERIOD

    def cluster_node_names(self) -> list[str]:
        """The simulated cluster's servers, ``n1``..``nN``: the nodes clients connect to and
        the peers of its streams."""
        return [f"n{i}" for i in range(1, self.cluster_size + 1)]

    def write_deadline_ns(self) -> int:
        """The write deadline in force, in nanoseconds (``setBaselineOptions``: 0 is the default)."""
        return round(self.write_deadline * 1e9) or round(DEFAULT_WRITE_DEADLINE * 1e9)

    def system_jetstream(self) -> bool:
        """Whether the system account's block enables JetStream (nats-server refuses to start)."""
        return self.jetstream and any(a.name == self.system_account and a.jetstream for a in self.accounts)

    def validate(self) -> None:
        """Reject what nats-server rejects at start-up (same wording)."""
        if self.cluster_size < 1:
            raise ValueError("cluster_size must be at least 1")
        duration, grace = self.lame_duck_duration, self.lame_duck_grace_period
        if duration > 0 and grace >= duration:
            raise ValueError(
                f"lame duck grace period ({format_duration(grace)}) should be strictly lower than "
                f"lame duck duration ({format_duration(duration)})"
            )
        if self.max_payload > self.max_pending:
            raise ValueError(f"max_payload ({self.max_payload}) cannot be higher than max_pending ({self.max_pending})")
        if self.system_jetstream():
            raise ValueError(SYSTEM_JETSTREAM)
        auth = self.auth
        if auth is not None and auth.no_auth_user:
            if not auth.users and not auth.nkeys:
                raise ValueError(f'no_auth_user: "{auth.no_auth_user}" present, but users/nkeys are not defined')
            if auth.no_auth_user not in auth.users and auth.no_auth_user not in auth.nkeys:
                raise ValueError(
                    f'no_auth_user: "{auth.no_auth_user}" not present as user or nkey in authorization block '
                    "or account configuration"
                )
