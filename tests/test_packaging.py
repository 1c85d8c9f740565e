"""The wheel builds with the declared backend, says what it is, and runs `berth demo`'s data from site-packages.

A fresh venv gets setuptools (>= 77, as pyproject.toml's build-system asks) and builds the wheel from this
checkout; the wheel is installed into that venv without the checkout on the path. Its dependencies come from the
test environment (a path entry after the venv's own site-packages) so the test stays fast; their lowest versions
are tested by `make test-minimum`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest

from berth import data

ROOT = Path(__file__).resolve().parents[1]
# what the wheel is not built from: environments, caches and earlier builds
COPY_SKIPS = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "node_modules")


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=600, cwd=cwd, check=False,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")},
    )  # fmt: skip
    assert proc.returncode == 0, f"{args}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(venv, wheel): a fresh venv with the wheel built there and installed there."""
    root = tmp_path_factory.mktemp("packaging")
    venv = root / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "setuptools>=77")
    # setuptools builds in the source tree's build/: a private copy keeps two builds (pytest -n, other checkouts'
    # runs) from deleting each other's files ("could not delete 'build/lib/berth/cli.py'")
    source = root / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*COPY_SKIPS))
    run(
        python,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        root / "dist",
        source,
    )
    (wheel,) = (root / "dist").glob("berth-*.whl")
    run(python, "-m", "pip", "install", "--quiet", "--no-deps", wheel)
    # the dependencies, after the venv's own site-packages (so berth comes from the wheel, not this checkout)
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    (site / "zz-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    yield venv, wheel


def test_the_wheel_declares_an_spdx_license_classifiers_and_ranges(venv: tuple[Path, Path]) -> None:
    _, wheel = venv
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = Parser().parsestr(zf.read("berth-0.1.0.dist-info/METADATA").decode())
    assert meta["License-Expression"] == "Apache-2.0"
    assert "berth-0.1.0.dist-info/licenses/LICENSE" in names
    assert "Programming Language :: Python :: 3.11" in meta.get_all("Classifier")
    requires = [r for r in meta.get_all("Requires-Dist") if "extra ==" not in r]
    assert requires and not [r for r in requires if "==" in r]  # ranges, never exact pins
    for relative in data.SHIPPED:
        assert any(n.startswith(f"berth/_data/{relative}/") for n in names), relative


def test_the_installed_wheel_finds_the_demo_data_in_site_packages(venv: tuple[Path, Path]) -> None:
    path, _ = venv
    python, berth = path / "bin" / "python", path / "bin" / "berth"
    found = run(python, "-c", "from berth import data; import json; print(json.dumps("
                "[str(data.path(p)) for p in data.SHIPPED]))", cwd=path)  # fmt: skip
    for located in json.loads(found.stdout):
        assert located.startswith(str(path)) and "site-packages/berth/_data/" in located
        assert Path(located).is_dir()
    assert "Usage: berth demo" in run(berth, "demo", "--help", cwd=path).stdout
    example = json.loads(found.stdout)[1]
    placed = run(
        berth, "schedule", "simulate", "--config", f"{example}/config.yaml", "--cluster", f"{example}/nodes.yaml",
        "--workload", f"{example}/workload.yaml", "-o", "json", cwd=path,
    )  # fmt: skip
    assert json.loads(placed.stdout)["stats"]["scheduled"] == 12


def test_the_dockerfile_pins_every_base_image_by_digest() -> None:
    bases = [
        line.split()[1] for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("FROM ")
    ]
    assert len(bases) == 2
    assert all(re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", base) for base in bases), bases
    assert len(set(bases)) == 1  # the build and runtime stages share one base
