"""Planted bugs of what Spark's planner processes import with the ``jetstream`` data source:
PyArrow and the Arrow reader only where a task reads (``jsemu/pipeline/source.py``), and the
protocol package's names loaded on first use (``jsemu/protocol/__init__.py``)."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

IMPORTS = "tests/pipeline/test_worker_imports.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "sparkfirst2_source_imports_arrow_at_top",
        "pipeline",
        "jsemu/pipeline/source.py",
        "if TYPE_CHECKING:\n    import pyarrow as pa\n",
        "import pyarrow as pa\n\nif TYPE_CHECKING:\n",
        (IMPORTS,),
        "the source imports PyArrow at its top again: every planner process pays for it",
    ),
    Mutation(
        "sparkfirst2_protocol_eager_encoder",
        "protocol",
        "jsemu/protocol/__init__.py",
        "from importlib import import_module\n",
        "from importlib import import_module\n\nfrom . import encoder as encoder\n",
        (IMPORTS,),
        "the protocol package loads its encoder (and the Go JSON decoder) with any of its modules",
    ),
    Mutation(
        "sparkfirst2_protocol_wrong_home",
        "protocol",
        "jsemu/protocol/__init__.py",
        '    **dict.fromkeys(("Frame", "FrameReader", "parse_frame"), "frames"),\n',
        '    **dict.fromkeys(("Frame", "FrameReader", "parse_frame"), "ops"),\n',
        (IMPORTS,),
        "a name of the protocol package is looked up in the wrong module: an AttributeError on use",
    ),
]
