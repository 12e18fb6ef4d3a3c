"""Planted bugs in the peer endpoints (``api/peers.py``) and the system account's JetStream
endpoints (``api/system.py``, ``cluster/meta.py``), each with the tests that must catch it."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_PEER_TESTS = ("tests/jetstream/cluster/test_peer_remap.py",)
_SYS_CLUSTER = ("tests/jetstream/cluster/test_system_endpoints.py",)
_SYS_STANDALONE = ("tests/jetstream/api/test_system_endpoints.py",)

MUTATIONS: list[Mutation] = [
    Mutation(
        "peer_remap_by_id_only",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "    name = by_id.get(get_hash(peer)) or by_id.get(peer)\n",
        "    name = by_id.get(peer)\n",
        _PEER_TESTS,
        "a member named by its server name (not its peer id) is 'not a member'",
    ),
    Mutation(
        "peer_remap_full_group_refused",
        "jetstream",
        "jsemu/jetstream/cluster/moves.py",
        "    return [n for n in names if n not in members and is_up(n)]\n",
        "    return [n for n in names if is_up(n)]\n",
        _PEER_TESTS,
        "an R3 group on three servers is refused as a move instead of failing the remap (10075)",
    ),
    Mutation(
        "peer_remap_empty_peer_looked_up",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "    if not peer:\n        raise api_error(ApiErrors.JSBadRequestErr)\n    return peer\n",
        "    return peer\n",
        _PEER_TESTS,
        'a request with "peer":"" is looked up (not a member) instead of the 10003 bad request',
    ),
    Mutation(
        "cancel_move_without_stream_check",
        "jetstream",
        "jsemu/jetstream/api/peers.py",
        "        return cancel_move(js, _stream(js, req.token(5)), kind)\n",
        "        stream = js.streams.get(req.token(5))\n        if stream is None:\n"
        "            raise api_error(ApiErrors.JSStreamReconfigureNotInProgressErr)\n"
        "        return cancel_move(js, stream, kind)\n",
        _PEER_TESTS,
        "STREAM.CANCEL_MOVE of a missing stream says 'not in progress' instead of 'stream not found'",
    ),
    Mutation(
        "not_enabled_cluster_required_in_a_cluster",
        "jetstream",
        "jsemu/jetstream/api/not_enabled.py",
        "    if pattern in _CLUSTER_FIRST and not clustered:",
        "    if pattern in _CLUSTER_FIRST:",
        _SYS_CLUSTER,
        "an account without JetStream in a cluster is told clustering is required",
    ),
    Mutation(
        "meta_stepdown_any_account",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        '    """``jsLeaderStepDownRequest``: the preferred server (or any other one that is up) leads."""\n'
        "    if not call.system or not sysjs.leader_answers():\n",
        '    """``jsLeaderStepDownRequest``: the preferred server (or any other one that is up) leads."""\n'
        "    if not sysjs.leader_answers():\n",
        _SYS_CLUSTER,
        "META.LEADER.STEPDOWN answered for an account other than the system account",
    ),
    Mutation(
        "account_purge_path_separators",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        '        if "/" in account or "\\\\" in account:\n',
        '        if "/" in account:\n',
        _SYS_STANDALONE,
        "a backslash in the purged account's name is not refused",
    ),
    Mutation(
        "account_purge_no_advisories",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        "            js.delete_stream(stream)\n            send_stream_action(js, stream.name, DELETE)\n",
        "            js.delete_stream(stream)\n",
        _SYS_STANDALONE,
        "an account purge deletes streams without their DELETED advisories",
    ),
    Mutation(
        "stream_move_other_account",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        "    if not sysjs.leader_answers() or (account != call.account and not call.system):\n",
        "    if not sysjs.leader_answers():\n",
        _SYS_CLUSTER,
        "an account may move another account's stream",
    ),
    Mutation(
        "meta_advisory_leader_name",
        "jetstream",
        "jsemu/jetstream/cluster/meta.py",
        '            "leader": get_hash(to),\n',
        '            "leader": to,\n',
        _SYS_CLUSTER,
        "DOMAIN.LEADER_ELECTED names the leader by server name instead of its peer id",
    ),
    Mutation(
        "meta_rescue_one_answer",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        "        for node in sysjs.server.nodes\n        if node.up\n",
        "        for node in sysjs.server.nodes[:1]\n        if node.up\n",
        _SYS_CLUSTER,
        "META.RESCUE answered by one server, not by every server that is up",
    ),
    Mutation(
        "server_evacuate_by_name_ignored",
        "jetstream",
        "jsemu/jetstream/api/system.py",
        '    name = meta.peer_ids().get(peer_id) if peer_id else request.get("peer") or ""\n',
        '    name = meta.peer_ids().get(request.get("peer") or "", "")\n',
        _SYS_CLUSTER,
        "SERVER.EVACUATE reads peer as a peer id (2.15.1: a server name; peer_id is the id)",
    ),
    Mutation(
        "system_account_requests_not_enabled_per_endpoint",
        "jetstream",
        "jsemu/jetstream/api/not_enabled.py",
        "        if self.is_system:\n            self._on_system_api(subject, reply, hdr, msg)\n            return True\n",
        "",
        _SYS_STANDALONE,
        "the system account's own requests get each endpoint's not-enabled answer, not system_response",
    ),
    Mutation(
        "system_account_account_prefix_answered",
        "jetstream",
        "jsemu/jetstream/api/not_enabled.py",
        '        if bodies is None and text.startswith("$JS.API.ACCOUNT."):\n',
        '        if bodies is None and text.startswith("$JS.API.ACCOUNT.X"):\n',
        _SYS_STANDALONE,
        "an unknown $JS.API.ACCOUNT. subject of the system account is answered (nats-server: no reply)",
    ),
    Mutation(
        "system_audit_client_always_empty",
        "jetstream",
        "jsemu/jetstream/api/not_enabled.py",
        '            if text != "$JS.API.INFO":\n                client = None\n',
        "",
        _SYS_STANDALONE,
        "a system_response's audit shows client {} (nats-server: null)",
    ),
    Mutation(
        "system_request_of_an_account_not_audited",
        "jetstream",
        "jsemu/jetstream/api/dispatch.py",
        "            if requester is not None:\n                send_api_audit(js, requester, text, data, body)\n",
        "",
        _SYS_CLUSTER,
        "an account's own stream move is not audited in its account",
    ),
]
