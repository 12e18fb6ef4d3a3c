"""``/healthz`` and ``$SYS.REQ.SERVER.<PING|id>.HEALTHZ``: nats-server's ``healthz`` (``monitor.go``).

The answer is a ``HealthStatus``: ``{"status":"ok"}``, or ``"unavailable"`` / ``"error"`` with
an ``error`` text (or, with ``details``, an ``errors`` list of typed entries) and a status
code: 400 when a stream is named without its account or a consumer without its stream,
404 when the named account, stream or consumer is not there, 503 for any other failure.
``$SYS`` answers carry ``status_code``; over HTTP it is the response's status instead.

What a standalone server checks is its store, not its memory: nats-server walks the folders
of ``store_dir/jetstream`` (``<account>/streams/<stream>``), so an account is "found" once a
file stream of it was ever stored (its folder stays when the stream is deleted), a memory
stream never is, and a consumer is looked up on a stream so found (memory consumers too).
jsemu's file store keeps the same layout; without a ``store_dir`` the report lists the
accounts with file streams and those streams instead (:meth:`JetStreamReport.stored`).

``js-server-only`` stops after the connection checks, a server without JetStream stops
there, and ``js-enabled-only`` (or the deprecated ``js-enabled``) after "JetStream is on".
``js-meta-only`` changes nothing standalone. A simulated or routed cluster answers only
the bad-request checks and otherwise ``ok``: nats-server's clustered checks (the meta
leader, the assets assigned to this server) are not modelled here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..protocol.gojson.runes import go_quote

__all__ = ["HealthAssets", "HealthzOptions", "StoreFolders", "healthz", "store_folders"]

_NA = "unavailable"
#: The folder of the store nats-server stages snapshots in, which the health check skips.
_SNAP_STAGING = ".snap-staging"


@dataclass(frozen=True)
class HealthzOptions:
    """``HealthzOptions``: what to check (the query of /healthz, the body of a $SYS request)."""

    js_enabled: bool = False
    js_enabled_only: bool = False
    js_server_only: bool = False
    js_meta_only: bool = False
    account: str = ""
    stream: str = ""
    consumer: str = ""
    details: bool = False

    @classmethod
    def from_event(cls, options: dict[str, Any]) -> HealthzOptions:
        """From a decoded ``HealthzEventOptions`` body (JSON keys as nats-server names them)."""
        return cls(
            js_enabled=bool(options.get("js-enabled")),
            js_enabled_only=bool(options.get("js-enabled-only")),
            js_server_only=bool(options.get("js-server-only")),
            js_meta_only=bool(options.get("js-meta-only")),
            account=options.get("account") or "",
            stream=options.get("stream") or "",
            consumer=options.get("consumer") or "",
            details=bool(options.get("details")),
        )


class HealthAssets(Protocol):
    """What the health check reads of JetStream (``jsemu.jetstream.monitoring``)."""

    def stored(self) -> Sequence[tuple[str, Sequence[str]]]:
        """Each account folder of the store, by name, with the stream folders in it."""
        ...

    def consumer_names(self, account: str, stream: str) -> Collection[str] | None:
        """The consumers of a loaded stream; None: the account has no such stream loaded."""
        ...


def store_folders(root: Path) -> list[tuple[str, list[str]]]:
    """The account folders of a store's ``jetstream`` folder with their stream folders, by name
    (``os.ReadDir``'s order), as nats-server's health check walks them."""
    return [(name, _folders(root / name / "streams")) for name in _folders(root) if name != _SNAP_STAGING]


def _folders(path: Path) -> list[str]:
    """``os.ReadDir`` names (none when ``path`` is missing or not a folder)."""
    try:
        return sorted(entry.name for entry in path.iterdir())
    except OSError:
        return []


class StoreFolders:
    """JetStream on but in no account: the store's folders are still walked (any stream in them
    is one that "could not be recovered"), as nats-server does."""

    def __init__(self, store_dir: str | None) -> None:
        self.root = Path(store_dir) / "jetstream" if store_dir else None

    def stored(self) -> list[tuple[str, list[str]]]:
        return store_folders(self.root) if self.root is not None else []

    def consumer_names(self, account: str, stream: str) -> Collection[str] | None:
        return None


class _Health:
    """The answer being built: one error ends it without ``details``, adds to ``errors`` with."""

    def __init__(self, details: bool) -> None:
        self.details = details
        self.status = "ok"
        self.code = 0
        self.error = ""
        self.errors: list[dict[str, str]] = []

    def fail(self, kind: str, text: str, code: int = 0, status: str = _NA, **where: str) -> None:
        if code:
            self.code = code
        if self.details:
            self.errors.append({"type": kind, **{k: v for k, v in where.items() if v}, "error": text})
        else:
            self.status, self.error = status, text

    def only(self, kind: str, text: str, code: int, **where: str) -> None:
        """A "not found": replaces any errors gathered so far (as nats-server does)."""
        self.errors = []
        self.fail(kind, text, code, **where)

    def json(self) -> dict[str, Any]:
        if self.details:
            self.status = "error" if self.errors else "ok"
        code = self.code or (503 if self.error or self.errors else 200)
        out: dict[str, Any] = {"status": self.status, "status_code": code}
        if self.error:
            out["error"] = self.error
        if self.errors:
            out["errors"] = self.errors
        return out


def healthz(
    opts: HealthzOptions,
    assets: HealthAssets | None,
    known_account: Callable[[str], bool],
    clustered: bool = False,
) -> dict[str, Any]:
    """The ``HealthStatus`` (with ``status_code``) for ``opts``; ``assets`` None: JetStream is off."""
    health = _Health(opts.details)
    if opts.stream and not opts.account:
        text = '"account" must not be empty when checking stream health'
        health.fail("BAD_REQUEST", text, 400, status="error")
        return health.json()
    if opts.consumer and not opts.stream:
        text = '"stream" must not be empty when checking consumer health'
        health.fail("BAD_REQUEST", text, 400, status="error")
        return health.json()
    if opts.js_server_only or assets is None or opts.js_enabled_only or opts.js_enabled or clustered:
        return health.json()
    _check_store(opts, assets, known_account, health)
    return health.json()


def _check_store(
    opts: HealthzOptions, assets: HealthAssets, known_account: Callable[[str], bool], health: _Health
) -> None:
    """nats-server's walk over the store's folders (the single-server branch of ``healthz``)."""
    account_found = stream_found = consumer_found = False
    for account, streams in assets.stored():
        if opts.account:
            if account != opts.account:
                continue
            account_found = True
        if not known_account(account):
            health.fail("ACCOUNT", f"JetStream account '{account}' could not be resolved", account=account)
            if not health.details:
                return
            continue
        for stream in streams:
            if opts.stream:
                if stream != opts.stream:
                    continue
                stream_found = True
            consumers = assets.consumer_names(account, stream)
            if consumers is None:
                text = f"JetStream stream '{account} > {stream}' could not be recovered"
                health.fail("STREAM", text, account=account, stream=stream)
                if not health.details:
                    return
                continue
            if stream_found:
                consumer_found = bool(opts.consumer) and opts.consumer in consumers
                break
        if account_found:
            break
    account, stream, consumer = opts.account, opts.stream, opts.consumer
    if account and not account_found:
        health.only("ACCOUNT", f"JetStream account {_q(account)} not found", 404, account=account)
    elif stream and not stream_found:
        text = f"JetStream stream {_q(stream)} not found on account {_q(account)}"
        health.only("STREAM", text, 404, account=account, stream=stream)
    elif consumer and not consumer_found:
        text = f"JetStream consumer {_q(consumer)} not found for stream {_q(stream)} on account {_q(account)}"
        health.only("CONSUMER", text, 404, account=account, stream=stream, consumer=consumer)


def _q(text: str) -> str:
    """Go's ``%q``."""
    return go_quote(text)
