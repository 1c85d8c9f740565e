"""``berth tools path``: scripts substitute its output, so stdout must be the path and nothing else."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from berth.cli import berth, main
from berth.kube import tools


@pytest.mark.parametrize("tool", tools.TOOLS)
def test_path_prints_only_the_binary_on_stdout(tool: str) -> None:
    result = CliRunner().invoke(berth, ["tools", "path", tool])
    assert result.exit_code == 0, result.output
    path = result.stdout.strip()
    assert "\n" not in path and " " not in path
    assert os.access(path, os.X_OK)
    # what the reader wants to know goes to stderr: which version, and from where
    found = tools.find(tool)
    assert result.stderr.strip() == f"{tool} {found.version} ({found.source})"
    # ... so `$(berth tools path kubectl) version` works as written
    args = ["version", "--client"] if tool == "kubectl" else ["version", "--short"]
    out = subprocess.run([path, *args], capture_output=True, text=True, check=True).stdout
    assert found.version in out


def test_an_explicit_binary_that_is_not_executable_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "kubectl"
    monkeypatch.setenv("BERTH_KUBECTL", str(missing))
    tools.find.cache_clear()
    try:
        code = main(["tools", "path", "kubectl"])
    finally:
        tools.find.cache_clear()
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.strip() == f"error: $BERTH_KUBECTL={missing} is not an executable file"
