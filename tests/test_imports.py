"""Every module imports, and a name imported only for the type checker is never used at run time.

mypy cannot see the second: a name imported under ``if TYPE_CHECKING:`` is defined for it everywhere, while at run
time it does not exist (a merge once left ``kubeops`` building its error aliases from such a name, and every live
install failed with NameError).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
MODULES = sorted(SRC.joinpath("berth").rglob("*.py"))


def _type_only_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
    return names


def _run_time_uses(node: ast.AST, names: set[str], out: list[int]) -> None:
    """Line numbers where ``names`` are read outside annotations and outside ``if TYPE_CHECKING:`` blocks."""
    if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
        for child in node.orelse:
            _run_time_uses(child, names, out)
        return
    for field, value in ast.iter_fields(node):
        if field in ("annotation", "returns"):
            continue  # with `from __future__ import annotations`, never evaluated
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, ast.AST):
                if isinstance(child, ast.Name) and child.id in names and isinstance(child.ctx, ast.Load):
                    out.append(child.lineno)
                _run_time_uses(child, names, out)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(SRC)) for p in MODULES])
def test_type_only_imports_are_not_used_at_run_time(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _type_only_names(tree)
    if not names:
        return
    # A function may import the same name itself (the lazy import of a heavy module): such a name is fine there.
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local = {
                (a.asname or a.name).split(".")[0]
                for s in ast.walk(node)
                if isinstance(s, (ast.Import, ast.ImportFrom))
                for a in s.names
            }
            node.body = [] if local & names else node.body
    uses: list[int] = []
    _run_time_uses(tree, names, uses)
    assert not uses, f"{path.name}: names imported only under TYPE_CHECKING read at run time on lines {uses}"


def test_every_module_imports() -> None:
    """Each module on its own, in a fresh interpreter: a module-level NameError or import circle shows here."""
    names = [
        ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        for p in MODULES
        if p.name != "__main__.py"
    ]
    script = (
        "import importlib, sys\n"
        "bad = []\n"
        f"for name in {names!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{name}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(bad))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
