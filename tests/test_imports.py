"""Every module of the package imports on this Python.

The whole suite runs on the oldest and the newest Python supported; this is the check the others
get (CI's smoke run): a module that uses syntax or a library feature the interpreter lacks fails
here by name. Modules behind an optional extra (``spark``: pyspark, pyarrow) are skipped with the
missing package named, only when that package is not installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import pytest

import jsemu

#: Optional dependency -> the extra that installs it.
_OPTIONAL = {"pyspark": "spark", "pyarrow": "spark"}


def _modules() -> list[str]:
    """Every module but ``__main__`` ones (importing those runs the program)."""
    return sorted(m.name for m in pkgutil.walk_packages(jsemu.__path__, "jsemu.") if not m.name.endswith("__main__"))


def test_the_walk_sees_the_package() -> None:
    assert {"jsemu.app", "jsemu.cli", "jsemu.jetstream.service", "jsemu.testing.plugin"} <= set(_modules())


@pytest.mark.parametrize("module", _modules())
def test_module_imports(module: str) -> None:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        extra = _OPTIONAL.get((exc.name or "").partition(".")[0])
        if extra is None or importlib.util.find_spec(exc.name or "") is not None:
            raise
        pytest.skip(f"{module} needs {exc.name} (extra [{extra}])")
