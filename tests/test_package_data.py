"""Every data file inside ``jsemu/`` ships in the wheel.

Compared with pyproject.toml's ``package-data`` list (not with the code that loads the files): a fixture
the conformance runner reads at run time but the wheel leaves out fails only after install, far from here.
"""

from __future__ import annotations

import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_data_file_is_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["package-data"]["jsemu"])
    package = ROOT / "jsemu"
    data = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }
    # setuptools reads each entry as a glob (``console/static/*``).
    unlisted = {name for name in data if not any(fnmatchcase(name, pattern) for pattern in listed)}
    assert unlisted == set(), "add these to [tool.setuptools.package-data] in pyproject.toml"
