"""Code outside ``jsemu/store/`` holds a stream store through its interface (``Store``,
``StoreReader`` and the values they return), never through the implementation: the one
exception is the replica set, whose replicated flavours subclass the concrete classes."""

from __future__ import annotations

import ast
from pathlib import Path

from jsemu.store import Store, StoredMsg, StoreState, interface, new_store

ROOT = Path(__file__).resolve().parents[2] / "jsemu"
CONCRETE = {"StreamStore", "MemoryStore", "FileStore", "FLAVOURS"}
IMPLEMENTATION = {"jsemu.store.stream_store", "jsemu.store.file_store"}
#: Builds stores of its own: ``ReplicatedStore`` subclasses each flavour.
BUILDERS = {"jetstream/cluster/replicas.py"}


def _imports(path: Path) -> list[tuple[str, set[str]]]:
    """(absolute module, names imported from it) for each import of ``path``."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.extend((alias.name, set()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            out.append((module, {alias.name for alias in node.names}))
    return out


def test_only_the_store_and_the_replica_set_see_the_concrete_classes() -> None:
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("store/") or rel in BUILDERS:
            continue
        for module, names in _imports(path):
            if module in IMPLEMENTATION or (module == "jsemu.store" and names & CONCRETE):
                offenders.append(f"{rel}: from {module} import {sorted(names)}")
    assert offenders == []


def test_the_interface_owns_the_values_its_queries_return() -> None:
    assert StoredMsg.__module__ == StoreState.__module__ == interface.__name__
    store: Store = new_store("memory")
    store.append(b"a", b"", b"x")
    assert isinstance(store.load(1), StoredMsg) and isinstance(store.state(), StoreState)
