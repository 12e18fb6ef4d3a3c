"""The NATS-based account resolver (``resolver: {type: full | cache, dir: ...}``): account JWTs
pushed, looked up, listed and deleted through the system account, as nats-server 2.15.1's
``DirAccResolver`` and ``CacheDirAccResolver`` (``server/accounts.go``) answer them.

The system account's internal subscriptions (their interest crosses routes: in a cluster every
server answers, one of the ``responder`` queue group a PACK; what the server itself sends them is
not delivered to them, see :mod:`.resolver_peers`, which also holds the lookups of unknown
accounts, the PACK sync on ``interval`` and the expiry of JWTs):

* ``$SYS.REQ.CLAIMS.UPDATE`` (any account) and ``$SYS.REQ.ACCOUNT.<key>.CLAIMS.UPDATE`` /
  ``$SYS.ACCOUNT.<key>.CLAIMS.UPDATE``: the body is an account JWT. It must decode (signature by
  its ``iss`` included; which operator signed it is *not* checked here, only when a user logs in)
  and, on the per-account subjects, be for ``<key>``. The full resolver stores any account (a user
  of it can log in at once); the cache only those the server has (``jwt update cache skipped``).
  The answer is ``{"server": ..., "data": {"account", "code": 200, "message"}}`` or
  ``{"server": ..., "error": {"account", "code": 500, "description"}}``.
* ``$SYS.REQ.ACCOUNT.<key>.CLAIMS.LOOKUP`` (full only): the JWT, or an empty message when the
  directory has none (the cache does not answer: the requester hears no responders).
* ``$SYS.REQ.CLAIMS.LIST``: ``{"data": [keys...], "server": ...}`` (``data`` first: Go's map).
* ``$SYS.REQ.CLAIMS.DELETE``: a generic JWT the operator (or one of its signing keys) signed for
  itself (``sub`` = ``iss``), ``nats.accounts`` the keys; only with ``allow_delete``; never the
  system account. Deleted accounts are gone for new logins and their clients are closed.
* ``$SYS.REQ.CLAIMS.PACK`` (full only, queue group ``responder``): one ``key|jwt`` message per
  unexpired JWT and an empty one to end, or just the empty one when the body is the store's hash.

A JWT that changes an account the server runs is handed to :attr:`AccountResolver.on_change`
hooks (claim updates applied to connected clients are another module's business).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.gojson import dumps
from ..protocol.jwt import JwtError, decode
from ..protocol.jwt.keys import PREFIX_ACCOUNT
from ..protocol.texts import ERR_ACCOUNT_AUTHENTICATION_EXPIRED
from .account_requests import _Responder
from .accounts import Account, AccountConfig
from .claim_live import in_time
from .expired_accounts import fetch_again
from .operator_auth import JwtUser, OperatorAuth, account_from_jwt, is_key
from .resolver_dir import DELETE_NONE, DirStore
from .resolver_peers import ResolverPeers
from .sublist import Subscription

if TYPE_CHECKING:
    from .routing import Router
    from .server import Server

__all__ = ["AccountResolver", "load_directory"]

_UPDATE = b"$SYS.REQ.CLAIMS.UPDATE"
_UPDATE_ACCOUNT = (b"$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", b"$SYS.ACCOUNT.*.CLAIMS.UPDATE")
_LOOKUP = b"$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP"
_LIST = b"$SYS.REQ.CLAIMS.LIST"
_DELETE = b"$SYS.REQ.CLAIMS.DELETE"
_PACK = b"$SYS.REQ.CLAIMS.PACK"


def load_directory(auth: OperatorAuth, store: DirStore, preload: dict[str, str]) -> None:
    """At start: the preloads stored (``saveIfNewer``), then every JWT of the directory that a
    trusted operator signed for its own key becomes an account the server has."""
    for key, text in preload.items():
        try:
            store.save_if_newer(key, text)
        except (OSError, ValueError):
            continue
    for key in store.account_keys():
        stored = store.load(key)
        if stored is None:
            continue
        try:
            account = account_from_jwt(stored, auth.trusted)
        except JwtError:
            continue
        if account.public_key == key:
            auth.accounts[key] = account


def _decode_account(body: bytes) -> tuple[dict[str, Any] | None, str]:
    """``jwt.DecodeAccountClaims``: the claims, or None and why not."""
    try:
        token = decode(body.decode("utf-8", "replace"), generic_as_v1=True)
    except JwtError as exc:
        return None, str(exc)
    if token.kind != "account":
        return None, "not account claim"
    return token.claims, ""


class AccountResolver:
    """The resolver's system account subscriptions (see the module's docstring)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        #: Called with the account key after a stored JWT changed an account the server has.
        self.on_change: list[Callable[[str], None]] = []
        #: The requests to the rest of the cluster (lookups, PACK), once started.
        self.peers: ResolverPeers | None = None

    @property
    def _auth(self) -> OperatorAuth:
        auth = self.server.options.auth
        assert isinstance(auth, OperatorAuth)
        return auth

    def start(self) -> None:
        auth = self.server.options.auth
        router = self.server.account_space.by_name.get(self.server.options.system_account)
        if not isinstance(auth, OperatorAuth) or auth.resolver_store is None or router is None:
            return
        full = auth.resolver_store.settings.full
        handlers: list[tuple[bytes, Callable[[Router, bytes, bytes | None, bytes], None], bytes | None]] = [
            (_UPDATE_ACCOUNT[0], self._update_account, None),
            (_UPDATE_ACCOUNT[1], self._update_account, None),
            (_UPDATE, self._update, None),
            (_LIST, self._list, None),
            (_DELETE, self._delete, None),
        ]
        if full:
            handlers += [(_LOOKUP, self._lookup, None), (_PACK, self._pack, b"responder")]
        peers = self.peers = ResolverPeers(self.server, auth.resolver_store, self._changed)
        for subject, handler, queue in handlers:
            router.sublist.insert(Subscription(_Responder(router, handler, False, peers), subject, queue, b"$SYS"))
        peers.start(router)

    def stop(self) -> None:
        if self.peers is not None:
            self.peers.stop()

    def missing_account(self, connect: dict[str, Any]) -> str | None:
        """The account of a CONNECT's user JWT when the server has no JWT for it and should
        look it up in the cluster first (``lookupAccount`` -> ``fetch``); None otherwise. An
        account held whose JWT has expired is fetched again from the resolver first
        (``server/expired_accounts.py``), and looked up in the cluster when the directory
        has none."""
        if not isinstance(self.server.options.auth, OperatorAuth):
            return None
        text = connect.get("jwt")
        if not isinstance(text, str) or not text:
            return None
        try:
            token = decode(text)
        except JwtError:
            return None
        key = token.nats.get("issuer_account") or token.claims.get("iss")
        if not isinstance(key, str) or not is_key(key, PREFIX_ACCOUNT):
            return None
        if key in self._auth.accounts:  # held: fetched again if it has expired
            return key if fetch_again(self.server, key) and self.peers is not None else None
        if self.peers is None:
            return None
        store = self._auth.resolver_store
        return None if store is None or store.has(key) else key  # a JWT held is not fetched again

    # --- answers ------------------------------------------------------------------------

    def _send(self, router: Router, reply: bytes | None, payload: bytes) -> None:
        if reply:
            router.outbound.send_via_sendq(reply, -1, payload)

    def _respond(self, router: Router, reply: bytes | None, account: str, message: str, error: str = "") -> None:
        """``respondToUpdate``."""
        envelope = self.server.envelope
        if error:
            failure: dict[str, Any] = {"account": account} if account else {}
            failure.update(code=500, description=f"{message} - {error}")
            body = envelope.response(error=failure)
        else:
            status: dict[str, Any] = {"account": account} if account else {}
            status.update(code=200, message=message)
            body = envelope.response(status)
        self._send(router, reply, dumps(body).encode())

    # --- updates ------------------------------------------------------------------------

    def _update_account(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        tokens = subject.decode("utf-8", "replace").split(".")
        key = tokens[3] if len(tokens) == 6 else tokens[2]
        self._store(router, reply, body, key)

    def _update(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        self._store(router, reply, body, None)

    def _store(self, router: Router, reply: bytes | None, body: bytes, key: str | None) -> None:
        store = self._auth.resolver_store
        assert store is not None
        full = store.settings.full
        failed = "jwt update resulted in error" if full else "jwt update cache resulted in error"
        claims, why = _decode_account(body)
        if claims is None:
            return self._respond(router, reply, "n/a" if full or key is None else key, failed, why)
        subject = str(claims.get("sub") or "")
        if key is not None and subject != key:
            return self._respond(router, reply, key, failed, "subject does not match jwt content")
        if not full and subject not in self._auth.accounts:
            return self._respond(router, reply, subject, "jwt update cache skipped")
        try:
            changed = store.save(subject, body.decode())
        except (OSError, ValueError) as exc:
            return self._respond(router, reply, subject, failed, str(exc))
        if changed:
            self._changed(subject, body.decode())
        return self._respond(router, reply, subject, "jwt updated" if full else "jwt updated cache")

    def take(self, key: str, text: str) -> None:
        """The directory's JWT for ``key``, fetched again for an expired account
        (``server/expired_accounts.py``): in force when it holds."""
        self._changed(key, text)

    def _changed(self, key: str, text: str) -> None:
        """A JWT stored for ``key``: the account the server has (or a new one) takes it."""
        auth = self._auth
        try:
            account = account_from_jwt(text, auth.trusted)
        except JwtError:
            return  # kept in the directory; its users are refused, as nats-server's fetch fails
        if account.public_key != key or not in_time(decode(text).claims, self.server.clock.now_ns() // 1_000_000_000):
            return  # kept in the directory; the account keeps the claims it had
        auth.accounts[key] = account
        space = self.server.account_space
        if key not in space.by_name:
            config = AccountConfig(key, jetstream=account.jetstream, limits=account.js_limits)
            added = Account(self.server, config)
            if self.server.cluster is not None:
                self.server.cluster.attach_account(added)
            space.by_name[key] = added
            self.server.account_requests.attach_all()
            self.server.account_added(added)
        for hook in self.on_change:
            hook(key)

    # --- lookups, lists, packs ------------------------------------------------------------

    def _lookup(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        store = self._auth.resolver_store
        assert store is not None
        key = subject.decode("utf-8", "replace").split(".")[3]
        text = store.load(key)
        self._send(router, reply, text.encode() if text is not None else b"")

    def _list(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        store = self._auth.resolver_store
        assert store is not None
        answer = {"data": store.account_keys(), "server": self.server.envelope.response()["server"]}
        self._send(router, reply, dumps(answer).encode())

    def _pack(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        store = self._auth.resolver_store
        assert store is not None
        if not reply:
            return
        if body != store.hash():
            now = time.time()
            for key in store.account_keys():
                text = store.load(key)
                if not text:
                    continue
                try:
                    exp = decode(text).claims.get("exp")
                except JwtError:
                    exp = None
                if isinstance(exp, int) and 0 < exp < now:
                    continue
                self._send(router, reply, f"{key}|{text}".encode())
        self._send(router, reply, b"")

    # --- deletes ------------------------------------------------------------------------

    def _delete(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        """``handleDeleteRequest``."""
        auth = self._auth
        store = auth.resolver_store
        assert store is not None
        who, error, keys = "", "", []
        try:
            token = decode(body.decode("utf-8", "replace"))
        except JwtError as exc:
            error = str(exc)
        else:
            who = str(token.claims.get("sub") or "")
            listed = (
                token.claims.get("nats", {}).get("accounts") if isinstance(token.claims.get("nats"), dict) else None
            )
            if store.settings.delete == DELETE_NONE:
                error = "delete must be enabled in server config"
            elif who != token.claims.get("iss"):
                error = "not self signed"
            elif who not in auth.trusted:
                error = "not trusted"
            elif not isinstance(listed, list):
                error = "malformed request"
            else:
                for entry in listed:
                    if not isinstance(entry, str) or not is_key(entry, PREFIX_ACCOUNT):
                        error = "malformed request"
                        break
                    if entry == self.server.options.system_account:
                        error = "not allowed to delete system account"
                        break
                    keys.append(entry)
        if error:
            return self._respond(router, reply, "", f"delete accounts request by {who} failed", error)
        for key in keys:
            store.delete(key, store.settings.delete)
            self._removed(key)
        return self._respond(router, reply, "", f"deleted {len(keys)} accounts")

    def _removed(self, key: str) -> None:
        """``removeCb``: the account is gone for new logins and its clients are closed."""
        self._auth.accounts.pop(key, None)
        for conn in list(self.server.connections.values()):
            user = conn.user
            if isinstance(user, JwtUser) and user.account == key and not conn.closed:
                conn.close_with_error(ERR_ACCOUNT_AUTHENTICATION_EXPIRED)
        self.server.flush()
