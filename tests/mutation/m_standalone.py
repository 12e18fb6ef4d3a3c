"""Planted bugs of the pipeline on a Spark standalone cluster: the executors are processes the
cluster's workers start with their own environment, so what ``register`` sends with the
session's functions is all they know of this Python and this jsemu."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

STANDALONE = (
    "tests/pipeline_standalone/test_standalone_cluster.py::test_tasks_run_in_executors_with_this_python_and_this_jsemu"
)

MUTATIONS: list[Mutation] = [
    Mutation(
        "standalone_executors_default_python",
        "pipeline",
        "jsemu/pipeline/workers.py",
        "    sc.pythonExec = sys.executable  # the workers of functions wrapped from now on\n",
        '    if not (sc.master or "").startswith("local"):\n        return False\n'
        "    sc.pythonExec = sys.executable  # the workers of functions wrapped from now on\n",
        (STANDALONE,),
        "register leaves a cluster's executors to PySpark's default, python3 on the workers' PATH "
        "(the behaviour before clusters were covered): not the driver's interpreter",
    ),
    Mutation(
        "standalone_executor_pythonpath_dropped",
        "pipeline",
        "jsemu/pipeline/workers.py",
        '            sc.environment["PYTHONPATH"] = os.pathsep.join([source, before] if before else [source])\n',
        "            pass\n",
        (STANDALONE,),
        "a checkout's jsemu is not put on the executors' PYTHONPATH: they import another jsemu "
        "(an installed one) or none",
    ),
]
