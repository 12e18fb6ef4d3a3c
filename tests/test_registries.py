"""Tables stay tables: server texts live in ``protocol/texts.py``, API errors are named by
attribute, ``$JS.API`` handlers live in the family modules of one table, and the control API
serves exactly the ``@remote`` methods of the control plane."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from jsemu.control import METHODS, ControlPlane
from jsemu.jetstream.api import registry as api_registry
from jsemu.jetstream.api.table import FAMILIES
from jsemu.jetstream.errors import ApiError, ApiErrors, api_error, wrap_error
from jsemu.protocol.texts import API_ERRORS, ApiErrorText

ROOT = Path(__file__).resolve().parent.parent / "jsemu"
TEXTS = ROOT / "protocol" / "texts.py"

#: Calls whose first argument is a text the server sends verbatim.
_TEXT_CALLS = {"encode_err", "close_with_error", "_fail", "api_error", "wrap_error", "_status"}
#: A status line of a header block (``NATS/1.0 404 ...``) written out in a bytes literal.
_STATUS_LINE = re.compile(rb"NATS/1\.0 \d{3}")


def inline_texts(root: Path = ROOT) -> list[str]:
    """Places outside ``texts.py`` that spell out a server text instead of naming it."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if path == TEXTS or "conformance" in path.parts:  # the conformance runner is a client
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                arg = node.args[0]
                spelt = isinstance(arg, ast.JoinedStr) or (isinstance(arg, ast.Constant) and arg.value is not None)
                if name in _TEXT_CALLS and spelt:
                    out.append(f"{where} {name}(<literal>)")
            elif isinstance(node, ast.Constant) and isinstance(node.value, bytes) and _STATUS_LINE.search(node.value):
                out.append(f"{where} {node.value!r}")
    return out


def test_server_texts_are_named_not_spelt_out() -> None:
    assert inline_texts() == []


def test_inline_text_check_sees_a_planted_text(tmp_path: Path) -> None:
    pkg = tmp_path / "jsemu"
    pkg.mkdir()
    (pkg / "conn.py").write_text(
        'def f(self):\n    self.close_with_error("Stale Connection")\n    self.close_with_error(None)\n'
    )
    (pkg / "dg.py").write_text('NOT_FOUND = b"NATS/1.0 404 Message Not Found\\r\\n\\r\\n"\n')
    (pkg / "api.py").write_text('def g(x):\n    raise api_error("JSStreamNotFoundErr")\n')
    assert inline_texts(pkg) == [
        "jsemu/api.py:2 api_error(<literal>)",
        "jsemu/conn.py:2 close_with_error(<literal>)",
        "jsemu/dg.py:1 b'NATS/1.0 404 Message Not Found\\r\\n\\r\\n'",
    ]


def test_api_errors_are_attributes_of_one_table() -> None:
    assert len(API_ERRORS) > 200
    assert API_ERRORS["JSStreamNotFoundErr"] is ApiErrors.JSStreamNotFoundErr == (404, 10059, "stream not found")
    err = api_error(ApiErrors.JSStreamNameExistErr)
    assert err.as_dict() == {
        "code": 400,
        "err_code": 10058,
        "description": "stream name already in use with a different configuration",
    }
    wrapped = wrap_error(ApiErrors.JSStreamCreateErrF, ValueError("boom"))
    assert (wrapped.code, wrapped.err_code, wrapped.description) == (500, 10049, "boom")
    assert wrap_error(ApiErrors.JSStreamCreateErrF, err) is err
    with pytest.raises(AttributeError):
        ApiErrors.JSStreamNotFoundError  # noqa: B018 - a misspelt constant fails at once  # type: ignore[attr-defined]
    assert all(isinstance(v, ApiErrorText) for v in API_ERRORS.values())
    assert isinstance(err, ApiError)


def _public_methods(cls: type) -> list[str]:
    """The public functions of ``cls`` and of its mixins (``ConsumerControls``), the class's own first."""
    out: list[str] = []
    for klass in cls.__mro__:
        out += [n for n, a in vars(klass).items() if not n.startswith("_") and inspect.isfunction(a) and n not in out]
    return out


def test_control_api_serves_every_public_control_method() -> None:
    """A public control-plane method left without ``@remote`` would be unreachable over
    ``$JSEMU.API``; the registry must list each exactly once, in definition order."""
    assert list(METHODS) == _public_methods(ControlPlane)
    assert METHODS[:3] == ("pause", "resume", "catch_up")  # an alias keeps its own name
    assert "reset" in METHODS and "js" not in METHODS


def test_api_handlers_live_in_the_families_of_the_table() -> None:
    """Every ``@api`` (and ``@system_api``) handler is in a module the handler table names (a handler registered
    from a feature module would answer only once something imported that module), and
    each family answers something."""
    families = {module.__name__ for module in FAMILIES}
    handlers = [*api_registry._HANDLERS, *api_registry._SYSTEM_HANDLERS]
    homes = {fn.__module__ for _, fn in handlers}
    assert homes == families
    decorated = sorted(
        str(p.relative_to(ROOT.parent))
        for p in ROOT.rglob("*.py")
        if "@api(" in p.read_text() or "@system_api(" in p.read_text()
    )
    assert decorated == sorted(f"{name.replace('.', '/')}.py" for name in families)
