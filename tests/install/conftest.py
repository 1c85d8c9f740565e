"""Shared fixtures for the install tests: the example charts, a CLI runner and a set-up work dir per worker."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from berth import cli

REPO = Path(__file__).resolve().parents[2]
EDGE_CHART = REPO / "examples" / "charts" / "edge-hooks"
EDGE_SPEC = REPO / "examples" / "charts" / "edge-hooks-package" / "spec.yaml"
EDGE_HA_VALUES = REPO / "examples" / "charts" / "edge-hooks-package" / "bases" / "ha.yaml"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


Run = Callable[..., Result]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``berth ARGS...`` in-process through the real entry point (exit codes and ``error:`` lines included)."""

    def _run(*args: str | Path) -> Result:
        capsys.readouterr()
        code = cli.main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return _run


@pytest.fixture(scope="session")
def edge_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The edge-hooks chart packaged with components, inputs and two bases (built once per worker)."""
    out = tmp_path_factory.mktemp("pkg") / "edge-package"
    code = cli.main(
        [
            "install", "package", str(EDGE_CHART), "--spec", str(EDGE_SPEC),
            "--base", "default", "--base", f"ha={EDGE_HA_VALUES}", "-o", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    return out


@pytest.fixture(scope="session")
def edge_workdir(tmp_path_factory: pytest.TempPathFactory, edge_package: Path) -> Path:
    """A work dir set up from the package (read-only for tests: copy it before changing anything)."""
    work = tmp_path_factory.mktemp("work") / "w"
    code = cli.main(
        [
            "install", "setup", "--pull", str(edge_package), "--namespace", "edge", "--work-dir", str(work),
            "--non-interactive", "--input", "licenseKey=k-1,2",
        ]
    )  # fmt: skip
    assert code == 0
    return work


@pytest.fixture
def workdir_copy(tmp_path: Path, edge_workdir: Path) -> Path:
    dest = tmp_path / "w"
    shutil.copytree(edge_workdir, dest)
    return dest


def tree_digest(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes: to prove a failed run changed nothing."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
