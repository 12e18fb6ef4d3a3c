"""The import structure of ``jsemu/``: no runtime import cycle, and each layer imports only
what lies below it (protocol < store < server < jetstream < control < app < testing).

The graph is read from the source with ``ast``: every ``import``/``from`` statement (in
functions too) except those under ``if TYPE_CHECKING:``, relative imports resolved, and an
edge to each package whose ``__init__`` the import runs (the importer's own packages are
already running, so they add none).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "jsemu"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _runtime_imports(tree: ast.AST, type_only_too: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements outside ``if TYPE_CHECKING:`` blocks (their ``else`` still counts);
    with ``type_only_too``, those inside as well."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_only_too:
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: Path = ROOT, type_only_too: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of ``root``'s package that importing it runs first (with
    ``type_only_too``, also those it names only for the type checker)."""
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    top = root.name
    graph: dict[str, set[str]] = {name: set() for name in files}

    def packages_of(name: str) -> list[str]:
        parts = name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts))]

    for name, path in files.items():
        is_package = path.name == "__init__.py"
        base = name if is_package else name.rpartition(".")[0]
        own = set(packages_of(name)) | ({name} if is_package else set())
        targets: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(), str(path)), type_only_too):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                module = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets.add(module)
            targets.update(f"{module}.{alias.name}" for alias in node.names)  # submodules imported by name
        for target in targets:
            if target.split(".")[0] != top:
                continue
            for dep in [*packages_of(target), target]:
                if dep in files and dep not in own and dep != name:
                    graph[name].add(dep)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_runtime_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert "jsemu.server.server" in graph and "jsemu.app" in graph  # the walk saw the tree
    cycle = find_cycle(graph)
    assert cycle is None, "runtime import cycle: " + " -> ".join(cycle or [])


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_cycle_finder_sees_a_cycle_through_a_package_init(tmp_path: Path) -> None:
    """The shape of the knot this test was written against: a package's ``__init__``
    imports a module that imports, through another package, back into the first one."""
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "from .core import Core\n",
            "pkg/low/core.py": "from ..high.service import Service\n",
            "pkg/low/util.py": "X = 1\n",
            "pkg/high/service.py": (
                "from typing import TYPE_CHECKING\nfrom ..low.util import X\n"
                "if TYPE_CHECKING:\n    from ..low.core import Core\n"
            ),
        },
    )
    cycle = find_cycle(import_graph(root))
    assert cycle == ["pkg.high.service", "pkg.low", "pkg.low.core", "pkg.high.service"]


def test_cycle_finder_ignores_type_checking_imports(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from . import b\n",
            "pkg/b.py": "import typing\nif typing.TYPE_CHECKING:\n    from .a import A\nelse:\n    pass\n",
        },
    )
    graph = import_graph(root)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == set()
    assert find_cycle(graph) is None
    (root / "b.py").write_text("def f():\n    from .a import A\n")  # a lazy import still runs
    assert find_cycle(import_graph(root)) == ["pkg.a", "pkg.b", "pkg.a"]


#: Layer -> the parts of jsemu it may import at run time (besides itself). A part is a
#: subpackage or a top-level module; the leaves (version, subjects, timefmt) sit below all.
_LEAVES = {"jsemu.version", "jsemu.subjects", "jsemu.timefmt", "jsemu.subject_transform", "jsemu.ids"}
_ALLOWED: dict[str, set[str]] = {
    "jsemu.protocol": set(),
    "jsemu.store": {"jsemu.protocol"},
    "jsemu.server": {"jsemu.protocol", "jsemu.store"},
    "jsemu.jetstream": {"jsemu.protocol", "jsemu.store", "jsemu.server"},
    "jsemu.control": {"jsemu.protocol", "jsemu.store", "jsemu.server", "jsemu.jetstream"},
    "jsemu.app": {
        "jsemu.protocol",
        "jsemu.store",
        "jsemu.server",
        "jsemu.jetstream",
        "jsemu.control",
        "jsemu.console",
        "jsemu.threaded",
    },
    "jsemu.console": {"jsemu.protocol", "jsemu.store", "jsemu.server", "jsemu.jetstream", "jsemu.control"},
    "jsemu.threaded": set(),
    "jsemu.pipeline": {"jsemu.protocol", "jsemu.store"},
    "jsemu.conformance": {"jsemu.protocol", "jsemu.app"},
    "jsemu.sessions": {"jsemu.protocol", "jsemu.app", "jsemu.conformance"},
}
#: Modules of an allowed layer that a lower layer still must not import at run time.
_FORBIDDEN_MODULES = {"jsemu.jetstream": {"jsemu.server.server"}}


def _part(module: str) -> str:
    return ".".join(module.split(".")[:2])


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for module, deps in sorted(graph.items()):
        layer = _part(module)
        allowed = _ALLOWED.get(layer)
        if allowed is None:
            continue
        for dep in sorted(deps):
            part = _part(dep)
            if part == layer or dep in _LEAVES:
                continue
            if part not in allowed or dep in _FORBIDDEN_MODULES.get(layer, ()):
                out.append(f"{module} -> {dep}")
    return out


