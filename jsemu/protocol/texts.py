"""Every verbatim text the server sends, in one place: protocol ``-ERR`` texts, status
lines of header-only replies (Direct Get, no responders, pull requests) and the JetStream
API errors.

Code refers to these by name, so a misspelt one fails at import (and under mypy), never
as a wrong reply at run time. Each text is copied from nats-server 2.15.1; templates keep
the server's placeholders (``{}`` for protocol texts, ``{name}`` for API errors).
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = [
    "API_ERRORS",
    "ERR_ACCOUNT_AUTHENTICATION_EXPIRED",
    "ERR_AUTHENTICATION_TIMEOUT",
    "ERR_AUTHORIZATION_VIOLATION",
    "ERR_INVALID_CLIENT_PROTOCOL",
    "ERR_INVALID_PUBLISH_SUBJECT",
    "ERR_INVALID_SUBJECT",
    "ERR_MAX_ACCOUNT_CONNECTIONS",
    "ERR_MAX_CONNECTIONS",
    "ERR_MAX_CONTROL_LINE",
    "ERR_MAX_PAYLOAD",
    "ERR_MAX_SUBSCRIPTIONS",
    "ERR_NO_RESPONDERS_NEEDS_HEADERS",
    "ERR_PUBLISH_DENIED",
    "ERR_PUBLISH_REPLY_DENIED",
    "ERR_STALE_CONNECTION",
    "ERR_SUBSCRIBE_DENIED",
    "ERR_SUBSCRIBE_QUEUE_DENIED",
    "ERR_UNKNOWN_OP",
    "ERR_USER_AUTHENTICATION_EXPIRED",
    "ERR_USER_AUTHENTICATION_REVOKED",
    "FLOW_CONTROL_REQUEST",
    "IDLE_HEARTBEAT",
    "PULL_BAD_GROUP_MISSING",
    "PULL_BAD_HEARTBEAT",
    "PULL_BAD_INVALID_GROUP",
    "PULL_BAD_NOT_OVERFLOW",
    "PULL_BAD_NOT_PINNED",
    "PULL_BAD_PRIORITY",
    "PULL_BAD_REQUEST",
    "PULL_BATCH_COMPLETED",
    "PULL_CONSUMER_DELETED",
    "PULL_EXCEEDED_MAX_REQUEST_BATCH",
    "PULL_EXCEEDED_MAX_REQUEST_EXPIRES",
    "PULL_EXCEEDED_MAX_REQUEST_MAX_BYTES",
    "PULL_EXCEEDED_MAX_WAITING",
    "PULL_MESSAGE_SIZE_EXCEEDS_MAX_BYTES",
    "PULL_NO_MESSAGES",
    "PULL_PIN_ID_MISMATCH",
    "PULL_PUSH_BASED",
    "PULL_REQUESTS_PENDING",
    "PULL_REQUEST_TIMEOUT",
    "PULL_SERVER_SHUTDOWN",
    "PULL_WRONG_PIN_ID",
    "STATUS_BAD_REQUEST",
    "STATUS_EMPTY_REQUEST",
    "STATUS_EOB",
    "STATUS_EOB_UP_TO",
    "STATUS_MALFORMED_REQUEST",
    "STATUS_NOT_FOUND",
    "STATUS_NO_RESPONDERS",
    "STATUS_NO_RESULTS",
    "STATUS_REQUIRED_API_LEVEL",
    "STATUS_SNAPSHOT_END",
    "STATUS_SNAPSHOT_NO_FLOW",
    "STATUS_SNAPSHOT_NO_INTEREST",
    "STATUS_TOO_MANY_RESULTS",
    "TRACE_AUTO_UNSUB",
    "TRACE_CLIENT_CLOSED",
    "TRACE_MAX_PAYLOAD",
    "TRACE_NO_ECHO",
    "TRACE_SUB_CLOSED",
    "TRACE_SUB_DENY",
    "ApiErrorText",
    "ApiErrors",
]

# --- protocol -ERR texts (sent as ``-ERR '<text>'``) -------------------------------------

ERR_UNKNOWN_OP: Final = "Unknown Protocol Operation"
ERR_MAX_CONTROL_LINE: Final = "maximum control line exceeded"
ERR_MAX_PAYLOAD: Final = "Maximum Payload Violation"
ERR_INVALID_PUBLISH_SUBJECT: Final = "Invalid Publish Subject"
ERR_INVALID_SUBJECT: Final = "Invalid Subject"
ERR_AUTHORIZATION_VIOLATION: Final = "Authorization Violation"
ERR_AUTHENTICATION_TIMEOUT: Final = "Authentication Timeout"
ERR_INVALID_CLIENT_PROTOCOL: Final = "invalid client protocol"
ERR_NO_RESPONDERS_NEEDS_HEADERS: Final = "no responders requires headers support"
ERR_STALE_CONNECTION: Final = "Stale Connection"
ERR_MAX_CONNECTIONS: Final = "maximum connections exceeded"
#: Operator mode: the account JWT's ``conn`` limit, and a user JWT's ``exp`` passing while connected.
ERR_MAX_ACCOUNT_CONNECTIONS: Final = "maximum account active connections exceeded"
ERR_USER_AUTHENTICATION_EXPIRED: Final = "User Authentication Expired"
#: An account JWT expired (or the account was deleted from the resolver): its clients are closed.
ERR_ACCOUNT_AUTHENTICATION_EXPIRED: Final = "Account Authentication Expired"
#: Operator mode: an account claim update revoked a connected user.
ERR_USER_AUTHENTICATION_REVOKED: Final = "User Authentication Revoked"
ERR_MAX_SUBSCRIPTIONS: Final = "maximum subscriptions exceeded"
#: ``{}``: the subject, Go-quoted.
ERR_PUBLISH_DENIED: Final = "Permissions Violation for Publish to {}"
#: ``{}``: the reply subject, Go-quoted.
ERR_PUBLISH_REPLY_DENIED: Final = "Permissions Violation for Publish with Reply of {}"
#: ``{}``: the subject, Go-quoted.
ERR_SUBSCRIBE_DENIED: Final = "Permissions Violation for Subscription to {}"
#: ``{}``, ``{}``: the subject and the queue group, Go-quoted.
ERR_SUBSCRIBE_QUEUE_DENIED: Final = "Permissions Violation for Subscription to {} using queue {}"

# --- message trace events' errors (ADR-41, ``server/msgtrace.go``) ------------------------

TRACE_NO_ECHO: Final = "Not delivered because of no echo"
TRACE_SUB_DENY: Final = "Not delivered because subscription denies this subject"
TRACE_SUB_CLOSED: Final = "Not delivered because subscription is closed"
TRACE_CLIENT_CLOSED: Final = "Not delivered because client is closed"
TRACE_AUTO_UNSUB: Final = "Not delivered because auto-unsubscribe exceeded"
#: The ingress error of a publish over the maximum payload (Go's ``ErrMaxPayload``).
TRACE_MAX_PAYLOAD: Final = "maximum payload exceeded"

# --- status lines of header-only replies -------------------------------------------------

#: No responders: followed by the ``Nats-Subject`` header and the block's end.
STATUS_NO_RESPONDERS: Final = b"NATS/1.0 503\r\n"
STATUS_REQUIRED_API_LEVEL: Final = b"NATS/1.0 412 Required Api Level\r\n\r\n"
STATUS_EMPTY_REQUEST: Final = b"NATS/1.0 408 Empty Request\r\n\r\n"
STATUS_MALFORMED_REQUEST: Final = b"NATS/1.0 408 Malformed Request\r\n\r\n"
STATUS_BAD_REQUEST: Final = b"NATS/1.0 408 Bad Request\r\n\r\n"
STATUS_NOT_FOUND: Final = b"NATS/1.0 404 Message Not Found\r\n\r\n"
STATUS_NO_RESULTS: Final = b"NATS/1.0 404 No Results\r\n\r\n"
STATUS_TOO_MANY_RESULTS: Final = b"NATS/1.0 413 Too Many Results\r\n\r\n"
# The end of a stream snapshot's chunks (``streamSnapshot``).
STATUS_SNAPSHOT_END: Final = b"NATS/1.0 204\r\n\r\n"
STATUS_SNAPSHOT_NO_FLOW: Final = b"NATS/1.0 408 No Flow Response\r\n\r\n"
STATUS_SNAPSHOT_NO_INTEREST: Final = b"NATS/1.0 408 No Interest\r\n\r\n"
#: The end of a Direct Get batch: ``% (num pending, last sequence)``.
STATUS_EOB: Final = b"NATS/1.0 204 EOB\r\nNats-Num-Pending: %d\r\nNats-Last-Sequence: %d\r\n\r\n"
#: The end of a multi-last batch with ``up_to``: ``% (num pending, last sequence, up-to sequence)``.
STATUS_EOB_UP_TO: Final = (
    b"NATS/1.0 204 EOB\r\nNats-Num-Pending: %d\r\nNats-Last-Sequence: %d\r\nNats-UpTo-Sequence: %d\r\n\r\n"
)

# --- pull request statuses (``$JS.API.CONSUMER.MSG.NEXT``, consumer.go) ------------------

PULL_NO_MESSAGES: Final = b"NATS/1.0 404 No Messages\r\n\r\n"
PULL_PUSH_BASED: Final = b"NATS/1.0 409 Consumer is push based\r\n\r\n"
#: To each waiting request of a deleted pull consumer (``releaseAnyPendingRequests``).
PULL_CONSUMER_DELETED: Final = b"NATS/1.0 409 Consumer Deleted\r\n\r\n"
#: To each waiting request when the server stops (``signalPullConsumers``):
#: ``% (messages still asked for, bytes still allowed)``.
PULL_SERVER_SHUTDOWN: Final = (
    b"NATS/1.0 409 Server Shutdown\r\nNats-Pending-Messages: %d\r\nNats-Pending-Bytes: %d\r\n\r\n"
)
#: Push consumers (and pull requests with ``idle_heartbeat``): a flow control request, and an
#: idle heartbeat's first lines ``% (last consumer seq, last stream seq)``, to which
#: ``Nats-Consumer-Stalled`` may be added before the closing CRLF.
FLOW_CONTROL_REQUEST: Final = b"NATS/1.0 100 FlowControl Request\r\n\r\n"
IDLE_HEARTBEAT: Final = b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: %d\r\nNats-Last-Stream: %d\r\n"
PULL_REQUESTS_PENDING: Final = b"NATS/1.0 408 Requests Pending\r\n\r\n"
PULL_EXCEEDED_MAX_WAITING: Final = b"NATS/1.0 409 Exceeded MaxWaiting\r\n\r\n"
#: ``% (messages still asked for, bytes still allowed)``.
PULL_REQUEST_TIMEOUT: Final = (
    b"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: %d\r\nNats-Pending-Bytes: %d\r\n\r\n"
)
#: ``% (messages still asked for, bytes still allowed)``.
PULL_MESSAGE_SIZE_EXCEEDS_MAX_BYTES: Final = (
    b"NATS/1.0 409 Message Size Exceeds MaxBytes\r\nNats-Pending-Messages: %d\r\nNats-Pending-Bytes: %d\r\n\r\n"
)
#: After the message that fills a request's batch with ``max_bytes`` to spare
#: (``JsPullRequestRemainingBytesT``): ``% (messages still asked for, bytes still allowed)``.
PULL_BATCH_COMPLETED: Final = (
    b"NATS/1.0 409 Batch Completed\r\nNats-Pending-Messages: %d\r\nNats-Pending-Bytes: %d\r\n\r\n"
)
#: ``% the consumer's max_batch``.
PULL_EXCEEDED_MAX_REQUEST_BATCH: Final = b"NATS/1.0 409 Exceeded MaxRequestBatch of %d\r\n\r\n"
#: ``% the consumer's max_expires as a Go duration``.
PULL_EXCEEDED_MAX_REQUEST_EXPIRES: Final = b"NATS/1.0 409 Exceeded MaxRequestExpires of %s\r\n\r\n"
#: ``% the consumer's max_bytes``.
PULL_EXCEEDED_MAX_REQUEST_MAX_BYTES: Final = b"NATS/1.0 409 Exceeded MaxRequestMaxBytes of %d\r\n\r\n"
#: ``% the reason`` (one of the ``PULL_BAD_*`` texts, or a JSON decoding error).
PULL_BAD_REQUEST: Final = b"NATS/1.0 400 Bad Request - %s\r\n\r\n"
PULL_BAD_HEARTBEAT: Final = "heartbeat value too large"
PULL_BAD_NOT_OVERFLOW: Final = "Not a Overflow Priority consumer"
PULL_BAD_NOT_PINNED: Final = "Not a Pinned Client Priority consumer"
PULL_BAD_PRIORITY: Final = "Priority must be between 0 and 9"
PULL_BAD_GROUP_MISSING: Final = "Priority Group missing"
PULL_BAD_INVALID_GROUP: Final = "Invalid Priority Group"
#: Priority groups (pinned_client): a request naming another pin id than the current one.
PULL_PIN_ID_MISMATCH: Final = b"NATS/1.0 423 Nats-Pin-Id mismatch\r\n\r\n"
#: ``% (messages still asked for, bytes still allowed)``: a waiting request whose pin id is
#: no longer (or not yet) the pinned one.
PULL_WRONG_PIN_ID: Final = (
    b"NATS/1.0 423 Nats-Wrong-Pin-Id\r\nNats-Pending-Messages: %d\r\nNats-Pending-Bytes: %d\r\n\r\n"
)
#: jsemu's own refusal of what it does not implement yet (never accepted and ignored).

# --- JetStream API errors ------------------------------------------------------------------


class ApiErrorText(NamedTuple):
    """One entry of nats-server's ``errors.json``: HTTP-like code, error code, description."""

    code: int
    err_code: int
    description: str


