"""Auth callout (ADR-26) in config mode: an external service decides who logs in.

With ``authorization { auth_callout { issuer, account, auth_users } }`` nats-server, after its
own checks of a CONNECT (``processClientOrLeafAuthentication``'s deferred part), hands the
login to a service unless the client is one of ``auth_users`` or sits in an account outside
``allowed_accounts``: its answer replaces whatever the server's own checks said. The server
makes a one-time user nkey, subscribes a ``$SYS._INBOX.<x>.<y>`` reply in the callout
``account``, and publishes its signed ``authorization_request`` (``protocol/jwt/callout.py``)
to ``$SYS.REQ.USER.AUTH`` there. The client's read loop waits meanwhile; a response is
checked (signed by ``issuer``, for the one-time key and this server, a user JWT issued by
``issuer`` for that key, the account to place it in its ``aud``), no answer within the auth
timeout refuses it. Every refusal reads ``Authorization Violation`` on the wire; the reason
goes to the log. A granted user gets the user JWT's permissions (its ``subs``/``payload``
limits are not applied, as nats-server's ``buildInternalNkeyUser`` leaves them out) and its
``exp``; a user placed in the callout account may not publish to ``$SYS.REQ.USER.AUTH``.

The connection asks :meth:`AuthCallout.wanted` after its own check and, if so, :meth:`start`
with a callback: it stops reading until the callback ran (``server/connection.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..ids import random_token
from ..protocol.jwt.callout import CALLOUT_SUBJECT, check_response, request_jwt
from ..protocol.jwt.keys import PREFIX_SERVER, PREFIX_USER, KeyPair
from .auth import User
from .auth_callout_settings import CalloutSettings
from .permissions import Permissions, SubjectRules
from .routing import GLOBAL_ACCOUNT
from .sublist import Subscription

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .server import Server

__all__ = ["AuthCallout", "CalloutUser", "server_key", "with_callout_deny"]

log = logging.getLogger("jsemu.server")

#: Called with the user the service granted, or None (refused, or no answer in time).
Done = Callable[[User | None], None]


def server_key() -> KeyPair:
    """The server's own nkey: it signs the requests, its public key is the server id."""
    return KeyPair.create(PREFIX_SERVER)


@dataclass(frozen=True)
class CalloutUser(User):
    """A user the callout granted: its JWT's ``exp`` (unix seconds, 0: never)."""

    expires: int = 0


def raw_user(opts: dict[str, Any]) -> str:
    """``getRawAuthUser``: the name ``auth_users`` are matched against."""
    for key in ("nkey", "user"):
        value = opts.get(key)
        if isinstance(value, str) and value:
            return value
    if opts.get("auth_token"):
        return "[REDACTED]"
    return ""


def with_callout_deny(perms: Permissions | None) -> Permissions:
    """``mergeDenyPermissions(pub, [$SYS.REQ.USER.AUTH])`` for a user of the callout account."""
    subject = CALLOUT_SUBJECT.decode()
    if perms is None:
        return Permissions(pub_deny=SubjectRules([subject]))
    denied = perms.pub_deny.entries if perms.pub_deny is not None else []
    if subject in denied:
        return perms
    merged = Permissions(perms.pub_allow, SubjectRules([*denied, subject]), perms.sub_allow, perms.sub_deny)
    merged.response = perms.response
    return merged


class _Reply:
    """The internal subscriber of one request's reply inbox."""

    __slots__ = ("on_reply",)
    echo = True

    def __init__(self, on_reply: Callable[[bytes], None]) -> None:
        self.on_reply = on_reply

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        self.on_reply(msg[hdr:] if hdr > 0 else msg)
        return True


class AuthCallout:
    """The server's side of the callout (one per server with ``auth_callout``)."""

    def __init__(self, server: Server, settings: CalloutSettings, key: KeyPair) -> None:
        self.server = server
        self.settings = settings
        self.key = key

    def wanted(self, user: User | None, opts: dict[str, Any]) -> bool:
        """Whether this login goes to the service: the client's account (``$G`` if its own
        check failed) is delegated, and the client is not one of ``auth_users``."""
        account = user.account if user is not None else GLOBAL_ACCOUNT
        allowed = self.settings.allowed_accounts
        if account != GLOBAL_ACCOUNT and allowed and account not in allowed:
            return False
        return raw_user(opts) not in self.settings.auth_users

    def start(self, conn: ClientConnection, timeout: float, done: Done) -> None:
        """Send the request for ``conn``'s CONNECT; ``done`` runs once, with the answer."""
        server = self.server
        settings = self.settings
        router = server.account_space.by_name.get(settings.account)
        if router is None:
            log.warning('No valid account "%s" for auth callout request', settings.account)
            done(None)
            return
        user_key = KeyPair.create(PREFIX_USER).public_key
        inbox = b"$SYS._INBOX." + random_token(8) + b"." + random_token(8)
        state: dict[str, Any] = {}

        def finish(user: User | None) -> None:
            if state.get("done"):
                return
            state["done"] = True
            router.sublist.remove(sub)
            timer = state.get("timer")
            if timer is not None:
                timer.cancel()
            done(user)

        def on_reply(body: bytes) -> None:
            finish(self._granted(body, user_key, router.name))

        def on_timeout() -> None:
            log.debug('Authorization callout response not received in time on account "%s"', settings.account)
            finish(None)

        sub = Subscription(_Reply(on_reply), inbox, None, b"$SYS")
        router.sublist.insert(sub)
        opts = conn.opts
        node = conn.node
        client = {
            "host": conn.client_ip,
            "id": conn.cid,
            "user": raw_user(opts),
            "name": opts.get("name") or "",
            "kind": "Client",
            "type": "websocket" if conn.info_base is not None else "nats",
            "nonce": conn.nonce if opts.get("sig") else "",
        }
        info = {
            "name": node.name,
            "host": server.options.host,
            "id": node.server_id,
            "version": server.client_info(conn).get("version", ""),
        }
        request = request_jwt(self.key, settings.issuer, user_key, info, client, opts, int(time.time()), timeout)
        state["timer"] = server.timers.at(server.clock.now_ns() + round(timeout * 1e9), on_timeout)
        router.route(None, CALLOUT_SUBJECT, inbox, -1, request.encode())

    def _granted(self, body: bytes, user_key: str, account: str) -> User | None:
        settings = self.settings
        checked = check_response(body, user_key, self.server.server_id, settings.issuer, account)
        claims = checked.user
        if claims is None:
            log.warning("%s", checked.error)
            return None
        placement = claims.get("aud")
        if not isinstance(placement, str) or placement not in self.server.account_space.by_name:
            log.warning('No valid account "%s" for auth callout response on account "%s"', placement, account)
            return None
        from .operator_auth import build_permissions  # the JWT's pub/sub/resp, as for operator mode

        nats = claims.get("nats") if isinstance(claims.get("nats"), dict) else {}
        try:
            perms = build_permissions(nats or {})
        except ValueError:
            log.warning("Error validating user JWT: invalid subject")
            return None
        if placement == settings.account:
            perms = with_callout_deny(perms)
        name = claims.get("name")
        exp = claims.get("exp")
        expires = exp if isinstance(exp, int) and not isinstance(exp, bool) and exp > 0 else 0
        return CalloutUser(str(name) if isinstance(name, str) and name else user_key, "", perms, placement, expires)
