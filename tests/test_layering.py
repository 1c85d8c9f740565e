"""The house rules a tool can check: ``kube`` is the floor; install, schedule and cluster never import each other's
internals. (Where parts meet -- the cluster running berth's scheduler, the demo -- they use a part's public package
``berth.<part>`` itself, never its submodules.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "berth"
PARTS = ("install", "schedule", "cluster")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("part", PARTS)
def test_parts_do_not_reach_into_each_other(part: str) -> None:
    offenders = []
    for path in sorted((SRC / part).rglob("*.py")):
        for name in _imports(path):
            for other in PARTS:
                if other == part:
                    continue
                prefix = f"berth.{other}."
                if name.startswith(prefix) and name.count(".") >= 2:
                    # `from berth.schedule import Scheduler` appears as "berth.schedule.Scheduler": allowed only when
                    # the last component is not a submodule file.
                    sub = name[len(prefix) :].split(".")[0]
                    if (SRC / other / f"{sub}.py").exists() or (SRC / other / sub).is_dir():
                        offenders.append(f"{path.relative_to(SRC)} imports {name}")
    assert offenders == []


def test_kube_layer_imports_no_part() -> None:
    offenders = [
        f"{path.relative_to(SRC)} imports {name}"
        for path in sorted((SRC / "kube").rglob("*.py"))
        for name in _imports(path)
        if any(name.startswith(f"berth.{p}") for p in PARTS)
    ]
    assert offenders == []
