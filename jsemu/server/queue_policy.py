"""Who in a queue group gets a message.

nats-server picks a member at random (``Server.rng`` here, which a test can seed). For
tests that need to force a particular Direct Get responder (a lagging peer, a mirror),
a policy can be set for the queue groups whose subject matches a filter: round robin, or
prefer members by label. A member's label comes from its subscriber's ``owner``
(``"<stream>/<peer>"`` for a Direct Get responder); a client subscription has none.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from ..subjects import subject_matches
from .sublist import Subscription

__all__ = ["Prefer", "QueuePolicies", "QueuePolicy", "RandomPick", "RoundRobin", "member_label"]


def member_label(sub: Subscription) -> str:
    owner = getattr(sub.client, "owner", None)
    label = getattr(owner, "label", None)
    return label if isinstance(label, str) else ""


class QueuePolicy(Protocol):
    name: str

    def start(self, group: Sequence[Subscription]) -> int:
        """The index of the member to try first (the next ones are tried in order)."""
        ...


class RandomPick:
    """The server's own behaviour: a uniformly random member."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def start(self, group: Sequence[Subscription]) -> int:
        return self.rng.randrange(len(group)) if len(group) > 1 else 0


class RoundRobin:
    """Members in turn, per group (keyed by the first member's subject and queue)."""

    name = "round_robin"

    def __init__(self) -> None:
        self._next: dict[tuple[bytes, bytes | None], int] = {}

    def start(self, group: Sequence[Subscription]) -> int:
        key = (group[0].subject, group[0].queue)
        n = self._next.get(key, 0)
        self._next[key] = n + 1
        return n % len(group)


class Prefer:
    """The first member whose label matches one of ``targets`` in order; else random.

    A target matches a label ``"<stream>/<peer>"`` when it equals the label, the stream
    or the peer, so ``"M"`` prefers mirror M and ``"n2"`` the replica on n2.
    """

    name = "prefer"

    def __init__(self, targets: Sequence[str], rng: random.Random) -> None:
        self.targets = list(targets)
        self.rng = rng

    def start(self, group: Sequence[Subscription]) -> int:
        labels = [member_label(sub) for sub in group]
        for target in self.targets:
            for i, label in enumerate(labels):
                stream, _, peer = label.partition("/")
                if target in (label, stream, peer):
                    return i
        return self.rng.randrange(len(group)) if len(group) > 1 else 0


class QueuePolicies:
    """Policies by subject filter; the first matching one wins, else random."""

    def __init__(self, rng: random.Random) -> None:
        self.default = RandomPick(rng)
        self.rules: list[tuple[str, QueuePolicy]] = []
        #: Called after every change (the server drops its fast routes).
        self.changed: Callable[[], None] = lambda: None

    def set(self, filter: str, policy: QueuePolicy | None) -> None:
        self.rules = [(f, p) for f, p in self.rules if f != filter]
        if policy is not None:
            self.rules.insert(0, (filter, policy))
        self.changed()

    def clear(self) -> None:
        self.rules = []
        self.changed()

    def start(self, subject: bytes, group: Sequence[Subscription]) -> int:
        text = subject.decode("utf-8", "replace")
        for filt, policy in self.rules:
            if subject_matches(text, filt):
                return policy.start(group)
        return self.default.start(group)
