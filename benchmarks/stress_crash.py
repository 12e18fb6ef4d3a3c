"""Stress scenario 3: SIGKILL the server while it stores acknowledged publishes and acks, restart
it on the same store, and check what it acknowledged is there."""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from typing import Any

from benchmarks.stress_util import BlockingClient, ServerProc, header_value, status_of

STREAM = "CRASH"
DURABLE = "CD"


def payload_for(msg_id: str) -> bytes:
    """The one right body for a Msg-Id: 16 to 2,000 bytes derived from it."""
    digest = hashlib.sha256(msg_id.encode()).hexdigest().encode()
    size = 16 + int(digest[:4], 16) % 1985
    return (digest * (size // len(digest) + 1))[:size]


def _ensure(c: BlockingClient) -> None:
    info = c.request(f"$JS.API.STREAM.INFO.{STREAM}", b"")
    if "error" in info:
        cfg = {"name": STREAM, "subjects": ["crash.>"], "storage": "file", "allow_direct": True}
        reply = c.request(f"$JS.API.STREAM.CREATE.{STREAM}", json.dumps(cfg).encode())
        if "error" in reply:
            raise RuntimeError(reply)
    info = c.request(f"$JS.API.CONSUMER.INFO.{STREAM}.{DURABLE}", b"")
    if "error" in info:
        cfg = {"durable_name": DURABLE, "ack_policy": "explicit", "ack_wait": 2_000_000_000, "max_ack_pending": 10_000}
        body = json.dumps({"stream_name": STREAM, "config": cfg}).encode()
        reply = c.request(f"$JS.API.CONSUMER.CREATE.{STREAM}.{DURABLE}", body)
        if "error" in reply:
            raise RuntimeError(reply)


def _publisher(port: int, trial: int, acked: dict[str, int], errors: list[str], window: int = 32) -> None:
    try:
        c = BlockingClient.connect(port)
        sent = 0
        outstanding: dict[bytes, str] = {}
        while True:
            while len(outstanding) < window:
                mid = f"t{trial}-{sent}"
                sent += 1
                hdr = b"NATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n" % mid.encode()
                body = payload_for(mid)
                reply = b"_R.p%d" % sent
                outstanding[reply] = mid
                c.sock.sendall(
                    b"HPUB crash.%d %s %d %d\r\n%s%s\r\n" % (sent % 7, reply, len(hdr), len(hdr) + len(body), hdr, body)
                )
            f = c.next()
            if f.op == b"-ERR":
                errors.append(f.line.decode())
            if f.is_msg and f.subject in outstanding:
                mid = outstanding.pop(f.subject)
                r = json.loads(f.payload)
                if "error" in r:
                    errors.append(f"publish {mid}: {r}")
                else:
                    acked[mid] = int(r["seq"])
    except (OSError, ConnectionError):
        return  # the kill


def _acker(port: int, confirmed: dict[int, float], errors: list[str]) -> None:
    """Fetches from the durable and acks each message with a reply (an AckSync): a stream
    sequence is confirmed (at the time kept) when the server's empty reply comes."""
    try:
        c = BlockingClient.connect(port)
        subject = f"$JS.API.CONSUMER.MSG.NEXT.{STREAM}.{DURABLE}".encode()
        body = b'{"batch":20,"expires":200000000}'
        while True:
            c.sock.sendall(b"PUB %s _R.f %d\r\n%s\r\n" % (subject, len(body), body))
            pending: dict[bytes, int] = {}
            got = 0
            got_end = False
            while True:
                f = c.next()
                if f.op == b"-ERR":
                    errors.append(f.line.decode())
                if not f.is_msg:
                    continue
                if f.subject.startswith(b"_R.a"):
                    if f.payload or status_of(f):
                        errors.append(f"ack reply {f.raw[:60]!r}")
                    confirmed[pending.pop(f.subject)] = time.monotonic()
                    if not pending and got_end:
                        break
                    continue
                if status_of(f):  # 404/408: the fetch ended
                    got_end = True
                    if not pending:
                        break
                    continue
                if f.reply.startswith(b"$JS.ACK."):
                    tokens = f.reply.split(b".")
                    sseq = int(tokens[5]) if len(tokens) == 9 else int(tokens[7])
                    reply = b"_R.a%d" % sseq
                    pending[reply] = sseq
                    got += 1
                    got_end = got >= 20
                    c.sock.sendall(b"PUB %s %s 4\r\n+ACK\r\n" % (f.reply, reply))
    except (OSError, ConnectionError):
        return


def crash_trials(kind: str, trials: int, seed: int, max_run: float = 1.5) -> dict[str, Any]:
    rng = random.Random(seed)
    srv = ServerProc(kind)
    acked: dict[str, int] = {}
    confirmed: set[int] = set()
    loss_ms: list[float] = []
    errors: list[str] = []
    problems: list[str] = []
    missing = corrupt = dedupe_lost = floor_back = 0
    last_floor = 0
    restart_s: list[float] = []
    try:
        for trial in range(trials):
            c = BlockingClient.connect(srv.port)
            _ensure(c)
            c.sock.close()
            before = len(acked)
            this_trial: dict[int, float] = {}
            threads = [
                threading.Thread(target=_publisher, args=(srv.port, trial, acked, errors), daemon=True),
                threading.Thread(target=_acker, args=(srv.port, this_trial, errors), daemon=True),
            ]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.05, max_run))
            killed_at = time.monotonic()
            srv.kill()
            for t in threads:
                t.join(10)
            confirmed.update(this_trial)
            t0 = time.monotonic()
            srv.start()
            restart_s.append(time.monotonic() - t0)
            c = BlockingClient.connect(srv.port, timeout=60)
            info = c.request(f"$JS.API.STREAM.INFO.{STREAM}", b"")
            if "error" in info:
                problems.append(f"trial {trial}: stream lost: {info}")
                break
            last = int(info["state"]["last_seq"])
            first = int(info["state"]["first_seq"])
            frames = c.direct_get_many(STREAM, list(range(max(1, first), last + 1)))
            stored: dict[str, int] = {}
            for seq, frame in frames.items():
                if status_of(frame):
                    continue
                mid = (header_value(frame.header, b"Nats-Msg-Id") or b"").decode()
                stored.setdefault(mid, seq)
                if frame.payload != payload_for(mid):
                    corrupt += 1
                    problems.append(f"trial {trial}: seq {seq} ({mid}) holds {len(frame.payload)} wrong bytes")
            for mid, seq in acked.items():
                got = frames.get(seq)
                if got is None or status_of(got) or stored.get(mid) != seq:
                    missing += 1
                    if len(problems) < 20:
                        problems.append(f"trial {trial}: acked {mid} at seq {seq} is missing")
            # By Msg-Id: the same id again is a duplicate of the stored sequence.
            mine = list(acked)[before:]
            for mid in rng.sample(mine, min(20, len(mine))):
                hdr = b"NATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n" % mid.encode()
                r = c.request("crash.dup", payload_for(mid), hdr)
                if not r.get("duplicate") or r.get("seq") != acked[mid]:
                    dedupe_lost += 1
                    if len(problems) < 20:
                        problems.append(f"trial {trial}: {mid} again: {r} (acked at {acked[mid]})")
            cinfo = c.request(f"$JS.API.CONSUMER.INFO.{STREAM}.{DURABLE}", b"")
            floor = int(cinfo.get("ack_floor", {}).get("stream_seq", 0))
            # An ack the server replied to and then forgot: how long before the kill it was
            # confirmed (nats-server, like jsemu, writes consumer state behind the acks).
            lost_at = this_trial.get(floor + 1)
            if lost_at is not None and lost_at <= killed_at:
                loss_ms.append((killed_at - lost_at) * 1000)
            if floor < last_floor:
                floor_back += 1
                problems.append(
                    f"trial {trial}: ack floor {floor} after the restart, {last_floor} after the one before"
                )
            last_floor = max(last_floor, floor)
            c.sock.close()
        internal = srv.internal_errors()
    finally:
        srv.close()
    return {
        "trials": trials,
        "acked_pubs": len(acked),
        "confirmed_acks": len(confirmed),
        "missing": missing,
        "corrupt": corrupt,
        "dedupe_lost": dedupe_lost,
        "floor_back": floor_back,
        "acks_forgotten_trials": len(loss_ms),
        "ack_loss_max_ms": max(loss_ms, default=0.0),
        "errors": len(errors),
        "internal": len(internal),
        "restart_median_s": sorted(restart_s)[len(restart_s) // 2] if restart_s else float("nan"),
        "problems": problems[:10] + errors[:5] + internal[:5],
    }