class ApiErrors:
    """Every JetStream API error, verbatim, named by nats-server's Go constant.

    Generated from nats-server's ``server/errors.json`` (commit 1787eee0, v2.15 line). Keep it
    data only: descriptions are templates with ``{name}`` placeholders exactly as the server
    has them.
    """

    JSAccountResourcesExceededErr = ApiErrorText(400, 10002, "resource limits exceeded for account")
    JSBadRequestErr = ApiErrorText(400, 10003, "bad request")
    JSClusterIncompleteErr = ApiErrorText(503, 10004, "incomplete results")
    JSClusterNoPeersErrF = ApiErrorText(400, 10005, "{err}")
    JSClusterNotActiveErr = ApiErrorText(500, 10006, "JetStream not in clustered mode")
    JSClusterNotAssignedErr = ApiErrorText(500, 10007, "JetStream cluster not assigned to this server")
    JSClusterNotAvailErr = ApiErrorText(503, 10008, "JetStream system temporarily unavailable")
    JSClusterNotLeaderErr = ApiErrorText(500, 10009, "JetStream cluster can not handle request")
    JSClusterRequiredErr = ApiErrorText(503, 10010, "JetStream clustering support required")
    JSClusterTagsErr = ApiErrorText(400, 10011, "tags placement not supported for operation")
    JSConsumerCreateErrF = ApiErrorText(500, 10012, "{err}")
    JSConsumerNameExistErr = ApiErrorText(400, 10013, "consumer name already in use")
    JSConsumerNotFoundErr = ApiErrorText(404, 10014, "consumer not found")
    JSSnapshotDeliverSubjectInvalidErr = ApiErrorText(400, 10015, "deliver subject not valid")
    JSConsumerDurableNameNotInSubjectErr = ApiErrorText(
        400, 10016, "consumer expected to be durable but no durable name set in subject"
    )
    JSConsumerDurableNameNotMatchSubjectErr = ApiErrorText(
        400, 10017, "consumer name in subject does not match durable name in request"
    )
    JSConsumerDurableNameNotSetErr = ApiErrorText(
        400, 10018, "consumer expected to be durable but a durable name was not set"
    )
    JSConsumerEphemeralWithDurableInSubjectErr = ApiErrorText(
        400, 10019, "consumer expected to be ephemeral but detected a durable name set in subject"
    )
    JSConsumerEphemeralWithDurableNameErr = ApiErrorText(
        400, 10020, "consumer expected to be ephemeral but a durable name was set in request"
    )
    JSStreamExternalApiOverlapErrF = ApiErrorText(
        400, 10021, "stream external api prefix {prefix} must not overlap with {subject}"
    )
    JSStreamExternalDelPrefixOverlapsErrF = ApiErrorText(
        400, 10022, "stream external delivery prefix {prefix} overlaps with stream subject {subject}"
    )
    JSInsufficientResourcesErr = ApiErrorText(503, 10023, "insufficient resources")
    JSStreamInvalidExternalDeliverySubjErrF = ApiErrorText(
        400, 10024, "stream external delivery prefix {prefix} must not contain wildcards"
    )
    JSInvalidJSONErr = ApiErrorText(400, 10025, "invalid JSON: {err}")
    JSMaximumConsumersLimitErr = ApiErrorText(400, 10026, "maximum consumers limit reached")
    JSMaximumStreamsLimitErr = ApiErrorText(400, 10027, "maximum number of streams reached")
    JSMemoryResourcesExceededErr = ApiErrorText(500, 10028, "insufficient memory resources available")
    JSMirrorConsumerSetupFailedErrF = ApiErrorText(500, 10029, "{err}")
    JSMirrorMaxMessageSizeTooBigErr = ApiErrorText(400, 10030, "stream mirror must have max message size >= source")
    JSMirrorWithSourcesErr = ApiErrorText(400, 10031, "stream mirrors can not also contain other sources")
    JSMirrorWithStartSeqAndTimeErr = ApiErrorText(
        400, 10032, "stream mirrors can not have both start seq and start time configured"
    )
    JSMirrorWithSubjectFiltersErr = ApiErrorText(400, 10033, "stream mirrors can not contain filtered subjects")
    JSMirrorWithSubjectsErr = ApiErrorText(400, 10034, "stream mirrors can not contain subjects")
    JSNoAccountErr = ApiErrorText(503, 10035, "account not found")
    JSClusterUnSupportFeatureErr = ApiErrorText(503, 10036, "not currently supported in clustered mode")
    JSNoMessageFoundErr = ApiErrorText(404, 10037, "no message found")
    JSNotEmptyRequestErr = ApiErrorText(400, 10038, "expected an empty request payload")
    JSNotEnabledForAccountErr = ApiErrorText(503, 10039, "JetStream not enabled for account")
    JSClusterPeerNotMemberErr = ApiErrorText(400, 10040, "peer not a member")
    JSRaftGeneralErrF = ApiErrorText(500, 10041, "{err}")
    JSRestoreSubscribeFailedErrF = ApiErrorText(
        500, 10042, "JetStream unable to subscribe to restore snapshot {subject}: {err}"
    )
    JSSequenceNotFoundErrF = ApiErrorText(400, 10043, "sequence {seq} not found")
    JSClusterServerNotMemberErr = ApiErrorText(400, 10044, "server is not a member of the cluster")
    JSSourceConsumerSetupFailedErrF = ApiErrorText(500, 10045, "{err}")
    JSSourceMaxMessageSizeTooBigErr = ApiErrorText(400, 10046, "stream source must have max message size >= target")
    JSStorageResourcesExceededErr = ApiErrorText(500, 10047, "insufficient storage resources available")
    JSStreamAssignmentErrF = ApiErrorText(500, 10048, "{err}")
    JSStreamCreateErrF = ApiErrorText(500, 10049, "{err}")
    JSStreamDeleteErrF = ApiErrorText(500, 10050, "{err}")
    JSStreamGeneralErrorF = ApiErrorText(500, 10051, "{err}")
    JSStreamInvalidConfigF = ApiErrorText(500, 10052, "{err}")
    JSStreamLimitsErrF = ApiErrorText(500, 10053, "{err}")
    JSStreamMessageExceedsMaximumErr = ApiErrorText(400, 10054, "message size exceeds maximum allowed")
    JSStreamMirrorNotUpdatableErr = ApiErrorText(400, 10055, "stream mirror configuration can not be updated")
    JSStreamMismatchErr = ApiErrorText(400, 10056, "stream name in subject does not match request")
    JSStreamMsgDeleteFailedF = ApiErrorText(500, 10057, "{err}")
    JSStreamNameExistErr = ApiErrorText(400, 10058, "stream name already in use with a different configuration")
    JSStreamNotFoundErr = ApiErrorText(404, 10059, "stream not found")
    JSStreamNotMatchErr = ApiErrorText(400, 10060, "expected stream does not match")
    JSStreamReplicasNotUpdatableErr = ApiErrorText(400, 10061, "Replicas configuration can not be updated")
    JSStreamRestoreErrF = ApiErrorText(500, 10062, "restore failed: {err}")
    JSStreamSequenceNotMatchErr = ApiErrorText(503, 10063, "expected stream sequence does not match")
    JSStreamSnapshotErrF = ApiErrorText(500, 10064, "snapshot failed: {err}")
    JSStreamSubjectOverlapErr = ApiErrorText(400, 10065, "subjects overlap with an existing stream")
    JSStreamTemplateCreateErrF = ApiErrorText(500, 10066, "{err}")
    JSStreamTemplateDeleteErrF = ApiErrorText(500, 10067, "{err}")
    JSStreamTemplateNotFoundErr = ApiErrorText(404, 10068, "template not found")
    JSStreamUpdateErrF = ApiErrorText(500, 10069, "{err}")
    JSStreamWrongLastMsgIDErrF = ApiErrorText(400, 10070, "wrong last msg ID: {id}")
    JSStreamWrongLastSequenceErrF = ApiErrorText(400, 10071, "wrong last sequence: {seq}")
    JSTempStorageFailedErr = ApiErrorText(500, 10072, "JetStream unable to open temp storage for restore")
    JSTemplateNameNotMatchSubjectErr = ApiErrorText(400, 10073, "template name in subject does not match request")
    JSStreamReplicasNotSupportedErr = ApiErrorText(500, 10074, "replicas > 1 not supported in non-clustered mode")
    JSPeerRemapErr = ApiErrorText(503, 10075, "peer remap failed")
    JSNotEnabledErr = ApiErrorText(503, 10076, "JetStream not enabled")
    JSStreamStoreFailedF = ApiErrorText(503, 10077, "{err}")
    JSConsumerConfigRequiredErr = ApiErrorText(400, 10078, "consumer config required")
    JSConsumerDeliverToWildcardsErr = ApiErrorText(400, 10079, "consumer deliver subject has wildcards")
    JSConsumerPushMaxWaitingErr = ApiErrorText(400, 10080, "consumer in push mode can not set max waiting")
    JSConsumerDeliverCycleErr = ApiErrorText(400, 10081, "consumer deliver subject forms a cycle")
    JSConsumerMaxPendingAckPolicyRequiredErr = ApiErrorText(
        400, 10082, "consumer requires ack policy for max ack pending"
    )
    JSConsumerSmallHeartbeatErr = ApiErrorText(400, 10083, "consumer idle heartbeat needs to be >= 100ms")
    JSConsumerPullRequiresAckErr = ApiErrorText(
        400, 10084, "consumer in pull mode requires explicit ack policy on workqueue stream"
    )
    JSConsumerPullNotDurableErr = ApiErrorText(400, 10085, "consumer in pull mode requires a durable name")
    JSConsumerPullWithRateLimitErr = ApiErrorText(400, 10086, "consumer in pull mode can not have rate limit set")
    JSConsumerMaxWaitingNegativeErr = ApiErrorText(400, 10087, "consumer max waiting needs to be positive")
    JSConsumerHBRequiresPushErr = ApiErrorText(400, 10088, "consumer idle heartbeat requires a push based consumer")
    JSConsumerFCRequiresPushErr = ApiErrorText(400, 10089, "consumer flow control requires a push based consumer")
    JSConsumerDirectRequiresPushErr = ApiErrorText(400, 10090, "consumer direct requires a push based consumer")
    JSConsumerDirectRequiresEphemeralErr = ApiErrorText(400, 10091, "consumer direct requires an ephemeral consumer")
    JSConsumerOnMappedErr = ApiErrorText(400, 10092, "consumer direct on a mapped consumer")
    JSConsumerFilterNotSubsetErr = ApiErrorText(
        400, 10093, "consumer filter subject is not a valid subset of the interest subjects"
    )
    JSConsumerInvalidPolicyErrF = ApiErrorText(400, 10094, "{err}")
    JSConsumerInvalidSamplingErrF = ApiErrorText(400, 10095, "failed to parse consumer sampling configuration: {err}")
    JSStreamInvalidErr = ApiErrorText(500, 10096, "stream not valid")
    JSStreamHeaderExceedsMaximumErr = ApiErrorText(400, 10097, "header size exceeds maximum allowed of 64k")
    JSConsumerWQRequiresExplicitAckErr = ApiErrorText(400, 10098, "workqueue stream requires explicit ack")
    JSConsumerWQMultipleUnfilteredErr = ApiErrorText(
        400, 10099, "multiple non-filtered consumers not allowed on workqueue stream"
    )
    JSConsumerWQConsumerNotUniqueErr = ApiErrorText(400, 10100, "filtered consumer not unique on workqueue stream")
    JSConsumerWQConsumerNotDeliverAllErr = ApiErrorText(400, 10101, "consumer must be deliver all on workqueue stream")
    JSConsumerNameTooLongErrF = ApiErrorText(400, 10102, "consumer name is too long, maximum allowed is {max}")
    JSConsumerBadDurableNameErr = ApiErrorText(400, 10103, "durable name can not contain '.', '*', '>'")
    JSConsumerStoreFailedErrF = ApiErrorText(500, 10104, "error creating store for consumer: {err}")
    JSConsumerExistingActiveErr = ApiErrorText(400, 10105, "consumer already exists and is still active")
    JSConsumerReplacementWithDifferentNameErr = ApiErrorText(
        400, 10106, "consumer replacement durable config not the same"
    )
    JSConsumerDescriptionTooLongErrF = ApiErrorText(
        400, 10107, "consumer description is too long, maximum allowed is {max}"
    )
    JSConsumerWithFlowControlNeedsHeartbeats = ApiErrorText(
        400, 10108, "consumer with flow control also needs heartbeats"
    )
    JSStreamSealedErr = ApiErrorText(400, 10109, "invalid operation on sealed stream")
    JSStreamPurgeFailedF = ApiErrorText(500, 10110, "{err}")
    JSStreamRollupFailedF = ApiErrorText(500, 10111, "{err}")
    JSConsumerInvalidDeliverSubject = ApiErrorText(400, 10112, "invalid push consumer deliver subject")
    JSStreamMaxBytesRequired = ApiErrorText(400, 10113, "account requires a stream config to have max bytes set")
    JSConsumerMaxRequestBatchNegativeErr = ApiErrorText(400, 10114, "consumer max request batch needs to be > 0")
    JSConsumerMaxRequestExpiresTooSmall = ApiErrorText(400, 10115, "consumer max request expires needs to be >= 1ms")
    JSConsumerMaxDeliverBackoffErr = ApiErrorText(
        400, 10116, "max deliver is required to be > length of backoff values"
    )
    JSStreamInfoMaxSubjectsErr = ApiErrorText(500, 10117, "subject details would exceed maximum allowed")
    JSStreamOfflineErr = ApiErrorText(500, 10118, "stream is offline")
    JSConsumerOfflineErr = ApiErrorText(500, 10119, "consumer is offline")
    JSNoLimitsErr = ApiErrorText(400, 10120, "no JetStream default or applicable tiered limit present")
    JSConsumerMaxPendingAckExcessErrF = ApiErrorText(
        400, 10121, "consumer max ack pending exceeds system limit of {limit}"
    )
    JSStreamMaxStreamBytesExceeded = ApiErrorText(400, 10122, "stream max bytes exceeds account limit max stream bytes")
    JSStreamMoveAndScaleErr = ApiErrorText(400, 10123, "can not move and scale a stream in a single update")
    JSStreamMoveInProgressErr = ApiErrorText(400, 10124, "stream move already in progress")
    JSConsumerMaxRequestBatchExceededF = ApiErrorText(
        400, 10125, "consumer max request batch exceeds server limit of {limit}"
    )
    JSConsumerReplicasExceedsStream = ApiErrorText(400, 10126, "consumer config replica count exceeds parent stream")
    JSConsumerNameContainsPathSeparatorsErr = ApiErrorText(400, 10127, "Consumer name can not contain path separators")
    JSStreamNameContainsPathSeparatorsErr = ApiErrorText(400, 10128, "Stream name can not contain path separators")
    JSStreamReconfigureNotInProgressErr = ApiErrorText(400, 10129, "stream reconfiguration not in progress")
    JSStreamNameExistRestoreFailedErr = ApiErrorText(400, 10130, "stream name already in use, cannot restore")
    JSConsumerCreateFilterSubjectMismatchErr = ApiErrorText(
        400, 10131, "Consumer create request did not match filtered subject from create subject"
    )
    JSConsumerCreateDurableAndNameMismatch = ApiErrorText(
        400, 10132, "Consumer Durable and Name have to be equal if both are provided"
    )
    JSReplicasCountCannotBeNegative = ApiErrorText(400, 10133, "replicas count cannot be negative")
    JSConsumerReplicasShouldMatchStream = ApiErrorText(
        400, 10134, "consumer config replicas must match interest retention stream's replicas"
    )
    JSConsumerMetadataLengthErrF = ApiErrorText(400, 10135, "consumer metadata exceeds maximum size of {limit}")
    JSConsumerDuplicateFilterSubjects = ApiErrorText(
        400, 10136, "consumer cannot have both FilterSubject and FilterSubjects specified"
    )
    JSConsumerMultipleFiltersNotAllowed = ApiErrorText(
        400, 10137, "consumer with multiple subject filters cannot use subject based API"
    )
    JSConsumerOverlappingSubjectFilters = ApiErrorText(400, 10138, "consumer subject filters cannot overlap")
    JSConsumerEmptyFilter = ApiErrorText(400, 10139, "consumer filter in FilterSubjects cannot be empty")
    JSSourceDuplicateDetected = ApiErrorText(400, 10140, "duplicate source configuration detected")
    JSSourceInvalidStreamName = ApiErrorText(400, 10141, "sourced stream name is invalid")
    JSMirrorInvalidStreamName = ApiErrorText(400, 10142, "mirrored stream name is invalid")
    JSMirrorWithFirstSeqErr = ApiErrorText(400, 10143, "stream mirrors can not have first sequence configured")
    JSSourceMultipleFiltersNotAllowed = ApiErrorText(
        400, 10144, "source with multiple subject transforms cannot also have a single subject filter"
    )
    JSSourceInvalidSubjectFilter = ApiErrorText(400, 10145, "source transform source: {err}")
    JSSourceInvalidTransformDestination = ApiErrorText(400, 10146, "source transform: {err}")
    JSSourceOverlappingSubjectFilters = ApiErrorText(400, 10147, "source filters can not overlap")
    JSConsumerAlreadyExists = ApiErrorText(400, 10148, "consumer already exists")
    JSConsumerDoesNotExist = ApiErrorText(400, 10149, "consumer does not exist")
    JSMirrorMultipleFiltersNotAllowed = ApiErrorText(
        400, 10150, "mirror with multiple subject transforms cannot also have a single subject filter"
    )
    JSMirrorInvalidSubjectFilter = ApiErrorText(400, 10151, "mirror transform source: {err}")
    JSMirrorOverlappingSubjectFilters = ApiErrorText(400, 10152, "mirror subject filters can not overlap")
    JSConsumerInactiveThresholdExcess = ApiErrorText(
        400, 10153, "consumer inactive threshold exceeds system limit of {limit}"
    )
    JSMirrorInvalidTransformDestination = ApiErrorText(400, 10154, "mirror transform: {err}")
    JSStreamTransformInvalidSource = ApiErrorText(400, 10155, "stream transform source: {err}")
    JSStreamTransformInvalidDestination = ApiErrorText(400, 10156, "stream transform: {err}")
    JSPedanticErrF = ApiErrorText(400, 10157, "pedantic mode: {err}")
    JSStreamDuplicateMessageConflict = ApiErrorText(409, 10158, "duplicate message id is in process")
    JSConsumerPriorityPolicyWithoutGroup = ApiErrorText(
        400, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set"
    )
    JSConsumerInvalidPriorityGroupErr = ApiErrorText(
        400, 10160, "Provided priority group does not exist for this consumer"
    )
    JSConsumerEmptyGroupName = ApiErrorText(400, 10161, "Group name cannot be an empty string")
    JSConsumerInvalidGroupNameErr = ApiErrorText(
        400, 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters"
    )
    JSStreamExpectedLastSeqPerSubjectNotReady = ApiErrorText(
        503, 10163, "expected last sequence per subject temporarily unavailable"
    )
    JSStreamWrongLastSequenceConstantErr = ApiErrorText(400, 10164, "wrong last sequence")
    JSMessageTTLInvalidErr = ApiErrorText(400, 10165, "invalid per-message TTL")
    JSMessageTTLDisabledErr = ApiErrorText(400, 10166, "per-message TTL is disabled")
    JSStreamTooManyRequests = ApiErrorText(429, 10167, "too many requests")
    JSMessageIncrDisabledErr = ApiErrorText(400, 10168, "message counters is disabled")
    JSMessageIncrMissingErr = ApiErrorText(400, 10169, "message counter increment is missing")
    JSMessageIncrPayloadErr = ApiErrorText(400, 10170, "message counter has payload")
    JSMessageIncrInvalidErr = ApiErrorText(400, 10171, "message counter increment is invalid")
    JSMessageCounterBrokenErr = ApiErrorText(400, 10172, "message counter is broken")
    JSMirrorWithCountersErr = ApiErrorText(400, 10173, "stream mirrors can not also calculate counters")
    JSAtomicPublishDisabledErr = ApiErrorText(400, 10174, "atomic publish is disabled")
    JSAtomicPublishMissingSeqErr = ApiErrorText(400, 10175, "atomic publish sequence is missing")
    JSAtomicPublishIncompleteBatchErr = ApiErrorText(400, 10176, "atomic publish batch is incomplete")
    JSAtomicPublishUnsupportedHeaderBatchErr = ApiErrorText(
        400, 10177, "atomic publish unsupported header used: {header}"
    )
    JSConsumerPushWithPriorityGroupErr = ApiErrorText(400, 10178, "priority groups can not be used with push consumers")
    JSAtomicPublishInvalidBatchIDErr = ApiErrorText(400, 10179, "atomic publish batch ID is invalid")
    JSStreamMinLastSeqErr = ApiErrorText(412, 10180, "min last sequence")
    JSConsumerAckPolicyInvalidErr = ApiErrorText(400, 10181, "consumer ack policy invalid")
    JSConsumerReplayPolicyInvalidErr = ApiErrorText(400, 10182, "consumer replay policy invalid")
    JSConsumerAckWaitNegativeErr = ApiErrorText(400, 10183, "consumer ack wait needs to be positive")
    JSConsumerBackOffNegativeErr = ApiErrorText(400, 10184, "consumer backoff needs to be positive")
    JSRequiredApiLevelErr = ApiErrorText(412, 10185, "JetStream minimum api level required")
    JSMirrorWithMsgSchedulesErr = ApiErrorText(400, 10186, "stream mirrors can not also schedule messages")
    JSSourceWithMsgSchedulesErr = ApiErrorText(400, 10187, "stream source can not also schedule messages")
    JSMessageSchedulesDisabledErr = ApiErrorText(400, 10188, "message schedules is disabled")
    JSMessageSchedulesPatternInvalidErr = ApiErrorText(400, 10189, "message schedules pattern is invalid")
    JSMessageSchedulesTargetInvalidErr = ApiErrorText(400, 10190, "message schedules target is invalid")
    JSMessageSchedulesTTLInvalidErr = ApiErrorText(400, 10191, "message schedules invalid per-message TTL")
    JSMessageSchedulesRollupInvalidErr = ApiErrorText(400, 10192, "message schedules invalid rollup")
    JSStreamExpectedLastSeqPerSubjectInvalid = ApiErrorText(
        400, 10193, "missing sequence for expected last sequence per subject"
    )
    JSStreamOfflineReasonErrF = ApiErrorText(500, 10194, "stream is offline: {err}")
    JSConsumerOfflineReasonErrF = ApiErrorText(500, 10195, "consumer is offline: {err}")
    JSConsumerPriorityGroupWithPolicyNone = ApiErrorText(
        400, 10196, "consumer can not have priority groups when policy is none"
    )
    JSConsumerPinnedTTLWithoutPriorityPolicyNone = ApiErrorText(
        400, 10197, "PinnedTTL cannot be set when PriorityPolicy is none"
    )
    JSMirrorWithAtomicPublishErr = ApiErrorText(400, 10198, "stream mirrors can not also use atomic publishing")
    JSAtomicPublishTooLargeBatchErrF = ApiErrorText(400, 10199, "atomic publish batch is too large: {size}")
    JSAtomicPublishInvalidBatchCommitErr = ApiErrorText(400, 10200, "atomic publish batch commit is invalid")
    JSAtomicPublishContainsDuplicateMessageErr = ApiErrorText(
        400, 10201, "atomic publish batch contains duplicate message id"
    )
    JSClusterServerMemberChangeInflightErr = ApiErrorText(400, 10202, "cluster member change is in progress")
    JSMessageSchedulesSourceInvalidErr = ApiErrorText(400, 10203, "message schedules source is invalid")
    JSConsumerInvalidResetErr = ApiErrorText(400, 10204, "invalid reset: {err}")
    JSBatchPublishDisabledErr = ApiErrorText(400, 10205, "batch publish is disabled")
    JSBatchPublishInvalidPatternErr = ApiErrorText(400, 10206, "batch publish pattern is invalid")
    JSBatchPublishInvalidBatchIDErr = ApiErrorText(400, 10207, "batch publish ID is invalid")
    JSBatchPublishUnknownBatchIDErr = ApiErrorText(400, 10208, "batch publish ID unknown")
    JSMirrorWithBatchPublishErr = ApiErrorText(400, 10209, "stream mirrors can not also use batch publishing")
    JSAtomicPublishTooManyInflight = ApiErrorText(429, 10210, "atomic publish too many inflight")
    JSBatchPublishTooManyInflight = ApiErrorText(429, 10211, "batch publish too many inflight")
    JSMessageSchedulesSchedulerInvalidErr = ApiErrorText(400, 10212, "message schedules invalid scheduler")
    JSMirrorDurableConsumerCfgInvalid = ApiErrorText(400, 10213, "stream mirror consumer config is invalid")
    JSMirrorConsumerRequiresAckFCErr = ApiErrorText(
        400, 10214, "stream mirror consumer requires flow control ack policy"
    )
    JSSourceDurableConsumerCfgInvalid = ApiErrorText(400, 10215, "stream source consumer config is invalid")
    JSSourceDurableConsumerDuplicateDetected = ApiErrorText(400, 10216, "duplicate stream source consumer detected")
    JSSourceConsumerRequiresAckFCErr = ApiErrorText(
        400, 10217, "stream source consumer requires flow control ack policy"
    )
    JSConsumerAckFCRequiresPushErr = ApiErrorText(400, 10218, "flow control ack policy requires a push based consumer")
    JSConsumerAckFCRequiresFCErr = ApiErrorText(400, 10219, "flow control ack policy requires flow control")
    JSConsumerAckFCRequiresMaxAckPendingErr = ApiErrorText(
        400, 10220, "flow control ack policy requires max ack pending"
    )
    JSConsumerAckFCRequiresNoAckWaitErr = ApiErrorText(400, 10221, "flow control ack policy requires unset ack wait")
    JSConsumerAckFCRequiresNoMaxDeliverErr = ApiErrorText(
        400, 10222, "flow control ack policy requires unset max deliver"
    )
    JSMessageSchedulesTimeZoneInvalidErr = ApiErrorText(400, 10223, "message schedules time zone is invalid")
    JSClusterRescueErr = ApiErrorText(400, 10224, "JetStream system rescue not applied: {err}")
    JSConsumerStreamIdentityMismatchF = ApiErrorText(400, 10225, "consumer's stream identity does not match: {msg}")
    JSStreamReconfigureInProgressErr = ApiErrorText(400, 10226, "stream reconfiguration already in progress")
    JSMessageSourceHdrNotAllowedErr = ApiErrorText(400, 10227, "message stream source header is not allowed")


