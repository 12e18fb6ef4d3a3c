"""``allow_responses``: a user may publish to the reply subjects of the requests it received.

nats-server (``client.go``: ``deliverMsg`` records, ``pubAllowedFullCheck`` consumes) keeps,
per connection, the reply subjects of delivered messages that its publish permissions do not
already allow. A publish to one of them is allowed (even past a deny list) until it has been
used ``max`` times (negative: no limit) or ``expires`` has passed (negative: never). Times
are the server's clock (``Server.clock``), so a test that moves the controlled clock expires
them. Connections without the permission have no :class:`ReplyPermits` and pay nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_EXPIRES_NS", "DEFAULT_MAX_MSGS", "ReplyPermits", "ResponsePermission"]

#: nats-server's DEFAULT_ALLOW_RESPONSE_MAX_MSGS and DEFAULT_ALLOW_RESPONSE_EXPIRATION.
DEFAULT_MAX_MSGS = 1
DEFAULT_EXPIRES_NS = 2 * 60 * 1_000_000_000
#: nats-server's replyPermLimit and replyPruneTime: when the table is pruned of spent entries.
_PRUNE_AFTER = 4096
_PRUNE_EVERY_NS = 1_000_000_000


@dataclass(frozen=True)
class ResponsePermission:
    """How often and how long a received reply subject may be published to."""

    max_msgs: int = DEFAULT_MAX_MSGS
    expires_ns: int = DEFAULT_EXPIRES_NS


class ReplyPermits:
    """One connection's granted reply subjects: subject -> [granted at (ns), times used]."""

    __slots__ = ("_last_prune", "_since_prune", "grants", "permission")

    def __init__(self, permission: ResponsePermission) -> None:
        self.permission = permission
        self.grants: dict[bytes, list[int]] = {}
        self._since_prune = 0
        self._last_prune = 0

    def grant(self, reply: bytes, now_ns: int) -> None:
        """A message with ``reply`` was delivered (its publish is not otherwise allowed).
        As in ``deliverMsg``, a live grant is checked with the full publish check first,
        which counts as a use; only a missing or spent one is granted anew."""
        if self.use(reply, now_ns):
            return
        self.grants[reply] = [now_ns, 0]
        self._since_prune += 1
        if self._since_prune > _PRUNE_AFTER or now_ns - self._last_prune > _PRUNE_EVERY_NS:
            self._prune(now_ns)

    def use(self, subject: bytes, now_ns: int) -> bool:
        """Whether a publish to ``subject`` is allowed as a response (and count it)."""
        entry = self.grants.get(subject)
        if entry is None:
            return False
        entry[1] += 1
        if self._spent(entry, now_ns):
            del self.grants[subject]
            return False
        return True

    def _spent(self, entry: list[int], now_ns: int) -> bool:
        perm = self.permission
        if perm.max_msgs > 0 and entry[1] > perm.max_msgs:
            return True
        return perm.expires_ns > 0 and now_ns - entry[0] > perm.expires_ns

    def _prune(self, now_ns: int) -> None:
        """nats-server's ``pruneReplyPerms``: drop entries used up or expired."""
        perm = self.permission
        for reply, (granted, used) in list(self.grants.items()):
            if (perm.max_msgs > 0 and used >= perm.max_msgs) or (
                perm.expires_ns > 0 and now_ns - granted > perm.expires_ns
            ):
                del self.grants[reply]
        self._since_prune = 0
        self._last_prune = now_ns
