"""A port of nats-server's subject tree (``server/stree``), for its wildcard *matching* quirks.

Go keeps per-subject state in an adaptive radix tree over the subject bytes (``stree``) and
answers wildcard queries (``SubjectTree.Match``) by splitting the filter into parts
(``genParts``) and matching those parts against the byte prefixes stored in the nodes
(``matchParts``). Only a ``*`` or ``>`` that is a whole token becomes a wildcard part; any other
``*``/``>`` stays inside a literal part. But when a literal part runs across a node boundary and
what is left of it is exactly ``*`` or ``>``, ``match`` treats that remainder as a wildcard. So
``m.0*`` matches ``m.01`` and ``m.02`` when the tree happens to hold a node ending at ``m.0``,
and nothing otherwise: the result depends on the tree's layout. :class:`.subject_tree.SubjectTree`
(a token trie, the store's own index) treats such tokens as literals, so the store asks this
port for filters that have a wildcard character inside a token.

This is a faithful port of ``stree.go``, ``node*.go``, ``leaf.go``, ``parts.go`` and ``util.go``
(nats-server 2.15.x): the same node kinds (leaf, node4, node10, node16, node48, node256), the
same growing/shrinking, prefix splitting, ``noPivot`` (0x7f) end marker, child order and match
walk, so callbacks come in Go's order.

Layout: the shape (where node prefixes start and end) is the path-compressed radix trie of the
current key set, whatever the order of inserts and deletes: a leaf or node is split exactly at
the first byte where keys diverge, and a delete that leaves a node4 with one child merges that
child back into its parent's slot (every other node kind holds more children than the kind below
it, see ``shrink``). Only child order (and so callback order) and node kinds depend on history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["GoSubjectTree", "gen_parts", "match_keys", "match_parts"]

V = TypeVar("V")

PWC = 0x2A  # '*'
FWC = 0x3E  # '>'
TSEP = 0x2E  # '.'
NO_PIVOT = 0x7F  # util.go noPivot: never inserted, marks "end of key" in the child index

_PWC_B = b"*"
_FWC_B = b">"
_TSEP_B = b"."


def pivot(subject: bytes, pos: int) -> int:
    """util.go ``pivot``: the byte at ``pos``, or ``NO_PIVOT`` past the end."""
    if pos >= len(subject):
        return NO_PIVOT
    return subject[pos]


def common_prefix_len(s1: bytes, s2: bytes) -> int:
    limit = min(len(s1), len(s2))
    i = 0
    while i < limit and s1[i] == s2[i]:
        i += 1
    return i


# --------------------------------------------------------------------------- parts.go


def gen_parts(filter: bytes) -> list[bytes]:
    """parts.go ``genParts``: split a filter into literal parts and single ``*``/``>`` parts.

    A literal part that precedes a wildcard keeps its trailing ``.``; ``*`` and ``>`` are parts
    of their own only as whole tokens (``>`` only as the last one). ``foo.*.bar`` gives
    ``[b"foo.", b"*", b"bar"]``; ``m.0*`` stays the one literal part ``[b"m.0*"]``.
    """
    parts: list[bytes] = []
    n = len(filter)
    e = n - 1
    start = 0
    i = 0
    while i < n:
        c = filter[i]
        if c == TSEP:
            # See if next token is pwc. Either internal or end pwc.
            if i < e and filter[i + 1] == PWC and ((i + 2 <= e and filter[i + 2] == TSEP) or i + 1 == e):
                if i > start:
                    parts.append(filter[start : i + 1])
                parts.append(filter[i + 1 : i + 2])
                i += 1  # Skip pwc.
                if i + 2 <= e:
                    i += 1  # Skip next tsep from next part too.
                start = i + 1
            elif i < e and filter[i + 1] == FWC and i + 1 == e:
                if i > start:
                    parts.append(filter[start : i + 1])
                parts.append(filter[i + 1 : i + 2])
                i += 1  # Skip fwc.
                start = i + 1
        elif c == PWC or c == FWC:
            # Wildcard must be at the start or preceded by tsep.
            prev = i - 1
            if prev >= 0 and filter[prev] != TSEP:
                i += 1
                continue
            # Wildcard must be at the end or followed by tsep.
            nxt = i + 1
            if nxt == e or (nxt < e and filter[nxt] != TSEP):
                i += 1
                continue
            # Full wildcard must be terminal.
            if c == FWC and i < e:
                break
            # We start with a pwc or fwc.
            parts.append(filter[i : i + 1])
            if i + 1 <= e:
                i += 1  # Skip next tsep from next part too.
            start = i + 1
        i += 1
    if start < n:
        # Check to see if we need to eat a leading tsep.
        if filter[start] == TSEP:
            start += 1
        parts.append(filter[start:])
    return parts


def match_parts(parts: list[bytes], frag: bytes) -> tuple[list[bytes], bool]:
    """parts.go ``matchParts``: match ``parts`` against a node prefix or leaf suffix ``frag``.

    Returns the parts still to match below (a partly consumed literal part is cut down to its
    unconsumed rest) and whether ``frag`` is compatible with the filter so far.
    """
    lf = len(frag)
    if lf == 0:
        return parts, True
    si = 0
    lpi = len(parts) - 1
    for i, part in enumerate(parts):
        if si >= lf:
            return parts[i:], True
        lp = len(part)
        # Check for pwc or fwc place holders.
        if lp == 1:
            if part[0] == PWC:
                index = frag.find(_TSEP_B, si)
                # We are trying to match pwc and did not find our tsep.
                # Will need to move to next node from caller.
                if index < 0:
                    if i == lpi:
                        return [], True
                    return parts[i:], True
                si = index + 1
                continue
            if part[0] == FWC:
                # If we are here we should be good.
                return [], True
        end = min(si + lp, lf)
        # If part is bigger then the remaining fragment, adjust to a portion on the part.
        if si + lp > end:
            part = part[: end - si]
        if part != frag[si:end]:
            return parts, False
        # If we still have a portion of the fragment left, update and continue.
        if end < lf:
            si = end
            continue
        # If we matched a partial, do not move past current part
        # but update the part to what was consumed. This allows upper layers to continue.
        if end < si + lp:
            if end >= lf:
                # Go copies the parts before changing one (the caller's must not change).
                rest = parts[i:]
                rest[0] = parts[i][lf - si :]
                return rest, True
            return parts[i + 1 :], True  # unreachable in Go too (end < lf continued above)
        if i == lpi:
            return [], True
        # If we are here we are not the last part which means we have a wildcard
        # gap, so we need to match anything up to next tsep.
        si += len(part)
    return parts, False


# --------------------------------------------------------------------------- nodes


class _Leaf(Generic[V]):
    """leaf.go: the value and the rest of the subject below its parent's prefix."""

    __slots__ = ("suffix", "value")

    def __init__(self, suffix: bytes, value: V) -> None:
        self.suffix = suffix
        self.value = value

    def match(self, subject: bytes) -> bool:
        return subject == self.suffix

    def match_parts(self, parts: list[bytes]) -> tuple[list[bytes], bool]:
        return match_parts(parts, self.suffix)

    def path(self) -> bytes:
        return self.suffix

    def kind(self) -> str:
        return "LEAF"

    def num_children(self) -> int:
        return 0


