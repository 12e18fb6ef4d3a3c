"""What a JWT user's connection carries after login (operator mode, ``server/operator_auth.py``).

nats-server, once a user JWT is accepted (``processClientOrLeafAuthentication`` then
``registerWithAccount``): the account's ``conn`` limit counts the account's clients and refuses
one more with ``maximum account active connections exceeded``; the user's ``payload`` (and the
account's) lowers the connection's max payload, which its INFO after the first PONG shows; the
user's ``subs`` (and the account's) caps its subscriptions; and a user JWT with ``exp`` gets a
timer that closes the client with ``User Authentication Expired`` on the server's clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.texts import ERR_MAX_ACCOUNT_CONNECTIONS, ERR_USER_AUTHENTICATION_EXPIRED
from .operator_auth import JwtAccount, JwtUser, OperatorAuth

if TYPE_CHECKING:
    from .connection import ClientConnection

__all__ = ["admit", "lowest", "put_limits"]


def lowest(server_limit: int, *limits: int) -> int:
    """The tightest of the server's limit (0 or less: none) and JWT limits (below 0: none; 0
    is a limit of nothing, as Go's zero value of a claim left out); -1 if there is none."""
    set_ = [limit for limit in limits if limit >= 0]
    if server_limit > 0:
        set_.append(server_limit)
    return min(set_) if set_ else -1


def put_limits(conn: ClientConnection, user: JwtUser, account: JwtAccount) -> bool:
    """The tightest of the user's, the account's and the server's ``payload`` and ``subs`` on
    ``conn`` (``applyAccountLimits``); whether it holds as many subscriptions as allowed or more."""
    payload = lowest(conn.server.options.max_payload, user.max_payload, account.max_payload)
    if payload >= 0:
        conn.parser.max_payload = payload
    conn.max_subs = lowest(conn.server.options.max_subscriptions, user.max_subs, account.max_subs)
    return conn.max_subs >= 0 and len(conn.subs) >= conn.max_subs


def admit(conn: ClientConnection, user: JwtUser) -> str | None:
    """Put ``user``'s limits on ``conn``; the ``-ERR`` text to refuse it with, or ``None``."""
    auth = conn.current_auth()
    account = auth.accounts.get(user.account) if isinstance(auth, OperatorAuth) else None
    if account is None:
        return None
    if account.max_connections >= 0:
        others = sum(
            1
            for c in conn.server.connections.values()
            if c is not conn and not c.closed and c.user is not None and c.user.account == user.account
        )
        if others >= account.max_connections:
            return ERR_MAX_ACCOUNT_CONNECTIONS
    put_limits(conn, user, account)
    if user.expires:  # a negative exp passed the login's check and expires at once (Go's setExpiration)
        server = conn.server

        def expired() -> None:
            conn.close_with_error(ERR_USER_AUTHENTICATION_EXPIRED)
            server.flush()

        conn.expiry_timer = server.timers.at(user.expires * 1_000_000_000, expired)
    return None
