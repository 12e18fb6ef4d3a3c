"""Which Python runs Spark's Python workers, and where they find jsemu.

The ``jetstream`` data source is pickled by reference: every Python worker that plans or reads
a partition imports ``jsemu.pipeline.source`` (and pyarrow) itself. On a local master the
workers are children of this process's JVM and inherit its environment, but PySpark starts them
with ``python3`` from the PATH unless told otherwise, which is often not the interpreter that
has jsemu. On a cluster master (``spark://``, a standalone cluster) the executors are processes
of the *workers'* environment: neither this process's PATH nor its ``PYTHONPATH`` reaches them.

PySpark sends, with every Python function (a data source's reader and writer included), the
interpreter to run (``SparkContext.pythonExec``) and the environment to add
(``SparkContext.environment``, where ``spark.executorEnv.*`` lands), so both can be set after
the session has started. With no interpreter chosen (``PYSPARK_PYTHON``,
``spark.pyspark.python``), :func:`use_this_python` makes every worker, local or on a cluster,
run this interpreter, and on a cluster puts the directory jsemu was imported from first on the
executors' ``PYTHONPATH`` when that is a source checkout rather than ``site-packages`` (an
installed jsemu is found by the interpreter itself; putting ``site-packages`` ahead of the
standard library could shadow it). On a cluster of several machines that interpreter's path
must exist on each of them with ``jsemu[spark]`` installed; otherwise choose the workers'
interpreter with ``spark.pyspark.python`` and leave this alone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["jsemu_source_dir", "use_this_python"]


def jsemu_source_dir() -> str | None:
    """The directory this process imports ``jsemu`` from, or ``None`` when that is an
    installed package's directory (``site-packages``, ``dist-packages``)."""
    top = Path(__file__).resolve().parents[2]
    if top.name in ("site-packages", "dist-packages"):
        return None
    return str(top)


def use_this_python(spark: SparkSession) -> bool:
    """With no interpreter chosen (``PYSPARK_PYTHON``, ``spark.pyspark.python``), make Spark's
    Python workers run this interpreter, the one that has jsemu and pyarrow, and on a cluster
    master find this jsemu (see the module's docstring). Returns whether it did."""
    sc = spark.sparkContext
    chosen = os.environ.get("PYSPARK_PYTHON", "")
    if chosen not in ("", sys.executable) or sc.getConf().get("spark.pyspark.python"):
        return False  # (this interpreter in PYSPARK_PYTHON: as a local session of this process leaves it)
    sc.pythonExec = sys.executable  # the workers of functions wrapped from now on
    if (sc.master or "").startswith("local"):
        os.environ["PYSPARK_PYTHON"] = sys.executable  # later local sessions of this process too
        return True
    source = jsemu_source_dir()
    if source is not None:
        before = sc.environment.get("PYTHONPATH")
        if source not in (before or "").split(os.pathsep):  # register() again: once is enough
            sc.environment["PYTHONPATH"] = os.pathsep.join([source, before] if before else [source])
    return True
