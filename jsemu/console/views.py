"""What the console shows, as JSON: the server, its connections, streams, consumers, KV
buckets and object stores.

Every figure comes from where a client or the monitoring port gets it, so the console never
tells a different story: the overview and connections are the monitor's ``/varz`` and
``/connz``; streams and consumers are the answers of the ``$JS.API`` handlers
(``STREAM.LIST``, ``STREAM.INFO`` with ``subjects_filter``, ``CONSUMER.LIST``), run in-process
without counting them in the account's API statistics (looking must not change what
``/jsz`` says). KV keys and object-store objects are read from the bucket's stream store with
the queries a Direct Get uses, one bounded page at a time.

Everything here runs on the server's event loop, so every view is bounded: lists are pages
(``offset``, ``limit`` at most ``MAX_PAGE``), subject counts come with a filter.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from ..jetstream.api.registry import ApiRequest
from ..jetstream.api.table import find_handler
from ..store import ControlledClock
from ..timefmt import format_ns

if TYPE_CHECKING:
    from ..jetstream.service import JetStream
    from ..jetstream.streams.stream import Stream
    from ..server.monitor import Monitor
    from ..server.sublist import Sublist

__all__ = ["MAX_PAGE", "ConsoleHost", "ViewError", "Views"]

#: The most items (streams, consumers, keys, messages) one console request returns.
MAX_PAGE = 500
#: The most subjects a stream's subject counts show.
MAX_SUBJECTS = 1000
#: Key history: at most this many revisions (a bucket keeps at most 64).
MAX_HISTORY = 64


class ViewError(ValueError):
    """A request that names nothing that exists: the console answers 404 with its text."""


class ConsoleHost(Protocol):
    """What the console reads of the server (``jsemu.app.Server``, which composes it)."""

    @property
    def account_jetstreams(self) -> dict[str, JetStream]: ...

    @property
    def sublist(self) -> Sublist: ...


def page_args(query: dict[str, str], default: int = 100) -> tuple[int, int]:
    """``offset`` and ``limit`` of a list request, the limit at most ``MAX_PAGE``."""
    offset = int(query["offset"]) if query.get("offset", "").isdigit() else 0
    limit = int(query["limit"]) if query.get("limit", "").isdigit() else default
    return offset, max(1, min(limit, MAX_PAGE))


class Views:
    def __init__(self, host: ConsoleHost) -> None:
        self.host = host

    # --- lookups ----------------------------------------------------------------------

    def jetstream(self, query: dict[str, str]) -> JetStream:
        jetstreams = self.host.account_jetstreams
        if not jetstreams:
            raise ViewError("JetStream is not enabled")
        name = query.get("account") or next(iter(jetstreams))
        js = jetstreams.get(name)
        if js is None:
            raise ViewError(f"no account {name!r} with JetStream")
        return js

    def stream(self, query: dict[str, str], name: str) -> Stream:
        stream = self.jetstream(query).streams.get(name)
        if stream is None:
            raise ViewError(f"no stream {name!r}")
        return stream

    def api(self, js: JetStream, subject: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """A ``$JS.API`` request answered in-process by its handler, uncounted."""
        tokens = subject.split(".")
        handler = find_handler(tokens[2:])
        assert handler is not None, subject
        data = json.dumps(payload).encode() if payload is not None else b""
        response = handler(js, ApiRequest(subject, tokens, None, b"", data))
        if response is None:
            return {}
        answer: dict[str, Any] = json.loads(response) if isinstance(response, bytes) else dict(response)
        if "error" in answer:
            raise ViewError(str(answer["error"].get("description", answer["error"])))
        return answer

    # --- the server -------------------------------------------------------------------

    def overview(self, monitor: Monitor, control: bool) -> dict[str, Any]:
        varz = monitor.varz({})
        keys = (
            "server_id", "server_name", "version", "git_commit", "go", "host", "port", "http_port", "start",
            "now", "uptime", "connections", "total_connections", "subscriptions", "in_msgs", "out_msgs",
            "in_bytes", "out_bytes", "slow_consumers", "mem",
        )  # fmt: skip
        out: dict[str, Any] = {key: varz.get(key) for key in keys}
        out["jetstream"] = "jetstream" in varz
        out["accounts"] = list(self.host.account_jetstreams)
        out["control"] = control
        out["clock"] = self.clock()
        return out

    def clock(self) -> dict[str, Any]:
        """The JetStream clock (the one the control plane moves): reading and frozen state."""
        jetstreams = self.host.account_jetstreams
        if not jetstreams:
            return {"now_ns": None, "now": None, "frozen": False, "controlled": False}
        clock = next(iter(jetstreams.values())).clock
        now = clock.now_ns()
        frozen = clock.frozen if isinstance(clock, ControlledClock) else True  # a ManualClock only moves when told
        controlled = isinstance(clock, ControlledClock) or type(clock).__name__ == "ManualClock"
        return {"now_ns": now, "now": format_ns(now), "frozen": frozen, "controlled": controlled}

    def connections(self, monitor: Monitor, query: dict[str, str]) -> dict[str, Any]:
        offset, limit = page_args(query)
        connz = monitor.connz({"subs": "true", "offset": str(offset), "limit": str(limit)})
        return {k: connz[k] for k in ("num_connections", "total", "offset", "limit", "connections")}

    # --- streams and consumers ---------------------------------------------------------

    def streams(self, query: dict[str, str]) -> dict[str, Any]:
        js = self.jetstream(query)
        offset, limit = page_args(query)
        answer = self.api(js, "$JS.API.STREAM.LIST", {"offset": offset})
        infos = (answer.get("streams") or [])[:limit]
        return {
            "total": answer.get("total", 0),
            "offset": offset,
            "streams": [_stream_row(info) for info in infos],
        }

    def stream_info(self, query: dict[str, str], name: str) -> dict[str, Any]:
        js = self.jetstream(query)
        stream = self.stream(query, name)
        subjects_filter = query.get("subjects") or ""
        if not subjects_filter and stream.store.num_subjects <= MAX_SUBJECTS:
            subjects_filter = ">"  # a few subjects: counted at once; many: when a filter asks
        request = {"subjects_filter": subjects_filter} if subjects_filter else None
        info = self.api(js, f"$JS.API.STREAM.INFO.{name}", request)
        for key in ("total", "offset", "limit"):  # the subjects' paging, not the stream's
            info.pop(key, None)
        subjects: dict[str, int] = info["state"].pop("subjects", None) or {}
        shown = sorted(subjects.items())[:MAX_SUBJECTS]
        info["subjects"] = [{"subject": s, "count": n} for s, n in shown]
        info["subjects_total"] = len(subjects) if subjects_filter else None
        info["peers"] = self.peers(stream)
        return info

    def peers(self, stream: Stream) -> list[dict[str, Any]]:
        """Each copy of the stream as the control plane sees it (``PEERS``, ``MIRROR_STATE``):
        its peers with leader, lag, paused, held lag and offline; a mirror's link as one more
        row. What no real server shows: how far behind each copy is."""
        replicas = stream.replicas
        rows: list[dict[str, Any]] = [
            {
                "name": p.name,
                "leader": p is replicas.leader and not replicas.leaderless,
                "lag": replicas.lag(p),
                "paused": p.paused,
                "hold": p.hold,
                "offline": p.offline,
                "last_seq": p.store.last_seq,
            }
            for p in replicas.peers
        ]
        link = stream.mirror_link
        if link is not None:
            rows.append(
                {
                    "name": f"mirror of {link.upstream_name}",
                    "leader": False,
                    "lag": link.pending(),
                    "paused": link.paused,
                    "hold": link.hold,
                    "offline": link.upstream is None,
                    "last_seq": link.sseq,
                }
            )
        return rows

    def consumers(self, query: dict[str, str], stream: str) -> dict[str, Any]:
        js = self.jetstream(query)
        self.stream(query, stream)
        offset, limit = page_args(query)
        answer = self.api(js, f"$JS.API.CONSUMER.LIST.{stream}", {"offset": offset})
        infos = (answer.get("consumers") or [])[:limit]
        return {"total": answer.get("total", 0), "offset": offset, "consumers": [_consumer_row(i) for i in infos]}

    def consumer_info(self, query: dict[str, str], stream: str, name: str) -> dict[str, Any]:
        js = self.jetstream(query)
        self.stream(query, stream)
        return self.api(js, f"$JS.API.CONSUMER.INFO.{stream}.{name}")

    # --- KV and object stores ---------------------------------------------------------

    def buckets(self, query: dict[str, str]) -> dict[str, Any]:
        """KV buckets (streams ``KV_<bucket>``) and object stores (``OBJ_<bucket>``)."""
        js = self.jetstream(query)
        kv, obj = [], []
        for name in sorted(js.streams):
            store = js.streams[name].store
            if name.startswith("KV_"):
                kv.append({"bucket": name[3:], "stream": name, "values": store.msgs, "bytes": store.bytes})
            elif name.startswith("OBJ_"):
                obj.append({"bucket": name[4:], "stream": name, "messages": store.msgs, "bytes": store.bytes})
        return {"kv": kv, "objects": obj}

    def kv_keys(self, query: dict[str, str], bucket: str) -> dict[str, Any]:
        store = self.stream(query, f"KV_{bucket}").store
        prefix = f"$KV.{bucket}."
        offset, limit = page_args(query)
        filt = (prefix + (query.get("filter") or ">")).encode()
        totals = store.subjects_totals(filt)
        keys = sorted(totals)[offset : offset + limit]
        seqs = store.last_seqs(keys)
        rows = []
        for subject, seq in zip(keys, seqs):
            sm = store.load(seq) if seq else None
            op = _kv_operation(sm.hdr) if sm is not None else "PUT"
            rows.append(
                {
                    "key": subject.decode("utf-8", "replace")[len(prefix) :],
                    "revision": seq,
                    "operation": op,
                    "history": totals[subject],
                    "size": len(sm.data) if sm is not None else 0,
                }
            )
        return {"bucket": bucket, "total": len(totals), "offset": offset, "keys": rows}

    def kv_history(self, query: dict[str, str], bucket: str, key: str) -> dict[str, Any]:
        store = self.stream(query, f"KV_{bucket}").store
        subject = f"$KV.{bucket}.{key}".encode()
        out: list[dict[str, Any]] = []
        seq = store.first_seq
        while len(out) < MAX_HISTORY:
            sm = store.load_next(subject, seq)
            if sm is None:
                break
            out.append(
                {
                    "revision": sm.seq,
                    "operation": _kv_operation(sm.hdr),
                    "created": format_ns(sm.ts),
                    "value": sm.data.decode("utf-8", "replace"),
                    "size": len(sm.data),
                }
            )
            seq = sm.seq + 1
        return {"bucket": bucket, "key": key, "history": out}

    def objects(self, query: dict[str, str], bucket: str) -> dict[str, Any]:
        """Each object's meta (the last ``$O.<bucket>.M.*``) and how many chunks it has stored."""
        store = self.stream(query, f"OBJ_{bucket}").store
        offset, limit = page_args(query)
        metas = sorted(store.subjects_totals(f"$O.{bucket}.M.>".encode()))
        rows = []
        for subject, seq in zip(metas[offset : offset + limit], store.last_seqs(metas[offset : offset + limit])):
            sm = store.load(seq) if seq else None
            if sm is None:
                continue
            try:
                meta = json.loads(sm.data)
            except ValueError:
                meta = {}
            nuid = meta.get("nuid", "")
            chunk_subject = f"$O.{bucket}.C.{nuid}".encode()
            stored = store.subjects_totals(chunk_subject).get(chunk_subject, 0) if nuid else 0
            rows.append(
                {
                    "name": meta.get("name", subject.decode("utf-8", "replace")),
                    "size": meta.get("size", 0),
                    "chunks": meta.get("chunks", 0),
                    "chunks_stored": stored,
                    "nuid": nuid,
                    "deleted": bool(meta.get("deleted")),
                    "modified": meta.get("mtime", ""),
                    "digest": meta.get("digest", ""),
                }
            )
        return {"bucket": bucket, "total": len(metas), "offset": offset, "objects": rows}

    def object_chunks(self, query: dict[str, str], bucket: str, nuid: str) -> dict[str, Any]:
        """One object's chunks (``$O.<bucket>.C.<nuid>``), a page from ``seq``: each chunk's
        sequence and size, found by the subject's index."""
        store = self.stream(query, f"OBJ_{bucket}").store
        _, limit = page_args(query)
        start = int(query["seq"]) if query.get("seq", "").isdigit() else 0
        subject = f"$O.{bucket}.C.{nuid}".encode()
        chunks = _chunk_rows(store, subject, max(start, store.first_seq), limit)
        return {"bucket": bucket, "nuid": nuid, "chunks": chunks}


