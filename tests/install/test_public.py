"""berth.install's public face: what it exports resolves, importing it stays cheap, and the demo uses only it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import berth.install

SRC = Path(__file__).resolve().parents[2] / "src" / "berth"


def test_every_exported_name_resolves_to_what_the_submodule_defines() -> None:
    from berth.install import apply, plan, setup, workdir

    assert berth.install.run_setup is setup.run
    assert berth.install.run_apply is apply.run
    assert berth.install.render_plan is plan.render_text
    assert berth.install.build_plan is workdir.build_plan
    for name in berth.install.__all__:
        assert getattr(berth.install, name) is not None, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        berth.install.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_loads_no_action_and_no_kubernetes_client() -> None:
    code = (
        "import sys, berth.install; "
        "print(sorted(m for m in sys.modules if m.startswith(('berth.install.', 'kubernetes'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_demo_imports_berth_install_only_through_its_public_face() -> None:
    submodules = {p.stem for p in (SRC / "install").glob("*.py")}
    reached = []
    for path in sorted((SRC / "demo").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            reached += [
                f"{path.name}: {n}"
                for n in names
                if n.startswith("berth.install.") and n.split(".")[2] in submodules
            ]
    assert reached == []
