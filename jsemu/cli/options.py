"""Flags and configuration file into :class:`ServerOptions`, as nats-server's ``ConfigureOptions``.

Theory of operation (``serve_options``): the order is nats-server's, because it decides which
value wins and what is a duplicate.

1. The flags are parsed (``parser.py`` for ``serve``, Go's rules in ``stand_in.py`` for the
   stand-in) into an ``argparse.Namespace``; nothing here reads ``sys.argv``.
2. Defaults: host ``0.0.0.0``, port 4222, JetStream on for ``serve`` and off for the stand-in.
3. The file (``-c``) is loaded over them; a ``store_dir`` of the file next to ``-sd`` is a
   duplicate (``-sd`` is set before the file is read, as Go's first ``fs.Parse`` does).
4. Every flag given is applied again over the file (Go's second ``fs.Parse``,
   ``_flags_over_file``), an empty one too (``-n ""`` clears the file's name, ``-p 0`` is the
   default port, ``-p -1`` a random one); ``--user``/``--pass``/``--auth`` and ``--tls*`` merge
   with the file's ``authorization`` and ``tls`` blocks field by field.
5. Baseline and checks: ``-ms``, the cluster flags, system-account JetStream, ``validate``,
   the store dir, the accounts' JetStream limits; each refusal is a :class:`StartupError`
   in nats-server's words (fatal: an ``[FTL]`` log line; else ``nats-server: ...``).

``refused_flags`` stops start-up on nats-server flags jsemu cannot honour (``_REFUSED_FLAGS``)
rather than accept and ignore them. SIGHUP's reload runs the same ``serve_options`` again.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config.cluster import ClusterConfigError, apply_cluster_flags
from ..config.server_config import ConfigError, load_config
from ..config.startup_errors import StartupError, check_store_dir
from ..config.tls import check_files
from ..jetstream.limits.storage import accounts_fit
from ..server.auth import Auth, User
from ..server.options import SYSTEM_JETSTREAM, ServerOptions
from ..server.tls import TlsOptions

__all__ = ["DEFAULT_PORT", "refused_flags", "serve_options"]

#: nats-server's client port, which ``-p 0`` also means (``setBaselineOptions``).
DEFAULT_PORT = 4222


#: Flags jsemu cannot honour: (dest, flag, why); given (not their zero value), start-up stops.
_REFUSED_FLAGS = (
    ("syslog", "syslog", "jsemu logs to stderr or the -l file"),
    ("remote_syslog", "remote_syslog", "jsemu logs to stderr or the -l file"),
    ("profile", "profile", "no Go profiler to serve"),
)


def refused_flags(args: argparse.Namespace) -> None:
    """:class:`StartupError` for the first flag jsemu refuses (see ``_REFUSED_FLAGS``)."""
    for dest, flag, why in _REFUSED_FLAGS:
        if getattr(args, dest, None):
            raise StartupError(f"--{flag}: not supported by jsemu ({why})", fatal=False)
    if getattr(args, "log_size_limit", None) and args.log:
        raise StartupError("--log_size_limit: not supported by jsemu (the -l file is not rotated)", fatal=False)


def serve_options(args: argparse.Namespace, stand_in: bool = False) -> ServerOptions:
    """The options of ``jsemu serve`` (``stand_in``: of ``jsemu nats-server``, JetStream off
    unless ``-js`` or the file's ``jetstream`` turns it on), combined as nats-server's
    ``ConfigureOptions`` does: the flags are read, then the file over them (so a ``store_dir``
    of the file next to ``-sd`` is a duplicate), then the flags again, so every flag given
    wins, an empty one too (``-n ""`` clears the file's name, ``-p 0`` is the default port);
    :class:`StartupError` for what nats-server refuses before it starts."""
    options = ServerOptions(host="0.0.0.0", port=DEFAULT_PORT, jetstream=not stand_in)
    if getattr(args, "operator_demo", None):
        if args.config:
            raise StartupError("--operator-demo: not with -c (it writes its own configuration)", fatal=False)
        args.config = str(operator_demo(Path(args.operator_demo)))
    if args.config:
        options.store_dir = args.store_dir or None
        try:
            load_config(args.config, options)
        except ConfigError as exc:
            raise StartupError(str(exc), fatal=False) from None
    _flags_over_file(args, options)
    if not options.host:
        options.host = "0.0.0.0"  # setBaselineOptions
    _https_monitor(args, options)
    try:
        apply_cluster_flags(args, options)
    except ClusterConfigError as exc:
        raise StartupError(str(exc), fatal=False) from None
    if options.system_jetstream():
        raise StartupError(SYSTEM_JETSTREAM)  # an [FTL] line, as nats-server's
    try:
        options.validate()
    except ValueError as exc:
        raise StartupError(str(exc), fatal=False) from None
    if options.jetstream and options.store_dir:
        check_store_dir(options.store_dir)
    if options.jetstream:
        no_room = accounts_fit(options)
        if no_room is not None:
            raise StartupError(
                "Can't start JetStream: Error enabling jetstream on configured accounts: "
                f"{no_room.description} ({no_room.err_code})"
            )
    return options


def _https_monitor(args: argparse.Namespace, options: ServerOptions) -> None:
    """``-ms``: nats-server's refusals (``StartMonitoring``); with TLS, jsemu's (no HTTPS monitor)."""
    https_port = getattr(args, "https_port", None)
    if not https_port:
        return
    if options.http_port:
        raise StartupError(
            f"Can't start monitoring: can't specify both HTTP ({options.http_port}) and HTTPs ({https_port}) ports"
        )
    if options.tls is None:
        raise StartupError("Can't start monitoring: TLS cert and key required for HTTPS")
    raise StartupError("--https_port: not supported by jsemu (no HTTPS monitor)", fatal=False)


def _flags_over_file(args: argparse.Namespace, options: ServerOptions) -> None:
    """Each flag given over what the file set (Go's second ``fs.Parse``)."""
    if args.port is not None:
        options.port = {0: DEFAULT_PORT, -1: 0}.get(args.port, args.port)  # ServerOptions' 0: random
    if args.host is not None:
        options.host = args.host
    if args.server_name is not None:
        options.server_name = args.server_name or None  # empty: the server id, as no name
    if args.jetstream:
        options.jetstream = True
    if getattr(args, "no_jetstream", False):
        options.jetstream = False
    if args.store_dir is not None:
        options.store_dir = args.store_dir or None
    if args.http_port is not None:
        options.http_port = args.http_port
    if getattr(args, "client_advertise", None):
        options.client_advertise = args.client_advertise
    if getattr(args, "max_payload", None):
        options.max_payload = args.max_payload
    if getattr(args, "cluster_size", None) is not None:
        options.cluster_size = args.cluster_size
    if getattr(args, "cluster_name", None):
        options.cluster_name = args.cluster_name
    if args.user is not None or args.password is not None or args.token is not None:
        options.auth = _auth_flags(args, options.auth)
    if args.tls or args.tlsverify or args.tlscert or args.tlskey or args.tlscacert:
        options.tls = _tls_flags(args, options.tls)


def _auth_flags(args: argparse.Namespace, auth: Auth | None) -> Auth | None:
    """``--user``/``--pass``/``--auth`` over the file's ``authorization`` user, password and
    token, as nats-server's fields: a user is required only with a name (``--pass`` alone, or
    ``--user ""`` over the file's user, leaves the server open), a token only when not empty."""
    auth = auth if auth is not None else Auth()
    if args.user is not None or args.password is not None:
        base = auth.user or User("")
        name = args.user if args.user is not None else base.name
        password = args.password if args.password is not None else base.password
        auth.user = User(name, password) if name else None
    if args.token is not None:
        auth.token = args.token
    if not (auth.token or auth.user or auth.users or auth.nkeys or auth.no_auth_user):
        return None
    return auth


def _tls_flags(args: argparse.Namespace, base: TlsOptions | None) -> TlsOptions:
    """``--tls*`` over the file's ``tls`` block, checked as nats-server checks them."""
    tls = base if base is not None else TlsOptions()
    tls.cert_file = args.tlscert or tls.cert_file
    tls.key_file = args.tlskey or tls.key_file
    tls.ca_file = args.tlscacert or tls.ca_file
    tls.verify = tls.verify or args.tlsverify
    if not tls.cert_file:
        raise StartupError("TLS Server certificate must be present and valid", fatal=False)
    if not tls.key_file:
        raise StartupError("TLS Server private key must be present and valid", fatal=False)
    error = check_files(tls)
    if error is not None:
        raise StartupError(error, fatal=False)
    return tls


def operator_demo(directory: Path) -> Path:
    """``--operator-demo DIR``: an operator, its system account, account ``APP`` (JetStream on)
    and its user ``app`` minted into ``DIR`` (``server.conf``, ``app.creds``) unless an earlier run
    left them there: clients connect with ``--creds DIR/app.creds``."""
    from ..testing.operator import OperatorSetup

    conf = directory / "server.conf"
    if not conf.exists():
        setup = OperatorSetup(directory)
        setup.account("APP", jetstream={})
        setup.user("app", "APP")
        conf.write_text(setup.config_text())
    return conf
