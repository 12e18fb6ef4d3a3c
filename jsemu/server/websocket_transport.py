"""The transport a WebSocket client's connection writes to (``server/websocket_listener.py``).

``ClientConnection`` flushes once per read with one ``write``; here that write becomes one
binary frame (``protocol/websocket.py`` frames it as nats-server does), and ``close`` sends
the close frame whose status says why the server closed the connection.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the frame codec (h11, wsproto) is imported by the listener, when there is one
    from ..protocol.websocket import WebSocketFrames

__all__ = ["WebSocketTransport"]


class WebSocketTransport(asyncio.Transport):
    """What a WebSocket client's connection writes to: each write one frame (or 4 KiB
    frames for a browser); ``close`` sends the close frame for :attr:`reason` first."""

    def __init__(self, raw: asyncio.Transport, frames: WebSocketFrames) -> None:
        super().__init__()
        self.raw = raw
        self.frames = frames
        #: The error the connection closed with (``ClientConnection._teardown`` sets it).
        self.reason: str | None = None
        #: A close frame already decided (the echo of the client's), sent instead.
        self.close_frame: bytes | None = None
        #: CONNECT options from the upgrade's cookies, for those the CONNECT leaves out.
        self.connect_defaults: dict[str, str] = {}
        #: The upgrade's ``X-Forwarded-For`` address (empty: none usable).
        self.forwarded_for = ""

    def log_name(self, peer: str, cid: int) -> str:
        """nats-server's name of a WebSocket client in its log lines: ``wid``, and the
        ``X-Forwarded-For`` address (IPv6 in brackets) before the peer's."""
        forwarded = self.forwarded_for
        if forwarded:
            peer = f"{f'[{forwarded}]' if ':' in forwarded else forwarded}/{peer}"
        return f"{peer} - wid:{cid}"

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.raw.write(self.frames.frame(bytes(data)))

    def close(self) -> None:
        from ..protocol.websocket import close_frame_for  # loaded already: the listener's

        raw = self.raw
        if raw.is_closing():
            return
        raw.write(self.close_frame if self.close_frame is not None else close_frame_for(self.reason))
        raw.close()

    def abort(self) -> None:
        self.raw.abort()

    def is_closing(self) -> bool:
        return self.raw.is_closing()

    def get_write_buffer_size(self) -> int:
        return self.raw.get_write_buffer_size()

    def pause_reading(self) -> None:
        self.raw.pause_reading()

    def resume_reading(self) -> None:
        self.raw.resume_reading()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.raw.get_extra_info(name, default)
