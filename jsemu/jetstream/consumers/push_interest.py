"""Which subscriptions bind a push consumer: nats-server's sublist notifications.

A push consumer delivers, reports ``push_bound``, sends idle heartbeats and flow control only
while it is bound. nats-server decides that with a notification it registers on its account's
sublist for the literal deliver subject and the consumer's ``deliver_group``
(``registerNotification``, ``chkForInsertNotification``, ``chkForRemoveNotification`` in
``server/sublist.go``; the consumer's ``updateDeliveryInterest`` takes what it says), so:

* Only a subscription on exactly the deliver subject counts. ``dlv.*``, ``dlv.>`` or ``>``
  never bind a consumer on ``dlv.x``; while something else binds it they receive its
  deliveries like any subscriber.
* Without a ``deliver_group`` only plain subscriptions count (a lone queue subscription on
  the subject leaves the consumer unbound); with one only members of that queue group do
  (plain subscribers and other groups then receive the deliveries but never bind it).
* When the notification is registered (the consumer is made, or given a new deliver
  subject) the server matches the subject and, for a queue group, looks only at the group's
  first member in match order: a member on ``>`` or ``dlv.>`` comes before the exact one (a
  member on ``dlv.*`` after it), so the consumer starts unbound although an exact member
  exists. After that the notifications go by key alone: the first exact member of the group
  (or first exact plain subscription) binds it, the last one to leave unbinds it. A consumer
  that started unbound that way stays so until its exact members all leave and one comes
  back.

:class:`DeliveryInterest` keeps that state for one consumer; it is told of each subscription
added or removed (``Sublist.on_change``) and answers at once whether the state changed, so
the delivery path only reads ``Consumer.active``.

Left out: nats-server also unbinds a consumer whose delivery reached nobody
(``didNotDeliver``) and binds it again if anything at all matches the subject; with the
rules above a bound consumer always has an exact subscriber, so only a race of an
unsubscribe with a delivery in flight gets there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...server.sublist import Sublist, Subscription

__all__ = ["DeliveryInterest"]


class DeliveryInterest:
    """The notification of one push consumer: ``bound`` is what it last said."""

    __slots__ = ("bound", "queue", "subject")

    def __init__(self, sublist: Sublist, subject: bytes, queue: bytes | None) -> None:
        self.subject = subject
        self.queue = queue
        #: Whether the consumer is bound (Go's notification is in the remove map).
        self.bound = _registered_interest(sublist, subject, queue)

    def changed(self, sublist: Sublist, sub: Subscription) -> bool:
        """``sub`` was just added to or removed from ``sublist``: whether that flipped
        ``bound`` (only a subscription on exactly the subject, with the same queue, can)."""
        if sub.subject != self.subject or sub.queue != self.queue:
            return False
        exact = _exact(sublist, self.subject, self.queue)
        if sub in exact:  # added: the first one on the subject's node binds
            if not self.bound and len(exact) == 1:
                self.bound = True
                return True
        elif self.bound and not exact:  # removed: the last one unbinds
            self.bound = False
            return True
        return False


def _exact(sublist: Sublist, subject: bytes, queue: bytes | None) -> list[Subscription]:
    """The subscriptions on exactly ``subject`` (plain ones, or that queue group's members)."""
    result = sublist.match(subject)
    if queue is None:
        return [s for s in result.psubs if s.subject == subject]
    for members in result.qsubs:
        if members[0].queue == queue:
            return [s for s in members if s.subject == subject]
    return []


def _registered_interest(sublist: Sublist, subject: bytes, queue: bytes | None) -> bool:
    """``registerNotification``'s first answer: any exact plain subscription; for a queue
    group, whether the group's first member in match order is on the exact subject."""
    result = sublist.match(subject)
    if queue is None:
        return any(s.subject == subject for s in result.psubs)
    return any(members[0].queue == queue and members[0].subject == subject for members in result.qsubs)