class _Inner(Generic[V]):
    """node.go ``meta`` plus the interface every inner node kind implements."""

    __slots__ = ("prefix", "size")

    KIND = ""

    def __init__(self, prefix: bytes = b"") -> None:
        self.prefix = prefix
        self.size = 0

    def match_parts(self, parts: list[bytes]) -> tuple[list[bytes], bool]:
        return match_parts(parts, self.prefix)

    def path(self) -> bytes:
        return self.prefix

    def kind(self) -> str:
        return self.KIND

    def num_children(self) -> int:
        return self.size

    # Implemented by the node kinds.
    def add_child(self, c: int, nn: _Node[V]) -> None:
        raise NotImplementedError

    def find_child(self, c: int) -> _Node[V] | None:
        raise NotImplementedError

    def replace_child(self, c: int, nn: _Node[V]) -> None:
        """Go writes through the ``*node`` that ``findChild`` returns; this is that write."""
        raise NotImplementedError

    def delete_child(self, c: int) -> None:
        raise NotImplementedError

    def is_full(self) -> bool:
        raise NotImplementedError

    def grow(self) -> _Inner[V]:
        raise NotImplementedError

    def shrink(self) -> _Node[V] | None:
        raise NotImplementedError

    def children(self) -> list[_Node[V] | None]:
        raise NotImplementedError


