"""Per-user subject permissions, as nats-server's ``client.go`` checks them.

``publish`` and ``subscribe`` each have an ``allow`` and a ``deny`` list of subjects
(wildcards allowed; ``"subject queue"`` entries restrict queue groups). A publish is allowed
when some allow entry matches it (or there is no allow list) and no deny entry does. A
subscription is matched against the lists as a subject, its wildcards literal tokens, as
Go's ``Sublist.Match`` does (``foo.*`` is allowed by ``foo.>``, ``>`` only by ``>``); a
queue subscription is then decided by the queue entries that match, if any. A wildcard
subscription that passes while a deny list exists gets its messages filtered at delivery
(nats-server's ``mperms``), and with ``allow_responses`` the reply subjects of delivered
messages become publishable (``server/responses.py``): :class:`DeliveryFilter` stands between
such a subscription and its connection, so connections without permissions pay nothing on any
path.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from .responses import ReplyPermits, ResponsePermission
from .sublist import MatchResult, Sublist, Subscription

if TYPE_CHECKING:
    from .connection import ClientConnection

__all__ = ["DeliveryFilter", "Permissions", "SubjectRules"]


def _wildcard_match(name: str, pattern: str) -> bool:
    """``subjectIsSubsetMatch`` for queue names: token-wise, ``*`` one token, ``>`` the rest."""
    tokens, wanted = name.split("."), pattern.split(".")
    for i, want in enumerate(wanted):
        if want == ">":
            return len(tokens) > i
        if i >= len(tokens) or (want != "*" and want != tokens[i]):
            return False
    return len(tokens) == len(wanted)


class SubjectRules:
    """One allow or deny list: subjects (and ``"subject queue"`` entries) in a sublist."""

    __slots__ = ("entries", "sublist")

    def __init__(self, entries: Iterable[str]) -> None:
        self.entries = list(entries)
        self.sublist = Sublist()
        for entry in self.entries:
            subject, _, queue = entry.strip().partition(" ")
            queue = queue.strip()
            rule = Subscription(cast(Any, None), subject.encode(), queue.encode() if queue else None, b"")
            if not self.sublist.insert(rule):
                raise ValueError(f"invalid subject {entry!r} in permissions")

    def match(self, subject: bytes) -> MatchResult:
        return self.sublist.match(subject)

    def any(self, subject: bytes) -> bool:
        result = self.sublist.match(subject)
        return bool(result.psubs or result.qsubs)


def _queue_matches(queue: str, groups: list[list[Subscription]]) -> bool:
    for group in groups:
        name = (group[0].queue or b"").decode()
        if queue == name or (("*" in name or ">" in name) and _wildcard_match(queue, name)):
            return True
    return False


@dataclass
class Permissions:
    """A user's permissions; ``None`` lists are absent (no allow list: all allowed)."""

    pub_allow: SubjectRules | None = None
    pub_deny: SubjectRules | None = None
    sub_allow: SubjectRules | None = None
    sub_deny: SubjectRules | None = None
    #: ``allow_responses``; ``None``: replies get no special treatment.
    response: ResponsePermission | None = None

    def can_publish(self, subject: bytes) -> bool:
        """nats-server's ``pubAllowed`` for the lists (responses: ``ReplyPermits.use``)."""
        if self.pub_allow is not None and not self.pub_allow.any(subject):
            return False
        return self.pub_deny is None or not self.pub_deny.any(subject)

    def can_subscribe(self, subject: bytes, queue: bytes | None) -> bool:
        """nats-server's ``canSubscribe``."""
        allowed = True
        name = queue.decode("latin-1") if queue else ""
        if self.sub_allow is not None:
            result = self.sub_allow.match(subject)
            allowed = bool(result.psubs)
            if name and result.qsubs:
                allowed = _queue_matches(name, result.qsubs)
        if allowed and self.sub_deny is not None:
            result = self.sub_deny.match(subject)
            allowed = not result.psubs
            if name and result.qsubs:
                allowed = not _queue_matches(name, result.qsubs)
        return allowed

    def needs_filter(self, subject: bytes) -> bool:
        """Whether messages of an allowed subscription must pass the deny list (``mperms``)."""
        return self.sub_deny is not None and (b"*" in subject.split(b".") or b">" in subject.split(b"."))


class DeliveryFilter:
    """The subscriber of a subscription whose messages the deny list may drop, or whose
    reply subjects ``allow_responses`` grants; the rest goes to the connection."""

    __slots__ = ("conn", "deny", "replies")

    def __init__(self, conn: ClientConnection, deny: SubjectRules | None, replies: ReplyPermits | None) -> None:
        self.conn = conn
        self.deny = deny
        self.replies = replies

    @property
    def echo(self) -> bool:
        return self.conn.echo

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        if self.deny is not None and self.deny.any(subject):
            return False
        conn = self.conn
        replies = self.replies
        if reply and replies is not None and not conn.closed:
            perms = conn.perms
            if perms is not None and not perms.can_publish(reply):
                replies.grant(reply, conn.server.clock.now_ns())
        return conn.deliver(sub, subject, reply, hdr, msg)

    def unsubscribe(self, sub: Subscription) -> None:
        self.conn.unsubscribe(sub)
