"""The system account's ``$JS.API`` endpoints: the meta leader, servers, and whole accounts.

nats-server subscribes these in its system account (``systemSubscribe``) and checks who asks
inside each handler (``jetstream_api.go``, captured from nats-server 2.15.1 with a system
account ``SYS``, an account ``A`` with JetStream and an account ``B`` without):

- ``META.LEADER.STEPDOWN``, ``SERVER.REMOVE``, ``SERVER.EVACUATE``, ``META.RESCUE`` and
  ``ACCOUNT.PURGE.<acc>`` answer the system account only; anyone else gets no reply at all.
  ``ACCOUNT.STREAM.MOVE.<acc>.<stream>`` and ``ACCOUNT.STREAM.CANCEL_MOVE.<acc>.<stream>``
  answer the system account and the account ``<acc>`` itself.
- A standalone server (no meta group) answers none of them, except ``ACCOUNT.PURGE``, which
  deletes the account's streams (their consumers' and their own ``DELETED`` advisories) and
  answers ``{"initiated":true}``, for an account with nothing too.
- In a cluster, only the meta leader answers; ``META.RESCUE`` is every server's (each up node
  answers with its own ``server`` and ``server_id``).

What jsemu's simulated cluster does (``ServerOptions.cluster_size``): the meta leader steps
down to a preferred or another up server (``cluster/meta.py``), a server evacuation or
removal moves every replica on the server to a spare one (``cluster/moves.py``; a removal
also takes it out of the meta group), an account's stream move off a named server moves that
replica (``cluster/stream_move.py``), the account purge deletes every stream, and every request
check answers as nats-server's. What it cannot do is refused with an error that says so, never
answered ``success`` and ignored: a removal whose replicas have nowhere to go, a stream move to
a new placement (no ``server``), moving the only replica of an R1 stream, and lowering the
quorum of a meta group that lost its leader (``META.RESCUE``;
with a leader, raft refuses it: 400/10224 ``raft: leader is known``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...protocol.gojson import T_INT, T_STRING, GoSlice, GoStruct, dumps
from ..cluster.meta import MetaGroup
from ..cluster.moves import spare_servers
from ..cluster.stream_move import start_move
from ..errors import ApiError, ApiErrors, api_error
from ..events.api_audit import AUDIT_SUBJECT, send_api_audit
from ..events.stream_advisories import DELETE, MODIFY, send_stream_action
from ..requests import STEPDOWN_REQUEST
from .peers import NO_R1_MOVE, cancel_move, move_replica, settle_move
from .registry import (
    ApiRequest,
    error_response,
    find_system_handler,
    is_empty_request,
    is_json_object_or_array,
    response_type,
    system_api,
)

if TYPE_CHECKING:
    from ...server.outbound import Outbound, Sender
    from ...server.server import Server
    from ...store.clock import Clock
    from ..service import JetStream
    from ..streams.stream import Stream

__all__ = ["SystemCall", "SystemJetStream"]

#: 2.15.1's fields (captured): ``peer`` is a server name, ``peer_id`` its peer id.
META_SERVER_REQUEST = GoStruct("JSApiMetaServerRemoveRequest", {"peer": T_STRING, "peer_id": T_STRING})
META_RESCUE_REQUEST = GoStruct("JSApiMetaRescueRequest", {"quorum_needed": T_INT})
STREAM_MOVE_REQUEST = GoStruct(
    "JSApiMetaServerStreamMoveRequest",
    {"server": T_STRING, "cluster": T_STRING, "domain": T_STRING, "tags": GoSlice(T_STRING)},
)

#: What the simulated cluster cannot do, in the refusals' words.
NO_SERVER_REMOVE = "jsemu does not implement removing a server whose replicas have nowhere to go yet"
NO_MOVE = "jsemu does not implement moving a stream to a new placement yet"
NO_SECOND_MOVE = "jsemu does not implement a move while another one is in progress yet"
NO_RESCUE = "jsemu does not implement META.RESCUE of a group without a leader yet"
#: ``NewJSClusterNoPeersError`` of a move with no server to move to (captured).
NO_PLACEMENT = "no suitable peers for placement"

Response = dict[str, Any] | list[dict[str, Any]] | None


@dataclass(slots=True)
class _Auditor:
    """The services an audit advisory needs, in the system account."""

    clock: Clock
    out: Sender
    domain: str
    server_name: str


@dataclass(slots=True)
class SystemCall:
    """One request to a system endpoint: the request and the account it came from."""

    req: ApiRequest
    account: str
    system: bool


class SystemJetStream:
    """What the system endpoints see of the whole server: every account's JetStream, the
    configured accounts, the nodes and the meta group (a simulated cluster's)."""

    def __init__(self, server: Server, clock: Clock, jetstreams: Mapping[str, JetStream]) -> None:
        self.server = server
        self.clock = clock
        self.jetstreams = jetstreams
        options = server.options
        self.domain = options.domain or ""
        self.system_account = options.system_account
        self.meta: MetaGroup | None = None
        if options.cluster_size > 1:
            self.meta = MetaGroup(
                options.cluster_node_names(),
                options.cluster_name or "",
                options.domain or "",
                lambda name: server.node(name).up,
                clock.now_ns,
                self._publish,
            )

    def audit(self, out: Outbound, client: dict[str, Any] | None, req: ApiRequest, body: bytes) -> None:
        """The API audit of a system account's request (nats-server's ``client`` is ``{}``
        for the system endpoints and ``INFO``, ``null`` for its ``system_response``), sent by
        the meta leader (the server itself when standalone), in the system account."""
        if out.has_interest(AUDIT_SUBJECT):
            name = self.meta.leader if self.meta is not None else self.server.server_name
            send_api_audit(_Auditor(self.clock, out, self.domain, name), client, req.subject, req.data, body)

    def _publish(self, subject: bytes, body: bytes) -> None:
        system = self.server.system
        if system is not None and system.router.outbound.has_interest(subject):
            system.router.outbound.send(subject, -1, body)

    def answer(self, account: str, req: ApiRequest) -> list[bytes] | None:
        """The reply bodies for a request on ``$JS.API.<tokens>`` from ``account``, or None
        when the subject is no system endpoint (the account's own API then has its say)."""
        handler: Callable[[SystemJetStream, SystemCall], Response] | None = find_system_handler(req.tokens[2:])
        if handler is None:
            return None
        response = handler(self, SystemCall(req, account, account == self.system_account))
        if response is None:
            return []
        responses = response if isinstance(response, list) else [response]
        return [dumps(r).encode() for r in responses]

    def leader_answers(self) -> bool:
        """Whether a meta leader answers: a cluster whose meta group has its quorum."""
        return self.meta is not None and self.meta.has_quorum()


# --- the meta leader --------------------------------------------------------------------


@system_api("META.LEADER.STEPDOWN")
def meta_leader_stepdown(sysjs: SystemJetStream, call: SystemCall) -> Response:
    """``jsLeaderStepDownRequest``: the preferred server (or any other one that is up) leads."""
    if not call.system or not sysjs.leader_answers():
        return None
    meta = sysjs.meta
    assert meta is not None
    kind = "meta_leader_stepdown_response"
    req = call.req
    try:
        req.check_api_level()
        preferred = ""
        if is_json_object_or_array(req.data):
            placement = req.decode(STEPDOWN_REQUEST).get("placement")
            if placement is not None:
                preferred = _preferred_placement(meta, placement)
        candidates = meta.candidates()
        if not preferred:
            if not candidates:
                raise api_error(ApiErrors.JSClusterNoPeersErrF, err="no replacement peer connected")
            preferred = candidates[0]
        meta.step_down(preferred)
    except ApiError as err:
        return error_response(kind, err)
    return {"type": response_type(kind), "success": True}


def _preferred_placement(meta: MetaGroup, placement: dict[str, Any]) -> str:
    """``getStepDownPreferredPlacement``: a named server, or one matching cluster and tags
    (the simulated cluster's servers have no tags)."""
    preferred: str = placement.get("preferred") or ""
    if preferred:
        if preferred == meta.leader:
            raise api_error(ApiErrors.JSClusterNoPeersErrF, err=f'preferred server "{preferred}" is already leader')
        if preferred not in meta.names:
            raise api_error(ApiErrors.JSClusterNoPeersErrF, err=f'preferred server "{preferred}" not known')
        return preferred
    candidates = meta.candidates()
    if placement.get("cluster") and placement["cluster"] != meta.cluster:
        candidates = []
    if placement.get("tags"):
        candidates = []
    if not candidates:
        raise api_error(ApiErrors.JSClusterNoPeersErrF, err="no replacement peer connected")
    return candidates[0]


# --- servers ------------------------------------------------------------------------------


def _server_request(meta: MetaGroup, call: SystemCall) -> str:
    """The checks ``SERVER.REMOVE`` and ``SERVER.EVACUATE`` share: the server the request
    names (by ``peer_id`` when given, else by name), 10044 when none of the group is."""
    req = call.req
    req.check_api_level()
    if is_empty_request(req.data):
        raise api_error(ApiErrors.JSBadRequestErr)
    request = req.decode(META_SERVER_REQUEST)
    peer_id: str = request.get("peer_id") or ""
    name = meta.peer_ids().get(peer_id) if peer_id else request.get("peer") or ""
    if name not in meta.names:
        raise api_error(ApiErrors.JSClusterServerNotMemberErr)
    return name


@system_api("SERVER.REMOVE")
def server_remove(sysjs: SystemJetStream, call: SystemCall) -> Response:
    """``jsLeaderServerRemoveRequest``: the server leaves the meta group (captured from a real
    5-node cluster): every stream replica on it moves to a spare server as a peer removal's
    does, the system account hears ``SERVER.REMOVED``, no stream is placed on it again, and
    the reply is ``success``, but none when the server removed led the meta group (a new
    leader is elected). A replica with nowhere to go (a group on every server left) and the
    only replica of an R1 stream are refused."""
    if not call.system or not sysjs.leader_answers():
        return None
    meta = sysjs.meta
    assert meta is not None
    kind = "meta_server_remove_response"
    try:
        name = _server_request(meta, call)
        moves = _replicas_on(sysjs, meta, name, NO_SERVER_REMOVE)
    except ApiError as err:
        return error_response(kind, err)
    for js, stream, spare in moves:
        move_replica(js, stream, name, spare)
    for js in sysjs.jetstreams.values():
        if name in js.peer_names:
            js.peer_names.remove(name)
    led = name == meta.leader
    meta.remove(name, sysjs.server.node(name).server_id)
    return None if led else {"type": response_type(kind), "success": True}


def _replicas_on(
    sysjs: SystemJetStream, meta: MetaGroup, name: str, stuck: str | None
) -> list[tuple[JetStream, Stream, str]]:
    """Each stream with a replica on ``name`` and the spare server it would move to. A
    stream with no spare is skipped, or refused with ``stuck`` when given; an R1 stream's
    only replica is refused."""
    moves: list[tuple[JetStream, Stream, str]] = []
    for js in sysjs.jetstreams.values():
        for stream in js.streams.values():
            members = [p.name for p in stream.replicas.peers]
            if name not in members:
                continue
            spares = spare_servers(members, meta.names, meta.up)
            if not spares:
                if stuck is None:
                    continue
                raise api_error(ApiErrors.JSStreamGeneralErrorF, err=stuck)
            if len(members) == 1:
                raise api_error(ApiErrors.JSStreamGeneralErrorF, err=NO_R1_MOVE)
            moves.append((js, stream, spares[0]))
    return moves


@system_api("SERVER.EVACUATE")
def server_evacuate(sysjs: SystemJetStream, call: SystemCall) -> Response:
    """``jsLeaderServerEvacuateRequest``: every stream group the server is in loses it to a
    spare server, its consumers following (``cluster/moves.py``). A group spanning every
    server has none (nats-server logs it and answers success all the same). Moving the only
    replica of an R1 stream is refused (nats-server's replacement starts empty)."""
    if not call.system or not sysjs.leader_answers():
        return None
    meta = sysjs.meta
    assert meta is not None
    kind = "meta_server_evacuate_response"
    try:
        name = _server_request(meta, call)
        moves = _replicas_on(sysjs, meta, name, None)
    except ApiError as err:
        return error_response(kind, err)
    for js, stream, spare in moves:
        move_replica(js, stream, name, spare)
    return {"type": response_type(kind), "success": True}


@system_api("META.RESCUE")
def meta_rescue(sysjs: SystemJetStream, call: SystemCall) -> Response:
    """``jsMetaRescueRequest``: every server that is up answers for itself."""
    if not call.system or sysjs.meta is None:
        return None
    kind = "meta_rescue_response"
    try:
        req = call.req
        req.check_api_level()
        if is_empty_request(req.data):
            raise api_error(ApiErrors.JSBadRequestErr)
        req.decode(META_RESCUE_REQUEST)
        if sysjs.meta.has_quorum():  # raft refuses to rescue a group that has a leader
            raise api_error(ApiErrors.JSClusterRescueErr, err="raft: leader is known")
        raise api_error(ApiErrors.JSStreamGeneralErrorF, err=NO_RESCUE)
    except ApiError as err:
        error = err
    return [
        error_response(kind, error, server=node.name, server_id=node.server_id)
        for node in sysjs.server.nodes
        if node.up
    ]


# --- accounts -------------------------------------------------------------------------------


@system_api("ACCOUNT.PURGE.*")
def account_purge(sysjs: SystemJetStream, call: SystemCall) -> Response:
    """``jsLeaderAccountPurgeRequest``: every stream of the account is deleted (a standalone
    server too; its API level is checked only in a cluster)."""
    if not call.system:
        return None
    kind = "account_purge_response"
    account = call.req.token(5)
    try:
        if "/" in account or "\\" in account:
            raise api_error(ApiErrors.JSStreamGeneralErrorF, err="account name can not contain path separators")
        if sysjs.meta is not None:
            if not sysjs.leader_answers():
                return None
            call.req.check_api_level()
    except ApiError as err:
        return error_response(kind, err)
    js = sysjs.jetstreams.get(account)
    if js is not None:
        for stream in list(js.streams.values()):
            js.delete_stream(stream)
            send_stream_action(js, stream.name, DELETE)
    return {"type": response_type(kind), "initiated": True}


def _move_target(sysjs: SystemJetStream, call: SystemCall) -> tuple[str, str] | None:
    """The account and stream a move request names, when its asker may ask (the system
    account, or that account itself) and a meta leader answers."""
    account, stream = call.req.token(6), call.req.token(7)
    if not sysjs.leader_answers() or (account != call.account and not call.system):
        return None
    return account, stream


def _existing_stream(sysjs: SystemJetStream, account: str, name: str) -> tuple[JetStream, Stream]:
    """The account's stream: 10035 without the account, 10059 without the stream."""
    if account not in sysjs.server.account_space.by_name:
        raise api_error(ApiErrors.JSNoAccountErr)
    js = sysjs.jetstreams.get(account)
    stream = js.streams.get(name) if js is not None else None
    if js is None or stream is None:
        raise api_error(ApiErrors.JSStreamNotFoundErr)
    return js, stream


@system_api("ACCOUNT.STREAM.MOVE.*.*")
def account_stream_move(sysjs: SystemJetStream, call: SystemCall) -> Response:
    """``jsLeaderServerStreamMoveRequest``: the named server's replica moves to a spare
    server (``cluster/stream_move.py``); the reply shows the move under way. A group that
    spans every server has nowhere to go (400/10005). A move without a ``server`` (a new
    placement) and the only replica of an R1 stream are refused."""
    target = _move_target(sysjs, call)
    if target is None:
        return None
    meta = sysjs.meta
    assert meta is not None
    kind = "stream_update_response"
    try:
        call.req.check_api_level()
        request = call.req.decode(STREAM_MOVE_REQUEST)
        server: str = request.get("server") or ""
        js, stream = _existing_stream(sysjs, *target)
        peers = [p.name for p in stream.replicas.peers]
        if server:
            if server not in meta.names or (request.get("cluster") or meta.cluster) != meta.cluster:
                raise api_error(ApiErrors.JSClusterServerNotMemberErr)
            if server not in peers:
                raise api_error(ApiErrors.JSClusterPeerNotMemberErr)
        spares = spare_servers(peers, meta.names, meta.up)
        if not spares or request.get("tags"):
            raise api_error(ApiErrors.JSClusterNoPeersErrF, err=NO_PLACEMENT)
        if len(peers) == 1:
            raise api_error(ApiErrors.JSStreamGeneralErrorF, err=NO_R1_MOVE)
        if not server:
            raise api_error(ApiErrors.JSStreamGeneralErrorF, err=NO_MOVE)
        if stream.pending_move is not None:
            raise api_error(ApiErrors.JSStreamGeneralErrorF, err=NO_SECOND_MOVE)
    except ApiError as err:
        return error_response(kind, err)
    members = [p.name for p in stream.replicas.peers]
    now = sysjs.clock.now_ns()
    stream.pending_move = start_move(stream.replicas.leader.name, members, server, spares[0], now)
    out = {"type": response_type(kind), **stream.info_json()}
    send_stream_action(js, stream.name, MODIFY)
    if not stream.move_held:
        settle_move(js, stream)
    return out


@system_api("ACCOUNT.STREAM.CANCEL_MOVE.*.*")
def account_stream_cancel_move(sysjs: SystemJetStream, call: SystemCall) -> Response:
    """``jsLeaderServerStreamCancelMoveRequest``: drops a move under way (10129 with none)."""
    if not sysjs.leader_answers():
        return None
    kind = "stream_cancel_move_response"
    try:
        call.req.check_api_level()
        target = _move_target(sysjs, call)
        if target is None:
            return None
        js, stream = _existing_stream(sysjs, *target)
        return cancel_move(js, stream, kind)
    except ApiError as err:
        return error_response(kind, err)
