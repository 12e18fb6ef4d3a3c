"""Auth callout (ADR-26): an external service decides who logs in.

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

Operator mode: an account JWT's ``authorization`` claims (``auth_users``, ``allowed_accounts``)
give that account a callout for its users (but ``auth_users``); the request goes out in the
account, the response may be signed by a signing key of it, and the user JWT's issuing account
(the callout's or an allowed one) is where the user is placed, with that account's limits.
``xkey``: the request is sealed for the service's curve key with the server's own
(``protocol/jwt/xkeys.py``, PyNaCl), which a ``Nats-Server-Xkey`` header names; a response
that is not a JWT (``eyJ``...) is opened with it.

The connection asks :meth:`AuthCallout.settings_for` after its own check and, if it names a
callout, :meth:`start` with a callback: it stops reading until the callback ran
(``server/connection.py``).
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
from ..protocol.jwt.xkeys import CurveKey, XKeyError, available
from .auth import Auth, User
from .auth_callout_settings import CalloutSettings
from .operator_auth import JwtUser, OperatorAuth, jwt_permissions, scoped_user
from .permissions import Permissions, SubjectRules
from .routing import GLOBAL_ACCOUNT
from .sublist import Subscription

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .server import Server

__all__ = ["AuthCallout", "CalloutUser", "in_callout_account", "server_key", "with_callout_deny"]

log = logging.getLogger("jsemu.server")
#: The request's header naming the server's curve key when it is sealed (``AuthRequestXKeyHeader``).
XKEY_HEADER = b"Nats-Server-Xkey"

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


def in_callout_account(auth: Auth, user: User) -> bool:
    """Whether a user that logged in without the callout sits in the callout's account (it
    may then not publish to ``$SYS.REQ.USER.AUTH``)."""
    if isinstance(auth, OperatorAuth):
        account = auth.accounts.get(user.account)
        return account is not None and account.callout is not None
    return auth.callout is not None and user.account == auth.callout.account


class _Reply:
    """The internal subscriber of one request's reply inbox."""

    __slots__ = ("on_reply",)
    echo = True

    def __init__(self, on_reply: Callable[[bytes], None]) -> None:
        self.on_reply = on_reply

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        self.on_reply(msg[hdr:] if hdr > 0 else msg)
        return True


