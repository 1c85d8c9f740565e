"""One way to find the cluster: install and schedule pick the same one in the same environment, and say which.

Issue 22: in one shell ``berth schedule snapshot`` read the embedded cluster while ``berth install apply
--dry-run`` went to ``~/.kube/config``. Both now go through :func:`berth.kube.kubeconfig.locate`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.install import kubeops
from berth.kube import kubeconfig
from berth.schedule.live import run as live_run

ROOT = Path(__file__).resolve().parents[1]
BERTH = [sys.executable, "-m", "berth.cli"]


def write_config(path: Path, server: str, name: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    kubeconfig.write(path, server, "token", name)
    return path


@pytest.mark.parametrize(
    ("kubeconfig_env", "home", "embedded", "expected"),
    [
        (["a", "b"], True, True, "https://a:6443"),  # the first file's current-context wins
        (["missing", "b"], True, True, "https://b:6443"),  # files that do not exist are skipped
        (None, True, True, "https://home:6443"),  # the case that differed: kubectl's ~/.kube/config first
        (None, False, True, "https://embedded:6443"),  # only where kubectl would find nothing
    ],
    ids=["KUBECONFIG-list", "KUBECONFIG-skips-missing", "home-over-embedded", "embedded-last"],
)
def test_install_and_schedule_pick_the_same_cluster(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kubeconfig_env: list[str] | None,
    home: bool,
    embedded: bool,
    expected: str,
) -> None:
    write_config(tmp_path / "a", "https://a:6443", "a")
    write_config(tmp_path / "b", "https://b:6443", "b")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    if home:
        write_config(tmp_path / "home" / ".kube" / "config", "https://home:6443", "home")
    if embedded:
        write_config(tmp_path / kubeconfig.EMBEDDED, "https://embedded:6443", "berth")
    if kubeconfig_env is None:
        monkeypatch.delenv("KUBECONFIG", raising=False)
    else:
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join(str(tmp_path / n) for n in kubeconfig_env))
    install_server = kubeops.connect(None, None).server  # what install apply/upgrade/... connect with
    schedule_host = live_run.configuration(
        live_run.resolve_kubeconfig(None), None
    ).host  # schedule run/snapshot
    assert install_server == schedule_host == expected


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Path]:
    """An embedded cluster in the background; yields its kubeconfig."""
    data = tmp_path / "cluster"
    up = subprocess.run(
        [*BERTH, "cluster", "up", "--data", str(data), "--nodes", "2", "--detach"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert up.returncode == 0, up.stderr
    try:
        yield data / "kubeconfig"
    finally:
        subprocess.run(
            [*BERTH, "cluster", "down", "--data", str(data)], capture_output=True, timeout=120, check=False
        )


def test_writing_commands_print_the_cluster_and_context_before_the_first_write(
    cluster: Path, tmp_path: Path
) -> None:
    # a decoy ~/.kube/config that must not be used while KUBECONFIG is set
    write_config(tmp_path / "home" / ".kube" / "config", "https://decoy.invalid:6443", "decoy")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "KUBECONFIG": str(cluster)}
    server = kubeconfig.resolve(cluster).server
    want = f"Kube context: berth ({server}), from KUBECONFIG={cluster}"

    work = tmp_path / "work"
    setup = subprocess.run(
        [*BERTH, "install", "setup", "--pull", str(ROOT / "examples" / "charts" / "edge-hooks"), "--namespace",
         "edge", "--work-dir", str(work), "--non-interactive"],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    apply = subprocess.run(
        [*BERTH, "install", "apply", "--work-dir", str(work), "--dry-run"],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert apply.returncode == 0, apply.stderr
    assert apply.stdout.splitlines()[0] == want  # first, before any step ran

    sched = subprocess.Popen(
        [*BERTH, "schedule", "run", "--config", str(ROOT / "examples" / "two-profiles" / "config.yaml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert sched.stderr is not None
        lines = []
        for line in sched.stderr:
            lines.append(line.rstrip())
            if "berth scheduler starting" in line:
                break
        sched.send_signal(signal.SIGTERM)
        sched.communicate(timeout=60)
    finally:
        if sched.poll() is None:
            sched.kill()
    assert any(line.endswith(want) for line in lines), lines
