"""The state a consumer's delivery run shares between its two loops.

A run is delivered by the general loop (``Consumer._pull_run`` / ``_push_run``, one message
at a time) and, where nothing unusual is in play, by the stretch loop (:mod:`.fast`, many
messages at a time, inlined). Both read and write the same three pieces of state, so each is
an object of its own, owned by the consumer and handed to the stretch loop; its fields are
the contract between the loops:

* :class:`DeliveryRun`: the messages gathered for one subject, sent in one ``Sender.deliver``
  call (a message to another subject, or a status, sends what is gathered first, so frames
  keep the server's order);
* :class:`ReadAhead`: store entries read in chunks of :data:`READ_AHEAD` (``live_entries``),
  valid only while the consumer's position is where the last one handed out left it, and
  only within one run (the store may change between runs);
* :class:`FlowControl`: a push consumer's flow-control window (``flow_control``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ...ids import BASE62
from ...protocol.encoder import Delivery
from ...store import StoredMsg

if TYPE_CHECKING:
    from random import Random

    from ...store import StoreReader
    from ..context import HasSender

__all__ = ["FC_LIMIT", "FC_WINDOW", "READ_AHEAD", "DeliveryRun", "Entry", "FlowControl", "ReadAhead"]

#: Messages a run reads from the store at a time (without a filter).
READ_AHEAD = 128
#: Flow control: the window starts at 2 MiB (``JsFlowControlMaxPending`` / 16) and doubles
#: with each answered request up to 32 MiB; a request goes out past half the window.
FC_WINDOW = 2 * 1024 * 1024
FC_LIMIT = 32 * 1024 * 1024
_FC_CHARS = BASE62.encode()

#: A store entry as ``live_entries`` gives it: sequence, subject, body (the payload, or the
#: header block and the payload), stored time.
Entry = tuple[int, bytes, bytes | tuple[bytes, bytes], int]


class DeliveryRun:
    """The messages gathered for one subject (``to``), sent together by :meth:`flush`."""

    __slots__ = ("_js", "items", "to")

    def __init__(self, js: HasSender) -> None:
        self._js = js  # its ``out`` is looked up at each flush
        self.to = b""
        self.items: list[Delivery] = []

    def add(self, to: bytes, item: Delivery) -> None:
        """Add a message to the run (a run goes to one subject)."""
        if to != self.to:
            self.flush()
            self.to = to
        self.items.append(item)

    def towards(self, to: bytes) -> list[Delivery]:
        """The run's list for messages to ``to``, to append to directly (what was gathered for
        another subject is sent first). A flush replaces the list: fetch it again after one."""
        if to != self.to:
            self.flush()
            self.to = to
        return self.items

    def flush(self) -> None:
        """Send the gathered run: one call to the outbound path."""
        if self.items:
            items, self.items = self.items, []
            self._js.out.deliver(self.to, items)


class ReadAhead:
    """Entries read ahead for a run without a filter, last first (``entries``), and the stream
    sequence the consumer is at when the next of them is its next message (``resumes_at``)."""

    __slots__ = ("entries", "resumes_at")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.resumes_at = 0

    def next(self, store: StoreReader, seq: int) -> StoredMsg | None:
        """The first live message at or after ``seq``: from the entries read ahead while the
        position is where they left it (an ``_unget`` moves it back), else from a new chunk."""
        entries = self.entries
        if not entries or self.resumes_at != seq:
            entries = self.entries = store.live_entries(seq, READ_AHEAD)
            if not entries:
                return None
            entries.reverse()
        seq, subject, body, ts = entries.pop()
        self.resumes_at = seq + 1
        if type(body) is bytes:
            return StoredMsg(subject, b"", body, seq, ts)
        hdr, data = cast(tuple[bytes, bytes], body)
        return StoredMsg(subject, hdr, data, seq, ts)


class FlowControl:
    """A push consumer's flow control (``sendFlowControl`` / ``processFlowControl``): bytes sent
    since the last answered request (Go's ``pbytes``), the window (``maxpb``; 0: no flow
    control), and the outstanding request's reply subject (``fcid``; empty: none) with the
    bytes it covers (``fcsz``)."""

    __slots__ = ("covers", "prefix", "reply", "sent", "window")

    def __init__(self, prefix: bytes, enabled: bool) -> None:
        self.prefix = prefix  # ``$JS.FC.<stream>.<consumer>.``
        self.sent = 0
        self.window = FC_WINDOW if enabled else 0
        self.reply = b""
        self.covers = 0

    def request(self, rng: Random) -> bytes:
        """A new request covering what was sent so far; its reply subject."""
        self.reply = self.prefix + bytes(_FC_CHARS[rng.randrange(62)] for _ in range(4))
        self.covers = self.sent
        return self.reply

    def answered(self, subject: bytes) -> bool:
        """An answer on ``subject``: if it is the latest request's, widen the window and
        count what it covered as received."""
        if subject != self.reply:
            return False
        if self.window < FC_LIMIT:
            self.window = min(self.window * 2, FC_LIMIT)
        self.sent = max(self.sent - self.covers, 0)
        self.reply, self.covers = b"", 0
        return True
