"""Peer handlers of ``$JS.API``: removing or evacuating one server from a stream's or a
consumer's raft group, and cancelling a stream's reconfiguration.

nats-server 2.15.1 checks such a request in the order of ``jsStreamRemapPeerRequest``: a
cluster (a standalone server answers 10010), then the request (empty or without ``peer``:
10003; bad JSON: 10025), then the stream (10059) and for a consumer the consumer (10014), then
membership (10040: ``peer`` is a server name, or a peer id, the name's 8-character hash).
A member is then replaced by a server outside the group; with none left (an R3 group on
three servers) the remap fails with 503/10075, as captured from a real 3-node cluster.

A stream of more than one replica with a spare server moves the replica there
(``cluster/moves.py``) and answers ``success``. A consumer's replica moves only to a server of
its stream's group outside the consumer's (captured from a real 5-node cluster: an R3 consumer
of an R5 stream moves, one of an R3 stream answers 10075); a removed leader hands over first.
Two moves jsemu does not make are refused with an error that says so, never answered
``success`` and ignored: the only replica of an R1 stream (nats-server starts the
replacement empty: the stream's messages are gone) and of an R1 consumer (nats-server's
comes back on another server, empty and without a leader). A peer removal settles before
its reply goes out in jsemu;
``STREAM.CANCEL_MOVE`` cancels an ``ACCOUNT.STREAM.MOVE`` the control plane holds
(``cluster/stream_move.py``) and answers 10129 (not in progress) otherwise, as nats-server
does for a settled stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...ids import get_hash
from ..cluster.leader import consumer_leader_elected, stream_leader_elected
from ..cluster.moves import replace_peer, restart_empty, spare_servers
from ..cluster.stream_move import desired_json
from ..errors import ApiError, ApiErrors, api_error
from ..events.consumer_advisories import CREATE as CONSUMER_CREATED
from ..events.consumer_advisories import send_consumer_action
from ..events.stream_advisories import CREATE, MODIFY, send_stream_action
from ..requests import PEER_REMOVE_REQUEST
from .registry import ApiRequest, api, error_response, is_empty_request, response_type

if TYPE_CHECKING:
    from ..service import JetStream
    from ..streams.stream import Stream

__all__ = [
    "cancel_move",
    "consumer_peer_remap",
    "move_replica",
    "restart_r1",
    "settle_move",
    "stream_cancel_move",
    "stream_peer_remap",
]

#: What the simulated cluster cannot do, in the refusals' words.
NO_R1_CONSUMER_MOVE = "jsemu does not implement moving the only replica of an R1 consumer yet"
NO_R1_MOVE = "jsemu does not implement moving the only replica of an R1 stream yet"


def _requested_peer(req: ApiRequest) -> str:
    """The request's ``peer`` (after the cluster check): it must be present."""
    if is_empty_request(req.data):
        raise api_error(ApiErrors.JSBadRequestErr)
    peer: str = req.decode(PEER_REMOVE_REQUEST).get("peer") or ""
    if not peer:
        raise api_error(ApiErrors.JSBadRequestErr)
    return peer


def _clustered(js: JetStream, req: ApiRequest) -> None:
    if not js.clustered:
        raise api_error(ApiErrors.JSClusterRequiredErr)
    req.check_api_level()


def _member(peer: str, members: Sequence[str]) -> str:
    """``isGroupMember`` by peer id or server name: the member's name (10040 for none)."""
    by_id = {get_hash(name): name for name in members}
    name = by_id.get(get_hash(peer)) or by_id.get(peer)
    if name is None:
        raise api_error(ApiErrors.JSClusterPeerNotMemberErr)
    return name


def _remap(js: JetStream, peer: str, members: Sequence[str], servers: Sequence[str]) -> tuple[str, str]:
    """The member ``peer`` names and the spare server among ``servers`` that takes its
    place (503/10075 when there is none)."""
    name = _member(peer, members)
    spares = spare_servers(members, servers, lambda n: js.server.node(n).up)
    if not spares:
        raise api_error(ApiErrors.JSPeerRemapErr)
    return name, spares[0]


def _stream(js: JetStream, name: str) -> Stream:
    stream = js.streams.get(name)
    if stream is None:
        raise api_error(ApiErrors.JSStreamNotFoundErr)
    return stream


