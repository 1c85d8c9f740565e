"""``berth install package -o DIR``: the package lands whole or not at all, over an earlier package of the same
folder; never over a folder that is not a package."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from berth.install import package

from .conftest import EDGE_CHART, Run


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def test_packaging_again_replaces_the_package_and_leaves_no_temp_folders(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    assert run("install", "package", EDGE_CHART, "--out", out).code == 0
    (out / "stray.txt").write_text("from an older package", encoding="utf-8")
    res = run("install", "package", EDGE_CHART, "--base", "default", "--base", "second", "--out", out)
    assert res.code == 0, res.err
    assert not (out / "stray.txt").exists()
    assert [b.name for b in package.load(out).bases] == ["default", "second"]
    assert leftovers(out) == []


@pytest.mark.parametrize("cross_device", [False, True], ids=["rename", "copy"])
def test_a_move_that_fails_leaves_the_previous_package_whole(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cross_device: bool
) -> None:
    out = tmp_path / "pkg"
    assert run("install", "package", EDGE_CHART, "--out", out).code == 0
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    real_rename = Path.rename
    real_copytree = shutil.copytree

    def rename(self: Path, target: Any) -> Path:
        if cross_device and Path(target).name.startswith(".pkg.new-"):
            raise OSError(18, "Invalid cross-device link")  # the package was built on another file system
        if Path(target) == out and self.name.startswith(".pkg.new-"):  # the last step: the old one set aside
            raise OSError(28, "No space left on device")
        return real_rename(self, target)

    def copytree(src: Path, dst: Path, *args: Any, **kwargs: Any) -> Any:
        done = real_copytree(src, dst, *args, **kwargs)
        if Path(dst).parent == out.parent:  # the copy towards -o DIR: on disk when the error comes
            raise OSError(28, "No space left on device")
        return done

    monkeypatch.setattr(Path, "rename", rename)
    monkeypatch.setattr(package.shutil, "copytree", copytree)
    with pytest.raises(OSError, match="No space left"):
        package.build(str(EDGE_CHART), [("default", None), ("second", None)], out)
    monkeypatch.undo()
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert [b.name for b in package.load(out).bases] == ["default"]
    assert leftovers(out) == []


def test_a_folder_that_is_not_a_package_is_never_replaced(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    res = run("install", "package", EDGE_CHART, "--out", out)
    assert res.code == 2
    assert "output folder exists and is not a berth package; choose another -o" in res.err
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert leftovers(out) == []
