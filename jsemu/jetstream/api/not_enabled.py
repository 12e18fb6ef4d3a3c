"""``$JS.API`` of an account without JetStream: nats-server's "not enabled" answers.

With accounts configured, nats-server enables JetStream only for the accounts whose block
says ``jetstream: enabled``; every other account still reaches the API (the system account
imports it into each), and each endpoint answers its own response type with the 503
``JetStream not enabled for account`` error (10039) and the zero fields its Go struct always
marshals. A few endpoints look at the request first (``CONSUMER.CREATE`` and ``.PAUSE``
decode it, ``.UNPIN`` wants a valid group, ``CONSUMER.INFO`` an empty body; the leader
stepdowns of a standalone server want a cluster), as captured from nats-server 2.15.1. Direct Gets and pull
requests get no responders, and subjects without an endpoint no reply, as in an account
with JetStream. The system account's own clients are answered otherwise (``apiDispatch``): the
system endpoints of ``api/system.py``, and for anything else but ``INFO`` and ``ACCOUNT.*``
(Direct Gets and pull requests too) the 10039 error in a ``system_response``. Subjects the account imports as a service (the JetStream API of another
account) are left to the import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...protocol.gojson import dumps
from ...server.sublist import Subscription
from ...subjects import subject_matches
from ..consumers.config import CREATE_CONSUMER_REQUEST
from ..errors import ApiError, ApiErrors, api_error
from ..internal import InternalSubscriber
from ..requests import PAUSE_REQUEST
from .consumers import unpin_group
from .dispatch import ApiImport, is_direct_get
from .registry import ApiRequest, error_response, is_empty_request, is_json_object_or_array
from .table import find_pattern

if TYPE_CHECKING:
    from ...server.routing import Router
    from .system import SystemJetStream

__all__ = ["NOT_ENABLED_REPLIES", "NotEnabledApi"]

_PAGED_ZERO: dict[str, Any] = {"total": 0, "offset": 0, "limit": 0}

#: Registered pattern -> (response type suffix, fields after ``error``), as nats-server marshals them.
NOT_ENABLED_REPLIES: dict[str, tuple[str, dict[str, Any]]] = {
    "INFO": ("account_info_response", {}),
    "STREAM.CREATE.*": ("stream_create_response", {}),
    "STREAM.UPDATE.*": ("stream_update_response", {}),
    "STREAM.INFO.*": ("stream_info_response", _PAGED_ZERO),
    "STREAM.NAMES": ("stream_names_response", {**_PAGED_ZERO, "streams": None}),
    "STREAM.LIST": ("stream_list_response", {**_PAGED_ZERO, "streams": []}),
    "STREAM.DELETE.*": ("stream_delete_response", {}),
    "STREAM.PURGE.*": ("stream_purge_response", {"purged": 0}),
    "STREAM.SNAPSHOT.*": ("stream_snapshot_response", {}),
    "STREAM.RESTORE.*": ("stream_restore_response", {"deliver_subject": ""}),
    "STREAM.MSG.DELETE.*": ("stream_msg_delete_response", {}),
    "STREAM.MSG.GET.*": ("stream_msg_get_response", {}),
    "STREAM.LEADER.STEPDOWN.*": ("stream_leader_stepdown_response", {}),
    "CONSUMER.CREATE.*": ("consumer_create_response", {}),
    "CONSUMER.CREATE.*.>": ("consumer_create_response", {}),
    "CONSUMER.DURABLE.CREATE.*.*": ("consumer_create_response", {}),
    "CONSUMER.INFO.*.*": ("consumer_info_response", {}),
    "CONSUMER.NAMES.*": ("consumer_names_response", {**_PAGED_ZERO, "consumers": []}),
    "CONSUMER.LIST.*": ("consumer_list_response", {**_PAGED_ZERO, "consumers": []}),
    "CONSUMER.DELETE.*.*": ("consumer_delete_response", {}),
    "CONSUMER.LEADER.STEPDOWN.*.*": ("consumer_leader_stepdown_response", {}),
    "CONSUMER.PAUSE.*.*": ("consumer_pause_response", {"paused": False, "pause_until": "0001-01-01T00:00:00Z"}),
    "CONSUMER.UNPIN.*.*": ("consumer_unpin_response", {}),
    "STREAM.PEER.REMOVE.*": ("stream_remove_peer_response", {}),
    "STREAM.PEER.EVACUATE.*": ("stream_evacuate_peer_response", {}),
    "STREAM.CANCEL_MOVE.*": ("stream_cancel_move_response", {}),
    "CONSUMER.PEER.REMOVE.*.*": ("consumer_remove_peer_response", {}),
    "CONSUMER.PEER.EVACUATE.*.*": ("consumer_evacuate_peer_response", {}),
}

_CLUSTER_FIRST = frozenset(
    {
        "STREAM.LEADER.STEPDOWN.*",
        "CONSUMER.LEADER.STEPDOWN.*.*",
        "STREAM.PEER.REMOVE.*",
        "STREAM.PEER.EVACUATE.*",
        "STREAM.CANCEL_MOVE.*",
        "CONSUMER.PEER.REMOVE.*.*",
        "CONSUMER.PEER.EVACUATE.*.*",
    }
)
_DECODES_FIRST = frozenset({"CONSUMER.CREATE.*", "CONSUMER.CREATE.*.>", "CONSUMER.DURABLE.CREATE.*.*"})


def _error_for(pattern: str, req: ApiRequest, clustered: bool = False) -> ApiError:
    """The error an account without JetStream gets for one request."""
    try:
        if pattern in _DECODES_FIRST:
            req.decode(CREATE_CONSUMER_REQUEST)
        elif pattern == "CONSUMER.INFO.*.*" and not is_empty_request(req.data):
            raise api_error(ApiErrors.JSNotEmptyRequestErr)
        elif pattern == "CONSUMER.PAUSE.*.*" and is_json_object_or_array(req.data):
            req.decode(PAUSE_REQUEST)
        elif pattern == "CONSUMER.UNPIN.*.*":
            unpin_group(req)  # it reads the request and its group first
    except ApiError as err:
        return err
    if pattern in _CLUSTER_FIRST and not clustered:  # a standalone server checks clustering first
        return api_error(ApiErrors.JSClusterRequiredErr)
    return api_error(ApiErrors.JSNotEnabledForAccountErr)


class NotEnabledApi:
    """The ``$JS.API.>`` subscriber of one account without JetStream."""

    def __init__(self, account: Router, imported: Sequence[str] = (), system: SystemJetStream | None = None) -> None:
        self.account = account
        #: The system endpoints (``api/system.py``), answered here for the system account.
        self.system = system
        #: Subjects of the account's service imports: an imported JetStream API (``$JS.API.>``
        #: exported by an account with JetStream) answers those, not this.
        self.imported = tuple(imported)
        #: The system account's own clients get one answer for (almost) every subject.
        self.is_system = system is not None and account.name == system.system_account
        if self.is_system:
            api: InternalSubscriber = InternalSubscriber(self._on_api)
        else:  # imported from the system account, as nats-server does (its trace shows it)
            api = ApiImport(self._on_api, system.system_account if system is not None else "$SYS")
        self._sub = Subscription(api, b"$JS.API.>", None, b"$JS.API")

    def start(self) -> None:
        self._sub.closed = False
        self.account.sublist.insert(self._sub)

    def stop(self) -> None:
        """JetStream turned on for the account (a claim update): its own API answers now."""
        self._sub.closed = True
        self.account.sublist.remove(self._sub)

    def _on_api(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> bool | None:
        if self.is_system:
            self._on_system_api(subject, reply, hdr, msg)
            return True
        if is_direct_get(subject):
            return False  # no stream answers: no responders
        text = subject.decode("utf-8", "replace")
        if self.imported and any(subject_matches(text, pattern) for pattern in self.imported):
            return False
        tokens = text.split(".")
        data = msg[hdr:] if hdr > 0 else msg
        req = ApiRequest(text, tokens, reply, msg[:hdr] if hdr > 0 else b"", data)
        if self.system is not None and text.startswith("$JS.API."):  # answers no one but the system account
            bodies = self.system.answer(self.account.name, req)
            if bodies is not None:
                for body in bodies:
                    if reply:
                        self.account.outbound.send(reply, -1, body)
                return True
        found = find_pattern(tokens[2:]) if text.startswith("$JS.API.") else None
        if found is None or not reply:
            return True  # taken (and dropped) by the API import, like the server
        pattern = found[0]
        kind, extra = NOT_ENABLED_REPLIES[pattern]
        body = dumps(
            error_response(
                kind, _error_for(pattern, req, self.system is not None and self.system.meta is not None), **extra
            )
        ).encode()
        self.account.outbound.send(reply, -1, body)
        return True

    def _on_system_api(self, subject: bytes, reply: bytes | None, hdr: int, msg: bytes) -> None:
        """``apiDispatch`` for the system account's own clients: the system endpoints answer
        (``api/system.py``), other ``$JS.API.ACCOUNT.`` subjects nothing, ``INFO`` the
        account's not-enabled answer, and any other subject, Direct Gets and pull requests
        included, ``system_response`` with 503/10039 (captured from nats-server 2.15.1)."""
        assert self.system is not None
        text = subject.decode("utf-8", "replace")
        if not text.startswith("$JS.API."):
            return
        data = msg[hdr:] if hdr > 0 else msg
        req = ApiRequest(text, text.split("."), reply, msg[:hdr] if hdr > 0 else b"", data)
        bodies = self.system.answer(self.account.name, req)
        client: dict[str, Any] | None = {}
        if bodies is None and text.startswith("$JS.API.ACCOUNT."):
            bodies = []
        elif bodies is None:
            kind, extra = NOT_ENABLED_REPLIES["INFO"] if text == "$JS.API.INFO" else ("system_response", {})
            if text != "$JS.API.INFO":
                client = None
            error = api_error(ApiErrors.JSNotEnabledForAccountErr)
            bodies = [dumps(error_response(kind, error, **extra)).encode()]
        for body in bodies:
            if reply:
                self.account.outbound.send(reply, -1, body)
        if bodies:  # META.RESCUE's several answers: each server audits its own
            self.system.audit(self.account.outbound, client, req, bodies[0])
