"""docs/architecture.md stays true to the tree: every module or folder its picture names exists, and every
repository path it quotes exists."""

from __future__ import annotations

import re
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
