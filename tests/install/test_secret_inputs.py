"""Secret inputs: read without echo, never printed, stored owner-only -- or as a reference (``@env:VAR``,
``@file:PATH``) the user gives, read again at every render; and Secret data never reaches the output of upgrade's
diff or verify's differences."""

from __future__ import annotations

import os
import pty
import select
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest

from berth.install import upgrade, workdir
from berth.kube import yamlio

from .conftest import EDGE_CHART, Run

TOKEN = "s3cr3t-licence-9f2"

SECRET_TEMPLATE = """\
apiVersion: v1
kind: Secret
metadata:
  name: licence
stringData:
  key: {{ .Values.licence.key | quote }}
"""

SPEC = """\
inputs:
  - name: licenceKey
    type: string
    path: licence.key
    required: true
    secret: true
    prompt: Licence key
"""


@pytest.fixture
def secret_package(run: Run, tmp_path: Path) -> Path:
    chart = tmp_path / "lic"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: lic\nversion: 1.0.0\n")
    (chart / "templates" / "secret.yaml").write_text(SECRET_TEMPLATE)
    (chart / "values.yaml").write_text('licence: {key: ""}\n')
    (tmp_path / "spec.yaml").write_text(SPEC)
    pkg = tmp_path / "lic-package"
    assert run("install", "package", chart, "--spec", tmp_path / "spec.yaml", "--out", pkg).code == 0
    return pkg


def rendered_key(work: Path) -> str:
    body = yamlio.load_file(work / "out" / "secrets" / "secret-licence.yaml")[0].body
    return str(body["stringData"]["key"])


def spec_files(work: Path) -> dict[str, str]:
    spec = work / "out" / "spec"
    return {p.name: p.read_text() for p in spec.iterdir() if p.is_file()}


def test_a_typed_secret_is_not_echoed_and_is_stored_owner_only(secret_package: Path, tmp_path: Path) -> None:
    """Through a real pseudo-terminal: what the terminal would echo back is everything the user sees."""
    work = tmp_path / "w"
    pid, fd = pty.fork()
    if pid == 0:  # the child: berth on the terminal
        os.execv(sys.executable, [sys.executable, "-m", "berth.cli", "install", "setup", "--pull",
                                  str(secret_package), "--work-dir", str(work)])  # fmt: skip
    seen = b""
    deadline = time.monotonic() + 120
    typed = False
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child ended and closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if not typed and b"Licence key" in seen:
            os.write(fd, TOKEN.encode() + b"\n")
            typed = True
    _, status = os.waitpid(pid, 0)
    text = seen.decode(errors="replace")
    assert os.WEXITSTATUS(status) == 0, text
    assert "Licence key (not shown as you type" in text and TOKEN not in text
    secret_file = work / "out" / "spec" / "secret-inputs.yaml"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600 and TOKEN in secret_file.read_text()
    assert TOKEN not in (work / "out" / "spec" / "inputs.yaml").read_text()
    assert "spec/secret-inputs.yaml" in (work / "out" / ".gitignore").read_text().splitlines()
    assert rendered_key(work) == TOKEN


