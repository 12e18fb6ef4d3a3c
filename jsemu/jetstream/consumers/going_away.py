"""What waiting pull requests hear when their consumer goes away (nats-server 2.15.1).

A client waiting on a pull request (a ``fetch``, a ``next()``, an ordered consumer's batch)
learns that its consumer is gone only from a status sent to the request's reply subject;
without one it waits until its own timeout. nats-server sends two:

* ``409 Consumer Deleted`` (``releaseAnyPendingRequests``, from ``stopWithFlags`` with the
  delete flag): to each waiting request of a pull consumer deleted by ``CONSUMER.DELETE`` or
  by its stream's deletion (the inactive threshold deletes only a consumer nobody waits on),
  in the order the requests wait. A later request to the consumer hears no responders, as
  the consumer's subscription is gone.
* ``409 Server Shutdown`` with ``Nats-Pending-Messages`` / ``Nats-Pending-Bytes``
  (``signalPullConsumers``, the first step of ``Server.Shutdown``: a clean stop, SIGTERM or
  SIGINT): once per reply subject of every R1 consumer's waiting requests, before the
  connections close. Go walks a map there, so the order is not defined.

Nothing else does: a purge, lame duck mode (its JetStream shutdown stops consumers without
the delete flag), a pause or a push consumer's deletion send no status (push subscribers
notice the missing idle heartbeats).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...protocol import texts

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["release_deleted", "signal_shutdown"]


def release_deleted(consumer: Consumer) -> None:
    """``releaseAnyPendingRequests(false)``: a deleted pull consumer's waiting requests end
    (a push consumer never has any)."""
    for wr in consumer.waiting:
        consumer.send_status(wr.reply, texts.PULL_CONSUMER_DELETED)


def signal_shutdown(consumers: Iterable[Consumer]) -> bool:
    """``signalPullConsumers``: every R1 consumer's waiting requests hear that the server
    stops, with what they still asked for. Whether anything was sent."""
    sent = False
    for consumer in consumers:
        if consumer.config.num_replicas > 1:  # Go reads the config: 0 (the stream's) counts as R1
            continue
        latest = {wr.reply: wr for wr in consumer.waiting}  # Go's pendingRequests map
        for reply, wr in latest.items():
            consumer.send_status(reply, texts.PULL_SERVER_SHUTDOWN % (wr.remaining, wr.bytes_left))
            sent = True
    return sent
