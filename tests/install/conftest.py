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
            "--base", "default", "--base", f"ha={EDGE_HA_VALUES}", "--out", str(out),
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


def edge_next_chart(tmp: Path) -> Path:
    """edge-hooks 0.4.0: the Service ``app`` dropped, a ConfigMap ``added`` new, ``app-settings`` changed."""
    chart = tmp / "edge-hooks-next"
    shutil.copytree(EDGE_CHART, chart)
    (chart / "Chart.yaml").write_text(
        (chart / "Chart.yaml").read_text().replace("version: 0.3.0", "version: 0.4.0"), encoding="utf-8"
    )
    res = chart / "templates" / "resources.yaml"
    text = res.read_text()
    service = text[
        text.index("apiVersion: v1\nkind: Service\n") : text.index("apiVersion: edge.example.com/v1")
    ]
    added = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\ndata: {new: "yes"}\n---\n'
    res.write_text(text.replace(service, added).replace("greeting: {{ .Values.greeting | quote }}",
                                                        "greeting: {{ .Values.greeting | quote }}\n  next: \"yes\""),
                   encoding="utf-8")  # fmt: skip
    return chart


def setup_twice(work: Path, first: Path, second: Path) -> Path:
    """A work dir set up from ``first`` and then from ``second``: revision 1 holds ``first``'s render."""
    for chart in (first, second):
        code = cli.main(
            ["install", "setup", "--pull", str(chart), "--namespace", "edge", "--work-dir", str(work),
             "--non-interactive"]
        )  # fmt: skip
        assert code == 0
    return work


@pytest.fixture(scope="session")
def edge_history_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """edge-hooks 0.3.0 set up, then 0.4.0 over it (read-only for tests)."""
    tmp = tmp_path_factory.mktemp("history")
    return setup_twice(tmp / "w", EDGE_CHART, edge_next_chart(tmp))


@pytest.fixture
def workdir_copy(tmp_path: Path, edge_workdir: Path) -> Path:
    dest = tmp_path / "w"
    shutil.copytree(edge_workdir, dest)
    return dest


def tree_digest(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes: to prove a failed run changed nothing. The work dir's lock file is
    left out: every command that holds it writes who it is there (``berth.install.lock``)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".berth.lock"
    }
