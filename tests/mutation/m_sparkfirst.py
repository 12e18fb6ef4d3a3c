"""Planted bugs of a Spark job's first read: the reader's bulk cut of plain Direct Get frames
(``jsemu/pipeline/columns.py``) and the package's lazy top level, which keeps the server out of
Spark's Python workers."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

BULK = "tests/pipeline/test_bulk_cut.py"
COLUMNS = "jsemu/pipeline/columns.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "sparkfirst_bulk_payload_size_unchecked",
        "pipeline",
        COLUMNS,
        "    ok = pc.and_(pc.equal(pc.add(header, 16), hlen), pc.equal(pc.add(hlen, lens[9]), total))\n",
        "    ok = pc.equal(pc.add(header, 16), hlen)\n",
        (BULK,),
        "the bulk cut takes a frame whose payload holds CRLF: its data is cut at the CRLF",
    ),
    Mutation(
        "sparkfirst_bulk_subject_offset",
        "pipeline",
        COLUMNS,
        "            pc.binary_slice(col[3], len(_DG_PREFIXES[1]), 1 << 30),\n",
        "            pc.binary_slice(col[3], len(_DG_PREFIXES[0]), 1 << 30),\n",
        (BULK,),
        "the bulk cut cuts the Nats-Subject line by the length of the Nats-Stream prefix: a space leads",
    ),
    Mutation(
        "sparkfirst_bulk_stale_lists",
        "pipeline",
        COLUMNS,
        "                    data, hdr_offsets = cols.data, cols.hdr_offsets\n",
        "                    pass\n",
        (BULK,),
        "after a bulk cut, frames taken one by one go to the lists the cut already moved into Arrow",
    ),
    Mutation(
        "sparkfirst_bulk_all_or_nothing",
        "pipeline",
        COLUMNS,
        "    return len(mask) if found < 0 else found\n",
        "    return len(mask)\n",
        (BULK,),
        "the bulk cut takes every candidate frame, a status or a frame with stored headers too",
    ),
    Mutation(
        "sparkfirst_eager_server_import",
        "pipeline",
        "jsemu/__init__.py",
        "from .version import NATS_VERSION, __version__\n",
        "from . import app as _app  # noqa: F401\nfrom .version import NATS_VERSION, __version__\n",
        ("tests/pipeline/test_worker_imports.py",),
        "importing the package loads the whole server again, in every Spark Python worker",
    ),
]