class _Refused(Exception):
    """A response that lets nobody in, with the text nats-server logs (``Warnf(errStr)``) and
    sends as the reason of the account's ``$SYS.ACCOUNT.CLIENT.AUTH.ERR`` event."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class AuthCallout:
    """The server's side of the callout (a server with ``auth_callout``, or in operator mode)."""

    def __init__(self, server: Server, key: KeyPair) -> None:
        self.server = server
        self.key = key
        #: Why the last login the callout refused was refused (the text nats-server logs; empty
        #: when the service did not answer in time): read by ``done`` for the refusal's event.
        self.refusal = ""
        #: The server's curve key (its INFO's ``xkey``), when PyNaCl can seal with it.
        self.curve: CurveKey | None = CurveKey.create() if available() else None

    def settings_for(self, auth: Auth, user: User | None, opts: dict[str, Any]) -> CalloutSettings | None:
        """The callout this login goes to, if any. Config mode: the client's account (``$G``
        if its own check failed) is delegated and the client is not one of ``auth_users``.
        Operator mode: the user JWT's account has ``authorization`` claims and the user's key
        is not one of its ``auth_users``."""
        if isinstance(auth, OperatorAuth):
            account = auth.accounts.get(user.account) if user is not None else None
            settings = account.callout if account is not None else None
            if settings is None or user is None or user.name in settings.auth_users:
                return None
            return settings
        settings = auth.callout
        if settings is None:
            return None
        account_name = user.account if user is not None else GLOBAL_ACCOUNT
        allowed = settings.allowed_accounts
        if account_name != GLOBAL_ACCOUNT and allowed and account_name not in allowed:
            return None
        return None if raw_user(opts) in settings.auth_users else settings

    def start(
        self, conn: ClientConnection, settings: CalloutSettings, timeout: float, done: Done, user: User | None = None
    ) -> None:
        """Send the request for ``conn``'s CONNECT (``user``: who its own check found, operator
        mode's JWT user); ``done`` runs once, with the answer."""
        server = self.server
        router = server.account_space.by_name.get(settings.account)
        if router is None:
            log.warning('No valid account "%s" for auth callout request', settings.account)
            self.refusal = f'No valid account "{settings.account}" for auth callout request'
            done(None)
            return
        if settings.xkey and self.curve is None:
            log.warning('auth callout xkey of account "%s" needs PyNaCl', settings.account)
            self.refusal = f'auth callout xkey of account "{settings.account}" needs PyNaCl'
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
            try:
                user: User | None = self._granted(conn, settings, body, user_key, router.name)
                self.refusal = ""
            except _Refused as refused:
                if refused.text:
                    log.warning("%s", refused.text)
                self.refusal, user = refused.text, None
            finish(user)

        def on_timeout() -> None:
            log.debug('Authorization callout response not received in time on account "%s"', settings.account)
            self.refusal = ""
            finish(None)

        sub = Subscription(_Reply(on_reply), inbox, None, b"$SYS")
        router.sublist.insert(sub)
        opts = conn.opts
        node = conn.node
        client = {
            "host": conn.client_ip,
            "id": conn.cid,
            "user": raw_user(opts) or (user.name if isinstance(user, JwtUser) else ""),
            "name_tag": user.user_name if isinstance(user, JwtUser) else "",
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
            "xkey": self.curve.public_key if settings.xkey and self.curve is not None else "",
        }
        request = request_jwt(
            self.key, settings.issuer, user_key, info, client, opts, int(time.time()), timeout, self._tls_of(conn)
        )
        state["timer"] = server.timers.at(server.clock.now_ns() + round(timeout * 1e9), on_timeout)
        if settings.xkey and self.curve is not None:
            header = b"NATS/1.0\r\n" + XKEY_HEADER + b": " + self.curve.public_key.encode() + b"\r\n\r\n"
            sealed = self.curve.seal(request.encode(), settings.xkey)
            router.route(None, CALLOUT_SUBJECT, inbox, len(header), header + sealed)
        else:
            router.route(None, CALLOUT_SUBJECT, inbox, -1, request.encode())

    def _tls_of(self, conn: ClientConnection) -> dict[str, Any] | None:
        """``client_tls`` of a client of the TLS client port (not of a WebSocket one)."""
        tls = self.server.options.tls
        if tls is None or conn.transport is None or conn.info_base is not None:
            return None
        from .client_tls import client_tls  # cryptography's x509: ~20 ms a server start need not pay

        return client_tls(conn.transport.get_extra_info("ssl_object"), tls.ca_file if tls.verify else "")

    def _granted(
        self, conn: ClientConnection, settings: CalloutSettings, body: bytes, user_key: str, account: str
    ) -> User:
        auth = conn.current_auth()
        encrypted = False
        if settings.xkey and self.curve is not None and body and not body.startswith(b"eyJ"):
            try:
                body = self.curve.open(body, settings.xkey)
            except XKeyError as exc:
                raise _Refused(f'Error decrypting auth callout response on account "{account}": {exc}') from None
            encrypted = True
        if settings.operator:
            jwt_account = auth.accounts.get(settings.account) if isinstance(auth, OperatorAuth) else None
            if jwt_account is None:
                raise _Refused("")
            signers = frozenset(jwt_account.signing_keys)
            checked = check_response(
                body, user_key, self.server.server_id, settings.issuer, account, signers, any_signer=encrypted
            )
        else:
            checked = check_response(body, user_key, self.server.server_id, settings.issuer, account)
        claims = checked.user
        if claims is None:
            raise _Refused(str(checked.error))
        if settings.operator:
            assert isinstance(auth, OperatorAuth)
            return self._operator_user(auth, settings, claims, user_key, account)
        placement = claims.get("aud")
        if not isinstance(placement, str) or placement not in self.server.account_space.by_name:
            raise _Refused(f'No valid account "{placement}" for auth callout response on account "{account}"')
        nats = claims.get("nats") if isinstance(claims.get("nats"), dict) else {}
        try:
            perms = jwt_permissions(nats or {})
        except ValueError:
            raise _Refused("Error validating user JWT: invalid subject") from None
        if placement == settings.account:
            perms = with_callout_deny(perms)
        name = claims.get("name")
        return CalloutUser(
            str(name) if isinstance(name, str) and name else user_key, "", perms, placement, _exp(claims)
        )

    def _operator_user(
        self, auth: OperatorAuth, settings: CalloutSettings, claims: dict[str, Any], user_key: str, account: str
    ) -> User:
        """``getIssuerAccount`` and ``assignAccountAndPermissions`` of operator mode: the user
        JWT's account (``issuer_account``, else its ``iss``) is the callout's or an allowed one;
        the user is placed there, its issuer that account or one of its signing keys; a scoped
        key's user gets the scope's template as its permissions (its limits are not applied:
        nats-server makes the callout's user an nkey user)."""
        nats = claims.get("nats") if isinstance(claims.get("nats"), dict) else {}
        assert isinstance(nats, dict)
        issuer = claims.get("iss")
        placement = nats.get("issuer_account") or issuer
        allowed = settings.allowed_accounts
        if placement != settings.account and not (allowed == ("*",) or placement in allowed):
            raise _Refused(f'Account "{issuer}" not permitted as valid account option for auth callout')
        target = auth.accounts.get(str(placement))
        if target is None:
            raise _Refused(f'No valid account "{placement}" for auth callout response on account "{account}"')
        if issuer != target.public_key and issuer not in target.signing_keys:
            raise _Refused(f'User JWT issuer "{issuer}" is not known')
        template = target.signing_keys.get(str(issuer)) if issuer != target.public_key else None
        if template is not None:  # a scoped key: the scope's template is the user's permissions
            scoped = scoped_user(template, claims, target)
            if scoped is None:
                raise _Refused(f"User JWT of scoped key {issuer}: permissions of its own, or a template not filled")
            nats = scoped
        try:
            perms = jwt_permissions(nats)
            if perms is None and target.default_permissions:
                perms = jwt_permissions(target.default_permissions)
        except ValueError:
            raise _Refused("Error validating user JWT: invalid subject") from None
        if target.public_key == settings.account:
            perms = with_callout_deny(perms)
        name = claims.get("name")
        return JwtUser(
            name=user_key,
            permissions=perms,
            account=target.public_key,
            expires=_exp(claims),
            user_name=str(name) if isinstance(name, str) else "",
            account_name=target.name,
            # nats-server keeps the key (``buildInternalNkeyUser``): removed or rescoped by a
            # claim update, it closes the client (``server/claim_live.py``)
            signing_key=str(issuer) if issuer != target.public_key else "",
        )


def _exp(claims: dict[str, Any]) -> int:
    exp = claims.get("exp")
    return exp if isinstance(exp, int) and not isinstance(exp, bool) and exp > 0 else 0