@api("STREAM.PEER.REMOVE.*")
def stream_peer_remove(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamRemovePeerRequest``."""
    return stream_peer_remap(js, req, "stream_remove_peer_response")


@api("STREAM.PEER.EVACUATE.*")
def stream_peer_evacuate(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamEvacuatePeerRequest``: the same checks, the peer kept out of placement."""
    return stream_peer_remap(js, req, "stream_evacuate_peer_response")


def stream_peer_remap(js: JetStream, req: ApiRequest, kind: str) -> dict[str, Any]:
    try:
        _clustered(js, req)
        peer = _requested_peer(req)
        stream = _stream(js, req.token(6))
        removed, spare = _remap(js, peer, [p.name for p in stream.replicas.peers], js.peer_names)
        r1 = len(stream.replicas.peers) == 1
        if r1 and not _restartable(js, stream):
            raise api_error(ApiErrors.JSStreamGeneralErrorF, err=NO_R1_MOVE)
    except ApiError as err:
        return error_response(kind, err)
    if r1:
        restart_r1(js, stream, removed, spare)
    else:
        move_replica(js, stream, removed, spare)
    return {"type": response_type(kind), "success": True}


def _restartable(js: JetStream, stream: Stream) -> bool:
    """Whether jsemu can restart the R1 stream empty: nothing but messages to lose."""
    plain = stream.mirror_link is None and not stream.source_links
    return plain and stream.markers is None and stream.schedules is None and not js.persists(stream.config)


def restart_r1(js: JetStream, stream: Stream, removed: str, spare: str) -> None:
    """The R1 stream starts anew on ``spare``, empty, as nats-server's does
    (``cluster/moves.py``), and so do its consumers, in the captured advisories' order."""
    restart_empty(stream, spare, stream.empty_store())
    stream_leader_elected(stream, stream.replicas, single=True)
    stream.forget_messages()
    send_stream_action(js, stream.name, CREATE)
    send_stream_action(js, stream.name, MODIFY)
    first = stream.store.first_seq or 1
    for consumer in list(js.consumer_set(stream).by_name.values()):
        if consumer.group is not None and removed in consumer.group.peers:
            consumer.group.replace_peer(removed, spare, spare)
            consumer_leader_elected(consumer, single=True)
        consumer.reset_to(first)
        send_consumer_action(js, stream.name, consumer.name, CONSUMER_CREATED)
    send_stream_action(js, stream.name, MODIFY)


def move_replica(js: JetStream, stream: Stream, removed: str, spare: str) -> None:
    """The move, then the meta layer's three rewrites of the assignment (captured)."""
    replace_peer(stream, removed, spare)
    for _ in range(3):
        send_stream_action(js, stream.name, MODIFY)


def settle_move(js: JetStream, stream: Stream) -> None:
    """Finish the stream's move under way (``cluster/stream_move.py``): the leaving peer's
    replica goes to the spare, unless the group changed meanwhile."""
    move = stream.pending_move
    if move is None:
        return
    stream.pending_move = None
    names = [p.name for p in stream.replicas.peers]
    if move.removed in names and move.spare not in names and js.server.node(move.spare).up:
        move_replica(js, stream, move.removed, move.spare)


def cancel_move(js: JetStream, stream: Stream, kind: str) -> dict[str, Any]:
    """A cancel of the move under way: the stream's info with a ``desired`` block naming the
    original group (captured), and the move dropped; 10129 with none under way."""
    move = stream.pending_move
    if move is None:
        raise api_error(ApiErrors.JSStreamReconfigureNotInProgressErr)
    out = {"type": response_type(kind), **stream.info_json()}
    out["cluster"]["desired"] = desired_json(js.cluster_name, move, move.origin)
    stream.pending_move = None
    send_stream_action(js, stream.name, MODIFY)
    return out


@api("CONSUMER.PEER.REMOVE.*.*")
def consumer_peer_remove(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``CONSUMER.PEER.REMOVE`` (seen in the 2.15.1 binary; checks as captured from it)."""
    return consumer_peer_remap(js, req, "consumer_remove_peer_response")


@api("CONSUMER.PEER.EVACUATE.*.*")
def consumer_peer_evacuate(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``CONSUMER.PEER.EVACUATE``: the same checks as the removal."""
    return consumer_peer_remap(js, req, "consumer_evacuate_peer_response")


def consumer_peer_remap(js: JetStream, req: ApiRequest, kind: str) -> dict[str, Any]:
    try:
        _clustered(js, req)
        peer = _requested_peer(req)
        stream = _stream(js, req.token(6))
        consumer = js.consumer_set(stream).by_name.get(req.token(7))
        if consumer is None or consumer.group is None:
            raise api_error(ApiErrors.JSConsumerNotFoundErr)
        group = consumer.group
        removed, spare = _remap(js, peer, group.peers, [p.name for p in stream.replicas.peers])
        if len(group.peers) == 1:
            raise api_error(ApiErrors.JSStreamGeneralErrorF, err=NO_R1_CONSUMER_MOVE)
    except ApiError as err:
        return error_response(kind, err)
    group.replace_peer(removed, spare, stream.replicas.leader.name)
    return {"type": response_type(kind), "success": True}


@api("STREAM.CANCEL_MOVE.*")
def stream_cancel_move(js: JetStream, req: ApiRequest) -> dict[str, Any]:
    """``jsStreamCancelMoveRequest``: drops a move under way (10129 with none)."""
    kind = "stream_cancel_move_response"
    try:
        _clustered(js, req)
        return cancel_move(js, _stream(js, req.token(5)), kind)
    except ApiError as err:
        return error_response(kind, err)
