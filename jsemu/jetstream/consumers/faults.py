"""Faults staged on one consumer, deterministically: the mechanism the control plane drives
(``jsemu.control.consumer_faults``), as ``server/faults.py`` is for client messages.

A consumer with no faults has ``faults is None`` and pays one attribute test at each hook:

* heartbeats: the next ``n`` idle heartbeats are not sent (an ordered consumer's client
  misses them and recreates its consumer);
* delivery gaps: the next ``n`` messages are recorded as delivered but not sent (a gap in
  the consumer sequence an ordered consumer notices; with acks they come back after
  ``ack_wait``);
* acks: the next ``n`` acks are lost (the messages are redelivered after ``ack_wait``), or
  held for a while on the server's clock before they are processed.

Expiring the waiting pull requests and the state report are here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["ConsumerFaults", "consumer_state", "expire_waiting", "faults_of"]


@dataclass
class ConsumerFaults:
    """What is staged on one consumer, and how much of it has happened."""

    lose_heartbeats: int = 0
    skip_messages: int = 0
    drop_acks: int = 0
    delay_acks: int = 0
    ack_delay_ns: int = 0
    lost_heartbeats: int = 0
    skipped: int = 0
    dropped_acks: int = 0
    delayed_acks: int = 0
    _replaying: bool = False

    def take_heartbeat(self) -> bool:
        """True when this heartbeat must be lost."""
        if self.lose_heartbeats <= 0:
            return False
        self.lose_heartbeats -= 1
        self.lost_heartbeats += 1
        return True

    def take_skip(self) -> bool:
        """True when the message being delivered must not be sent."""
        if self.skip_messages <= 0:
            return False
        self.skip_messages -= 1
        self.skipped += 1
        return True

    def intercept_ack(self, consumer: Consumer, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool:
        """True when the ack is dropped or held (it is processed later)."""
        if self._replaying:
            return False
        if self.drop_acks > 0:
            self.drop_acks -= 1
            self.dropped_acks += 1
            return True
        if self.delay_acks > 0:
            self.delay_acks -= 1
            self.delayed_acks += 1
            js = consumer.js

            def later() -> None:
                if consumer.closed:
                    return
                self._replaying = True
                try:
                    consumer.process_ack(subject, reply, hdr, msg)
                finally:
                    self._replaying = False
                js.server.flush()

            js.timers.at(js.clock.now_ns() + self.ack_delay_ns, later)
            return True
        return False

    def as_dict(self) -> dict[str, int]:
        return {
            "lose_heartbeats": self.lose_heartbeats,
            "skip_messages": self.skip_messages,
            "drop_acks": self.drop_acks,
            "delay_acks": self.delay_acks,
            "ack_delay_ns": self.ack_delay_ns,
            "lost_heartbeats": self.lost_heartbeats,
            "skipped": self.skipped,
            "dropped_acks": self.dropped_acks,
            "delayed_acks": self.delayed_acks,
        }


def faults_of(consumer: Consumer) -> ConsumerFaults:
    """The consumer's fault state, made on first use."""
    if consumer.faults is None:
        consumer.faults = ConsumerFaults()
    return consumer.faults


def expire_waiting(consumer: Consumer) -> int:
    """End every waiting pull request now, as if its ``expires`` had passed (each gets its
    408); returns how many."""
    now = consumer.js.clock.now_ns()
    n = len(consumer.waiting)
    for wr in consumer.waiting:
        wr.expires = now
    consumer.process_waiting(eos=False)
    return n


def consumer_state(consumer: Consumer) -> dict[str, Any]:
    """The consumer info and what is behind it: pending (stream seq, delivery seq, delivery
    time), the redelivery counts and queue, the waiting requests and the staged faults."""
    return {
        "info": consumer.info_json(),
        "next_stream_seq": consumer.next_stream_seq,
        "next_consumer_seq": consumer.next_consumer_seq,
        "pending": [[seq, p[0], p[1]] for seq, p in sorted(consumer.pending.items())],
        "redelivered": {str(seq): n for seq, n in sorted(consumer.redelivery_counts.items())},
        "redelivery_queue": list(consumer.redelivery_queue),
        "waiting": [
            {"reply": wr.reply.decode(), "batch": wr.remaining, "max_bytes": wr.bytes_left, "expires": wr.expires}
            for wr in consumer.waiting
        ],
        "push_bound": consumer.active,
        "faults": consumer.faults.as_dict() if consumer.faults is not None else None,
    }
