"""Reading a stream without Direct Get: an ephemeral pull consumer per task.

A stream with ``allow_direct`` off (a KV bucket made with client defaults, most streams made
by hand) does not answer ``$JS.API.DIRECT.GET``; any stream answers a consumer. Each task
creates its own ephemeral pull consumer (``ack_policy: none``, ``deliver_policy:
by_start_sequence`` at the first sequence of its range, the read's ``subject`` as
``filter_subject``, memory state, one replica), pulls ``no_wait`` batches until it passes the
end of its range or the stream has nothing more, and deletes the consumer. Nothing is acked,
so nothing is redelivered: the messages come once, in sequence order, as from Direct Get.

The stream sequence and the time come from the ack reply subject
(``$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ns>.<pending>``, or
the v2 form with a domain and an account hash in front); the headers are the stored ones.
Frames of the usual shape are cut with one regular expression each, as ``columns`` does for
Direct Get; anything else goes through ``NatsClient.next_msg``.
"""

from __future__ import annotations

import re
from typing import Any, Self

from .client import JetStreamError, NatsClient, split_headers
from .columns import Columns

__all__ = ["ConsumerRange", "first_seq_at"]

# A delivery: 1 "H" for HMSG, 2 subject, 3 stream sequence, 4 time (ns), 5 pending,
# 6 header length (HMSG), 7 total length.
_DELIVERY = re.compile(
    rb"(H?)MSG ([^ \r\n]+) \d+ \$JS\.ACK\.[^. \r\n]+\.[^. \r\n]+\.\d+\.(\d+)\.\d+\.(\d+)\.(\d+) (?:(\d+) )?(\d+)\r\n"
)
_INACTIVE_NS = 60_000_000_000  # an abandoned task's consumer goes away by itself


def _ack_fields(reply: bytes) -> tuple[int, int, int]:
    """(stream sequence, time ns, pending) of an ack reply subject, v1 or v2 form."""
    tokens = reply.split(b".")
    if len(tokens) == 9:
        base = 2
    elif len(tokens) >= 11:
        base = 4
    else:
        raise JetStreamError(f"a consumer delivered a message with an unexpected reply subject {reply!r}")
    return int(tokens[base + 3]), int(tokens[base + 5]), int(tokens[base + 6])


class ConsumerRange:
    """One task's ephemeral pull consumer over ``first..`` (``with`` deletes it)."""

    def __init__(self, nc: NatsClient, stream: str, first: int, subject: str, start_time: str = "") -> None:
        self.nc, self.stream = nc, stream
        config: dict[str, Any] = {
            "ack_policy": "none",
            "inactive_threshold": _INACTIVE_NS,
            "mem_storage": True,
            "num_replicas": 1,
        }
        if start_time:
            config.update(deliver_policy="by_start_time", opt_start_time=start_time)
        else:
            config.update(deliver_policy="by_start_sequence", opt_start_seq=max(1, first))
        if subject:
            config["filter_subject"] = subject
        try:
            created = nc.request(f"$JS.API.CONSUMER.CREATE.{stream}", {"stream_name": stream, "config": config})
        except JetStreamError as e:
            raise JetStreamError(
                f"stream {stream!r}: cannot create the ephemeral consumer it is read through (allow_direct is off): {e}"
            ) from None
        self.name: str = created["name"]
        self.pending: int = int(created.get("num_pending", 0))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.nc.request(f"$JS.API.CONSUMER.DELETE.{self.stream}.{self.name}")
        except (JetStreamError, OSError):
            pass  # gone already, or the connection is: its inactive threshold removes it

    def pull(self, cols: Columns, batch: int, max_bytes: int = 0) -> tuple[int, int]:
        """One ``no_wait`` pull of up to ``batch`` messages into ``cols``; returns how many
        came and the last stream sequence (0 if none). ``self.pending`` follows the stream."""
        request: dict[str, Any] = {"batch": batch, "no_wait": True}
        if max_bytes:
            request["max_bytes"] = max_bytes
        inbox = self.nc.send_request(f"$JS.API.CONSUMER.MSG.NEXT.{self.stream}.{self.name}", request)
        nc, stream = self.nc, self.stream.encode()
        got = last = 0
        match = _DELIVERY.match
        streams, subjects, seqs, times, data = cols.streams, cols.subjects, cols.seqs, cols.times_ns, cols.data
        hdr_offsets, add_headers = cols.hdr_offsets, cols.add_headers
        while got < batch:
            buf, pos = nc.reader.window()
            end = len(buf)
            while got < batch:
                m = match(buf, pos)
                if m is None:
                    break
                start = m.end()
                total = int(m.group(7))
                if start + total + 2 > end:
                    break
                if m.group(1):
                    if m.group(6) is None:
                        break
                    hlen = int(m.group(6))
                    block = buf[start : start + hlen]
                    if not block.startswith(b"NATS/1.0\r\n") or not block.endswith(b"\r\n\r\n"):
                        break  # a status line: the general way
                    add_headers(block[10:-2])
                    body = start + hlen
                else:
                    hdr_offsets.append(hdr_offsets[-1])
                    body = start
                streams.append(stream)
                subjects.append(m.group(2))
                last = int(m.group(3))
                seqs.append(last)
                times.append(int(m.group(4)))
                data.append(buf[body : start + total])
                self.pending = int(m.group(5))
                got += 1
                pos = start + total + 2
            nc.reader.skip_to(pos)
            if got >= batch:
                break
            frame = nc.next_msg()
            if frame.subject == inbox:  # a status ends the pull
                status = split_headers(frame.header)[0] if frame.op == b"HMSG" else b""
                code = status.split(b" ")[1] if status.count(b" ") else b""
                if code in (b"404", b"408") or (code == b"409" and b"MaxBytes" in status):
                    return got, last
                if code == b"100":
                    continue
                raise JetStreamError(
                    f"stream {self.stream!r}: the consumer it is read through stopped: "
                    f"{status.decode('utf-8', 'replace') or frame.line.decode('utf-8', 'replace')}"
                )
            if not frame.reply.startswith(b"$JS.ACK."):
                continue  # not a delivery (a late reply to an earlier request)
            seq, ns, self.pending = _ack_fields(frame.reply)
            streams.append(stream)
            subjects.append(frame.subject)
            seqs.append(seq)
            times.append(ns)
            data.append(frame.payload)
            if frame.op == b"HMSG":
                status, pairs = split_headers(frame.header)
                cols.hdr_keys.extend(k for k, _ in pairs)
                cols.hdr_values.extend(v for _, v in pairs)
            hdr_offsets.append(len(cols.hdr_keys))
            last = seq
            got += 1
        return got, last

    def read_to(self, cols: Columns, last: int, batch: int, max_bytes: int = 0) -> bool:
        """Pull the next batch; messages after ``last`` are dropped. False once the range is
        done (past ``last``, or the stream has nothing more for this consumer)."""
        got, last_got = self.pull(cols, batch, max_bytes)
        if last_got > last:
            keep = len(cols)
            while keep and cols.seqs[keep - 1] > last:
                keep -= 1
            cols.truncate(keep)
            return False
        return bool(got) and last_got < last and self.pending > 0


def first_seq_at(nc: NatsClient, stream: str, start_time: str, after_last: int) -> int:
    """The first sequence at or after ``start_time`` (RFC 3339), as a consumer finds it;
    ``after_last`` when there is none."""
    cols = Columns()
    with ConsumerRange(nc, stream, 0, "", start_time=start_time) as consumer:
        consumer.pull(cols, 1)
    return cols.seqs[0] if len(cols) else after_last
