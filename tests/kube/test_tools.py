"""The tool version cache (``kube/tools.py``): a binary is asked its version once per build, and any change to
the binary (rebuilt, replaced, touched) asks again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from berth.kube import tools


def _fake_helm(path: Path, version: str, runs: Path | None = None) -> Path:
    """A stand-in helm that prints ``version`` and counts its runs in ``runs`` (``<path>.runs``)."""
    runs = runs or Path(f"{path}.runs")
    path.write_text(f'#!/bin/sh\necho run >> "{runs}"\necho "{version}+g0000000"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def _runs(path: Path) -> int:
    runs = Path(f"{path}.runs")
    return len(runs.read_text(encoding="utf-8").splitlines()) if runs.exists() else 0


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BERTH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_version_is_asked_once_then_read_from_the_cache(tmp_path: Path, cache: Path) -> None:
    helm = _fake_helm(tmp_path / "helm", "v4.1.4")
    assert tools._version_of("helm", str(helm)) == "v4.1.4"
    assert tools._version_of("helm", str(helm)) == "v4.1.4"
    assert _runs(helm) == 1
    entries = json.loads((cache / tools.VERSION_CACHE_FILE).read_text(encoding="utf-8"))
    assert [e["version"] for e in entries.values()] == ["v4.1.4"]


def test_a_changed_binary_is_asked_again(tmp_path: Path, cache: Path) -> None:
    helm = _fake_helm(tmp_path / "helm", "v4.1.4")
    assert tools._version_of("helm", str(helm)) == "v4.1.4"
    # replaced by another build (a new file at the same path): asked again, and the cache follows
    replacement = _fake_helm(tmp_path / "helm.new", "v4.2.0", Path(f"{helm}.runs"))
    os.replace(replacement, helm)
    assert tools._version_of("helm", str(helm)) == "v4.2.0"
    # rewritten in place (same inode, same size): the modification time tells
    before = helm.stat()
    _fake_helm(helm, "v4.2.1")
    os.utime(helm, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert (helm.stat().st_ino, helm.stat().st_size) == (before.st_ino, before.st_size)
    assert tools._version_of("helm", str(helm)) == "v4.2.1"
    assert tools._version_of("helm", str(helm)) == "v4.2.1"
    # one entry per binary path: rebuilds replace it rather than piling up
    entries = json.loads((cache / tools.VERSION_CACHE_FILE).read_text(encoding="utf-8"))
    assert list(entries) == [f"helm {os.path.realpath(helm)}"]


def test_the_cached_version_equals_asking_the_binary(cache: Path) -> None:
    helm = tools.find("helm").path
    assert tools._version_of("helm", helm) == tools._ask_version("helm", helm) != ""
    kubectl = tools.find("kubectl").path
    assert tools._version_of("kubectl", kubectl) == tools._ask_version("kubectl", kubectl) != ""


def test_an_unusable_cache_is_only_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("BERTH_CACHE_DIR", str(blocker / "cache"))
    helm = _fake_helm(tmp_path / "helm", "v4.1.4")
    assert tools._version_of("helm", str(helm)) == "v4.1.4"
    assert tools._version_of("helm", str(helm)) == "v4.1.4"
    assert _runs(helm) == 2
    # a corrupt cache file is ignored and replaced
    monkeypatch.setenv("BERTH_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / tools.VERSION_CACHE_FILE).write_text("{not json", encoding="utf-8")
    assert tools._version_of("helm", str(helm)) == "v4.1.4"
    assert tools._version_of("helm", str(helm)) == "v4.1.4"
    assert _runs(helm) == 3


def test_a_binary_that_gives_no_version_is_not_cached(tmp_path: Path, cache: Path) -> None:
    broken = tmp_path / "helm"
    broken.write_text(f'#!/bin/sh\necho run >> "{broken}.runs"\nexit 1\n', encoding="utf-8")
    broken.chmod(0o755)
    assert tools._version_of("helm", str(broken)) == ""
    assert tools._version_of("helm", str(broken)) == ""
    assert _runs(broken) == 2
