"""``python -m benchmarks --runs N``: every row the median of N runs, its ratio the median of
the runs' own ratios (each run measures both servers side by side) and the spread their
lowest and highest; the table shows that spread, the JSON keeps every run's figures.
No server is started here: the runs are made up."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import __main__ as cli
from benchmarks import suite
from benchmarks.suite import Row, merge_runs, run_repeated, table


def _run(rate: tuple[float, float], latency: tuple[float, float | None], rounds: float) -> dict[str, Row]:
    """One run's table: a rate row, a latency row (None: jsemu gave no figure) and a row
    about the measurement itself (not compared)."""
    real, emu = latency
    return {
        "s/rate": Row("s", "rate", "msg/s", True, {"real": rate[0], "jsemu": rate[1]}),
        "s/latency": Row("s", "latency", "µs", False, {"real": real} | ({} if emu is None else {"jsemu": emu})),
        "s/rounds": Row("s", "  spread of rounds", "%", False, {"real": rounds, "jsemu": rounds}, compared=False),
    }


RUNS = [
    _run((100.0, 50.0), (10.0, 20.0), 3.0),  # ratios 0.5 and 0.5
    _run((100.0, 200.0), (99.0, None), 9.0),  # ratio 2.0; no latency ratio (jsemu failed)
    _run((200.0, 240.0), (30.0, 10.0), 1.0),  # ratios 1.2 and 3.0
]


def test_medians_ratios_and_spread() -> None:
    merged = merge_runs(RUNS)
    assert list(merged) == ["s/rate", "s/latency", "s/rounds"]
    rate = merged["s/rate"]
    assert rate.runs == {"real": [100.0, 100.0, 200.0], "jsemu": [50.0, 200.0, 240.0]}
    assert rate.values == {"real": 100.0, "jsemu": 200.0}
    assert rate.ratios == [0.5, 2.0, 1.2]
    # the median of the runs' ratios, not the ratio of the medians (which would be 2.0)
    assert rate.ratio == 1.2
    assert rate.spread == (0.5, 2.0)
    latency = merged["s/latency"]
    assert latency.runs == {"real": [10.0, 99.0, 30.0], "jsemu": [20.0, 10.0]}
    assert latency.values == {"real": 30.0, "jsemu": 15.0}
    assert latency.ratios == [0.5, 3.0]  # nats-server/jsemu for a latency
    assert latency.ratio == 1.75
    assert latency.spread == (0.5, 3.0)
    rounds = merged["s/rounds"]
    assert rounds.values == {"real": 3.0, "jsemu": 3.0}
    assert rounds.ratio is None and rounds.spread is None


def test_one_run_is_the_run_itself() -> None:
    merged = merge_runs([RUNS[0]])
    assert merged["s/rate"].values == RUNS[0]["s/rate"].values
    assert merged["s/rate"].ratio == 0.5
    assert merged["s/rate"].spread is None
    text = table(merged)
    assert "spread" not in text.splitlines()[0] and "median of" not in text
    assert text.splitlines()[1].split()[-1] == "0.50"


def test_table_shows_the_spread() -> None:
    lines = table(merge_runs(RUNS)).splitlines()
    assert lines[0].split()[-2:] == ["ratio", "spread"]
    assert lines[1].split()[-2:] == ["1.20", "0.50-2.00"]
    assert lines[2].split()[-2:] == ["1.75", "0.50-3.00"]
    assert lines[3].split()[-2:] == ["-", "-"]  # not compared: no ratio, no spread
    assert lines[-1] == "each figure the median of 3 runs; spread: the lowest and highest ratio of those runs"
    # the columns line up however long a row's name is
    long = {"x": Row("s", "a row name much longer than the forty-six characters of old", "ms", False, {"real": 1.0})}
    header, row = table(long).splitlines()[:2]
    assert header.index("unit") + 4 == row.index("ms") + 2


def test_each_section_runs_n_times_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    figures = iter([1.0, 2.0, 3.0, 10.0, 30.0, 20.0])

    def fake_run(only: list[str], sizes: suite.Sizes) -> dict[str, Row]:
        calls.append(only)
        value = next(figures)
        return {f"{only[0]}/x": Row(only[0], "x", "ms", False, {"real": value, "jsemu": value})}

    monkeypatch.setattr(suite, "run", fake_run)
    rows = run_repeated(["a", "b"], suite.QUICK, 3)
    assert calls == [["a"], ["a"], ["a"], ["b"], ["b"], ["b"]]
    assert rows["a/x"].values["jsemu"] == 2.0 and rows["a/x"].runs["jsemu"] == [1.0, 2.0, 3.0]
    assert rows["b/x"].values["jsemu"] == 20.0 and rows["b/x"].runs["jsemu"] == [10.0, 30.0, 20.0]


def test_cli_runs_and_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[int] = []

    def fake_repeated(only: list[str], sizes: suite.Sizes, runs: int) -> dict[str, Row]:
        seen.append(runs)
        return merge_runs(RUNS)

    monkeypatch.setattr(cli, "run_repeated", fake_repeated)
    monkeypatch.setattr(cli, "machine", lambda: "test machine")
    out = tmp_path / "b.json"
    monkeypatch.setattr(sys, "argv", ["benchmarks", "--only", "directget", "--runs", "3", "--json", str(out)])
    cli.main()
    assert seen == [3]
    assert "0.50-2.00" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["runs"] == 3
    first = data["rows"][0]
    assert first["runs"] == {"real": [100.0, 100.0, 200.0], "jsemu": [50.0, 200.0, 240.0]}
    assert first["ratios"] == [0.5, 2.0, 1.2]
    assert set(first) >= {f.name for f in dataclasses.fields(Row)}
    monkeypatch.setattr(sys, "argv", ["benchmarks", "--runs", "0"])
    with pytest.raises(SystemExit):
        cli.main()