def _chunk_rows(store: Any, subject: bytes, seq: int, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` chunks of one object from ``seq`` on: sequence, size, time."""
    rows: list[dict[str, Any]] = []
    while len(rows) < limit:
        sm = store.load_next(subject, seq)
        if sm is None:
            break
        rows.append({"seq": sm.seq, "size": len(sm.data), "time": format_ns(sm.ts)})
        seq = sm.seq + 1
    return rows


def _stream_row(info: dict[str, Any]) -> dict[str, Any]:
    config, state = info.get("config", {}), info.get("state", {})
    return {
        "name": config.get("name"),
        "subjects": config.get("subjects") or [],
        "storage": config.get("storage"),
        "replicas": config.get("num_replicas"),
        "messages": state.get("messages", 0),
        "bytes": state.get("bytes", 0),
        "first_seq": state.get("first_seq", 0),
        "last_seq": state.get("last_seq", 0),
        "consumers": state.get("consumer_count", 0),
        "num_subjects": state.get("num_subjects", 0),
        "allow_direct": config.get("allow_direct", False),
    }


def _consumer_row(info: dict[str, Any]) -> dict[str, Any]:
    config = info.get("config", {})
    groups = info.get("priority_groups") or []
    return {
        "name": info.get("name"),
        "stream": info.get("stream_name"),
        "durable": bool(config.get("durable_name")),
        "filter": config.get("filter_subject") or config.get("filter_subjects") or "",
        "ack_policy": config.get("ack_policy"),
        "deliver_policy": config.get("deliver_policy"),
        "push": bool(config.get("deliver_subject")),
        "delivered": info.get("delivered", {}),
        "ack_floor": info.get("ack_floor", {}),
        "num_pending": info.get("num_pending", 0),
        "num_ack_pending": info.get("num_ack_pending", 0),
        "num_redelivered": info.get("num_redelivered", 0),
        "num_waiting": info.get("num_waiting", 0),
        "paused": bool(info.get("paused")),
        "pause_remaining": info.get("pause_remaining"),
        "pinned": [
            {"group": g.get("group"), "pinned_client_id": g.get("pinned_client_id"), "pinned_ts": g.get("pinned_ts")}
            for g in groups
            if g.get("pinned_client_id")
        ],
    }


def _kv_operation(hdr: bytes) -> str:
    """``KV-Operation`` of a stored entry's headers: PUT when absent."""
    for line in hdr.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"kv-operation":
            return value.strip().decode("latin-1")
    return "PUT"
