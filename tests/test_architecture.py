"""docs/architecture.md stays true to the tree: every module or folder its picture names exists, every repository
path it quotes exists, and its claims about the import-linter contracts hold (every package is under an acyclic
contract that counts type-only imports; the demo and the schedule layers need no ignores)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
_NAME = re.compile(r"^[\w.]+(/|\.py)$")
_QUOTED = re.compile(r"`((?:src|tests|docs|benchmarks|scripts|charts|examples)/[\w./-]*[\w/])`")


def _tree() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("```\nsrc/berth/\n") + len("```\n")
    return text[start : text.index("```", start)].splitlines()


def named_paths() -> list[Path]:
    """The paths the folder picture names. An entry line starts (indent below 16) with one or more names
    (``x.py``, ``dir/``, comma-separated) and then, after two or more spaces, prose; a name is relative to the
    folder entry above it with less indent. Deeper-indented lines are prose."""
    lines = _tree()
    paths = [ROOT / "src" / "berth"]
    folders: list[tuple[int, Path]] = [(-1, ROOT / "src" / "berth")]
    for line in lines[1:]:
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent >= 16:
            continue
        head = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        names = [n.strip() for n in head.split(",") if n.strip()]
        if not names or not all(_NAME.match(n) for n in names):
            continue
        while folders[-1][0] >= indent:
            folders.pop()
        parent = folders[-1][1]
        for n in names:
            paths.append(parent / n.rstrip("/"))
        if len(names) == 1 and names[0].endswith("/"):
            folders.append((indent, parent / names[0].rstrip("/")))
    return paths


def test_every_module_and_folder_the_picture_names_exists() -> None:
    paths = named_paths()
    assert len(paths) > 60  # the parser still reads the picture
    missing = [str(p.relative_to(ROOT)) for p in paths if not p.exists()]
    assert missing == []


def test_every_quoted_repository_path_exists() -> None:
    quoted = _QUOTED.findall(DOC.read_text(encoding="utf-8"))
    assert quoted
    missing = [q for q in quoted if not (ROOT / q).exists()]
    assert missing == []


def test_every_top_level_module_and_package_of_berth_is_in_the_picture() -> None:
    named = {p.relative_to(ROOT / "src" / "berth").parts[0] for p in named_paths()[1:]}
    present = {
        p.name
        for p in (ROOT / "src" / "berth").iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert present - named == set()


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _packages() -> list[str]:
    """Every package of berth with at least two children (where a circle between siblings could form)."""
    src = ROOT / "src"
    out = []
    for init in sorted(src.joinpath("berth").rglob("__init__.py")):
        folder = init.parent
        children = [p for p in folder.iterdir() if (p.suffix == ".py" and p.name != "__init__.py")]
        children += [p for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
        if len(children) >= 2:
            out.append(".".join(folder.relative_to(src).parts))
    return out


def test_every_package_is_under_an_acyclic_contract() -> None:
    # docs/architecture.md: "No import circles ... nor between the siblings of any package inside kube, install,
    # schedule (...), cluster, bench and demo": each such package is an ancestor of an acyclic_siblings contract
    # (its depth reaching it), and the contracts count type-only imports (none excludes them).
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert not config.get("exclude_type_checking_imports", False)
    covered: list[tuple[str, int]] = [
        (str(a), int(str(c.get("depth", 10))))
        for c in _contracts()
        if c["type"] == "acyclic_siblings"
        for a in c["ancestors"]  # type: ignore[attr-defined]
    ]

    def is_covered(package: str) -> bool:
        for ancestor, depth in covered:
            if package == ancestor:
                return True
            if package.startswith(ancestor + ".") and package.count(".") - ancestor.count(".") <= depth:
                return True
        return False

    packages = _packages()
    assert {"berth", "berth.schedule", "berth.schedule.framework", "berth.demo"} <= set(packages)
    assert [p for p in packages if not is_covered(p)] == []


def test_the_demo_and_the_schedule_layers_need_no_ignores() -> None:
    # docs/architecture.md: the demo uses only the public faces (no ignores); plugins > vector > framework with no
    # ignores (the framework names the configuration, registry and extenders only through its own Protocols).
    ignored = [str(i) for c in _contracts() for i in c.get("ignore_imports", [])]  # type: ignore[attr-defined]
    assert [i for i in ignored if i.startswith("berth.demo")] == []
    layers = [c for c in _contracts() if c["type"] == "layers" and c["containers"] == ["berth.schedule"]]
    assert len(layers) == 1 and layers[0]["layers"] == ["plugins", "vector", "framework"]
    assert "ignore_imports" not in layers[0]
