"""Run lanes: where a whole run of plain publishes goes when it needs no ``route``.

Theory of operation
-------------------
The fast lane (``server/subscriber.py``) covers subjects that one internal subscriber takes.
The two most common subjects of a plain core publisher are not among them: a subject nobody
listens to, and a subject one client subscription takes. Both went through ``route`` one
message at a time (a match, the subscription loop, ``deliver``) even for a ``PubRun`` (a
read's consecutive ``PUB`` ops, ``protocol/ops.py``), where the answer is the same for every
message of the run.

``Router.learn_route`` still learns such a subject as having no ``fast_batch`` (False), so
a single ``PUB`` or ``HPUB`` and a stretch of a mixed run take the general path as before;
beside it, it keeps the subject's :class:`RunLane` in ``Router.run_lanes`` (learned from the
same match, cleared with the learned routes). Only ``ClientConnection._pub_run``, for a run
whose every subject has no ``fast_batch``, looks there and, if the lane
:meth:`RunLane.admits` the publisher, hands it the run:

* :data:`NO_INTEREST`: nobody matches, so ``route`` would deliver nothing: the run is counted
  and dropped. Not for a publisher that wants no-responders statuses and sent a reply
  subject (``route``'s False answer is what triggers them).
* :class:`ClientLane`: exactly one plain client subscription matches (no queue group, no
  ``UNSUB`` limit, not closed): the run's ``MSG`` frames are queued on its connection as
  ``deliver`` would queue them, each message counted for the subscription. Not for a
  publisher that is that connection and said ``echo: false``. A lane is per subject: a run
  over several subjects of one wildcard subscription goes message by message.

Everything else ``route`` does per message is moot for these subjects, as for the fast
lane: the publishing connection takes lanes only without verbose, pedantic, permissions,
domain or subject mappings, and the router learns lanes only without fault rules, the
trace log and queue policies, and never for ``$NRG.`` and ``$JS.ACK.`` subjects. A change of
interest (``SUB``, ``UNSUB``, an ``UNSUB`` limit, a closed connection's subscriptions) clears
the learned routes with the match cache (``Sublist.derive``), so a lane never outlives the
match it was learned from.
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING

from ..protocol.encoder import encode_msg, payload_frames

if TYPE_CHECKING:
    from .connection import ClientConnection
    from .sublist import Subscription
    from .subscriber import HeaderLens, Payloads, Replies, Subjects

__all__ = ["NO_INTEREST", "ClientLane", "RunLane"]


class RunLane:
    """Where a whole ``PubRun`` to one subject may go instead of ``route``."""

    __slots__ = ()

    def admits(self, publisher: ClientConnection, replies: Replies) -> bool:
        """Whether ``publisher``'s run (with these reply subjects) may take the lane."""
        raise NotImplementedError

    def __call__(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, payloads: Payloads) -> None:
        raise NotImplementedError


class _NoInterest(RunLane):
    __slots__ = ()

    def admits(self, publisher: ClientConnection, replies: Replies) -> bool:
        return not publisher.no_responders or (replies[0] is None and replies.count(None) == len(replies))

    def __call__(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, payloads: Payloads) -> None:
        return None


#: The learned route of a subject nobody listens to.
NO_INTEREST: RunLane = _NoInterest()


class ClientLane(RunLane):
    """The one plain client subscription that takes a subject (one lane per subject)."""

    __slots__ = ("conn", "sub")

    def __init__(self, sub: Subscription, conn: ClientConnection) -> None:
        self.sub = sub
        self.conn = conn

    def admits(self, publisher: ClientConnection, replies: Replies) -> bool:
        return publisher.echo or publisher is not self.conn

    def __call__(self, subjects: Subjects, replies: Replies, hdrs: HeaderLens, payloads: Payloads) -> None:
        """``Router.route`` then ``ClientConnection.deliver`` for each message, in one go (a
        ``PubRun`` has no headers: ``hdrs`` is None; a lane has one subject)."""
        conn = self.conn
        if conn.closed:
            return
        sub = self.sub
        n = len(payloads)
        sub.nm += n
        if replies[0] is None and replies.count(None) == n:
            frames = payload_frames(b"MSG " + subjects[0] + b" " + sub.sid + b" ", payloads)
        else:
            frames = list(map(encode_msg, subjects, repeat(sub.sid, n), replies, payloads))
        conn.queue_frames(frames, sum(map(len, payloads)))
