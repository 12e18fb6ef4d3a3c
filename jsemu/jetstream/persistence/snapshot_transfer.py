"""The two transfers of a stream snapshot: chunks out to a client, chunks in from one.

As nats-server 2.15.1 does them (``streamSnapshot``, ``processStreamRestore``):

* **Out.** After the ``stream_snapshot_response`` and the ``SNAPSHOT_CREATE`` advisory, the
  archive goes to ``deliver_subject`` in chunks of ``chunk_size`` (default 128 KiB, kept
  within 1 KiB..1 MiB). Each full chunk carries the reply ``$JS.SNAPSHOT.ACK.<stream>.<id>.
  <size>.<n>``; at most ``window_size / chunk_size`` chunks (window default 8 MiB, within
  1 KiB..32 MiB, at least one chunk) wait for their acks (any message to the reply). A short
  last chunk has no reply. The end is an empty message: with the header ``NATS/1.0 204``
  once a full chunk was sent, without headers otherwise. No ack for 5 s ends it with
  ``NATS/1.0 408 No Flow Response`` (``408 No Interest`` when nobody listens any more);
  a subscriber that is not there at the start is waited for 2 s. Then ``SNAPSHOT_COMPLETE``.
* **In.** ``STREAM.RESTORE`` sends ``RESTORE_CREATE``, answers with ``deliver_subject``
  ``$JS.SNAPSHOT.RESTORE.<stream>.<id>``, and each chunk published there with a reply gets
  an empty message back. An empty chunk ends the upload: the stream is restored and that
  message's reply gets a ``stream_create_response`` (after ``STREAM.CREATED`` and
  ``RESTORE_COMPLETE``), or 500/10062 ``restore failed: ...``. A chunk without a reply ends
  it with no answer (the subscription is gone, so the next chunk finds no responders), and
  5 s without a chunk abandons it silently.

Both waits run on the server's clock (``JetStream.timers``), so tests advance it.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...ids import new_event_id
from ...protocol.gojson import dumps
from ...protocol.texts import STATUS_SNAPSHOT_END, STATUS_SNAPSHOT_NO_FLOW, STATUS_SNAPSHOT_NO_INTEREST
from ...server.client_info import ClientInfo
from ...server.sublist import Subscription
from ...timefmt import format_ns
from ..errors import ApiError, ApiErrors, api_error, response_type
from ..internal import InternalSubscriber
from .snapshot_archive import RestoreError, extract_archive

if TYPE_CHECKING:
    from ..clock_timers import Timer
    from ..streams.config import StreamConfig
    from .host import TransferHost

__all__ = ["RestoreReceiver", "SnapshotSender", "send_advisory"]

log = logging.getLogger("jsemu.jetstream")

_SECOND = 1_000_000_000
DEFAULT_CHUNK = 128 * 1024
DEFAULT_WINDOW = 8 * 1024 * 1024
ACK_TIMEOUT_NS = 5 * _SECOND
INTEREST_WAIT_NS = 2 * _SECOND
STALL_NS = 5 * _SECOND
_ADVISORY = "$JS.EVENT.ADVISORY.STREAM."
_TYPE = "io.nats.jetstream.advisory.v1."


def send_advisory(
    js: TransferHost, event: str, kind: str, stream: str, fields: list[tuple[str, Any]], client: ClientInfo | None
) -> None:
    """``publishAdvisory`` of a snapshot/restore event (built only while someone listens)."""
    subject = f"{_ADVISORY}{event}.{stream}".encode()
    if not js.out.has_interest(subject):
        return
    doc: dict[str, Any] = {"type": _TYPE + kind, "id": new_event_id(), "timestamp": format_ns(js.clock.now_ns())}
    doc["stream"] = stream
    doc.update(fields)
    if client is not None:
        doc["client"] = client.as_json()
    if js.domain:
        doc["domain"] = js.domain
    js.out.send_via_sendq(subject, -1, dumps(doc).encode())


class SnapshotSender:
    """One snapshot on its way to ``deliver_subject``, paced by the client's acks."""

    def __init__(
        self,
        js: TransferHost,
        stream: str,
        deliver: str,
        data: bytes,
        sizes: tuple[int, int],
        client: ClientInfo | None,
    ) -> None:
        chunk, window = sizes
        self.js = js
        self.stream = stream
        self.deliver = deliver.encode()
        self.data = data
        self.chunk = min(max(1024, chunk or DEFAULT_CHUNK), 1024 * 1024)
        window = max(min(max(1024, window or DEFAULT_WINDOW), 32 * 1024 * 1024), self.chunk)
        self.slots = window // self.chunk
        self.client = client
        self.ack_subject = f"$JS.SNAPSHOT.ACK.{stream}.{new_event_id()}"
        self.pos = 0
        self.index = 1
        self.end_header = b""
        self.done = False
        self.start_ns = js.clock.now_ns()
        self.timer: Timer | None = None
        self.sub = Subscription(InternalSubscriber(self._on_ack), (self.ack_subject + ".>").encode(), None, b"$SNAP")

    def start(self, state: dict[str, Any]) -> None:
        """After the reply: the advisory, then the chunks (once someone listens, or 2 s)."""
        send_advisory(self.js, "SNAPSHOT_CREATE", "snapshot_create", self.stream, [("state", state)], self.client)
        self.js.account.sublist.insert(self.sub)
        if self.js.out.has_interest(self.deliver):
            self._pump()
        else:
            self.timer = self.js.timers.at(self.js.clock.now_ns() + INTEREST_WAIT_NS, self._pump)

    def _pump(self) -> None:
        while not self.done and self.slots > 0:
            chunk = self.data[self.pos : self.pos + self.chunk]
            self.pos += len(chunk)
            if len(chunk) < self.chunk:  # ``io.ReadFull`` came short: the last chunk, if any
                if chunk:
                    self.js.out.send(self.deliver, -1, chunk)
                self._finish("")
                return
            self.slots -= 1
            reply = f"{self.ack_subject}.{len(chunk)}.{self.index}".encode()
            self.index += 1
            self.end_header = STATUS_SNAPSHOT_END
            self.js.out.deliver(self.deliver, [(self.deliver, reply, -1, chunk)])
        if not self.done:
            self._arm()

    def _arm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.js.timers.at(self.js.clock.now_ns() + ACK_TIMEOUT_NS, self._stalled)

    def _on_ack(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        if self.done:
            return
        self.slots += 1
        self._pump()

    def _stalled(self) -> None:
        if self.done:
            return
        if self.js.out.has_interest(self.deliver):
            self.end_header = STATUS_SNAPSHOT_NO_FLOW
            self._finish("no flow response")
        else:
            self.end_header = STATUS_SNAPSHOT_NO_INTEREST
            self._finish("no interest")

    def _finish(self, error: str) -> None:
        self.done = True
        if self.timer is not None:
            self.timer.cancel()
        self.js.account.sublist.remove(self.sub)
        if self.end_header:
            self.js.out.send(self.deliver, len(self.end_header), self.end_header)
        else:
            self.js.out.send(self.deliver, -1, b"")
        fields: list[tuple[str, Any]] = [
            ("start", format_ns(self.start_ns)),
            ("end", format_ns(self.js.clock.now_ns())),
        ]
        send_advisory(self.js, "SNAPSHOT_COMPLETE", "snapshot_complete", self.stream, fields, self.client)
        if error:
            log.warning("Snapshot for stream '%s > %s' failed: %s", self.js.account.name, self.stream, error)


class RestoreReceiver:
    """One restore upload: chunks collected until the empty one, then the stream made."""

    def __init__(self, js: TransferHost, cfg: StreamConfig, client: ClientInfo | None) -> None:
        self.js = js
        self.cfg = cfg
        self.client = client
        self.subject = f"$JS.SNAPSHOT.RESTORE.{cfg.name}.{new_event_id()}"
        self.chunks: list[bytes] = []
        self.total = 0
        self.start_ns = js.clock.now_ns()
        self.sub = Subscription(InternalSubscriber(self._on_chunk), self.subject.encode(), None, b"$RESTORE")
        self.timer: Timer | None = None
        self.done = False

    def start(self) -> None:
        send_advisory(self.js, "RESTORE_CREATE", "restore_create", self.cfg.name, [], self.client)
        self.js.account.sublist.insert(self.sub)
        self._arm()

    def _arm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.js.timers.at(self.js.clock.now_ns() + STALL_NS, self._stalled)

    def _stalled(self) -> None:
        if not self.done:
            self._close()
            log.warning("restore for stream '%s > %s' is stalled", self.js.account.name, self.cfg.name)

    def _close(self) -> None:
        self.done = True
        if self.timer is not None:
            self.timer.cancel()
        self.js.account.sublist.remove(self.sub)

    def _on_chunk(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        if self.done:
            return
        if not reply:
            self._close()
            log.warning(
                "restore for stream '%s > %s' requires reply subject for each chunk",
                self.js.account.name,
                self.cfg.name,
            )
            self._complete()
            return
        if not msg:
            self._close()
            self._finish(reply)
            return
        self.chunks.append(msg)
        self.total += len(msg)
        self.js.out.send_via_sendq(reply, -1, b"")  # into the account, not back through the API
        self._arm()

    def _complete(self) -> None:
        now = format_ns(self.js.clock.now_ns())
        fields: list[tuple[str, Any]] = [("start", format_ns(self.start_ns)), ("end", now), ("bytes", self.total)]
        send_advisory(self.js, "RESTORE_COMPLETE", "restore_complete", self.cfg.name, fields, self.client)

    def _finish(self, reply: bytes) -> None:
        kind = "stream_create_response"
        try:
            with tempfile.TemporaryDirectory(prefix="jsemu-restore-") as tmp:
                stream_dir = Path(tmp) / "stream"
                extract_archive(b"".join(self.chunks), stream_dir, self.js.account.name)
                stream = self.js.restore_stream(self.cfg, stream_dir)
        except (RestoreError, ApiError) as exc:
            text = exc.description if isinstance(exc, ApiError) else str(exc)
            err = api_error(ApiErrors.JSStreamRestoreErrF, err=text)
            self._complete()
            self.js.out.send_via_sendq(reply, -1, dumps({"type": response_type(kind), "error": err.as_dict()}).encode())
            log.warning("Restore failed for stream '%s > %s': %s", self.js.account.name, self.cfg.name, text)
            return
        self._complete()
        out: dict[str, Any] = {"type": response_type(kind)}
        out.update(stream.info_json(domain=False, cluster=False))
        self.js.out.send_via_sendq(reply, -1, dumps(out).encode())
