"""One browser script from the CommonJS modules of ``node_modules`` (the official nats.js v3
packages ship CommonJS only): what a bundler such as browserify does, small enough for tests.

Why here and not a bundler from npm: the browser test needs nothing the Node tests do not
already install. The walk starts at the entry packages, finds every ``require("...")`` with a
string literal, resolves it as Node does for these packages (relative files with ``.js`` /
``.json`` / ``index.js``; packages through ``exports`` - a string or a ``require``/``default``
condition - or ``main``), and wraps each file in a function ``(module, exports, require)``.
A ``require`` that does not resolve (Node built-ins such as ``crypto``, only reached on Node)
is left out and throws if the code ever calls it. The script sets ``globalThis[<name>]`` to an
object of the entries' exports, keyed by package name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_REQUIRE = re.compile(r"""\brequire\(\s*["']([^"']+)["']\s*\)""")
_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)


def _file(path: Path) -> Path | None:
    for candidate in (path, path.with_name(path.name + ".js"), path.with_name(path.name + ".json"), path / "index.js"):
        if candidate.is_file():
            return candidate
    return None


def _export_target(entry: object) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict):
        for condition in ("require", "default", "node"):
            target = _export_target(entry.get(condition))
            if target:
                return target
    return None


def _package(modules: Path, spec: str) -> Path | None:
    parts = spec.split("/")
    size = 2 if spec.startswith("@") else 1
    root, sub = modules.joinpath(*parts[:size]), "/".join(parts[size:])
    manifest = root / "package.json"
    if not manifest.is_file():
        return None
    meta = json.loads(manifest.read_text())
    exports = meta.get("exports")
    key = f"./{sub}" if sub else "."
    if isinstance(exports, dict) and key in exports:
        target = _export_target(exports[key])
        return _file(root / target) if target else None
    if isinstance(exports, str) and not sub:
        return _file(root / exports)
    return _file(root / sub) if sub else _file(root / (meta.get("main") or "index.js"))


def _resolve(modules: Path, origin: Path, spec: str) -> Path | None:
    if spec.startswith(("./", "../")) or spec in (".", ".."):
        return _file((origin.parent / spec).resolve())
    if spec.startswith("node:"):
        return None
    return _package(modules, spec)


def bundle(modules: Path, entries: list[str], name: str) -> str:
    """The browser script of the packages ``entries`` (names under ``modules``)."""
    modules = modules.resolve()
    ids: dict[Path, str] = {}
    sources: dict[str, str] = {}
    links: dict[str, dict[str, str]] = {}

    def visit(path: Path) -> str:
        path = path.resolve()
        if path in ids:
            return ids[path]
        ident = ids[path] = path.relative_to(modules).as_posix()
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            sources[ident] = f"module.exports = {text};"
            links[ident] = {}
            return ident
        sources[ident] = _SOURCE_MAP.sub("", text)
        links[ident] = {}
        for spec in sorted(set(_REQUIRE.findall(text))):
            target = _resolve(modules, path, spec)
            if target is not None:
                links[ident][spec] = visit(target)
        return ident

    roots = {}
    for entry in entries:
        found = _package(modules, entry)
        if found is None:
            raise FileNotFoundError(f"{entry} not found under {modules}")
        roots[entry] = visit(found)
    defs = ",\n".join(
        f"{json.dumps(ident)}: function (module, exports, require) {{\n{source}\n}}"
        for ident, source in sources.items()
    )
    return f"""(function () {{
"use strict";
const defs = {{
{defs}
}};
const links = {json.dumps(links)};
const cache = {{}};
function load(id) {{
  if (cache[id]) return cache[id].exports;
  const module = (cache[id] = {{ exports: {{}} }});
  const require = (spec) => {{
    const target = links[id][spec];
    if (target === undefined) throw new Error(`not in the bundle: ${{spec}} (required by ${{id}})`);
    return load(target);
  }};
  defs[id].call(module.exports, module, module.exports, require);
  return module.exports;
}}
const roots = {json.dumps(roots)};
globalThis[{json.dumps(name)}] = Object.fromEntries(Object.entries(roots).map(([k, id]) => [k, load(id)]));
}})();
"""
