"""A token trie over literal subjects, the Python counterpart of Go's ``stree.SubjectTree``.

The store keeps one entry per subject in here so that wildcard filters (``*``, ``>``) only walk
the branches that can match instead of every subject in the stream.

Subjects reach the tree in batches (the store adds the ones published since the last wildcard
lookup), and a batch can be a million subjects. ``insert_many`` builds such a batch without a
walk from the root per subject: subjects of one batch mostly share their parent (``kv.b7.k1``,
``kv.b7.k2``, ...), so the parent node is found once per distinct parent prefix (one ``rpartition``
and one dict lookup per subject), and only the last token gets a node of its own. The garbage
collector is paused meanwhile: a million new nodes and no garbage, which would otherwise trigger
collections that traverse them all.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

__all__ = ["SubjectTree", "is_literal", "paused_gc"]

V = TypeVar("V")

_STAR = b"*"
_FWC = b">"


@contextmanager
def paused_gc() -> Iterator[None]:
    """No collection inside: for bulk builds that allocate much and free nothing. Nested uses
    leave the outermost one to turn the collector back on."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class _Node(Generic[V]):
    """One token. ``subject`` is kept on value nodes so matches can yield it without re-joining."""

    __slots__ = ("children", "subject", "value")

    def __init__(self, value: V | None = None, subject: bytes | None = None) -> None:
        self.children: dict[bytes, _Node[V]] | None = None
        self.value = value
        self.subject = subject


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

    def _find(self, subject: bytes) -> _Node[V] | None:
        node = self._root
        for tok in subject.split(b"."):
            children = node.children
            if children is None:
                return None
            nxt = children.get(tok)
            if nxt is None:
                return None
            node = nxt
        return node

    def insert(self, subject: bytes, value: V) -> V | None:
        """Set the value for ``subject``; returns the value it replaced, if any."""
        if value is None:
            raise TypeError("SubjectTree values must not be None")
        node = self._root
        for tok in subject.split(b"."):
            children = node.children
            if children is None:
                children = node.children = {}
            nxt = children.get(tok)
            if nxt is None:
                nxt = children[tok] = _Node()
            node = nxt
        old = node.value
        if old is None:
            self._size += 1
        node.value = value
        node.subject = subject
        return old

    def insert_many(self, pairs: Iterable[tuple[bytes, V]]) -> None:
        """``insert(subject, value)`` for each pair, in order, in one pass (see the module's
        docstring): the same tree as inserting them one at a time."""
        root = self._root
        parents: dict[bytes, _Node[V]] = {}  # parent prefix (subject up to its last dot) -> node
        get_parent = parents.get
        added = 0
        with paused_gc():
            try:
                for subject, value in pairs:
                    if value is None:
                        raise TypeError("SubjectTree values must not be None")
                    head, dot, tail = subject.rpartition(b".")
                    parent = get_parent(head) if dot else root
                    if parent is None:
                        parent = root
                        for tok in head.split(b"."):
                            children = parent.children
                            if children is None:
                                children = parent.children = {}
                            nxt = children.get(tok)
                            if nxt is None:
                                nxt = children[tok] = _Node()
                            parent = nxt
                        parents[head] = parent
                    children = parent.children
                    if children is None:
                        children = parent.children = {}
                    node = children.get(tail)
                    if node is None:
                        children[tail] = _Node(value, subject)
                        added += 1
                        continue
                    if node.value is None:
                        added += 1
                    node.value = value
                    node.subject = subject
            finally:
                self._size += added

    def get(self, subject: bytes) -> V | None:
        node = self._find(subject)
        return None if node is None else node.value

    def remove(self, subject: bytes) -> V | None:
        """Remove ``subject`` and prune the nodes it leaves empty, so memory follows live subjects."""
        path: list[tuple[_Node[V], bytes]] = []
        node = self._root
        for tok in subject.split(b"."):
            children = node.children
            if children is None:
                return None
            nxt = children.get(tok)
            if nxt is None:
                return None
            path.append((node, tok))
            node = nxt
        old = node.value
        if old is None:
            return None
        node.value = None
        node.subject = None
        self._size -= 1
        # Prune upwards while the node holds nothing.
        for parent, tok in reversed(path):
            if node.value is not None or node.children:
                break
            children = parent.children
            assert children is not None
            del children[tok]
            if not children:
                parent.children = None
            node = parent
        return old

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
            value = node.value
            if value is not None:
                assert node.subject is not None
                yield node.subject, value
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
            node = self._find(filter)
            if node is not None and node.value is not None:
                assert node.subject is not None
                yield node.subject, node.value
            return
        ntoks = len(toks)
        stack: list[tuple[_Node[V], int]] = [(self._root, 0)]
        pop, push = stack.pop, stack.append
        while stack:
            node, i = pop()
            if i == ntoks:
                value = node.value
                if value is not None:
                    assert node.subject is not None
                    yield node.subject, value
                continue
            children = node.children
            if not children:
                continue
            tok = toks[i]
            if tok == _FWC:
                # One or more tokens: everything at or below each child.
                for child in children.values():
                    yield from self._subtree(child)
            elif tok == _STAR:
                for child in children.values():
                    push((child, i + 1))
            else:
                nxt = children.get(tok)
                if nxt is not None:
                    push((nxt, i + 1))
