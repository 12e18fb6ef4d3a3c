"""A token trie over literal subjects, the Python counterpart of Go's ``stree.SubjectTree``.

The store keeps one entry per subject in here so that wildcard filters (``*``, ``>``) only walk
the branches that can match instead of every subject in the stream.

Layout: a node per distinct *parent prefix* (the tokens before a subject's last one), and each
subject as a leaf ``(subject, value)`` in its parent's ``leaves`` dict, keyed by its last token.
A token can be both a leaf and a branch (``a.b`` and ``a.b.c``). Subjects far outnumber their
parents (``kv.b7.k1``, ``kv.b7.k2``, ...), so a subject costs a dict entry and a tuple, not a
node of its own.

Subjects reach the tree in batches (the store adds the ones published since the last wildcard
lookup), and a batch can be a million subjects. ``insert_many`` builds such a batch without a
walk from the root per subject: the parent node is found once per distinct parent prefix (one
``rpartition`` and one dict lookup per subject). The garbage collector is paused meanwhile: a
million new objects and no garbage, which would otherwise trigger collections that traverse
them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from .collector import paused_gc

__all__ = ["SubjectTree", "is_literal", "paused_gc"]

V = TypeVar("V")

_STAR = b"*"
_FWC = b">"


class _Node(Generic[V]):
    """One parent prefix: its child prefixes by next token, and its subjects by last token."""

    __slots__ = ("children", "leaves")

    def __init__(self) -> None:
        self.children: dict[bytes, _Node[V]] | None = None
        self.leaves: dict[bytes, tuple[bytes, V]] | None = None


def is_literal(subject: bytes) -> bool:
    """True when no token is exactly ``*`` or ``>`` (``foo*`` is a literal, as in NATS)."""
    if _STAR not in subject and _FWC not in subject:
        return True
    for tok in subject.split(b"."):
        if tok == _STAR or tok == _FWC:
            return False
    return True


class SubjectTree(Generic[V]):
    """Maps literal subjects (tokens split on ``.``) to values; ``None`` values are not allowed."""

    __slots__ = ("_root", "_size")

    def __init__(self) -> None:
        self._root: _Node[V] = _Node()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __contains__(self, subject: bytes) -> bool:
        return self.get(subject) is not None

    def _parent(self, head: bytes, dot: bytes) -> _Node[V] | None:
        """The node of parent prefix ``head`` (the root when the subject had no dot)."""
        node = self._root
        if not dot:
            return node
        for tok in head.split(b"."):
            children = node.children
            if children is None:
                return None
            nxt = children.get(tok)
            if nxt is None:
                return None
            node = nxt
        return node

    def _make_parent(self, head: bytes, dot: bytes) -> _Node[V]:
        node = self._root
        if not dot:
            return node
        for tok in head.split(b"."):
            children = node.children
            if children is None:
                children = node.children = {}
            nxt = children.get(tok)
            if nxt is None:
                nxt = children[tok] = _Node()
            node = nxt
        return node

    def insert(self, subject: bytes, value: V) -> V | None:
        """Set the value for ``subject``; returns the value it replaced, if any."""
        if value is None:
            raise TypeError("SubjectTree values must not be None")
        head, dot, tail = subject.rpartition(b".")
        parent = self._make_parent(head, dot)
        leaves = parent.leaves
        if leaves is None:
            leaves = parent.leaves = {}
        old = leaves.get(tail)
        leaves[tail] = (subject, value)
        if old is None:
            self._size += 1
            return None
        return old[1]

    def insert_many(self, pairs: Iterable[tuple[bytes, V]]) -> None:
        """``insert(subject, value)`` for each pair, in order, in one pass (see the module's
        docstring): the same tree as inserting them one at a time."""
        root = self._root
        parents: dict[bytes, _Node[V]] = {}  # parent prefix (subject up to its last dot) -> node
        get_parent = parents.get
        make_parent = self._make_parent
        added = 0
        with paused_gc():
            try:
                for subject, value in pairs:
                    if value is None:
                        raise TypeError("SubjectTree values must not be None")
                    head, dot, tail = subject.rpartition(b".")
                    parent = get_parent(head) if dot else root
                    if parent is None:
                        parent = parents[head] = make_parent(head, dot)
                    leaves = parent.leaves
                    if leaves is None:
                        leaves = parent.leaves = {}
                    if tail not in leaves:
                        added += 1
                    leaves[tail] = (subject, value)
            finally:
                self._size += added

    def get(self, subject: bytes) -> V | None:
        head, dot, tail = subject.rpartition(b".")
        parent = self._parent(head, dot)
        if parent is None or parent.leaves is None:
            return None
        leaf = parent.leaves.get(tail)
        return None if leaf is None else leaf[1]

    def remove(self, subject: bytes) -> V | None:
        """Remove ``subject`` and prune the nodes it leaves empty, so memory follows live subjects."""
        head, dot, tail = subject.rpartition(b".")
        path: list[tuple[_Node[V], bytes]] = []
        node = self._root
        if dot:
            for tok in head.split(b"."):
                children = node.children
                if children is None:
                    return None
                nxt = children.get(tok)
                if nxt is None:
                    return None
                path.append((node, tok))
                node = nxt
        leaves = node.leaves
        if leaves is None:
            return None
        old = leaves.pop(tail, None)
        if old is None:
            return None
        if not leaves:
            node.leaves = None
        self._size -= 1
        # Prune upwards while the node holds nothing.
        for parent, tok in reversed(path):
            if node.leaves or node.children:
                break
            children = parent.children
            assert children is not None
            del children[tok]
            if not children:
                parent.children = None
            node = parent
        return old[1]

    def clear(self) -> None:
        self._root = _Node()
        self._size = 0

    def items(self) -> Iterator[tuple[bytes, V]]:
        """Every (subject, value), in no particular order."""
        return self._subtree(self._root)

    @staticmethod
    def _subtree(start: _Node[V]) -> Iterator[tuple[bytes, V]]:
        stack = [start]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            leaves = node.leaves
            if leaves:
                yield from leaves.values()
            children = node.children
            if children:
                for child in children.values():
                    push(child)

    def match(self, filter: bytes) -> Iterator[tuple[bytes, V]]:
        """Yield (subject, value) for subjects matched by ``filter``, visiting only matching branches.

        ``*`` matches exactly one token, ``>`` one or more trailing tokens; a literal filter is a
        single lookup. Order is unspecified (Go's is too).
        """
        toks = filter.split(b".")
        if _STAR not in toks and _FWC not in toks:
            head, dot, tail = filter.rpartition(b".")
            parent = self._parent(head, dot)
            if parent is not None and parent.leaves is not None:
                leaf = parent.leaves.get(tail)
                if leaf is not None:
                    yield leaf
            return
        last = len(toks) - 1
        # (node, i): node is the parent prefix matched by toks[:i].
        stack: list[tuple[_Node[V], int]] = [(self._root, 0)]
        pop, push = stack.pop, stack.append
        while stack:
            node, i = pop()
            tok = toks[i]
            if tok == _FWC:
                # One or more tokens: every subject at or below this node's children.
                yield from self._subtree(node)
                continue
            if i == last:
                leaves = node.leaves
                if leaves:
                    if tok == _STAR:
                        yield from leaves.values()
                    else:
                        leaf = leaves.get(tok)
                        if leaf is not None:
                            yield leaf
                continue
            children = node.children
            if not children:
                continue
            if tok == _STAR:
                for child in children.values():
                    push((child, i + 1))
            else:
                nxt = children.get(tok)
                if nxt is not None:
                    push((nxt, i + 1))