def test_a_reference_is_stored_instead_of_the_value_and_read_at_every_render(
    run: Run, secret_package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "w"
    monkeypatch.setenv("LICENCE_KEY", TOKEN)
    r = run("install", "setup", "--pull", secret_package, "--work-dir", work, "--non-interactive",
            "--input", "licenceKey=@env:LICENCE_KEY")  # fmt: skip
    assert r.code == 0, r.err
    assert TOKEN not in r.out + r.err and rendered_key(work) == TOKEN
    assert "secret-inputs.yaml" not in spec_files(work)
    assert "licenceKey: '@env:LICENCE_KEY'" in spec_files(work)["inputs.yaml"]
    assert workdir.load_workdir(work).answers["licenceKey"] == TOKEN  # what verify and export render with
    monkeypatch.setenv("LICENCE_KEY", "rotated")
    assert (
        run("install", "setup", "--pull", secret_package, "--work-dir", work, "--non-interactive").code == 0
    )
    assert rendered_key(work) == "rotated"  # the reference is read again
    monkeypatch.delenv("LICENCE_KEY")
    r = run("install", "setup", "--pull", secret_package, "--work-dir", work, "--non-interactive")
    assert r.code == 2 and "input licenceKey (@env:LICENCE_KEY)" in r.err
    assert "the environment variable LICENCE_KEY is not set" in r.err and "rotated" not in r.err


def test_a_file_reference(run: Run, secret_package: Path, tmp_path: Path) -> None:
    key = tmp_path / "key.txt"
    key.write_text(TOKEN + "\n")
    work = tmp_path / "w"
    r = run("install", "setup", "--pull", secret_package, "--work-dir", work, "--non-interactive",
            "--input", f"licenceKey=@file:{key}")  # fmt: skip
    assert r.code == 0, r.err
    assert rendered_key(work) == TOKEN and TOKEN not in "".join(spec_files(work).values())
    r = run("install", "setup", "--pull", secret_package, "--work-dir", tmp_path / "w2", "--non-interactive",
            "--input", f"licenceKey=@file:{tmp_path / 'missing'}")  # fmt: skip
    assert r.code == 2 and "cannot read" in r.err and str(tmp_path / "missing") in r.err


def test_a_bad_secret_value_is_not_shown_in_the_error(run: Run, tmp_path: Path) -> None:
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    (tmp_path / "spec.yaml").write_text("inputs:\n  - {name: pin, type: int, secret: true}\n")
    pkg = tmp_path / "pkg"
    assert run("install", "package", chart, "--spec", tmp_path / "spec.yaml", "--out", pkg).code == 0
    r = run("install", "setup", "--pull", pkg, "--work-dir", tmp_path / "w", "--non-interactive",
            "--input", f"pin={TOKEN}")  # fmt: skip
    assert (
        r.code == 2 and "input pin must be an integer, got a value (not shown" in r.err and TOKEN not in r.err
    )


def test_a_secret_input_with_a_default_is_refused(run: Run, tmp_path: Path) -> None:
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    (tmp_path / "spec.yaml").write_text("inputs:\n  - {name: pw, secret: true, default: hunter2}\n")
    r = run("install", "package", chart, "--spec", tmp_path / "spec.yaml", "--out", tmp_path / "pkg")
    assert r.code == 2 and "a secret input has no default" in r.err


def test_upgrade_diff_and_verify_never_print_secret_data(run: Run, tmp_path: Path) -> None:
    work = tmp_path / "w"
    first = tmp_path / "a"
    shutil.copytree(EDGE_CHART, first)
    second = tmp_path / "b"
    shutil.copytree(EDGE_CHART, second)
    res = second / "templates" / "resources.yaml"
    res.write_text(res.read_text().replace("token: not-a-real-token", f"token: {TOKEN}"))
    for chart in (first, second):
        r = run(
            "install",
            "setup",
            "--pull",
            chart,
            "--namespace",
            "edge",
            "--work-dir",
            work,
            "--non-interactive",
        )
        assert r.code == 0, r.err
    wd = workdir.load_workdir(work)
    prev = wd.previous()
    assert prev is not None
    lines = upgrade.diff_lines(prev, wd)
    assert "~ Secret edge/app-token" in lines
    assert "    data keys ~stringData.token (values not shown)" in lines
    assert not [line for line in lines if TOKEN in line or "not-a-real-token" in line]
    path = work / "out" / "secrets" / "secret-edge-app-token.yaml"
    path.write_text(path.read_text().replace(TOKEN, "tampered-value"))
    r = run("install", "verify", "--work-dir", work)
    assert r.code == 1 and "Secret edge/app-token differs: .stringData.token: the values differ" in r.out
    assert TOKEN not in r.out + r.err and "tampered-value" not in r.out + r.err
