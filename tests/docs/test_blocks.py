"""Every code block of README.md and of the documentation site that is meant to run, runs as
written (see ``support.doc_blocks``).

The Python examples run as scripts in a fresh interpreter (``nats://127.0.0.1:4222`` replaced by
a server started here); the pytest examples run under pytest in an empty directory, so with
pytest-asyncio's default strict mode, as in a newcomer's project. The Spark example runs in
``tests/pipeline``. The README's test command is the one CI runs, and the README stays a front
page whose links into the site lead somewhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.doc_blocks import DEV_URL, FENCE_LINE, README, ROOT, Block, all_blocks, blocks, pages, runnable

import jsemu

#: The README is a front page: what jsemu is, two commands, three examples, links into the site.
README_MAX_LINES = 250


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    return env


@pytest.fixture(scope="module")
def dev_url() -> Iterator[str]:
    """Stands in for the ``jsemu serve`` the examples talk to."""
    with jsemu.Server.in_thread(port=0) as srv:
        yield srv.server.url


def test_every_block_is_run_or_says_why_not() -> None:
    found = all_blocks()
    assert len(found) >= 20
    unmarked = [b.name for b in found if not b.kind]
    assert unmarked == [], (
        "mark each block: <!-- doc-test: run|pytest|spark|standalone|fragment (why)|output (what) -->"
    )
    assert [b.name for b in found if b.kind in ("fragment", "output") and not b.note] == []
    assert all(b.lang == "python" for b in found if b.kind in ("run", "pytest", "spark", "standalone"))
    assert len(runnable("run")) >= 4 and len(runnable("pytest")) >= 2 and len(runnable("spark")) == 1
    assert len(runnable("standalone")) == 1
    assert {b.kind for b in blocks()} >= {"run", "pytest", "fragment"}  # the README's own examples run too


def test_every_fence_is_a_block_the_tests_see() -> None:
    """An indented fence (in a list, an admonition) would be a code block nobody runs."""
    unseen = [page.name for page in pages() if len(FENCE_LINE.findall(page.read_text())) != 2 * len(blocks(page=page))]
    assert unseen == [], "fence code blocks at the start of a line, each with its marker"


def test_marker_parsing() -> None:
    text = "x\n<!-- readme-test: fragment (because) -->\n```bash\nls\n```\n\n```python\nprint(1)\n```\n"
    first, second = blocks(text)
    assert (first.kind, first.note, first.lang, first.code, first.line) == ("fragment", "(because)", "bash", "ls\n", 3)
    assert (second.kind, second.lang, second.name) == ("", "python", "README.md:7")
    (doc,) = blocks("<!-- doc-test: run -->\n```python\npass\n```\n", page=ROOT / "docs" / "index.md")
    assert (doc.kind, doc.name) == ("run", "docs/index.md:2")


def test_readme_is_a_front_page() -> None:
    """Short, and every relative link (into the site's sources, mostly) names a file that exists."""
    text = README.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text)
    assert any(link.startswith("docs/") for link in links)
    assert [link for link in links if not (ROOT / link).exists()] == []


@pytest.mark.parametrize("block", runnable("run"), ids=lambda b: b.name)
def test_python_example_runs(block: Block, dev_url: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(block.with_url(dev_url))
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=_env(), check=False
    )
    assert proc.returncode == 0, f"{block.name} failed:\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.parametrize("block", runnable("pytest"), ids=lambda b: b.name)
def test_pytest_example_passes_in_strict_mode(block: Block, dev_url: str, tmp_path: Path) -> None:
    (tmp_path / "test_example.py").write_text(block.with_url(dev_url))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
        check=False,
    )
    assert proc.returncode == 0, f"{block.name} failed:\n{proc.stdout}\n{proc.stderr}"
    assert re.search(r"\b1 passed\b", proc.stdout), proc.stdout


def test_the_dev_url_is_what_jsemu_serve_listens_on() -> None:
    from jsemu.cli import build_parser, serve_options

    options = serve_options(build_parser().parse_args(["serve"]))
    assert DEV_URL.endswith(f":{options.port}")


def test_ci_runs_the_readme_test_command() -> None:
    """The README's second command (install, then pytest) is what ``.ci/run`` does, on each Python
    whose whole suite it runs."""
    first = blocks()[0]
    lines = [line.split("#", 1)[0].strip() for line in first.code.splitlines()]
    assert lines[0] == "pip install -e . && jsemu serve"
    install, run = (part.strip() for part in lines[1].split("&&"))
    ci = (ROOT / ".ci" / "run").read_text()
    extras = install.removeprefix("pip install -e ")
    assert extras == "'.[test,spark]'"
    # One venv per Python; the whole suite where the README's extras are installed (CI adds the dev
    # extra, ruff and mypy, on one of them), a smoke run on the others.
    venvs = re.findall(r"^make_venv (\S+) (\d+) ([\w,]+)$", ci, re.MULTILINE)
    whole = {minor for _, minor, extra in venvs if {"test", "spark"} <= set(extra.split(","))}
    assert whole == {"11", "13"}, venvs
    assert f"TEST_COMMAND=({run})" in ci
    assert all(f"run_suite {venv} " in ci or f"run_suite {venv}\n" in ci for venv, minor, _ in venvs if minor in whole)


def test_pipeline_tests_skip_cleanly_without_pyspark(tmp_path: Path) -> None:
    """As the README says: without the spark extra, tests/pipeline is skipped with a reason, not an error."""
    blocked = tmp_path / "pyspark"
    blocked.mkdir()
    (blocked / "__init__.py").write_text('raise ModuleNotFoundError("No module named pyspark", name="pyspark")\n')
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/pipeline"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 5, proc.stdout + proc.stderr  # 5: nothing collected, the module skipped itself
    assert re.search(r"\b[1-9][0-9]* skipped\b", proc.stdout), proc.stdout  # one per module
    assert not re.search(r"\b[0-9]+ errors?\b|^ERROR ", proc.stdout, re.MULTILINE), proc.stdout
    assert "pyspark is not installed: pip install -e '.[spark]'" in proc.stdout
