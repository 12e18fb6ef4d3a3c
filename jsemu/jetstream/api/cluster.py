"""Cluster handlers of ``$JS.API``: the leader step-downs of a stream and of a consumer.

They need a simulated cluster (``ServerOptions.cluster_size``); a standalone server answers
that a cluster is required, as nats-server does. Each handler checks the request in the
order of ``jsStreamLeaderStepDownRequest`` / ``jsConsumerLeaderStepDownRequest``, then asks
the raft group (the stream's :class:`ReplicaSet`, the consumer's :class:`ConsumerGroup`) to
step down, so the group's own rules (who may lead, the new term, the advisories) stay in
``cluster/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ApiError, ApiErrors, api_error
from ..requests import STEPDOWN_REQUEST
from .registry import ApiRequest, api, error_response, is_json_object_or_array, response_type

if TYPE_CHECKING:
    from ..cluster.replicas import ReplicaSet
    from ..service import JetStream
    from ..streams.stream import Stream

__all__ = ["consumer_leader_stepdown", "stream_leader_stepdown"]


def _preferred(req: ApiRequest) -> str:
    """The request's ``placement.preferred`` server, empty when none."""
    if not is_json_object_or_array(req.data):
        return ""
    values = req.decode(STEPDOWN_REQUEST)
    preferred: str = ((values.get("placement") or {}).get("preferred")) or ""
    return preferred


def _check_preferred(preferred: str, leader: str, peers: Sequence[str], replicas: ReplicaSet) -> None:
    """A preferred server must be an online peer of the group other than its leader."""
    if preferred == leader:
        raise api_error(ApiErrors.JSClusterNoPeersErrF, err=f'preferred server "{preferred}" is already leader')
    if preferred not in peers or replicas.peer(preferred).offline:
        raise api_error(ApiErrors.JSClusterNoPeersErrF, err=f'preferred server "{preferred}" not known')


def _clustered_stream(js: JetStream, req: ApiRequest) -> Stream:
    """The checks both step-downs start with, in their order: a cluster, the stream (the
    subject's sixth token), the API level."""
    if not js.clustered:
        raise api_error(ApiErrors.JSClusterRequiredErr)
    stream = js.streams.get(req.token(6))
    if stream is None:
        raise api_error(ApiErrors.JSStreamNotFoundErr)
    req.check_api_level()
    return stream


@api("STREAM.LEADER.STEPDOWN.*")
def stream_leader_stepdown(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamLeaderStepDownRequest``: needs a cluster; an R1 stream keeps its leader."""
    kind = "stream_leader_stepdown_response"
    try:
        stream = _clustered_stream(js, req)
        replicas = stream.replicas
        if replicas.leaderless:
            raise api_error(ApiErrors.JSClusterNotAvailErr)
        if len(replicas.peers) == 1:
            return {"type": response_type(kind), "success": True}
        preferred = _preferred(req)
        if preferred:
            _check_preferred(preferred, replicas.leader.name, [p.name for p in replicas.peers], replicas)
        try:
            replicas.step_down(preferred or None)
        except ValueError as exc:
            raise api_error(ApiErrors.JSRaftGeneralErrF, err=str(exc)) from None
    except ApiError as err:
        return error_response(kind, err)
    return {"type": response_type(kind), "success": True}


@api("CONSUMER.LEADER.STEPDOWN.*.*")
def consumer_leader_stepdown(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsConsumerLeaderStepDownRequest``, checks in its order."""
    kind = "consumer_leader_stepdown_response"
    try:
        stream = _clustered_stream(js, req)
        consumer = js.consumer_set(stream).by_name.get(req.token(7))
        if consumer is None or consumer.group is None:
            raise api_error(ApiErrors.JSConsumerNotFoundErr)
        group = consumer.group
        current = group.current_leader()
        if not current:
            raise api_error(ApiErrors.JSClusterNotAvailErr)
        if len(group.peers) == 1:
            return {"type": response_type(kind), "success": True}
        preferred = _preferred(req)
        if preferred:
            # The consumer's peers are servers of its stream's group.
            _check_preferred(preferred, current, group.peers, stream.replicas)
        group.step_down(preferred)
    except ApiError as err:
        return error_response(kind, err)
    return {"type": response_type(kind), "success": True}
