"""A Spark standalone cluster on this machine, for tests and benchmarks: a master and workers
started from the pyspark package's own launchers, as a user who outgrows ``local[*]`` starts them.

    with SparkStandalone(workers=2) as cluster:
        spark = SparkSession.builder.master(cluster.url).config("spark.executor.memory", "512m").getOrCreate()

Each daemon is ``$SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master`` or
``...worker.Worker spark://host:port`` with ``SPARK_HOME`` the pyspark package's directory
(``spark-class`` ends in ``exec java``, so the process started is the JVM). The workers'
executors are JVMs of their own, each with its own Python workers: nothing of this process's
environment reaches them except what the application sends (``spark.executorEnv.*``, the
interpreter PySpark names). To keep that honest the daemons start with this interpreter's
directory taken off ``PATH`` and without ``PYTHONPATH``, ``PYSPARK_PYTHON`` or ``VIRTUAL_ENV``,
as daemons started from a login shell would be: a session that does not say which Python its
executors run fails here as it would on a real cluster.

The master listens on a port the system picks (``--port 0``, read back from its log), its REST
submission server is off (it would take the fixed port 6066), web UIs are on port 0. Every
daemon runs in a process group of its own; ``stop`` ends each group (executors included) and
waits, so nothing outlives a test run even when it failed or timed out.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["ClusterError", "SparkStandalone", "spark_home"]

_MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
_REGISTERED = "Successfully registered with master"


class ClusterError(RuntimeError):
    """The cluster did not come up in time (the message ends with the daemons' last log lines)."""


def spark_home() -> str:
    """The pyspark package's directory: a pip install of pyspark is a Spark distribution."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def daemon_env(home: str) -> dict[str, str]:
    """The environment of the daemons: this one without this interpreter or a Python path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "VIRTUAL_ENV")}
    here = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != here)
    env["SPARK_HOME"] = home
    env["SPARK_DAEMON_MEMORY"] = "256m"
    env["SPARK_MASTER_OPTS"] = "-Dspark.master.rest.enabled=false"
    env["SPARK_NO_DAEMONIZE"] = "1"
    return env


class SparkStandalone:
    """A master and ``workers`` workers (``memory`` and ``cores`` each) on 127.0.0.1."""

    def __init__(self, workers: int = 2, memory: str = "1g", cores: int = 1, timeout: float = 120.0) -> None:
        self.workers = workers
        self.memory = memory
        self.cores = cores
        self.timeout = timeout
        self.url = ""
        self._dir = tempfile.TemporaryDirectory(prefix="jsemu-spark-")
        self._procs: list[tuple[subprocess.Popen[bytes], Path]] = []
        self._worker_logs: list[Path] = []
        self._until = 0.0

    def __enter__(self) -> Self:
        """The cluster, started (``start(wait=False)`` first to overlap a driver's start-up)."""
        try:
            if not self.url:
                self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _spawn(self, name: str, *args: str) -> Path:
        home = spark_home()
        log = Path(self._dir.name) / f"{name}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [os.path.join(home, "bin", "spark-class"), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=daemon_env(home),
                cwd=self._dir.name,
                start_new_session=True,
            )
        self._procs.append((proc, log))
        return log

    def _wait(self, until: float, ready: list[Path], check: re.Pattern[str] | str) -> list[str]:
        """The first match of ``check`` in each log of ``ready``, waiting until ``until``."""
        found: list[str] = []
        while True:
            found = []
            for log in ready:
                text = log.read_text(errors="replace")
                if isinstance(check, str):
                    found += [check] if check in text else []
                else:
                    m = check.search(text)
                    found += [m.group(1)] if m else []
            if len(found) == len(ready):
                return found
            dead = [log.name for proc, log in self._procs if proc.poll() is not None]
            if dead or time.monotonic() > until:
                raise ClusterError(self._failure("exited: " + ", ".join(dead) if dead else "timed out"))
            time.sleep(0.1)

    def _failure(self, why: str) -> str:
        tails = []
        for _, log in self._procs:
            lines = log.read_text(errors="replace").splitlines() if log.exists() else []
            tails.append(f"--- {log.name}\n" + "\n".join(lines[-8:]))
        return f"the Spark standalone cluster did not come up ({why})\n" + "\n".join(tails)

    def start(self, wait: bool = True) -> None:
        """Start the master, then the workers; with ``wait``, until each has registered (else
        call ``wait_for_workers``: a driver can start meanwhile, its executors come when they do)."""
        self._until = time.monotonic() + self.timeout
        until = self._until
        master = self._spawn(
            "master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"
        )
        (self.url,) = self._wait(until, [master], _MASTER_URL)
        self._worker_logs = [
            self._spawn(
                f"worker{i}",
                "org.apache.spark.deploy.worker.Worker",
                *("--host", "127.0.0.1", "--port", "0", "--webui-port", "0"),
                *("--memory", self.memory, "--cores", str(self.cores)),
                *("--work-dir", str(Path(self._dir.name) / f"work{i}")),
                self.url,
            )
            for i in range(1, self.workers + 1)
        ]
        if wait:
            self.wait_for_workers()

    def wait_for_workers(self) -> None:
        """Until every worker has registered with the master (within ``timeout`` of ``start``)."""
        self._wait(self._until, self._worker_logs, _REGISTERED)

    def stop(self) -> None:
        """End every daemon's process group (workers first, with their executors), then the master."""
        for proc, _ in reversed(self._procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc, _ in self._procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        self._procs.clear()
        self._dir.cleanup()
