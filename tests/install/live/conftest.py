"""Fixtures for the live executors: a real embedded cluster per test, with a tiny binder standing in for a scheduler.

The embedded cluster binds no pods by itself (``berth.cluster`` leaves that to a scheduler); the example charts'
Jobs and Deployments do not name a node, so each test cluster runs :class:`Binder`, which binds every pending pod
to ``node-1`` the moment it appears, as a scheduler with one node would.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest

from berth import cli
from berth.cluster import Cluster, ClusterOptions
from berth.kube.errors import BerthError

from ..conftest import EDGE_CHART, REPO

LIVE_CHARTS = Path(__file__).resolve().parent / "charts"


class Binder:
    """Binds pending ``default-scheduler`` pods to node-1 (in-process, through the cluster's binding admission)."""

    def __init__(self, api: Any) -> None:
        from berth.cluster import admission

        self._api = api
        self._bind = admission.api_bind
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="test-binder", daemon=True)
        self._thread.start()

    def _try(self, pod: dict[str, Any]) -> None:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if spec.get("nodeName") or meta.get("deletionTimestamp"):
            return
        if spec.get("schedulerName", "default-scheduler") != "default-scheduler":
            return  # left Pending, for an external scheduler that never comes
        with contextlib.suppress(Exception):
            self._bind(
                self._api, meta["namespace"], meta["name"], {"target": {"name": "node-1"}}, "test-binder"
            )

    def _loop(self) -> None:
        items, rv = self._api.list("pods")
        for pod in items:
            self._try(pod)
        watch = self._api.watch("pods", resource_version=rv)
        try:
            while not self._stop.is_set():
                ev = watch.next_event(timeout=0.2)
                if ev is not None and ev[0] in ("ADDED", "MODIFIED"):
                    self._try(ev[1])
        except Exception:  # the store closed under us at shutdown
            return
        finally:
            watch.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run_live(capsys: pytest.CaptureFixture[str], command: click.Command, *args: object) -> Result:
    """Run one live command as the root CLI would (``error:`` line and exit code on a BerthError)."""
    capsys.readouterr()
    code = 0
    try:
        command.main(args=[str(a) for a in args], prog_name="berth", standalone_mode=False)
    except BerthError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = exc.exit_code
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def start_cluster(data: Path, port: int = 0, job_seconds: float | None = None) -> Cluster:
    """One node and a binder; ``job_seconds``: how long a Job's containers run (default: the cluster's)."""
    overrides = {} if job_seconds is None else {"job_duration": job_seconds}
    options = ClusterOptions(
        data_dir=data, port=port, nodes=1, services=[Binder], controller_overrides=overrides
    )
    return Cluster(options).start()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = start_cluster(tmp_path / "cluster")
    try:
        yield c
    finally:
        c.stop()


@dataclass(frozen=True)
class Audit:
    """The cluster's audit log, filtered to what an installer (the admin user) wrote."""

    path: Path

    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def writes(self, user: str = "kubernetes-admin", records: bool = False) -> list[str]:
        """``verb resource name`` for every successful create/patch/delete by ``user``, in order; the writes of
        Helm release records (``secrets sh.helm.release.v1.*``) only with ``records``."""
        out = []
        for e in self.entries():
            if (
                e["user"] != user
                or e["verb"] not in ("create", "patch", "delete", "update")
                or e["code"] >= 400
            ):
                continue
            if e["resource"] in ("selfsubjectaccessreviews.authorization.k8s.io",):
                continue
            if (
                not records
                and e["resource"] == "secrets"
                and str(e["name"]).startswith("sh.helm.release.v1.")
            ):
                continue
            out.append(f"{e['verb']} {e['resource']} {e['name']}")
        return out


@pytest.fixture
def audit(cluster: Cluster) -> Audit:
    assert cluster.data_dir is not None
    return Audit(cluster.data_dir / "audit.jsonl")


def setup_workdir(tmp: Path, chart: Path | str, namespace: str, *extra: str) -> Path:
    work = tmp / "work"
    code = cli.main(
        ["install", "setup", "--pull", str(chart), "--namespace", namespace, "--work-dir", str(work),
         "--non-interactive", *extra]
    )  # fmt: skip
    assert code == 0
    return work


@pytest.fixture(scope="session")
def edge_live_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The edge-hooks example chart set up once per worker (copy before use)."""
    return setup_workdir(tmp_path_factory.mktemp("edge"), EDGE_CHART, "edge")


@pytest.fixture
def edge_work(tmp_path: Path, edge_live_workdir: Path) -> Path:
    dest = tmp_path / "edge-work"
    shutil.copytree(edge_live_workdir, dest)
    return dest


__all__ = ["LIVE_CHARTS", "REPO", "Audit", "Binder", "Result", "run_live", "setup_workdir", "start_cluster"]