#: Every API error by its constant's name (for tables and tests; code uses the attributes).
API_ERRORS: Final[dict[str, ApiErrorText]] = {
    name: value for name, value in vars(ApiErrors).items() if isinstance(value, ApiErrorText)
}


# --- jsemu's own JetStream API errors (nats-server's codes, jsemu's descriptions) ---------

_ACROSS_PROCESSES = (
    "jsemu cannot replicate {what} across processes: use 1 replica in a cluster of jsemu processes,"
    " or an in-process cluster (cluster_size) for replicas"
)
#: ``num_replicas`` > 1 on a stream in a cluster of jsemu processes. nats-server's
#: ``JSClusterNoPeersErrF`` (400, 10005) is its answer when a cluster has no servers to
#: place the replicas on, which is the case here: no other process can hold one.
STREAM_REPLICAS_ACROSS_PROCESSES: Final = ApiErrorText(400, 10005, _ACROSS_PROCESSES.format(what="a stream"))
#: ``num_replicas`` > 1 on a consumer there: nats-server's ``JSConsumerReplicasExceedsStream``
#: (400, 10126), its answer for more replicas than the stream has, and every stream is R1 here.
CONSUMER_REPLICAS_ACROSS_PROCESSES: Final = ApiErrorText(400, 10126, _ACROSS_PROCESSES.format(what="a consumer"))