_Node = _Leaf[V] | _Inner[V]


class _SmallNode(_Inner[V]):
    """node4.go / node10.go / node16.go: parallel key and child arrays, unsorted, swap-delete."""

    __slots__ = ("child", "key")

    CAP = 0

    def __init__(self, prefix: bytes = b"") -> None:
        super().__init__(prefix)
        self.key = bytearray(self.CAP)
        self.child: list[_Node[V] | None] = [None] * self.CAP

    def add_child(self, c: int, nn: _Node[V]) -> None:
        if self.size >= self.CAP:
            raise RuntimeError(f"node{self.CAP} full!")
        self.key[self.size] = c
        self.child[self.size] = nn
        self.size += 1

    def _index(self, c: int) -> int:
        for i in range(self.size):
            if self.key[i] == c:
                return i
        return -1

    def find_child(self, c: int) -> _Node[V] | None:
        i = self._index(c)
        return self.child[i] if i >= 0 else None

    def replace_child(self, c: int, nn: _Node[V]) -> None:
        self.child[self._index(c)] = nn

    def is_full(self) -> bool:
        return self.size >= self.CAP

    def delete_child(self, c: int) -> None:
        last = self.size - 1
        for i in range(self.size):
            if self.key[i] == c:
                # Unsorted so just swap in last one here, else nil if last.
                if i < last:
                    self.key[i] = self.key[last]
                    self.child[i] = self.child[last]
                    self.key[last] = 0
                    self.child[last] = None
                else:
                    self.key[i] = 0
                    self.child[i] = None
                self.size -= 1
                return

    def children(self) -> list[_Node[V] | None]:
        return self.child[: self.size]

    def _copy_into(self, nn: _Inner[V]) -> _Inner[V]:
        for i in range(self.size):
            child = self.child[i]
            assert child is not None
            nn.add_child(self.key[i], child)
        return nn


class _Node4(_SmallNode[V]):
    __slots__ = ()
    CAP = 4
    KIND = "NODE4"

    def grow(self) -> _Inner[V]:
        nn: _Node10[V] = _Node10(self.prefix)
        return self._copy_into(nn)

    def shrink(self) -> _Node[V] | None:
        if self.size == 1:
            return self.child[0]
        return None


class _Node10(_SmallNode[V]):
    __slots__ = ()
    CAP = 10
    KIND = "NODE10"

    def grow(self) -> _Inner[V]:
        nn: _Node16[V] = _Node16(self.prefix)
        return self._copy_into(nn)

    def shrink(self) -> _Node[V] | None:
        if self.size > 4:
            return None
        nn: _Node4[V] = _Node4()
        return self._copy_into(nn)


class _Node16(_SmallNode[V]):
    __slots__ = ()
    CAP = 16
    KIND = "NODE16"

    def grow(self) -> _Inner[V]:
        nn: _Node48[V] = _Node48(self.prefix)
        return self._copy_into(nn)

    def shrink(self) -> _Node[V] | None:
        if self.size > 10:
            return None
        nn: _Node10[V] = _Node10()
        return self._copy_into(nn)


