"""Resetting a consumer: ``$JS.API.CONSUMER.RESET.<stream>.<consumer>``.

Theory of operation (nats-server 2.15.1 ``processResetReq`` and ``resetStartingSeqLocked``,
checked against the binary by ``tests/jetstream/api/test_consumer_reset.py``):

* Like a pull request, a reset is taken by the consumer's own subscription of its subject,
  pull and push consumers alike, not by the API table. A reset of a consumer or stream that
  does not exist reaches only the account's ``$JS.API.>`` import, which drops it: the
  requester times out (no ``503``). A reset is neither counted in the API statistics nor
  audited, and it sends no advisory. A request without a reply subject is ignored.
* The body: empty for "back to the ack floor", else ``json.Unmarshal`` into
  ``JSApiConsumerResetRequest{Seq uint64 "seq"}`` (not the API's strict decoder: unknown
  keys are ignored, keys match case-insensitively, ``null`` leaves ``seq`` alone), so a
  body of only blanks is ``unexpected end of JSON input``. A bad body or a
  ``Nats-Required-Api-Level`` above ours is an error reply (the level is checked first).
* The sequence (:func:`reset_sequence`): 0 means the consumer's own ack floor + 1 and is
  always allowed; any other value is allowed for ``deliver_policy: all`` (past the stream's
  end too), for ``by_start_sequence`` from ``opt_start_seq`` up (``invalid reset: below
  start seq``), for ``by_start_time`` from the first sequence at that time up (``below start
  time``), and for every other policy not at all (``not allowed``).
* The effect (:meth:`.consumer.Consumer.reset_to`, Go's ``resetLocalStartingSeq`` and
  ``store.Reset``): pending acks, redelivery counts and the redelivery queue are dropped;
  delivery resumes at the sequence with consumer sequence 1; delivered and the ack floor are
  ``(0, seq - 1)`` without ``last_active``; waiting pull requests stay and are served at
  once; a pinned client keeps its pin; a paused consumer stays paused. On an interest
  stream what lies below the new floor is acked again (``checkStateForInterestStream``),
  so what nobody else needs goes.
* The reply: ``consumer_reset_response``, the consumer info followed by ``reset_seq``; an
  error reply is ``type``, ``error`` and ``reset_seq: 0``. A request carrying a
  ``Nats-Stream-Identity`` header (any value) is answered with that header set to the
  stream's identity, ``getHash`` of its creation time (RFC 3339, nanoseconds, UTC).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...ids import get_hash
from ...protocol.gojson import GoJSONError, dumps, unmarshal_request
from ...protocol.headers import api_level_too_high, slice_header
from ...timefmt import format_ns
from ...version import API_LEVEL
from ..errors import ApiError, ApiErrors, api_error, response_type
from ..requests import RESET_REQUEST

if TYPE_CHECKING:
    from .consumer import Consumer

__all__ = ["STREAM_IDENTITY", "reset_reply", "reset_sequence", "unmarshal_reset"]

STREAM_IDENTITY = b"Nats-Stream-Identity"
_KIND = response_type("consumer_reset_response")


def unmarshal_reset(data: bytes) -> int:
    """The ``seq`` of a non-empty body, as ``json.Unmarshal`` reads it (0 when not set)."""
    try:
        seq: int = unmarshal_request(data, RESET_REQUEST).get("seq") or 0
    except GoJSONError as exc:
        raise api_error(ApiErrors.JSInvalidJSONErr, err=str(exc)) from None
    return seq


def reset_sequence(consumer: Consumer, seq: int) -> int:
    """``resetStartingSeqLocked``'s checks: where delivery resumes, or the error."""
    cfg = consumer.config
    if seq == 0:
        return consumer.own_ack_floor[1] + 1
    policy = cfg.deliver_policy
    if policy == "all":
        return seq
    if policy == "by_start_sequence":
        if seq < cfg.opt_start_seq:
            raise api_error(ApiErrors.JSConsumerInvalidResetErr, err="below start seq")
        return seq
    if policy == "by_start_time" and cfg.opt_start_time is not None:
        if seq < consumer.stream.store.seq_from_time(cfg.opt_start_time):
            raise api_error(ApiErrors.JSConsumerInvalidResetErr, err="below start time")
        return seq
    raise api_error(ApiErrors.JSConsumerInvalidResetErr, err="not allowed")


def reset_reply(consumer: Consumer, hdr: bytes, data: bytes) -> tuple[bytes, bytes]:
    """``processResetReq``: reset ``consumer`` as the request asks; the reply's header block
    (empty for none) and JSON body."""
    out: dict[str, Any] = {"type": _KIND}
    try:
        if hdr and api_level_too_high(hdr, API_LEVEL):
            raise api_error(ApiErrors.JSRequiredApiLevelErr)
        identity = hdr and slice_header(STREAM_IDENTITY, hdr) is not None
        seq = reset_sequence(consumer, unmarshal_reset(data) if data else 0)
    except ApiError as err:
        out["error"] = err.as_dict()
        out["reset_seq"] = 0
        return b"", dumps(out).encode()
    consumer.reset_to(seq)
    out.update(consumer.info_json())
    out["reset_seq"] = seq
    reply_hdr = b""
    if identity:
        value = get_hash(format_ns(consumer.stream.created_ns)).encode()
        reply_hdr = b"NATS/1.0\r\n" + STREAM_IDENTITY + b": " + value + b"\r\n\r\n"
    return reply_hdr, dumps(out).encode()
