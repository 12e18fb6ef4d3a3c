"""What ``authorization { auth_callout {} }`` configures (read by ``server/auth_callout.py``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CalloutSettings"]


@dataclass(frozen=True)
class CalloutSettings:
    """nats-server's ``AuthCallout`` options (config mode; no ``xkey``: see the guide)."""

    #: The account public key that signs the responses and the users they grant.
    issuer: str
    #: The account the service listens in (``$SYS.REQ.USER.AUTH``) and answers from.
    account: str
    #: Users that log in without the callout (the service's own among them).
    auth_users: tuple[str, ...]
    #: Config mode: accounts whose users go through the callout (empty: all). Operator mode:
    #: the accounts the service may place users in besides its own (``["*"]``: any).
    allowed_accounts: tuple[str, ...] = ()
    #: Operator mode (an account JWT's ``authorization``): the account's own callout.
    operator: bool = False
    #: The service's curve key: requests would be encrypted (not built: such logins are refused).
    xkey: str = ""
