"""The ack lane: a direct route for JetStream acks, ``$JS.ACK.<stream>.<consumer>.<5 tokens>``.

Every ack subject is new (it carries the message's sequences), so on the general path each
one costs a trie walk, a match-cache entry and, on the fast lane, a learned route that is
never used again. A consumer's ack subscription (``$JS.ACK.<stream>.<consumer>.*.*.*.*.*``)
is declared here with the handler of its runs of acks (a ``FastBatch``); an ack then goes
to it by a dict lookup on ``<stream>.<consumer>``, without the match cache.

The lane is a fast-lane entry in the sense of ``server/subscriber.py``, and takes an ack
only when routing it would reach exactly that handler:

* nothing but declared ack subscriptions can receive any subject under ``$JS.ACK.``
  (a client subscribed to ``$JS.ACK.>``, ``>`` or ``$JS.*.S.>`` sees acks, as on the real
  server, where acks are ordinary publishes: then every ack is routed). This is worked out
  once per ``Sublist.invalidate`` (kept in a ``derive`` cache), so a subscription change
  of any kind re-checks it;
* the subject has the nine non-empty tokens of the subscription and its stream and consumer
  are declared (else it is routed: nobody takes it and a requester gets no-responders);
* ``Server.learn_route`` adds the fast lane's own conditions (no fault rule, trace, queue
  policy or domain mapping), and never caches an ack subject as a learned route.

Permissions are not the lane's business: a connection with permissions never takes the
fast lane, and its acks reach ``Server.route`` (and so this lane) only once
``process_pub`` has allowed them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

from .subscriber import FastBatch

if TYPE_CHECKING:
    from .sublist import Sublist, Subscription
    from .subscriber import HeaderLens, Payloads, Replies, Subjects

__all__ = ["ACK_PREFIX", "AckLane", "ack_key"]

log = logging.getLogger("jsemu.server")

ACK_PREFIX = b"$JS.ACK."
_ACK_TOKENS = [b"$JS", b"ACK"]
_ACK_SUB_TAIL = b".*.*.*.*.*"


#: Runs at least this long are first checked as a whole (``_all_under``).
_BULK_MIN = 8


def _all_under(subjects: Sequence[bytes], head: bytes) -> bool:
    """Whether every subject is ``head`` (``$JS.ACK.<stream>.<consumer>.``) and five more
    non-empty tokens: the per-subject checks of a run done in C loops over the joined run
    (subjects hold no space, so ``b" " + head`` is found only at a subject's start)."""
    n = len(subjects)
    joined = b" " + b" ".join(subjects)
    return (
        joined.count(b" " + head) == n
        and b".." not in joined
        and b". " not in joined
        and joined[-1:] != b"."
        and list(map(bytes.count, subjects, repeat(b"."))).count(8) == n
    )


def ack_key(subject: bytes) -> bytes | None:
    """``<stream>.<consumer>`` of a nine-token ack subject with no empty token, else None
    (the caller checked the ``$JS.ACK.`` prefix)."""
    if subject.count(b".") != 8 or b".." in subject or subject[-1:] == b".":
        return None
    return subject[8 : subject.index(b".", subject.index(b".", 8) + 1)]


class AckLane:
    """The declared ack subscriptions of one server and whether acks may bypass routing."""

    __slots__ = ("_own", "_state", "_sublist", "fast_batch", "targets")

    def __init__(self, sublist: Sublist) -> None:
        self._sublist = sublist
        #: ``<stream>.<consumer>`` -> the handler of a run of its acks.
        self.targets: dict[bytes, FastBatch] = {}
        #: The declared subscriptions (any other under ``$JS.ACK.`` closes the lane).
        self._own: dict[Subscription, bytes] = {}
        #: b"open" -> whether nothing else can take an ack; cleared on every change.
        self._state: dict[bytes, Any] = {}
        sublist.derive(self._state)
        #: The learned route of every ack the lane takes: one stable object (a connection
        #: groups a run of publishes by the identity of its ``fast_batch``).
        self.fast_batch: FastBatch = self._run

    def add(self, sub: Subscription, handler: FastBatch) -> None:
        """Declare ``sub`` (already in the sublist, subject ``$JS.ACK.<s>.<c>.*.*.*.*.*``)."""
        subject = sub.subject
        assert subject.startswith(ACK_PREFIX) and subject.endswith(_ACK_SUB_TAIL), subject
        key = subject[len(ACK_PREFIX) : -len(_ACK_SUB_TAIL)]
        self.targets[key] = handler
        self._own[sub] = key
        self._state.clear()

    def remove(self, sub: Subscription) -> None:
        key = self._own.pop(sub, None)
        if key is not None:
            self.targets.pop(key, None)
        self._state.clear()

    def is_open(self) -> bool:
        """Nothing but declared ack subscriptions can receive a subject under ``$JS.ACK.``."""
        state = self._state.get(b"open")
        if state is None:
            own = self._own
            state = self._state[b"open"] = all(sub in own for sub in self._sublist.reaching(_ACK_TOKENS))
        return bool(state)

    def target(self, subject: bytes) -> FastBatch | None:
        """The handler that takes ``subject`` (a ``$JS.ACK.`` subject) on the lane, if any."""
        if not (self._state.get(b"open") or self.is_open()):
            return None
        # ``ack_key``, inlined: this runs for every ack
        if subject.count(b".") != 8 or b".." in subject or subject[-1:] == b".":
            return None
        return self.targets.get(subject[8 : subject.index(b".", subject.index(b".", 8) + 1)])

    def stretch(self, subjects: Sequence[bytes], start: int) -> int:
        """Where the stretch of subjects from ``start`` that ``target`` resolves ends (the
        check of each ack of a run, in bulk: a subject with the head of the one before it
        has the same consumer)."""
        if not (self._state.get(b"open") or self.is_open()):
            return start
        targets = self.targets
        head = b"\x00"  # no subject starts with it
        end = start
        for subject in subjects[start:] if start else subjects:
            if subject.count(b".") != 8 or b".." in subject or subject[-1:] == b".":
                break
            if not subject.startswith(head):
                if subject[:8] != ACK_PREFIX:
                    break
                cut = subject.index(b".", subject.index(b".", 8) + 1)
                if subject[8:cut] not in targets:
                    break
                head = subject[: cut + 1]
            end += 1
        return end

    def one_consumer(self, subjects: Sequence[bytes], start: int) -> FastBatch | None:
        """The handler of the consumer whose acks are all of ``subjects`` from ``start`` on
        (the usual run: one client acking what it read), checked in bulk; else None (then
        ``stretch`` finds where the lane's part of the run ends)."""
        run = subjects[start:] if start else subjects
        if len(run) < _BULK_MIN or not (self._state.get(b"open") or self.is_open()):
            return None
        first = run[0]
        key = ack_key(first) if first[:8] == ACK_PREFIX else None
        handler = self.targets.get(key) if key is not None else None
        if handler is None or not _all_under(run, ACK_PREFIX + key + b"."):  # type: ignore[operator]
            return None
        return handler

    def deliver(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """One ack from ``Server.route``: handed to its consumer if the lane takes it (a
        handler's failure is logged, as an internal subscriber's is, never the sender's)."""
        handler = self.target(subject)
        if handler is None:
            return False
        try:
            handler((subject,), (reply,), (hdr,), (msg,))
        except Exception:
            log.exception("ack handler failed for %r", subject)
        return True

    def _run(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, msgs: Payloads) -> None:
        """A run of acks that ``target`` resolved (the learned route of every ack subject):
        each stretch for one consumer goes to its handler in one call."""
        targets = self.targets
        n = len(subjects)
        start = 0
        while start < n:
            # Every subject was resolved by ``target``: a stretch for one consumer is the
            # subjects that share its ``$JS.ACK.<stream>.<consumer>.`` head.
            key = ack_key(subjects[start])
            end = start + 1
            if key is not None:
                head = ACK_PREFIX + key + b"."
                while end < n and subjects[end].startswith(head):
                    end += 1
            # A consumer deleted by an earlier ack of the run takes nothing more (as if its
            # subscription were gone).
            handler = targets.get(key) if key is not None else None
            if handler is not None:
                handler(subjects[start:end], replies[start:end], hdrs[start:end] if hdrs else None, msgs[start:end])
            start = end
