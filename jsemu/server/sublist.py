"""Subscription index: a token trie with ``*``/``>`` nodes and a match cache.

Matching walks the trie in the order of nats-server's ``matchLevel`` (a ``>`` at each level
first, then ``*`` branches, then the literal), so several subscriptions of one
connection receive a message in the same order as from the real server. Within one
node, subscriptions keep insertion order (Go uses a map there, so the real order is
random and no test may depend on it).

Every change goes through ``invalidate(change)``: it clears the match cache and the caches
registered with ``derive`` (the server's learned routes and reply plans, built from match
results) and advances ``epoch``; changes are rare next to publishes. The list of changes
is ``subscriber.Change``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..subjects import is_valid_sub_subject
from .subscriber import Change, Subscriber

__all__ = ["MatchResult", "Sublist", "Subscription"]


class Subscription:
    __slots__ = ("client", "closed", "max", "nm", "queue", "sid", "subject")

    def __init__(self, client: Subscriber, subject: bytes, queue: bytes | None, sid: bytes) -> None:
        self.client = client
        self.subject = subject
        self.queue = queue
        self.sid = sid
        self.max = 0  # 0: no auto-unsubscribe
        self.nm = 0  # messages delivered
        self.closed = False

    def __repr__(self) -> str:
        q = f" {self.queue.decode(errors='replace')}" if self.queue else ""
        return f"<Subscription {self.subject.decode(errors='replace')}{q} sid={self.sid.decode(errors='replace')}>"


class _Node:
    __slots__ = ("next", "psubs", "qsubs")

    def __init__(self) -> None:
        self.next: _Level | None = None
        self.psubs: dict[Subscription, None] = {}
        self.qsubs: dict[bytes, dict[Subscription, None]] = {}

    def is_empty(self) -> bool:
        return not self.psubs and not self.qsubs and (self.next is None or self.next.is_empty())


class _Level:
    __slots__ = ("fwc", "nodes", "pwc")

    def __init__(self) -> None:
        self.nodes: dict[bytes, _Node] = {}
        self.pwc: _Node | None = None
        self.fwc: _Node | None = None

    def is_empty(self) -> bool:
        return not self.nodes and self.pwc is None and self.fwc is None


class MatchResult:
    """Plain subscribers, then one list per queue group (in first-seen order)."""

    __slots__ = ("psubs", "qsubs")

    def __init__(self) -> None:
        self.psubs: list[Subscription] = []
        self.qsubs: list[list[Subscription]] = []

    def _add_node(self, node: _Node, qindex: dict[bytes, int]) -> None:
        if node.psubs:
            self.psubs.extend(node.psubs)
        for qname, members in node.qsubs.items():
            if not members:
                continue
            slot = qindex.get(qname)
            if slot is None:
                qindex[qname] = len(self.qsubs)
                self.qsubs.append(list(members))
            else:
                self.qsubs[slot].extend(members)


EMPTY_RESULT = MatchResult()
# Large enough for the distinct subjects of a busy stream (KV keys, per-entity subjects);
# identical results share one MatchResult, so an entry costs little more than its key.
_CACHE_MAX = 1 << 18


class Sublist:
    """All subscriptions of one account."""

    __slots__ = ("_cache", "_derived", "_root", "_shared", "count", "epoch", "last_change", "on_change")

    def __init__(self) -> None:
        self._root = _Level()
        self._cache: dict[bytes, MatchResult] = {}
        self._shared: dict[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]], MatchResult] = {}
        self.count = 0
        #: Caches computed from match results, cleared with the match cache.
        self._derived: list[dict[Any, Any]] = []
        #: Advances on every ``invalidate``: whoever keeps something derived from a match
        #: outside ``derive`` can tell it is stale.
        self.epoch = 0
        #: The change behind the last ``invalidate`` (for tests and debugging).
        self.last_change: Change | None = None
        #: Called with each subscription added or removed (push consumers follow the
        #: interest in their deliver subject); empty unless someone listens.
        self.on_change: list[Callable[[Subscription], None]] = []

    def derive(self, cache: dict[Any, Any]) -> None:
        """Clear ``cache`` with the match cache on every change."""
        self._derived.append(cache)

    def invalidate(self, change: Change) -> None:
        """The one way to say that state a match (or what was derived from one) depends on
        has changed: forget every cached match and derived entry."""
        self._cache.clear()
        self._shared.clear()
        for cache in self._derived:
            cache.clear()
        self.epoch += 1
        self.last_change = change

    def insert(self, sub: Subscription) -> bool:
        """Add ``sub``; False (and nothing added) if its subject is invalid."""
        try:
            subject = sub.subject.decode()
        except UnicodeDecodeError:
            subject = sub.subject.decode("latin-1")
        if not is_valid_sub_subject(subject):
            return False
        level = self._root
        node: _Node | None = None
        for token in sub.subject.split(b"."):
            if token == b"*":
                node = level.pwc
                if node is None:
                    node = level.pwc = _Node()
            elif token == b">":
                node = level.fwc
                if node is None:
                    node = level.fwc = _Node()
            else:
                node = level.nodes.get(token)
                if node is None:
                    node = level.nodes[token] = _Node()
            if node.next is None:
                node.next = _Level()
            level = node.next
        assert node is not None
        if sub.queue is None:
            node.psubs[sub] = None
        else:
            node.qsubs.setdefault(sub.queue, {})[sub] = None
        self.count += 1
        self.invalidate(Change.SUBSCRIBE)
        if self.on_change:
            for callback in list(self.on_change):
                callback(sub)
        return True

    def remove(self, sub: Subscription) -> bool:
        path: list[tuple[_Level, bytes, _Node]] = []
        level: _Level | None = self._root
        node: _Node | None = None
        for token in sub.subject.split(b"."):
            if level is None:
                return False
            if token == b"*":
                node = level.pwc
            elif token == b">":
                node = level.fwc
            else:
                node = level.nodes.get(token)
            if node is None:
                return False
            path.append((level, token, node))
            level = node.next
        assert node is not None
        if sub.queue is None:
            if node.psubs.pop(sub, 0) is not None:
                return False
        else:
            members = node.qsubs.get(sub.queue)
            if members is None or members.pop(sub, 0) is not None:
                return False
            if not members:
                del node.qsubs[sub.queue]
        self.count -= 1
        self.invalidate(Change.UNSUBSCRIBE)
        if self.on_change:
            for callback in list(self.on_change):
                callback(sub)
        for level, token, node in reversed(path):
            if not node.is_empty():
                break
            if token == b"*":
                level.pwc = None
            elif token == b">":
                level.fwc = None
            else:
                del level.nodes[token]
        return True

    def reaching(self, prefix: list[bytes]) -> list[Subscription]:
        """Every subscription that matches some subject made of the literal tokens
        ``prefix`` and at least one more (``foo.>``, ``*.bar.baz``, ``>`` all reach
        ``[b"foo", b"bar"]``): who could take a message under that prefix."""
        found: list[Subscription] = []
        _reach(self._root, prefix, 0, found)
        return found

    def match_uncached(self, subject: bytes) -> MatchResult:
        """``match`` without touching the cache: for callers that keep what they derive."""
        result = self._cache.get(subject)
        if result is not None:
            return result
        tokens = subject.split(b".")
        if b"" in tokens:
            return EMPTY_RESULT
        result = MatchResult()
        _match_level(self._root, tokens, 0, result, {})
        return result

    def match(self, subject: bytes) -> MatchResult:
        result = self._cache.get(subject)
        if result is not None:
            return result
        tokens = subject.split(b".")
        if b"" in tokens:
            # An empty token never matches anything (and is not cached, like Go).
            return EMPTY_RESULT
        result = MatchResult()
        _match_level(self._root, tokens, 0, result, {})
        if not result.psubs and not result.qsubs:
            result = EMPTY_RESULT
        else:
            key = (tuple(map(id, result.psubs)), tuple(tuple(map(id, g)) for g in result.qsubs))
            result = self._shared.setdefault(key, result)
        if len(self._cache) >= _CACHE_MAX:
            self.invalidate(Change.MATCH_CACHE_FULL)
        self._cache[subject] = result
        return result


def _match_level(
    level: _Level | None, tokens: list[bytes], start: int, result: MatchResult, qindex: dict[bytes, int]
) -> None:
    pwc: _Node | None = None
    node: _Node | None = None
    for i in range(start, len(tokens)):
        if level is None:
            return
        if level.fwc is not None:
            result._add_node(level.fwc, qindex)
        pwc = level.pwc
        if pwc is not None:
            _match_level(pwc.next, tokens, i + 1, result, qindex)
        node = level.nodes.get(tokens[i])
        level = node.next if node is not None else None
    if node is not None:
        result._add_node(node, qindex)
    if pwc is not None:
        result._add_node(pwc, qindex)


def _reach(level: _Level | None, prefix: list[bytes], i: int, found: list[Subscription]) -> None:
    if level is None:
        return
    if level.fwc is not None:
        _collect(level.fwc, found)
    if i == len(prefix):  # anything from here down matches a longer subject
        for node in (level.pwc, *level.nodes.values()):
            if node is not None:
                _collect_tree(node, found)
        return
    for node in (level.pwc, level.nodes.get(prefix[i])):
        if node is not None:
            _reach(node.next, prefix, i + 1, found)


def _collect(node: _Node, found: list[Subscription]) -> None:
    found.extend(node.psubs)
    for members in node.qsubs.values():
        found.extend(members)


def _collect_tree(node: _Node, found: list[Subscription]) -> None:
    _collect(node, found)
    level = node.next
    if level is None:
        return
    for child in (level.fwc, level.pwc, *level.nodes.values()):
        if child is not None:
            _collect_tree(child, found)