class _Node48(_Inner[V]):
    """node48.go: 48 child slots in insertion order, a 256-entry byte index (1-based, 0 = none)."""

    __slots__ = ("child", "key")

    KIND = "NODE48"

    def __init__(self, prefix: bytes = b"") -> None:
        super().__init__(prefix)
        self.child: list[_Node[V] | None] = [None] * 48
        self.key = bytearray(256)

    def add_child(self, c: int, nn: _Node[V]) -> None:
        if self.size >= 48:
            raise RuntimeError("node48 full!")
        self.child[self.size] = nn
        self.key[c] = self.size + 1  # 1-indexed
        self.size += 1

    def find_child(self, c: int) -> _Node[V] | None:
        i = self.key[c]
        return self.child[i - 1] if i else None

    def replace_child(self, c: int, nn: _Node[V]) -> None:
        self.child[self.key[c] - 1] = nn

    def is_full(self) -> bool:
        return self.size >= 48

    def grow(self) -> _Inner[V]:
        nn: _Node256[V] = _Node256(self.prefix)
        for c in range(256):
            i = self.key[c]
            if i > 0:
                child = self.child[i - 1]
                assert child is not None
                nn.add_child(c, child)
        return nn

    def delete_child(self, c: int) -> None:
        i = self.key[c]
        if i == 0:
            return
        i -= 1  # Adjust for 1-indexing.
        last = self.size - 1
        if i < last:
            self.child[i] = self.child[last]
            for ic in range(256):
                if self.key[ic] == last + 1:
                    self.key[ic] = i + 1
                    break
        self.child[last] = None
        self.key[c] = 0
        self.size -= 1

    def shrink(self) -> _Node[V] | None:
        if self.size > 16:
            return None
        nn: _Node16[V] = _Node16()
        for c in range(256):
            i = self.key[c]
            if i > 0:
                child = self.child[i - 1]
                assert child is not None
                nn.add_child(c, child)
        return nn

    def children(self) -> list[_Node[V] | None]:
        return self.child[: self.size]


class _Node256(_Inner[V]):
    """node256.go: a child slot per byte; ``children`` is all 256 slots, ``None`` included."""

    __slots__ = ("child",)

    KIND = "NODE256"

    def __init__(self, prefix: bytes = b"") -> None:
        super().__init__(prefix)
        self.child: list[_Node[V] | None] = [None] * 256

    def add_child(self, c: int, nn: _Node[V]) -> None:
        self.child[c] = nn
        self.size += 1

    def find_child(self, c: int) -> _Node[V] | None:
        return self.child[c]

    def replace_child(self, c: int, nn: _Node[V]) -> None:
        self.child[c] = nn

    def is_full(self) -> bool:
        return False

    def grow(self) -> _Inner[V]:
        raise RuntimeError("grow can not be called on node256")

    def delete_child(self, c: int) -> None:
        if self.child[c] is not None:
            self.child[c] = None
            self.size -= 1

    def shrink(self) -> _Node[V] | None:
        if self.size > 48:
            return None
        nn: _Node48[V] = _Node48()
        for c, child in enumerate(self.child):
            if child is not None:
                nn.add_child(c, child)
        return nn

    def children(self) -> list[_Node[V] | None]:
        return self.child


# --------------------------------------------------------------------------- stree.go


