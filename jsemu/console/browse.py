"""The message browser: one page of a stream's messages, read as a Direct Get reads them.

Each query is a Direct Get request (``$JS.API.DIRECT.GET.<stream>`` with ADR-31's fields)
and is answered by the same store queries the Direct Get responder makes
(``jetstream/directget/responder.py``): ``load`` for a sequence, ``load_next`` for the next
message on a subject filter, ``load_last`` for the last on a subject, ``multi_last_seqs``
for the last per subject of a wildcard up to a sequence (``up_to_seq``) or a time
(``up_to_time``, through ``seq_from_time``; without a ``batch`` a ``multi_last`` page shows
every subject, up to ``MAX_PAGE``). The store is read directly rather than through
the stream's responders, so looking neither needs ``allow_direct`` nor shows up in the
responder log a test inspects; each answer carries the request a client would send for the
same messages.

Every query reads at most one page (``batch``, at most ``views.MAX_PAGE``), each step an
indexed lookup, so browsing a stream of millions of messages costs the event loop no more
than a page: a page's ``next_seq`` is where the following one starts.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..store.errors import TooManyResults
from ..timefmt import format_ns, go_unix_nano, parse_rfc3339_ns
from .views import MAX_PAGE, ViewError

if TYPE_CHECKING:
    from ..store import StoredMsg, StoreReader

__all__ = ["MAX_MULTI", "browse", "render_payload"]

#: The most subjects a ``multi_last`` page looks at (Direct Get's own limit is 1024).
MAX_MULTI = 1024
#: Payload bytes shown per message; the rest is cut, and said so.
MAX_SHOWN = 64 * 1024


def _int(query: dict[str, str], key: str, default: int = 0) -> int:
    text = query.get(key, "")
    if not text:
        return default
    if not text.isdigit():
        raise ViewError(f"{key} must be a non-negative integer")
    return int(text)


def browse(store: StoreReader, stream: str, query: dict[str, str]) -> dict[str, Any]:
    """One page of messages for the browser's ``mode``: ``seq`` (one message, or a page from
    it with ``batch``), ``next`` (the next messages on ``subject`` from ``seq``), ``last``
    (the last message on ``subject``), ``multi_last`` (the last per subject of ``subject``,
    up to ``up_to_seq`` or ``up_to_time``)."""
    mode = query.get("mode") or "seq"
    asked = _int(query, "batch", 0)
    batch = max(1, min(asked or 1, MAX_PAGE))
    seq = _int(query, "seq", 0)
    subject = query.get("subject") or ""
    request: dict[str, Any]
    messages: list[StoredMsg] = []
    if mode == "seq":
        seq = seq or store.first_seq
        request = {"seq": seq} if batch == 1 else {"seq": seq, "batch": batch}
        if batch == 1:
            sm = store.load(seq)
            messages = [sm] if sm is not None else []
        else:
            messages = _next_run(store, b">", seq, batch)
    elif mode == "next":
        if not subject:
            raise ViewError("next by subject needs a subject")
        seq = seq or store.first_seq
        request = {"seq": seq, "next_by_subj": subject} | ({"batch": batch} if batch > 1 else {})
        messages = _next_run(store, subject.encode(), seq, batch)
    elif mode == "last":
        if not subject:
            raise ViewError("last by subject needs a subject")
        request = {"last_by_subj": subject}
        sm = store.load_last(subject.encode())
        messages = [sm] if sm is not None else []
    elif mode == "multi_last":
        request, messages = _multi_last(store, subject or ">", query, min(asked, MAX_PAGE))
    else:
        raise ViewError(f"unknown mode {mode!r}: use seq, next, last or multi_last")
    shown = [render_message(sm) for sm in messages]
    return {
        "stream": stream,
        "mode": mode,
        "request": {"subject": f"$JS.API.DIRECT.GET.{stream}", "payload": json.dumps(request)},
        "messages": shown,
        "first_seq": store.first_seq,
        "last_seq": store.last_seq,
        "next_seq": messages[-1].seq + 1 if messages and mode in ("seq", "next") else None,
    }


def _next_run(store: StoreReader, filt: bytes, seq: int, batch: int) -> list[StoredMsg]:
    out: list[StoredMsg] = []
    while len(out) < batch:
        sm = store.load_next(filt, seq)
        if sm is None:
            break
        out.append(sm)
        seq = sm.seq + 1
    return out


def _multi_last(
    store: StoreReader, filt: str, query: dict[str, str], batch: int
) -> tuple[dict[str, Any], list[StoredMsg]]:
    request: dict[str, Any] = {"multi_last": [filt]} | ({"batch": batch} if batch else {})
    up_to = _int(query, "up_to_seq", 0)
    up_to_time = query.get("up_to_time") or ""
    if up_to_time:
        ns = _parse_time(up_to_time)
        request["up_to_time"] = up_to_time
        up_to = store.seq_from_time(ns)
        if up_to <= store.first_seq:
            return request, []
        up_to -= 1
    elif up_to:
        request["up_to_seq"] = up_to
    if up_to == 0:
        up_to = store.last_seq
    try:
        seqs = store.multi_last_seqs([filt.encode()], up_to, MAX_MULTI)
    except TooManyResults:
        raise ViewError(f"more than {MAX_MULTI} subjects match {filt!r}: narrow the filter") from None
    messages = [sm for sm in map(store.load, seqs[: batch or MAX_PAGE]) if sm is not None]
    return request, messages


def _parse_time(text: str) -> int:
    """An RFC 3339 time (as Direct Get's ``up_to_time``) in Unix nanoseconds."""
    try:
        return go_unix_nano(parse_rfc3339_ns(text))
    except ValueError:
        raise ViewError(f"up_to_time {text!r} is not an RFC 3339 time (2026-01-02T03:04:05Z)") from None


def render_message(sm: StoredMsg) -> dict[str, Any]:
    """A stored message for the page: headers parsed, payload as text, JSON (pretty) and hex."""
    headers: list[list[str]] = []
    if sm.hdr:
        for line in sm.hdr.split(b"\r\n")[1:]:
            name, colon, value = line.partition(b":")
            if colon:
                headers.append([name.decode("latin-1"), value.strip().decode("utf-8", "replace")])
    return {
        "seq": sm.seq,
        "subject": sm.subject.decode("utf-8", "replace"),
        "time": format_ns(sm.ts),
        "headers": headers,
        "size": len(sm.data),
    } | render_payload(sm.data)


def render_payload(data: bytes) -> dict[str, Any]:
    """``text`` (None if not UTF-8), ``json`` (pretty, None if not JSON), ``hex`` of the
    first ``MAX_SHOWN`` bytes, and whether the payload was cut."""
    cut = data[:MAX_SHOWN]
    try:
        text: str | None = cut.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    pretty: str | None = None
    if text is not None and len(cut) == len(data) and text.strip()[:1] in ("{", "["):
        try:
            pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            pretty = None
    return {"text": text, "json": pretty, "hex": cut.hex(" "), "truncated": len(data) > MAX_SHOWN}
