"""``python -m benchmarks.stress`` keeps working: its four scenarios in a tiny configuration
against ``jsemu serve`` (a few seconds), every check holding."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import stress


def test_stress_scenarios_tiny_against_jsemu(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--server", "jsemu", "--connections", "20", "--duration", "0.5", "--fast", "3", "--slow", "1"]
    argv += [
        "--max-pending",
        "65536",
        "--rate",
        "20000",
        "--size",
        "1024",
        "--trials",
        "2",
        "--fuzz",
        "300",
        "--seed",
        "7",
        "--ws-fuzz",
        "60",
    ]
    code = stress.main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    for title in ("many:", "slow:", "crash:", "fuzz:", "wsfuzz:"):
        assert title in out, out
