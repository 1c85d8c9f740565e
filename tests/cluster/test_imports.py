"""The cluster part's rooms import each other downwards only: no import circle among its modules (type-checking
and function-level imports included), so any module can be read, and tested, with only what is below it."""

from __future__ import annotations

import ast
from pathlib import Path

import berth.cluster

ROOT = Path(berth.cluster.__file__).resolve().parent
PACKAGE = "berth.cluster"


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = (PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of the package ``name`` imports, wherever the import statement stands."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in known and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles_in_the_cluster_part() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, set(modules)) for name, path in modules.items()}
    assert "berth.cluster.api.write" in graph["berth.cluster.api.patching"]  # the scan sees the imports
    assert _cycles(graph) == []


def test_the_scan_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_modules_below_the_api_do_not_import_it() -> None:
    modules = _modules()
    known = set(modules)
    for name in ("auth", "crds", "reviews", "eviction", "host", "objmeta", "admission.chain"):
        full = f"{PACKAGE}.{name}"
        imported = _imports(full, modules[full], known)
        assert not any(m == f"{PACKAGE}.api" or m.startswith(f"{PACKAGE}.api.") for m in imported), (
            name,
            imported,
        )
