"""The ``$JS.API`` handler table: the one list of the modules that answer ``$JS.API``.

Handlers register with :func:`.registry.api` in the module of their family, as nats-server
keeps its routes in one table (``jetstream_api.go``); this module names the families, so
whoever imports it (``dispatch.py`` to answer, ``not_enabled.py`` for the answers of an
account without JetStream, ``tools/api_coverage.py`` for the documentation's coverage page)
sees every handler. Lookups go through here for that reason. Endpoints with subscriptions of
their own (Direct Get, a consumer's ``CONSUMER.MSG.NEXT``) are not handlers:
:data:`.registry.OWN_SUBSCRIPTIONS` lists the former for the coverage table.
"""

from __future__ import annotations

from types import ModuleType

from . import cluster, consumers, peers, snapshots, streams, system
from .registry import find_handler, find_pattern, registered_patterns

__all__ = ["FAMILIES", "find_handler", "find_pattern", "registered_patterns"]

#: The handler modules, one per family: streams (and the account info), stream snapshots
#: and restores, consumers (pause and unpin included), the cluster's step-downs, and the
#: peer removals and moves, and the system account's endpoints.
FAMILIES: tuple[ModuleType, ...] = (streams, snapshots, consumers, cluster, peers, system)
