"""Where an external mirror or source finds its upstream: through its account's imports.

nats-server sets up the consumer of an ``external`` upstream with a request to
``<api>.CONSUMER.CREATE.<stream>`` published in the mirroring stream's own account, and
the upstream's account delivers to ``<deliver>.<M|S>.<token>`` (``syncSubject``). So the
upstream is the stream of that name in whichever account the request reaches: through a
service import of the JetStream API (``to: "$JS.A.API.>"``), or the account itself when the
prefix is its own ``$JS.API`` (or its domain's). Messages come back only when a stream
import of the exporting account brings the delivery subject in unchanged; otherwise the
consumer exists but nothing arrives (nats-server then re-creates it every 10 s).

Measured on nats-server 2.15.1 (``tests/jetstream/links/test_external_upstream.py``): a reachable API and
a missing stream give 10059 ``stream not found``; an API nobody answers gives no error and
``active: -1``; an API that answers without a delivery import gives ``lag: 0`` and an
``active`` that counts from the last attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Self, TypeVar

from ...server.accounts import Account
from ...server.imports import ServiceForwarder
from ...subjects import subject_matches
from ..context import HasAccount

__all__ = ["RETRY_NS", "ExternalRoute", "LinkHome", "resolve_external"]


class LinkHome(HasAccount, Protocol):
    """What finding a link's upstream reads of a JetStream (``JetStream``): its account, and
    every account's JetStream on the server, one of which may answer."""

    @property
    def all_jetstreams(self) -> Mapping[str, Self]: ...


J = TypeVar("J", bound=LinkHome)

#: How often nats-server sets up again a consumer that neither delivers nor heartbeats.
RETRY_NS = 10_000_000_000

_CREATE = b"$JS.API.CONSUMER.CREATE."


@dataclass(frozen=True)
class ExternalRoute(Generic[J]):
    """Which JetStream answers the link's consumer requests, and whether deliveries return."""

    #: None: the request reaches no JetStream (no responders).
    upstream: J | None
    delivers: bool = False


def resolve_external(js: J, external: dict[str, Any], stream: str, kind: str) -> ExternalRoute[J]:
    """Follow ``<api>.CONSUMER.CREATE.<stream>`` from ``js``'s account as a publish would
    go; ``kind`` is ``M`` (mirror) or ``S`` (source), the delivery subject's token."""
    account = js.account
    subject = account.map_domain(f"{external.get('api', '')}.CONSUMER.CREATE.{stream}".encode())
    for sub in account.sublist.match(subject).psubs:
        forwarder = sub.client
        if not isinstance(forwarder, ServiceForwarder):
            continue
        target = forwarder.subject or subject
        if forwarder.mapping is not None:
            target = forwarder.mapping.match(subject) or target
        exporter = forwarder.exporter
        if not exporter.map_domain(target).startswith(_CREATE):
            continue
        other = js.all_jetstreams.get(exporter.name)
        deliver = f"{external.get('deliver', '')}.{kind}.x"
        return ExternalRoute(other, other is not None and _imported(account, exporter.name, deliver))
    if subject.startswith(_CREATE):
        return ExternalRoute(js, True)
    return ExternalRoute(None)


def _imported(account: object, exporter: str, deliver: str) -> bool:
    """A stream import from ``exporter`` whose subject covers ``deliver`` and keeps it as is."""
    if not isinstance(account, Account):
        return False
    return any(
        imp.kind == "stream"
        and imp.account == exporter
        and not imp.prefix
        and imp.to in ("", imp.subject)
        and subject_matches(deliver, imp.subject)
        for imp in account.config.imports
    )