def test_each_layer_imports_only_what_lies_below() -> None:
    assert layer_violations(import_graph()) == []


def test_leaves_import_nothing_of_jsemu() -> None:
    graph = import_graph()
    assert {leaf: graph[leaf] for leaf in _LEAVES} == {leaf: set() for leaf in _LEAVES}


@pytest.mark.parametrize(
    ("module", "dep"),
    [
        ("jsemu.protocol.parser", "jsemu.store.stream_store"),
        ("jsemu.store.stream_store", "jsemu.server.sublist"),
        ("jsemu.server.monitor", "jsemu.jetstream.streams.config"),
        ("jsemu.server.server", "jsemu.control.plane"),
        ("jsemu.server.server", "jsemu.testing.plugin"),
        ("jsemu.jetstream.directget.responder", "jsemu.server.server"),
        ("jsemu.control.plane", "jsemu.app"),
    ],
)
def test_layer_check_sees_an_upward_import(module: str, dep: str) -> None:
    graph = import_graph()
    graph[module] = {*graph[module], dep}
    assert f"{module} -> {dep}" in layer_violations(graph)


# --- Inside jetstream: its parts in order -------------------------------------------------
#: The parts of ``jsemu/jetstream/`` (its sub-packages and top-level modules), lowest first. A part
#: imports, at run time and for the type checker alike, only parts listed before it: a stream reaches
#: its consumers, links and peers through the small interfaces of the lower parts, never by name.
_JETSTREAM_ORDER = [
    "jsemu.jetstream.errors",
    "jsemu.jetstream.requests",
    "jsemu.jetstream.clock_timers",
    "jsemu.jetstream.internal",
    "jsemu.jetstream.context",
    "jsemu.jetstream.events",
    "jsemu.jetstream.limits",
    "jsemu.jetstream.directget",
    "jsemu.jetstream.links",
    "jsemu.jetstream.cluster",
    "jsemu.jetstream.streams",
    "jsemu.jetstream.consumers",
    "jsemu.jetstream.persistence",
    "jsemu.jetstream.service",
    "jsemu.jetstream.api",
    "jsemu.jetstream.monitoring",
    "jsemu.jetstream",
]


def part(module: str) -> str:
    """The unit the order rules speak of: ``jsemu.jetstream.<part>`` inside jetstream, else the
    top-level package or module (``jsemu.server``, ``jsemu.app``)."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[:2] == ["jsemu", "jetstream"] else parts[:2])


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, deps in graph.items():
        out.setdefault(part(module), set()).update(part(d) for d in deps if part(d) != part(module))
    return out


def order_violations(graph: dict[str, set[str]], order: list[str] = _JETSTREAM_ORDER) -> list[str]:
    rank = {name: i for i, name in enumerate(order)}
    out = []
    for module, deps in sorted(graph.items()):
        mine = rank.get(part(module))
        for dep in sorted(deps):
            theirs = rank.get(part(dep))
            if mine is not None and theirs is not None and theirs > mine:
                out.append(f"{module} -> {dep}")
    return out


def test_every_jetstream_part_is_in_the_order() -> None:
    parts = {part(m) for m in import_graph() if m.startswith("jsemu.jetstream")}
    assert parts == set(_JETSTREAM_ORDER)


def test_jetstream_parts_import_only_lower_parts_even_for_types() -> None:
    assert order_violations(import_graph(type_only_too=True)) == []


def test_no_cycle_between_parts_even_for_types() -> None:
    """Type-only imports included: a cycle between two parts means neither can be read (or
    replaced) without the other, whatever runs first."""
    cycle = find_cycle(part_graph(import_graph(type_only_too=True)))
    assert cycle is None, "cycle between parts: " + " -> ".join(cycle or [])


def test_order_check_sees_a_type_only_import_upwards(tmp_path: Path) -> None:
    root = (
        _write(
            tmp_path,
            {
                "jsemu/__init__.py": "",
                "jsemu/jetstream/__init__.py": "",
                "jsemu/jetstream/streams/__init__.py": "",
                "jsemu/jetstream/streams/stream.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from ..consumers.consumer import Consumer\n",
                "jsemu/jetstream/consumers/__init__.py": "",
                "jsemu/jetstream/consumers/consumer.py": "from ..streams.stream import X\n",
            },
        ).parent
        / "jsemu"
    )
    runtime, typed = import_graph(root), import_graph(root, type_only_too=True)
    assert order_violations(runtime) == []
    assert order_violations(typed) == [
        "jsemu.jetstream.streams.stream -> jsemu.jetstream.consumers",  # its package's __init__ runs first
        "jsemu.jetstream.streams.stream -> jsemu.jetstream.consumers.consumer",
    ]
    assert find_cycle(part_graph(typed)) == [
        "jsemu.jetstream.consumers",
        "jsemu.jetstream.streams",
        "jsemu.jetstream.consumers",
    ]