class GoSubjectTree(Generic[V]):
    """stree.go ``SubjectTree``: insert, find, delete, ``match`` and the two iterations.

    Subjects are bytes; one holding the byte 0x7f is refused by ``insert`` (as in Go).
    """

    __slots__ = ("_root", "_size")

    def __init__(self) -> None:
        self._root: _Node[V] | None = None
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def empty(self) -> None:
        self._root, self._size = None, 0

    # ---------------------------------------------------------------- insert

    def insert(self, subject: bytes, value: V) -> tuple[V | None, bool]:
        """Go ``Insert``: returns (old value, True) when ``subject`` was already there."""
        # Make sure we never insert anything with a noPivot byte.
        if NO_PIVOT in subject:
            return None, False
        self._root, old, updated = self._insert(self._root, subject, value, 0)
        if not updated:
            self._size += 1
        return old, updated

    def _insert(self, n: _Node[V] | None, subject: bytes, value: V, si: int) -> tuple[_Node[V], V | None, bool]:
        """Go ``insert`` on ``*np == n``; returns what ``*np`` becomes, the old value, updated."""
        if n is None:
            return _Leaf(subject, value), None, False
        if isinstance(n, _Leaf):
            ln = n
            if ln.match(subject[si:]):
                # Replace with new value.
                old = ln.value
                ln.value = value
                return ln, old, True
            # Here we need to split this leaf.
            cpi = common_prefix_len(ln.suffix, subject[si:])
            nn: _Inner[V] = _Node4(subject[si : si + cpi])
            ln.suffix = ln.suffix[cpi:]
            si += cpi
            # Make sure we have different pivot, normally this will be the case unless we have
            # overflowing prefixes.
            p = pivot(ln.suffix, 0)
            if cpi > 0 and si < len(subject) and p == subject[si]:
                # We need to split the original leaf. Recursively call into insert.
                np, _, _ = self._insert(ln, subject, value, si)
                # Now add the update version of *np as a child to the new node4.
                nn.add_child(p, np)
            else:
                # Can just add this new leaf as a sibling.
                nl = _Leaf(subject[si:], value)
                nn.add_child(pivot(nl.suffix, 0), nl)
                # Add back original.
                nn.add_child(pivot(ln.suffix, 0), ln)
            return nn, None, False

        # Non-leaf nodes.
        if n.prefix:
            prefix = n.prefix
            cpi = common_prefix_len(prefix, subject[si:])
            pli = len(prefix)
            if cpi >= pli:
                # Move past this node. We look for an existing child node to recurse into.
                # If one does not exist we can create a new leaf node.
                si += pli
                return self._insert_child(n, subject, value, si)
            # We did not match the prefix completely here.
            # Calculate new prefix for this node.
            new_prefix = subject[si : si + cpi]
            si += len(new_prefix)
            # We will insert a new node4 and attach our current node below after adjusting prefix.
            nn = _Node4(new_prefix)
            # Shift the prefix for our original node.
            n.prefix = prefix[cpi:]
            nn.add_child(pivot(n.prefix, 0), n)
            # Add in our new leaf.
            nn.add_child(pivot(subject[si:], 0), _Leaf(subject[si:], value))
            return nn, None, False
        return self._insert_child(n, subject, value, si)

    def _insert_child(self, n: _Inner[V], subject: bytes, value: V, si: int) -> tuple[_Node[V], V | None, bool]:
        c = pivot(subject, si)
        child = n.find_child(c)
        if child is not None:
            new_child, old, updated = self._insert(child, subject, value, si)
            if new_child is not child:
                n.replace_child(c, new_child)
            return n, old, updated
        # No matched child, so add in new leafnode as needed.
        if n.is_full():
            n = n.grow()
        n.add_child(c, _Leaf(subject[si:], value))
        return n, None, False

    # ---------------------------------------------------------------- find

    def find(self, subject: bytes) -> V | None:
        """Go ``Find`` (``None`` for not found: values here are never ``None`` in practice)."""
        si = 0
        n = self._root
        while n is not None:
            if isinstance(n, _Leaf):
                return n.value if n.match(subject[si:]) else None
            # We are a node type here, grab meta portion.
            prefix = n.prefix
            if prefix:
                end = min(si + len(prefix), len(subject))
                if subject[si:end] != prefix:
                    return None
                # Increment our subject index.
                si += len(prefix)
            n = n.find_child(pivot(subject, si))
        return None

    def __contains__(self, subject: bytes) -> bool:
        return self.find(subject) is not None

    # ---------------------------------------------------------------- delete

    def delete(self, subject: bytes) -> tuple[V | None, bool]:
        """Go ``Delete``: (value, True) when ``subject`` was there."""
        if self._root is None or not subject:
            return None, False
        self._root, val, deleted = self._delete(self._root, subject, 0)
        if deleted:
            self._size -= 1
        return val, deleted

    def _delete(self, n: _Node[V], subject: bytes, si: int) -> tuple[_Node[V] | None, V | None, bool]:
        """Go ``delete`` on ``*np == n``; returns what ``*np`` becomes, the value, deleted."""
        if isinstance(n, _Leaf):
            if n.match(subject[si:]):
                return None, n.value, True
            return n, None, False
        # Not a leaf node.
        prefix = n.prefix
        if prefix:
            # subject could be shorter and would panic on bad index into subject slice.
            if len(subject) < si + len(prefix):
                return n, None, False
            if subject[si : si + len(prefix)] != prefix:
                return n, None, False
            # Increment our subject index.
            si += len(prefix)
        p = pivot(subject, si)
        nn = n.find_child(p)
        if nn is None:
            return n, None, False
        if isinstance(nn, _Leaf):
            if not nn.match(subject[si:]):
                return n, None, False
            n.delete_child(p)
            sn = n.shrink()
            if sn is None:
                return n, nn.value, True
            pre = n.prefix
            # Need to fix up prefixes/suffixes.
            if isinstance(sn, _Leaf):
                sn.suffix = pre + sn.suffix
            elif pre:
                # We are a node here, we need to add in the old prefix.
                sn.prefix = pre + sn.prefix
            return sn, nn.value, True
        new_child, val, deleted = self._delete(nn, subject, si)
        if new_child is not nn:
            # A child node never vanishes: it shrinks to its last remaining child.
            assert new_child is not None
            n.replace_child(p, new_child)
        return n, val, deleted

    # ---------------------------------------------------------------- match

    def match(self, filter: bytes, cb: Callable[[bytes, V], object]) -> None:
        """Go ``Match``: call ``cb(subject, value)`` for each match, in Go's order."""
        if self._root is None or not filter:
            return

        def until(subject: bytes, value: V) -> bool:
            cb(subject, value)
            return True

        self._match(self._root, gen_parts(filter), b"", until)

    def match_until(self, filter: bytes, cb: Callable[[bytes, V], bool]) -> bool:
        """Go ``MatchUntil``: stops when ``cb`` returns False; returns False if it stopped."""
        if self._root is None or not filter:
            return True
        return self._match(self._root, gen_parts(filter), b"", cb)

    def matches(self, filter: bytes) -> list[tuple[bytes, V]]:
        """The (subject, value) pairs ``match`` reports, in its order."""
        out: list[tuple[bytes, V]] = []
        self.match(filter, lambda s, v: out.append((s, v)))
        return out

    def _match(self, n: _Node[V] | None, parts: list[bytes], pre: bytes, cb: Callable[[bytes, V], bool]) -> bool:
        # Capture if we are sitting on a terminal fwc (once, for the parts we were called with).
        has_fwc = bool(parts) and parts[-1][:1] == _FWC_B

        while n is not None:
            nparts, matched = n.match_parts(parts)
            # Check if we did not match.
            if not matched:
                return True
            # We have matched here. If we are a leaf and have exhausted all parts or we have a
            # FWC fire callback.
            if isinstance(n, _Leaf):
                fire = not nparts or (has_fwc and len(nparts) == 1)
                return not fire or cb(pre + n.suffix, n.value)
            # We have normal nodes here. We need to append our prefix.
            if n.prefix:
                pre = pre + n.prefix

            # Check our remaining parts.
            if not nparts and not has_fwc:
                # We are a node with no parts left and we are not looking at a fwc.
                # We could have a leafnode with no suffix which would be a match.
                # We could also have a terminal pwc. Check for those here.
                has_term_pwc = False
                if parts and parts[-1] == _PWC_B:
                    # If we are sitting on a terminal pwc, put the pwc back and continue.
                    nparts = parts[-1:]
                    has_term_pwc = True
                for cn in n.children():
                    if cn is None:
                        continue
                    if isinstance(cn, _Leaf):
                        # A leaf with no suffix, or (terminal pwc) a suffix within one token.
                        fire = not cn.suffix or (has_term_pwc and _TSEP_B not in cn.suffix)
                        if fire and not cb(pre + cn.suffix, cn.value):
                            return False
                    elif has_term_pwc and not self._match(cn, nparts, pre, cb):
                        # We have terminal pwc so call into match again with the child node.
                        return False
                # Return regardless.
                return True
            # If we are sitting on a terminal fwc, put back and continue.
            if has_fwc and not nparts:
                nparts = parts[-1:]

            # Here we are a node type with a partial match.
            # Check if the first part is a wildcard.
            fp = nparts[0]
            p = pivot(fp, 0)
            # Check if we have a pwc/fwc part here. This will cause us to iterate.
            if len(fp) == 1 and (p == PWC or p == FWC):
                # We need to iterate over all children here for the current node
                # to see if we match further down.
                for cn in n.children():
                    if cn is not None and not self._match(cn, nparts, pre, cb):
                        return False
                return True
            # Here we have normal traversal, so find the next child.
            n, parts = n.find_child(p), nparts
        return True

    # ---------------------------------------------------------------- iteration

    def iter_ordered(self) -> Iterator[tuple[bytes, V]]:
        """Go ``IterOrdered``: every (subject, value) in byte order of the subjects' paths."""
        if self._root is not None:
            yield from self._iter(self._root, b"", True)

    def iter_fast(self) -> Iterator[tuple[bytes, V]]:
        """Go ``IterFast``: every (subject, value) in the tree's storage order."""
        if self._root is not None:
            yield from self._iter(self._root, b"", False)

    def _iter(self, n: _Node[V], pre: bytes, ordered: bool) -> Iterator[tuple[bytes, V]]:
        if isinstance(n, _Leaf):
            yield pre + n.suffix, n.value
            return
        pre = pre + n.prefix
        nodes = [cn for cn in n.children() if cn is not None]
        if ordered:
            nodes.sort(key=lambda cn: cn.path())  # stable, as Go's SortStableFunc
        for cn in nodes:
            yield from self._iter(cn, pre, ordered)

    # ---------------------------------------------------------------- dump.go

    def dump(self) -> str:
        """Go ``Dump``: a text picture of the nodes (kind, prefix/suffix) for tests and debugging."""
        lines: list[str] = []

        def walk(n: _Node[V] | None, depth: int) -> None:
            pre = "-- " if depth == 0 else "  " * depth + "|__ "
            if n is None:
                lines.append("EMPTY")
            elif isinstance(n, _Leaf):
                lines.append(f"{pre} LEAF: Suffix: {n.suffix!r} Value: {n.value!r}")
            else:
                lines.append(f"{pre} {n.kind()} Prefix: {n.prefix!r}")
                for cn in n.children():
                    if cn is not None:
                        walk(cn, depth + 1)

        walk(self._root, 0)
        return "\n".join(lines) + "\n"

    def shape(self) -> object:
        """The layout without history: nested (prefix, {pivot: child}) / ("leaf", suffix).

        Two trees with the same keys have the same shape (see the module docstring); child
        order and node kinds are left out because they do depend on the order of operations.
        """

        def walk(n: _Node[V]) -> object:
            if isinstance(n, _Leaf):
                return ("leaf", n.suffix)
            kids = {pivot(cn.path(), 0): walk(cn) for cn in n.children() if cn is not None}
            return (n.prefix, kids)

        return None if self._root is None else walk(self._root)


def match_keys(items: Iterable[tuple[bytes, V]], filter: bytes) -> list[tuple[bytes, V]]:
    """What ``GoSubjectTree.match(filter)`` reports for a tree holding ``items`` (in that
    insertion order), built from only the keys that can matter.

    Those are the keys starting with ``head``, the first filter part up to its first ``*`` or
    ``>`` byte (not the filter's own first bytes: ``genParts`` drops a leading ``.``, so ``.*``
    matches ``b``). Matching starts at the first subject byte with that part and compares
    ``head`` byte by byte, so every match starts with it. The other keys cannot change the
    outcome: they only add node boundaries before ``len(head)``, where what is left of the part
    starts with a byte that is no wildcard, so it is still compared byte by byte and no
    wildcard iteration starts there; boundaries from ``len(head)`` on are where keys starting
    with ``head`` diverge, in either tree.
    """
    parts = gen_parts(filter)
    first = parts[0] if parts else b""
    cut = [i for i in (first.find(_PWC_B), first.find(_FWC_B)) if i >= 0]
    head = first[: min(cut)] if cut else first
    tree: GoSubjectTree[V] = GoSubjectTree()
    for key, value in items:
        if key.startswith(head):
            tree.insert(key, value)
    return tree.matches(filter)
