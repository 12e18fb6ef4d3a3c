"""JetStream's figures for the monitoring port (/varz, /jsz), as ``server.monitor.JetStreamReport``.

The monitor lives in ``server/`` and must not know streams; ``jsemu.app`` hands it this
view of the JetStream service instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..timefmt import format_ns
from ..version import API_LEVEL
from .stream_config import config_json

if TYPE_CHECKING:
    from .service import JetStream

__all__ = ["JetStreamMonitoring"]


class JetStreamMonitoring:
    """Reads a :class:`JetStream` service for the monitoring endpoints."""

    def __init__(self, js: JetStream) -> None:
        self.js = js

    def stats(self) -> dict[str, Any]:
        js = self.js
        memory = storage = reserved_memory = reserved_storage = 0
        ha = 0
        for stream in js.streams.values():
            if stream.config.storage == "memory":
                memory += stream.store.bytes
                reserved_memory += max(0, stream.config.max_bytes)
            else:
                storage += stream.store.bytes
                reserved_storage += max(0, stream.config.max_bytes)
            if stream.config.num_replicas > 1:
                ha += 1
        return {
            "memory": memory,
            "storage": storage,
            "reserved_memory": reserved_memory,
            "reserved_storage": reserved_storage,
            "accounts": 1,
            "ha_assets": ha,
            "api": {"level": API_LEVEL, "total": js.api_total, "errors": js.api_errors},
        }

    def totals(self) -> tuple[int, int, int]:
        streams = self.js.streams.values()
        return len(streams), sum(s.store.msgs for s in streams), sum(s.store.bytes for s in streams)

    def api_counts(self) -> tuple[int, int]:
        return self.js.api_total, self.js.api_errors

    def consumers(self) -> int:
        return self.js.num_consumers()

    def stream_detail(self, config: bool) -> list[dict[str, Any]]:
        out = []
        streams = self.js.streams
        for name in sorted(streams):
            stream = streams[name]
            item: dict[str, Any] = {"name": name, "created": format_ns(stream.created_ns)}
            item["cluster"] = stream.cluster_json()
            if config:
                item["config"] = config_json(stream.config, dynamic_metadata=False)
            item["state"] = stream.state_json()
            out.append(item)
        return out
