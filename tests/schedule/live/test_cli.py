"""``berth schedule run`` as a process (binds, stops cleanly on SIGTERM), where it finds its kubeconfig, and the
embedded cluster's default-scheduler entry point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from berth.cluster import default_scheduler
from berth.kube.errors import InputError
from berth.schedule.live import run as live_run

from .conftest import Env, eventually, pod

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: cli-test
"""


def test_run_binds_and_stops_on_sigterm(env: Env, tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(CONFIG, encoding="utf-8")
    code = "import sys; from berth.schedule.live_cli import run_command; run_command.main(sys.argv[1:])"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--config", str(cfg), "--kubeconfig", str(env.cluster.kubeconfig)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        env.create(pod("via-cli", scheduler="cli-test"))
        eventually(lambda: env.bindings().get("default/via-cli") == 1, 60, "the CLI binds the pod")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "bound default/via-cli to node-" in err
    assert "received SIGTERM; stopping" in err
    assert err.rstrip().endswith("berth scheduler stopped")


@pytest.mark.parametrize(
    ("explicit", "env_var", "embedded", "home", "expected"),
    [
        ("given.yaml", "env.yaml", True, True, "given.yaml"),
        (None, "env.yaml", True, True, "env.yaml"),
        (None, None, True, True, "HOME"),  # kubectl's order: ~/.kube/config before the embedded cluster's
        (None, None, True, False, "EMBEDDED"),
        (None, None, False, False, None),
    ],
    ids=["flag", "KUBECONFIG", "home-before-embedded", "embedded-cluster", "in-cluster"],
)
def test_kubeconfig_resolution(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    explicit: str | None,
    env_var: str | None,
    embedded: bool,
    home: bool,
    expected: str | None,
) -> None:
    work = tmp_path / "work"
    fake_home = tmp_path / "home"
    work.mkdir()
    fake_home.mkdir()
    if embedded:
        (work / ".berth" / "cluster").mkdir(parents=True)
        (work / ".berth" / "cluster" / "kubeconfig").write_text("{}", encoding="utf-8")
    if home:
        (fake_home / ".kube").mkdir()
        (fake_home / ".kube" / "config").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("HOME", str(fake_home))
    if env_var:
        monkeypatch.setenv("KUBECONFIG", env_var + os.pathsep + "other.yaml")
    else:
        monkeypatch.delenv("KUBECONFIG", raising=False)
    want = {
        "EMBEDDED": str(work / ".berth" / "cluster" / "kubeconfig"),
        "HOME": str(fake_home / ".kube" / "config"),
    }.get(expected or "", expected)
    found = live_run.resolve_kubeconfig(explicit, cwd=work).paths
    assert found == (() if want is None else (want, "other.yaml") if env_var and not explicit else (want,))


def test_no_kubeconfig_and_not_in_a_cluster_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(InputError, match="no kubeconfig found"):
        live_run.configuration(None, None)
    with pytest.raises(InputError, match="--context needs a kubeconfig"):
        live_run.configuration(None, "prod")


def test_embedded_default_scheduler_binds_default_pods(env: Env) -> None:
    handle = default_scheduler.start(env.cluster.kubeconfig)
    try:
        env.create(pod("plain"))  # schedulerName: default-scheduler
        env.create(pod("elsewhere", scheduler="not-berth"))
        eventually(lambda: env.bindings().get("default/plain") == 1, 60, "default-scheduler binds")
    finally:
        handle.stop()
    assert "default/elsewhere" not in env.bindings()
