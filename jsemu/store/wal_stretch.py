"""A stretch of same-shaped ``Append`` frames of a write-ahead log, decoded at once.

Why: a server killed with SIGKILL leaves its log's tail as one ``Append`` record per message
published since the last compaction, up to about a million of them, and the restart decodes
each in a Python loop (:func:`.wal._records`: a header, a checksum, four fields). Messages
published together are usually alike: the same subject length, no headers, the same payload
size. Their frames then have the same length and the same bytes at the same offsets (length,
record code, subject length, header length, data length), so a stretch of them is a table with a
fixed row width, and every column can be cut out by C loops over ``range``s of offsets:

* the shape: each of those constant bytes, taken every ``width`` bytes with one extended slice,
  must repeat the first frame's; where one first differs ends the stretch;
* the checksums: ``crc32`` of each payload (``map`` over slices of a ``memoryview``), compared
  with the stored ones as one ``bytes`` comparison; a mismatch ends the stretch before it, and the
  record loop then reports it as damage, exactly as without this;
* the subjects, the payloads and the timestamps: ``map`` over slices again.

Anything else (headers, another record, one frame of another size) is left to the record loop,
which is also what a stretch too short to pay for its set-up (:data:`MIN_STRETCH`) gets.
The frame layout is :mod:`.wal`'s: ``<length u32><crc32 u32>`` then the payload ``<code u8 = 1>
<subject length u32><subject><header length u32 = 0><data length u32><data><timestamp i64>``.
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["MIN_STRETCH", "Stretch", "append_stretch"]

#: Fewer same-shaped frames than this are left to the record loop.
MIN_STRETCH = 64

_HEAD = struct.Struct("<IIBI")
_TWO = struct.Struct("<II")

#: (subjects, datas, timestamps, end of the stretch's last frame)
Stretch = tuple[list[bytes], list[bytes], list[int], int]


def append_stretch(data: bytes, view: memoryview, pos: int, limit: int) -> Stretch | None:
    """The header-less ``Append`` frames from ``pos`` on (at most ``limit``) that share the
    first one's shape and whose checksums hold, as columns; None for fewer than
    :data:`MIN_STRETCH`."""
    size = len(data)
    if pos + 21 > size:
        return None
    length, _, code, n = _HEAD.unpack_from(data, pos)
    width = 8 + length
    at_hdr = pos + 13 + n  # the header length, then the data length
    if code != 1 or at_hdr + 8 > size:
        return None
    hlen, dlen = _TWO.unpack_from(data, at_hdr)
    if hlen or 13 + n + 8 + dlen + 8 != width:
        return None
    count = min((size - pos) // width, limit)
    if count < MIN_STRETCH:
        return None
    # The shape: length (0-3), code (8), subject length (9-12), header and data lengths.
    for off in (0, 1, 2, 3, 8, 9, 10, 11, 12, *range(13 + n, 21 + n)):
        column = data[pos + off : pos + count * width : width]
        same = len(column) - len(column.lstrip(column[:1]))
        if same < count:
            count = same
            if count < MIN_STRETCH:
                return None
    end = pos + count * width
    # Columns of small values by ``struct.iter_unpack`` over the whole stretch, the rest by list
    # comprehensions (a slice by the interpreter's own opcode costs half a ``map(slice, ...)``
    # one); no ``bytes.join`` of a million small slices, which cost three times either
    # (measured on 1,000,000 frames: 0.05, 0.04 and 0.14 s).
    crc32 = zlib.crc32
    plen = width - 8
    rows = view[pos:end]
    stored = [c for (c,) in struct.iter_unpack(f"<4xI{plen}x", rows)]
    sums = [crc32(view[i : i + plen]) for i in range(pos + 8, end, width)]
    if sums != stored:
        count = next(i for i, (a, b) in enumerate(zip(sums, stored, strict=True)) if a != b)
        if count < MIN_STRETCH:
            return None
        end = pos + count * width
        rows = view[pos:end]
    subjects = [data[i : i + n] for i in range(pos + 13, end, width)]
    first_data = pos + 21 + n
    datas = [data[i : i + dlen] for i in range(first_data, end, width)]
    stamps = [t for (t,) in struct.iter_unpack(f"<{width - 8}xq", rows)]
    return subjects, datas, stamps, end
