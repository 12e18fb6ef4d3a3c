"""JetStream's figures for the monitoring port (/varz, /jsz), as ``server.monitor.JetStreamReport``.

The monitor lives in ``server/`` and must not know streams; ``jsemu.app`` hands it this
view of the JetStream service instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..server.healthz import store_folders
from ..timefmt import format_ns
from ..version import API_LEVEL
from .consumers.consumer_set import consumers_of
from .streams.config import config_json

if TYPE_CHECKING:
    from .consumers.consumer import Consumer
    from .service import JetStream
    from .streams.stream import Stream

__all__ = ["JetStreamMonitoring"]

_UINT64 = (1 << 64) - 1


class JetStreamMonitoring:
    """Reads the :class:`JetStream` services of every account (one without accounts) for the
    monitoring endpoints: figures summed over the accounts, and each account's own."""

    def __init__(self, jetstreams: dict[str, JetStream]) -> None:
        self.jetstreams = jetstreams

    def accounts(self) -> list[tuple[str, JetStreamMonitoring]]:
        """Each account with JetStream, by name, as a report of its own (``account_details``)."""
        return [(name, JetStreamMonitoring({name: self.jetstreams[name]})) for name in sorted(self.jetstreams)]

    def _streams(self) -> list[Stream]:
        return [stream for js in self.jetstreams.values() for stream in js.streams.values()]

    def stats(self) -> dict[str, Any]:
        memory = storage = reserved_memory = reserved_storage = 0
        ha = 0
        for stream in self._streams():
            if stream.config.storage == "memory":
                memory += stream.store.bytes
                reserved_memory += max(0, stream.config.max_bytes)
            else:
                storage += stream.store.bytes
                reserved_storage += max(0, stream.config.max_bytes)
            if stream.config.num_replicas > 1:
                ha += 1
        total, errors = self.api_counts()
        return {
            "memory": memory,
            "storage": storage,
            "reserved_memory": reserved_memory,
            "reserved_storage": reserved_storage,
            "accounts": len(self.jetstreams),
            "ha_assets": ha,
            "api": {"level": API_LEVEL, "total": total, "errors": errors},
        }

    def totals(self) -> tuple[int, int, int]:
        streams = self._streams()
        return len(streams), sum(s.store.msgs for s in streams), sum(s.store.bytes for s in streams)

    def api_counts(self) -> tuple[int, int]:
        jetstreams = self.jetstreams.values()
        return sum(js.api_total for js in jetstreams), sum(js.api_errors for js in jetstreams)

    def account_reservations(self) -> tuple[int, int]:
        """The account's ``max_mem`` and ``max_file`` as Go's uint64 (-1, no limit, is 2**64 - 1)."""
        memory = storage = -1
        for js in self.jetstreams.values():  # one account's report holds one service
            memory, storage = js.limits.max_memory, js.limits.max_storage
        return memory & _UINT64, storage & _UINT64

    def consumers(self) -> int:
        return sum(js.num_consumers() for js in self.jetstreams.values())

    def stored(self) -> list[tuple[str, list[str]]]:
        """The store's account folders and their stream folders, by name, as nats-server's
        health check reads them (``store_dir/jetstream/<account>/streams/<stream>``); without
        a ``store_dir``, the accounts with file streams and those streams."""
        dirs = {js.streams_dir.parent.parent for js in self.jetstreams.values() if js.streams_dir is not None}
        if not dirs:
            by_account = {
                name: sorted(s.name for s in js.streams.values() if s.config.storage != "memory")
                for name, js in self.jetstreams.items()
            }
            return [(name, streams) for name, streams in sorted(by_account.items()) if streams]
        (root,) = dirs
        return store_folders(root)

    def consumer_names(self, account: str, stream: str) -> list[str] | None:
        js = self.jetstreams.get(account)
        found = js.streams.get(stream) if js is not None else None
        if found is None:
            return None
        cs = consumers_of(found)
        return [] if cs is None else list(cs.by_name)

    def stream_detail(self, config: bool, consumers: bool = False) -> list[dict[str, Any]]:
        out = []
        for stream in sorted(self._streams(), key=lambda s: s.name):
            name = stream.name
            item: dict[str, Any] = {"name": name, "created": format_ns(stream.created_ns)}
            item["cluster"] = stream.cluster_json()
            if config:
                item["config"] = config_json(stream.config, dynamic_metadata=False)
            item["state"] = stream.state_json()
            cs = consumers_of(stream)
            if consumers and cs is not None and cs.by_name:
                # In creation order, as the server lists them.
                item["consumer_detail"] = [_consumer_detail(c, config) for c in cs.by_name.values()]
            out.append(item)
        return out


def _consumer_detail(consumer: Consumer, config: bool) -> dict[str, Any]:
    """A ``ConsumerInfo`` as ``/jsz`` shows it: the config only when asked, and without the
    metadata the server adds to API replies."""
    info = consumer.info_json(dynamic_metadata=False)
    if not config:
        del info["config"]
    return info
