"""Account claim updates pushed to a running server in operator mode (the memory resolver).

nats-server's ``accountClaimUpdate``: a JWT published (by a system account user) to
``$SYS.REQ.ACCOUNT.<account key>.CLAIMS.UPDATE`` (or the older ``$SYS.ACCOUNT.<key>.CLAIMS.UPDATE``)
is decoded (``jwt update resulted in error - <why>``: ``expected 3 chunks``, ``not account claim``),
its subject must be the key in the subject (``subject does not match jwt content``), an account
the server does not hold is left alone (``jwt update skipped``), and one not signed by a trusted
operator key is refused (``account validation failed``); otherwise it replaces the account's claims
(``jwt updated``, code 200). Replacing them applies them to what runs (``server/claim_live.py``:
expiry, imports and exports, JetStream, the connection limit, revocations, signing keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.gojson import dumps
from ..protocol.jwt import JwtError, decode
from .account_requests import _Responder
from .claim_live import ClaimLive, in_time
from .operator_auth import OperatorAuth, account_from_jwt
from .sublist import Subscription

if TYPE_CHECKING:
    from .routing import Router
    from .server import Server

__all__ = ["ClaimUpdates"]

_SUBJECTS = (b"$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", b"$SYS.ACCOUNT.*.CLAIMS.UPDATE")


class ClaimUpdates:
    """The claim update subscriptions of an operator-mode server's system account."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.live = ClaimLive(server)

    def start(self) -> None:
        auth = self.server.options.auth
        router = self.server.account_space.by_name.get(self.server.options.system_account)
        if not isinstance(auth, OperatorAuth) or router is None:
            return
        self.live.start()
        if auth.resolver_store is not None:  # the directory resolver answers the updates and calls _apply
            self.server.account_resolver.on_change.append(self._apply)
            return
        responder = _Responder(router, self._update, True)
        for subject in _SUBJECTS:
            router.sublist.insert(Subscription(responder, subject, None, b"$SYS"))

    def _update(self, router: Router, subject: bytes, reply: bytes | None, body: bytes) -> None:
        auth = self.server.options.auth
        assert isinstance(auth, OperatorAuth)
        tokens = subject.decode("utf-8", "replace").split(".")
        key = tokens[3] if tokens[1] == "REQ" else tokens[2]
        text = body.decode("utf-8", "replace").strip()
        try:
            token = decode(text)
        except JwtError as exc:
            return self._answer(router, reply, key, error=str(exc))
        if token.kind != "account":
            return self._answer(router, reply, key, error="not account claim")
        if token.claims.get("sub") != key:
            return self._answer(router, reply, key, error="subject does not match jwt content")
        if key not in auth.accounts:
            return self._answer(router, reply, key, message="jwt update skipped")
        if not self.take(key, text):
            return self._answer(router, reply, key, error="account validation failed")
        return self._answer(router, reply, key, message="jwt updated")

    def take(self, key: str, text: str) -> bool:
        """Account ``key``'s JWT ``text`` in force when a trusted operator signed it and it holds
        now (``updateAccountWithClaimJWT``); False, the account left as it was, otherwise."""
        auth = self.server.options.auth
        assert isinstance(auth, OperatorAuth)
        try:
            account = account_from_jwt(text, auth.trusted)
        except JwtError:
            return False
        token = decode(text)  # decoded by account_from_jwt already
        if not in_time(token.claims, self.server.clock.now_ns() // 1_000_000_000):
            return False
        auth.accounts[key] = account
        self._apply(key)
        return True

    def _apply(self, key: str) -> None:
        """The new claims in force for what already runs (``server/claim_live.py``)."""
        self.live.apply(key)

    def _answer(self, router: Router, reply: bytes | None, key: str, message: str = "", error: str = "") -> None:
        if not reply:
            return
        envelope = self.server.envelope
        if error:
            body: dict[str, Any] = envelope.response(
                error={"account": key, "code": 500, "description": f"jwt update resulted in error - {error}"}
            )
        else:
            body = envelope.response({"account": key, "code": 200, "message": message})
        router.outbound.send_via_sendq(reply, -1, dumps(body).encode())
