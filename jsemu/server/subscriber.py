"""The subscriber contract, and the fast lane built on it.

Theory of operation
-------------------
Whoever owns a subscription (a client connection, a stream, a Direct Get responder, the
JetStream API) is a :class:`Subscriber`: ``route`` hands it one message at a time with
``deliver``. That is the general path, and it is always correct.

The *fast lane* is a shortcut for the publish that dominates a busy server: a client
publishing, pipelined, to subjects that exactly one internal subscriber takes (a stream's
subjects; a lone Direct Get responder's request subjects). Such a subscriber may offer a
:data:`FastBatch` as its ``fast_batch`` attribute: it takes a whole run of publishes as
columns (subjects, replies, header lengths or None for "all -1", messages) and must do
exactly what ``deliver`` would do for each of them, in order. The attribute must be one
stable object (a connection tells runs apart by identity).

``Server.learn_route(subject)`` decides once per publish subject whether its publishes may
take the lane, and to which ``fast_batch``; the answer is a *learned route*, cached in
``Server.learned_routes``. A connection that is neither verbose nor pedantic then hands its
runs straight to the learned ``fast_batch``, skipping per message:

* ``Sublist.match`` and ``route`` (the learned route *is* the match result);
* the pedantic subject check, the ``+OK`` of verbose mode and publish permissions
  (verbose, pedantic and permission-bound connections never take the lane);
* fault rules, the trace log, queue policies and JetStream domain mapping (while any
  is in play, nothing is learned);
* no-echo (only internal subscribers are targets), ``UNSUB`` limits (a target with
  one is never learned) and no-responders (a target always takes the message).

The lane still checks, per message, the reserved reply prefixes (``_R_.``, ``$JS.ACK.``,
``$GNR.``), and ``$NRG.`` subjects are never learned.

The *ack lane* (``server/ack_lane.py``) is the one other declared entry: a consumer's ack
subscription declares the handler of a run of its acks, and ``learn_route`` returns the
lane's ``fast_batch`` for an ack subject it resolves (never cached: every ack subject is
new). It holds while nothing but declared ack subscriptions can receive a ``$JS.ACK.``
subject; that is worked out once per ``invalidate`` like every other derived cache.

A subject nobody listens to, or that one plain client subscription takes, is learned as a
*run lane* (``server/run_lanes.py``): a falsy ``FastBatch``, so every ``if batch`` above still
routes it; only a whole ``PubRun`` takes it, when the lane admits the publisher.

A route (``server/route.py``) carries many accounts: instead of one ``fast_batch`` it offers
``account_batch(router) -> FastBatch`` (one stable object per account), taken when it is the
one target through plain interest (never for a remote queue group, whose frames must name it).

``skips``: an internal subscriber may declare ``skips(subject) -> bool``, the subjects
it always declines (its ``deliver`` returns False and does nothing else). It is then no
reason to leave the lane. The JetStream API import (``$JS.API.>``) skips
``$JS.API.DIRECT.GET`` and everything after it, byte for byte: that is what lets a Direct
Get responder be the one target of its request subjects. A ``skips`` that claims a subject
its ``deliver`` would act on makes the lane drop that action.

Replicated stores must refuse bulk appends: a stream's ``fast_batch`` stores a run with
``append_columns`` and a store that has to see each message (a leader's
``ReplicatedStore`` logging every mutation for its followers and the write-ahead log)
answers False there, so the run is stored one message at a time.

What a ``fast_batch`` checks itself on every run (a stream's publish rules, whether anything
watches it, its store's limits) is not part of the route and needs no invalidation.

What a learned route (and a reply plan of ``server/outbound.py``) assumed can change. Every
such change goes through one call, ``Sublist.invalidate(change)``, which forgets every
cached match, learned route and reply plan and advances ``Sublist.epoch``. The changes are
the members of :class:`Change`; nothing else may touch those caches.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .sublist import Subscription

__all__ = ["Change", "FastBatch", "HeaderLens", "Payloads", "Replies", "SkipFn", "Subjects", "Subscriber"]

#: A run of publishes as columns, one entry per publish: its subject, its reply subject, the
#: length of its header block (the column is None when no publish of the run has headers:
#: all -1) and its message (headers included). See the module docstring.
Subjects = Sequence[bytes]
Replies = Sequence[bytes | None]
HeaderLens = Sequence[int] | None
Payloads = Sequence[bytes]
FastBatch = Callable[[Subjects, Replies, HeaderLens, Payloads], None]

#: True for a publish subject the subscriber always declines (see ``skips`` above).
SkipFn = Callable[[bytes], bool]


class Subscriber(Protocol):
    """Whoever owns a subscription: a client connection or an internal handler. It may also
    have ``fast_batch: FastBatch | None`` and ``skips: SkipFn | None``, read by
    ``Server.learn_route`` with ``getattr`` (so neither is part of the required protocol)."""

    def deliver(self, sub: Subscription, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """Hand over one message; False if it was not delivered (e.g. echo is off)."""
        ...


class Change(enum.Enum):
    """Every state change that invalidates learned routes and reply plans (the argument of
    ``Sublist.invalidate``)."""

    SUBSCRIBE = "a subscription was added"
    UNSUBSCRIBE = "a subscription was removed"
    UNSUB_LIMIT = "a subscription got an UNSUB limit (plans assumed none)"
    MATCH_CACHE_FULL = "the match cache reached its size limit"
    FAULT_RULES = "a fault rule was added, removed or used up"
    TRACE = "tracing started (traced publishes leave the lane)"
    QUEUE_POLICY = "a queue policy was set or cleared"
