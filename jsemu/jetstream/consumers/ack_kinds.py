"""The bodies a client sends to a consumer's ``$JS.ACK`` subjects (``processAck``'s kinds),
defined once for the two readers of acks: ``Consumer.process_ack`` (any ack) and the
run-of-acks loop in :mod:`.fast` (plain acks). An empty body is a plain ack too."""

__all__ = ["ACK_ACK", "ACK_NAK", "ACK_NEXT", "ACK_OK", "ACK_PROGRESS", "ACK_TERM"]

ACK_ACK = b"+ACK"
ACK_OK = b"+OK"
ACK_NAK = b"-NAK"  # optionally followed by a delay (a duration or ``{"delay": ...}``)
ACK_PROGRESS = b"+WPI"  # in progress: the ack wait starts again
ACK_NEXT = b"+NXT"  # ack, then the rest of the body is a pull request
ACK_TERM = b"+TERM"  # optionally followed by a reason
