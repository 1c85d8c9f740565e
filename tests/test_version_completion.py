"""``berth version`` (what is in use, as ``helm version``) and ``berth completion`` (click's own machinery)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from berth import __version__
from berth.kube import tools

BERTH = [sys.executable, "-m", "berth.cli"]
BIN = Path(sys.executable).parent  # where the `berth` console script of this environment lives


def berth(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BERTH, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_version_names_berth_python_and_the_helm_and_kubectl_in_use() -> None:
    proc = berth("version")
    assert proc.returncode == 0, proc.stderr
    helm, kubectl = tools.find("helm"), tools.find("kubectl")
    assert proc.stdout.splitlines() == [
        f"berth: {__version__}",
        f"python: {platform.python_version()} ({sys.executable})",
        f"helm: {helm.version} ({helm.source}: {helm.path})",
        f"kubectl: {kubectl.version} ({kubectl.source}: {kubectl.path})",
    ]
    data = json.loads(berth("version", "-o", "json").stdout)
    assert data["berth"] == __version__ and data["python"]["version"] == platform.python_version()
    assert data["kubectl"] == {"version": kubectl.version, "path": kubectl.path, "source": kubectl.source}
    assert "kubectl:" in berth("version", "-o", "yaml").stdout


def test_version_says_when_a_tool_is_missing_and_still_succeeds(tmp_path: Path) -> None:
    proc = berth("version", "-o", "json", env={"BERTH_HELM": str(tmp_path / "no-helm")})
    assert proc.returncode == 0, proc.stderr
    helm = json.loads(proc.stdout)["helm"]
    assert helm["version"] is None and "no-helm" in helm["error"]


def complete(words: list[str]) -> list[str]:
    """What bash offers after ``words`` (the last one being completed), through the generated script."""
    script = (
        "source <(berth completion bash)\n"
        f"COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; _berth_completion berth\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.skipif(
    shutil.which("bash") is None or not (BIN / "berth").exists(), reason="needs bash and berth"
)
@pytest.mark.parametrize(
    ("words", "offered"),
    [
        (["berth", "sch"], ["schedule"]),
        (["berth", "schedule", "sim"], ["simulate"]),
        (["berth", "schedule", "simulate", "--con"], ["--config"]),
        (["berth", "completion", "''"], ["bash", "zsh", "fish"]),
    ],
    ids=["command", "subcommand", "option", "argument-choice"],
)
def test_bash_completion_offers_what_fits(words: list[str], offered: list[str]) -> None:
    assert complete(words) == offered


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_call_berth_back(shell: str) -> None:
    proc = berth("completion", shell)
    assert proc.returncode == 0
    assert f"_BERTH_COMPLETE={shell}_complete" in proc.stdout.replace('"', "")


def test_an_unknown_shell_is_refused() -> None:
    proc = berth("completion", "powershell")
    assert proc.returncode == 2 and "powershell" in proc.stderr
