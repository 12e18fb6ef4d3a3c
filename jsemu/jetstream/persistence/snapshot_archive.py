"""What a stream snapshot carries: jsemu's own stream files, as a tar, compressed.

nats-server 2.15.1 sends an S2-compressed tar of its stream directory; clients keep the
bytes without looking inside and send them back to ``STREAM.RESTORE``. jsemu's archive
holds the files jsemu itself keeps for a stream with a ``store_dir`` (``stream_files.py``,
``consumer_store.py``): ``meta.json`` (config and creation time), ``msgs.wal`` (the log of
the live state, :func:`state_records`) and ``obs/<consumer>/{meta,o}.json``; so a restore
is a restart of that one stream. The compression is Snappy's framing format (``cramjam``),
which S2 readers also accept; jsemu cannot read S2's own blocks, so a nats-server snapshot
is refused with a line that says so. Anything that does not decompress gets the server's
``s2: corrupt input``.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from ...store.compaction import state_records
from ...store.wal import log_bytes
from .consumer_store import meta_doc, state_doc

if TYPE_CHECKING:
    import tarfile

    from ..consumers.consumer import Consumer
    from ..streams.stream import Stream

__all__ = ["RestoreError", "build_archive", "extract_archive"]

#: The stream identifier chunk of an S2 stream (nats-server's snapshots).
_S2_MAGIC = b"\xff\x06\x00\x00S2sTwO"


class RestoreError(Exception):
    """A snapshot that can not be restored; the text follows ``restore failed: ``."""


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _json(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def build_archive(stream: Stream, consumers: list[Consumer]) -> bytes:
    """The snapshot of ``stream`` now (with ``consumers``' configs and states)."""
    import tarfile  # here and in ``extract_archive``: a server start has no snapshot to make

    import cramjam

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add(tar, "meta.json", _json({"config": asdict(stream.config), "created_ns": stream.created_ns}))
        _add(tar, "msgs.wal", log_bytes(state_records(stream.store)))
        for c in consumers:
            _add(tar, f"obs/{c.name}/meta.json", _json(meta_doc(c)))
            _add(tar, f"obs/{c.name}/o.json", _json(state_doc(c)))
    return bytes(cramjam.snappy.compress(buf.getvalue()))


def extract_archive(data: bytes, into: Path, account: str) -> None:
    """Unpack a snapshot into the directory ``into`` (regular files inside it only)."""
    import tarfile

    import cramjam

    if data.startswith(_S2_MAGIC):
        raise RestoreError("jsemu restores only snapshots made by jsemu (this one is S2-compressed, from nats-server)")
    try:
        raw = bytes(cramjam.snappy.decompress(data))
    except Exception:  # noqa: BLE001 - any decoding failure is the server's corrupt input
        raise RestoreError("s2: corrupt input") from None
    root = into.resolve()
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for member in tar:
                target = (root / member.name).resolve()
                if not member.isreg() or not target.is_relative_to(root) or target == root:
                    raise RestoreError(f"unexpected content (account={account})")
                extracted = tar.extractfile(member)
                assert extracted is not None
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(extracted.read())
    except tarfile.TarError as exc:
        raise RestoreError(f"archive/tar: {exc}") from None
    if not (root / "meta.json").exists():
        raise RestoreError(f"open {root / 'meta.json'}: no such file or directory")
