"""The NATS-based account resolver talking to the other servers of its cluster, as nats-server
2.15.1's ``DirAccResolver`` / ``CacheDirAccResolver`` and ``Server.fetch`` do
(``server/accounts.go``).

What crosses the routes is plain system account traffic; this module is the server's own side
of it (the answers are :mod:`.account_resolver`'s):

* **Own messages are not delivered to own subscriptions.** nats-server sends as its system
  client, which does not echo, so its ``CLAIMS.LOOKUP`` and ``CLAIMS.PACK`` requests reach the
  other servers only (and any client subscribed to them): the resolver's subscribers carry
  :class:`ResolverPeers` as their ``owner``, which the routers' no-echo rule skips.
* **Lookups** (``Server.fetch``): a user of an account the server does not have holds its
  CONNECT (:meth:`ResolverPeers.fetch`) while ``$SYS.REQ.ACCOUNT.<key>.CLAIMS.LOOKUP`` goes out
  with a reply in ``$SYS._INBOX.<server hash>.*``. nats-server waits for as many answers as it
  knows servers (here: routed servers); an empty answer counts only when it is the last one
  expected ("account jwt not found"), the first JWT wins and is stored (``saveIfNewer``), and
  after ``timeout`` it gives up ("fetching jwt timed out"). A standalone server therefore
  refuses an unknown account's user only after ``timeout``; in a cluster where every other
  server is a full resolver that lacks it, at once; where one is a cache (which does not answer
  lookups), after ``timeout``.
* **PACK on ``interval``** (full only): every ``interval`` the server sends
  ``$SYS.REQ.CLAIMS.PACK`` with its directory's hash and a fixed reply inbox; one server of the
  ``responder`` queue group answers ``key|jwt`` lines (nothing when the hashes agree) and an
  empty end message; each line is merged with ``saveIfNewer`` (an older or identical JWT is
  kept), so a server that started late or missed an update catches up within one ``interval``.
* **Expiry** (``ttl`` for the cache, a JWT's ``exp`` otherwise): every ``recheck`` the
  directory drops the JWTs past their deadline (:meth:`.resolver_dir.DirStore.evict_expired`).

Timers run on the server's clock (``Server.timers``), so a controlled clock drives them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..ids import get_hash, random_token
from ..protocol.jwt import JwtError, decode
from ..protocol.jwt.keys import PREFIX_ACCOUNT
from .account_requests import _Responder
from .operator_auth import is_key
from .sublist import Subscription

if TYPE_CHECKING:
    from .resolver_dir import DirStore
    from .routing import Router
    from .server import Server
    from .timers import Cancellable

__all__ = ["ResolverPeers", "lookup_subject"]

PACK_SUBJECT = b"$SYS.REQ.CLAIMS.PACK"
_INBOX = b"$SYS._INBOX."


def lookup_subject(key: str) -> bytes:
    return f"$SYS.REQ.ACCOUNT.{key}.CLAIMS.LOOKUP".encode()


@dataclass
class _Fetch:
    key: str
    expected: int
    done: Callable[[], None]
    timer: Cancellable | None = None


class ResolverPeers:
    """The resolver's requests to the rest of the cluster (see the module's docstring)."""

    #: The producer of the server's own resolver messages does not echo them.
    echo = False

    def __init__(self, server: Server, store: DirStore, merged: Callable[[str, str], None]) -> None:
        self.server = server
        self.store = store
        #: Called with the key and JWT that a lookup answer or a PACK line stored.
        self.merged = merged
        self.router: Router | None = None
        self._prefix = _INBOX + get_hash(server.server_id).encode() + b"."
        self.pack_inbox = self._prefix + b"pack"
        self._fetches: dict[bytes, _Fetch] = {}
        self._timers: list[Cancellable] = []

    def start(self, router: Router) -> None:
        self.router = router
        self.store.now_ns = self.server.clock.now_ns
        router.sublist.insert(
            Subscription(_Responder(router, self._reply, False, self), self._prefix + b"*", None, b"$SYS")
        )
        if self.store.settings.full:
            self._every(self.store.settings.interval_ns, self._send_pack)
        self._every(self.store.settings.recheck_ns, self.store.evict_expired)

    def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        for fetch in self._fetches.values():
            if fetch.timer is not None:
                fetch.timer.cancel()
        self._fetches.clear()

    def _every(self, period: int, action: Callable[[], object]) -> None:
        timers = self.server.timers
        clock = self.server.clock

        def tick() -> None:
            self._timers.remove(handle[0])
            handle[0] = timers.at(clock.now_ns() + period, tick)
            self._timers.append(handle[0])
            action()

        handle = [timers.at(clock.now_ns() + period, tick)]
        self._timers.append(handle[0])

    def _send(self, subject: bytes, reply: bytes, payload: bytes) -> None:
        if self.router is not None:
            self.router.route(self, subject, reply, 0, payload)
            self.server.flush()

    # --- PACK -----------------------------------------------------------------------------

    def _send_pack(self) -> None:
        self._send(PACK_SUBJECT, self.pack_inbox, self.store.hash())

    def _merge(self, body: bytes) -> None:
        """``DirJWTStore.Merge`` of one pack message (``key|jwt`` lines)."""
        for line in body.decode("utf-8", "replace").split("\n"):
            if not line:
                continue
            parts = line.split("|")
            if len(parts) != 2 or not is_key(parts[0], PREFIX_ACCOUNT):
                return  # Go stops at the first bad line ("Merging resulted in error")
            key, text = parts
            if not self._store(key, text):
                return

    def _store(self, key: str, text: str) -> bool:
        """``saveIfNewer``, then the account changed; False when refused."""
        try:
            changed = self.store.save_if_newer(key, text)
        except (OSError, ValueError):
            return False
        if changed:
            self.merged(key, text)
        return True

    # --- lookups --------------------------------------------------------------------------

    def fetch(self, key: str, done: Callable[[], None]) -> None:
        """Ask the cluster for ``key``'s JWT; ``done()`` once it is stored, or refused, or
        nobody answered within ``timeout`` (the caller then finds the account or not)."""
        cluster = self.server.cluster
        reply = self._prefix + random_token(22)
        fetch = self._fetches[reply] = _Fetch(key, len(cluster.routes) if cluster is not None else 0, done)
        deadline = self.server.clock.now_ns() + self.store.settings.timeout_ns
        fetch.timer = self.server.timers.at(deadline, lambda: self._finish(reply))
        self._send(lookup_subject(key), reply, b"")

    def _finish(self, reply: bytes) -> None:
        fetch = self._fetches.pop(reply, None)
        if fetch is not None:
            if fetch.timer is not None:
                fetch.timer.cancel()
            fetch.done()

    def _reply(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        if subject == self.pack_inbox:
            if body:
                self._merge(body)
            return
        fetch = self._fetches.get(subject)
        if fetch is None:
            return
        fetch.expected -= 1
        if not body and fetch.expected > 0:
            return  # an empty answer counts only when it is the last one expected
        if body:
            text = body.decode("utf-8", "replace")
            try:
                subject_key = decode(text, generic_as_v1=True).claims.get("sub")
            except JwtError:
                subject_key = None
            if subject_key == fetch.key:
                self._store(fetch.key, text)
        self._finish(subject)
