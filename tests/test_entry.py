"""The console script (``berth.entry:main``): the CLI's imports are frozen out of the collector's way, and the
collector is left as the caller had it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import berth

SCRIPT = """
import gc, sys
{before}
from berth import entry
sys.argv = ["berth", "--version"]
code = entry.main()
print(code, gc.isenabled(), gc.get_freeze_count() > 10_000)
"""


@pytest.mark.parametrize(("before", "enabled"), [("", "True"), ("gc.disable()", "False")])
def test_entry_freezes_the_imports_and_restores_the_collector(before: str, enabled: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(before=before)], capture_output=True, text=True, check=True
    ).stdout
    version, result = out.splitlines()
    assert version == f"berth, version {berth.__version__}"
    assert result == f"0 {enabled} True"


def test_the_console_script_is_the_entry() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["berth"] == "berth.entry:main"
