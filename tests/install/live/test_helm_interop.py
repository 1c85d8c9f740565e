"""berth beside the real Helm 4 on one cluster: release records both ways, field managers, ownership.

Each test drives the real ``helm`` binary and berth's commands against the embedded cluster, and reads the
release the way a Helm user does (``helm list/status/history/get values``) after every step.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest

from berth.cluster import Cluster
from berth.install import cli as install_cli
from berth.install import ownership
from berth.install.live_cli import (
    apply_command,
    rollback_command,
    status_command,
    uninstall_command,
    upgrade_command,
)
from berth.kube import tools

from .conftest import Audit, Result, run_live

TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting | quote }}
  extra: {{ .Values.extra | default "none" | quote }}
  version: "__VERSION__"
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-token
stringData:
  token: s3cret
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Values.clusterRoleName }}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
__EXTRA__---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation
    {{- if .Values.failHook }}
    berth.dev/simulate-failure: "true"
    {{- end }}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: registry.example.com/migrate:1}]
"""
DROPPED = """\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-legacy
data: {old: "true"}
"""


def make_chart(root: Path, version: str) -> Path:
    """``shop`` 0.1.0 (with a ConfigMap 0.2.0 drops) or 0.2.0."""
    chart = root / f"shop-{version}"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: shop\nversion: {version}\nappVersion: '1.0'\n")
    (chart / "values.yaml").write_text("greeting: hello\nfailHook: false\nclusterRoleName: shop-reader\n")
    text = TEMPLATE.replace("__VERSION__", version).replace(
        "__EXTRA__", DROPPED if version == "0.1.0" else ""
    )
    (chart / "templates" / "all.yaml").write_text(text)
    return chart


@dataclass(frozen=True)
class Helm:
    """The pinned helm against one cluster (its own HOME: no user config leaks in)."""

    env: dict[str, str]

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [tools.find("helm").path, *args], capture_output=True, text=True, env=self.env, timeout=180
        )
        if ok:
            assert proc.returncode == 0, f"helm {' '.join(args)}: {proc.stderr}"
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def releases(self, ns: str) -> list[Any]:
        """Every release of ``ns`` whatever its status (Helm 4 has no ``list --all``)."""
        states = ("--deployed", "--failed", "--pending", "--superseded", "--uninstalled", "--uninstalling")
        return list(self.json("list", "-n", ns, *states))

    def history(self, name: str, ns: str) -> list[tuple[int, str, str]]:
        return [(h["revision"], h["status"], h["description"]) for h in self.json("history", name, "-n", ns)]


@pytest.fixture
def helm(cluster: Cluster, tmp_path: Path) -> Helm:
    home = tmp_path / "helm-home"
    home.mkdir()
    return Helm({**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(home)})


@pytest.fixture
def charts(tmp_path: Path) -> tuple[Path, Path]:
    return make_chart(tmp_path / "charts", "0.1.0"), make_chart(tmp_path / "charts", "0.2.0")


class Kube:
    def __init__(self, cluster: Cluster) -> None:
        from kubernetes import client as k8s

        from berth.kube import client as kube_client

        self.api = kube_client.api_client(cluster.kubeconfig)
        self.core: Any = k8s.CoreV1Api(self.api)
        self.rbac: Any = k8s.RbacAuthorizationV1Api(self.api)

    def configmap(self, ns: str, name: str) -> dict[str, str] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            return dict(self.core.read_namespaced_config_map(name, ns).data or {})
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def managers(self, ns: str, name: str) -> set[str]:
        cm = self.core.read_namespaced_config_map(name, ns)
        return {m.manager for m in cm.metadata.managed_fields or []}

    def cluster_role_owner(self, name: str) -> str:
        annotations = self.rbac.read_cluster_role(name).metadata.annotations or {}
        return str(annotations.get(ownership.RELEASE_NAME_ANNOTATION))


@pytest.fixture
def kube(cluster: Cluster) -> Any:
    k = Kube(cluster)
    yield k
    k.api.close()


def berth(capsys: pytest.CaptureFixture[str], command: click.Command, *args: object) -> Result:
    return run_live(capsys, command, *args)


def setup(
    capsys: pytest.CaptureFixture[str], chart: Path, work: Path, release_name: str, ns: str, *flags: str
) -> None:
    res = run_live(capsys, install_cli.setup_cmd, "--pull", chart, "--release", release_name, "-n", ns,
                   "--work-dir", work, "--non-interactive", *flags)  # fmt: skip
    assert res.code == 0, res.err


def test_a_release_berth_installs_is_helms_to_list_show_upgrade_roll_back_and_uninstall(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    helm: Helm,
    kube: Kube,
    charts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    v1, v2 = charts
    work = tmp_path / "w"
    live = ["--kubeconfig", cluster.kubeconfig, "--no-wait"]
    setup(capsys, v1, work, "shop", "shop", "--set", "greeting=hi")
    res = berth(capsys, apply_command, "--work-dir", work, *live)
    assert res.code == 0, res.err
    assert "Recorded release shop revision 1: deployed (Install complete" in res.out
    listed = helm.json("list", "-n", "shop")
    assert [(r["name"], r["revision"], r["status"], r["chart"], r["app_version"]) for r in listed] == [
        ("shop", "1", "deployed", "shop-0.1.0", "1.0")
    ]
    assert "STATUS: deployed" in helm.run("status", "shop", "-n", "shop").stdout
    assert helm.json("get", "values", "shop", "-n", "shop") == {"greeting": "hi"}
    manifest = helm.run("get", "manifest", "shop", "-n", "shop").stdout
    assert "# Source: shop/templates/all.yaml" in manifest and "name: shop-legacy" in manifest
    hooks = helm.run("get", "hooks", "shop", "-n", "shop").stdout
    assert "name: shop-migrate" in hooks
    assert helm.history("shop", "shop") == [(1, "deployed", "Install complete")]

    # berth upgrades (values flags) -- Helm reads the new revision, the old one superseded.
    res = berth(capsys, upgrade_command, "--work-dir", work, *live, "--pull", v2, "--set", "extra=berth")
    assert res.code == 0, res.err
    assert helm.history("shop", "shop") == [
        (1, "superseded", "Install complete"),
        (2, "deployed", "Upgrade complete"),
    ]
    assert helm.json("get", "values", "shop", "-n", "shop") == {"extra": "berth"}
    assert kube.configmap("shop", "shop-legacy") is None  # pruned

    # helm upgrades berth's release, keeping berth's values: no field-manager conflict either way.
    helm.run("upgrade", "shop", str(v2), "-n", "shop", "--reuse-values", "--set", "greeting=from-helm")
    assert kube.configmap("shop", "shop-settings") == {
        "greeting": "from-helm",
        "extra": "berth",
        "version": "0.2.0",
    }
    assert kube.managers("shop", "shop-settings") == {"helm"}
    assert helm.history("shop", "shop")[-1] == (3, "deployed", "Upgrade complete")
    # ... and berth will not quietly re-apply its older render over helm's revision.
    res = berth(capsys, apply_command, "--work-dir", work, *live)
    assert res.code == 2
    assert (
        "release shop in namespace shop changed since this work dir applied it: its deployed revision 3"
        in (res.err)
    )

    # helm rolls back to the revision berth installed, then uninstalls.
    helm.run("rollback", "shop", "1", "-n", "shop")
    assert [h[1] for h in helm.history("shop", "shop")] == ["superseded"] * 3 + ["deployed"]
    assert kube.configmap("shop", "shop-legacy") == {"old": "true"}
    # status says whose change the differences are.
    res = berth(capsys, status_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 1
    assert (
        "note: the release's deployed revision 4 (deployed, chart shop-0.1.0, Rollback to 1) was made outside"
        in (res.out)
    )
    # berth will not uninstall from a render that no longer names what the release runs (Helm's record does).
    res = berth(capsys, uninstall_command, "--work-dir", work, *live[:-1])
    assert res.code == 2
    assert "uninstalling from this work dir would leave behind what it does not know" in res.err
    assert "helm uninstall shop -n shop" in res.err
    assert (
        kube.configmap("shop", "shop-legacy") is not None
        and helm.history("shop", "shop")[-1][1] == "deployed"
    )
    helm.run("uninstall", "shop", "-n", "shop")
    assert kube.configmap("shop", "shop-settings") is None
    assert helm.releases("shop") == []


def test_a_release_helm_installs_is_adopted_by_berth(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    audit: Audit,
    helm: Helm,
    kube: Kube,
    charts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    v1, v2 = charts
    live = ["--kubeconfig", cluster.kubeconfig, "--no-wait"]
    helm.run("install", "shop", str(v1), "-n", "shop", "--create-namespace", "--set", "greeting=hi")

    # apply (even a dry run) refuses to install over it: its install hooks would run a second time.
    mine = tmp_path / "mine"
    setup(capsys, v1, mine, "shop", "shop")
    start = len(audit.writes(records=True))
    for dry in ([], ["--dry-run"]):
        res = berth(capsys, apply_command, "--work-dir", mine, *live, *dry)
        assert res.code == 2
        assert "cannot reuse a name that is still in use: release shop in namespace shop" in res.err
        assert "revision 1 (deployed, chart shop-0.1.0, Install complete)" in res.err
    assert audit.writes(records=True)[start:] == []

    # The upgrade, planned hook by hook offline.
    planned = tmp_path / "planned"
    setup(capsys, v2, planned, "shop", "shop")
    res = run_live(capsys, install_cli.plan_cmd, "--work-dir", planned, "--action", "upgrade")
    assert res.code == 0, res.err
    assert "2. pre-upgrade: 1 pre-upgrade hook(s)" in res.out
    assert "1  Job shop-migrate  [weight=0; policies=before-hook-creation; wait=job-complete" in res.out

    # berth adopts it on a new work dir: its values kept, its history continued.
    work = tmp_path / "adopted"
    res = berth(capsys, upgrade_command, "--work-dir", work, *live, "--release", "shop", "-n", "shop",
                "--pull", v2, "--reuse-values", "--set", "extra=berth")  # fmt: skip
    assert res.code == 0, res.err
    assert "Adopted release shop in namespace shop: its revision 1 (deployed" in res.out
    assert "- ConfigMap shop/shop-legacy" in res.out
    assert helm.history("shop", "shop") == [
        (1, "superseded", "Install complete"),
        (2, "deployed", "Upgrade complete"),
    ]
    assert helm.json("get", "values", "shop", "-n", "shop") == {"greeting": "hi", "extra": "berth"}
    assert kube.configmap("shop", "shop-settings") == {"greeting": "hi", "extra": "berth", "version": "0.2.0"}
    assert kube.configmap("shop", "shop-legacy") is None  # what Helm's revision had and 0.2.0 lacks is pruned

    # berth rolls back to the revision helm installed.
    res = berth(capsys, rollback_command, "--work-dir", work, *live)
    assert res.code == 0, res.err
    assert helm.history("shop", "shop")[-1] == (3, "deployed", "Rollback to 1")
    assert helm.json("get", "values", "shop", "-n", "shop") == {"greeting": "hi"}
    assert kube.configmap("shop", "shop-legacy") == {"old": "true"}

    # helm keeps working on it (no conflict with what berth applied), and berth after helm.
    helm.run("upgrade", "shop", str(v1), "-n", "shop", "--reuse-values", "--set", "greeting=helm-again")
    assert helm.history("shop", "shop")[-1] == (4, "deployed", "Upgrade complete")
    res = berth(capsys, uninstall_command, "--work-dir", work, *live[:-1])
    assert res.code == 0, res.err
    assert kube.configmap("shop", "shop-settings") is None
    assert helm.releases("shop") == []


def test_a_failed_install_is_recorded_failed_and_resume_deploys_it(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    helm: Helm,
    charts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    v1, _ = charts
    work = tmp_path / "w"
    setup(capsys, v1, work, "shop", "shop", "--set", "failHook=true")
    live = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--no-wait", "--timeout", "60s"]
    res = berth(capsys, apply_command, *live)
    assert res.code == 1
    [(rev, status, description)] = helm.history("shop", "shop")
    assert (rev, status) == (1, "failed")
    assert (
        description.startswith('Release "shop" failed: step 2/')
        and "pre-install hook Job shop/shop-migrate" in description
    )
    [hook] = helm.json("status", "shop", "-n", "shop")["hooks"]
    assert hook["name"] == "shop-migrate" and hook["last_run"]["phase"] == "Failed"
    assert hook["last_run"]["started_at"] <= hook["last_run"]["completed_at"]
    setup(capsys, v1, work, "shop", "shop", "--set", "failHook=false")
    res = berth(
        capsys, apply_command, *live
    )  # the work dir's own stopped install: the same revision continues
    assert res.code == 0, res.err
    assert helm.history("shop", "shop") == [(1, "deployed", "Install complete")]
    [hook] = helm.json("status", "shop", "-n", "shop")["hooks"]
    assert hook["last_run"]["phase"] == "Succeeded"


def test_uninstall_keep_history_leaves_the_release_uninstalled(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    helm: Helm,
    charts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    v1, _ = charts
    work = tmp_path / "w"
    setup(capsys, v1, work, "shop", "shop")
    live = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--no-wait"]
    assert berth(capsys, apply_command, *live).code == 0
    res = berth(capsys, uninstall_command, *live[:-1], "--keep-history")
    assert res.code == 0, res.err
    assert helm.history("shop", "shop") == [(1, "uninstalled", "Uninstallation complete")]
    assert [r["status"] for r in helm.json("list", "-n", "shop", "--uninstalled")] == ["uninstalled"]


def test_a_second_release_may_not_take_the_first_ones_objects_unless_it_takes_ownership(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    audit: Audit,
    helm: Helm,
    kube: Kube,
    charts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    v1, _ = charts
    first, second = tmp_path / "a", tmp_path / "b"
    setup(capsys, v1, first, "shop-a", "team-a")
    setup(capsys, v1, second, "shop-b", "team-b")  # renders the same cluster-scoped ClusterRole shop-reader
    live = ["--kubeconfig", cluster.kubeconfig, "--no-wait"]
    assert berth(capsys, apply_command, "--work-dir", first, *live).code == 0
    start = len(audit.writes(records=True))
    res = berth(capsys, apply_command, "--work-dir", second, *live)
    assert res.code == 2
    assert "Unable to continue with install: 1 object(s) already exist and are not this release's" in res.err
    assert (
        'ClusterRole "shop-reader" in namespace "" exists and cannot be imported into the current release'
        in (res.err)
    )
    assert 'key "meta.helm.sh/release-name" must equal "shop-b": current value is "shop-a"' in res.err
    assert "(it belongs to release shop-a in namespace team-a)" in res.err
    assert "--take-ownership" in res.err
    assert audit.writes(records=True)[start:] == []  # nothing written: no namespace, no record, no object
    assert helm.releases("team-b") == []
    # Helm refuses the same (its wording), and so berth matches what a Helm user expects.
    proc = helm.run("install", "shop-b", str(v1), "-n", "team-b", "--create-namespace", ok=False)
    assert proc.returncode != 0 and 'ClusterRole "shop-reader" in namespace "" exists' in proc.stderr
    res = berth(capsys, apply_command, "--work-dir", second, *live, "--take-ownership")
    assert res.code == 0, res.err
    assert (
        'adopting ClusterRole "shop-reader" in namespace "" (owned by release shop-a in namespace team-a)'
        in res.out
    )
    assert kube.cluster_role_owner("shop-reader") == "shop-b"


def test_an_object_made_outside_helm_is_refused_and_adopted_with_take_ownership(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    kube: Kube,
    charts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    v1, _ = charts
    kube.core.create_namespace({"metadata": {"name": "shop"}})
    kube.core.create_namespaced_config_map(
        "shop", {"metadata": {"name": "shop-settings"}, "data": {"a": "b"}}
    )
    work = tmp_path / "w"
    setup(capsys, v1, work, "shop", "shop")
    live = ["--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--no-wait"]
    res = berth(capsys, apply_command, *live)
    assert res.code == 2
    assert (
        'label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"' in res.err
    )
    assert "(it belongs to no Helm release" in res.err
    res = berth(capsys, apply_command, *live, "--take-ownership")
    assert res.code == 0, res.err
    assert kube.configmap("shop", "shop-settings") == {
        "a": "b",
        "greeting": "hello",
        "extra": "none",
        "version": "0.1.0",
    }


def test_an_unreadable_release_record_is_one_message_exit_2_and_nothing_written(
    capsys: pytest.CaptureFixture[str],
    cluster: Cluster,
    audit: Audit,
    kube: Kube,
    charts: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    v1, _ = charts
    kube.core.create_namespace({"metadata": {"name": "shop"}})
    kube.core.create_namespaced_secret(
        "shop",
        {
            "metadata": {"name": "sh.helm.release.v1.shop.v1", "labels": {"owner": "helm", "name": "shop"}},
            "type": "helm.sh/release.v1",
            "data": {"release": base64.b64encode(b"not a release").decode()},
        },
    )
    work = tmp_path / "w"
    setup(capsys, v1, work, "shop", "shop")
    start = len(audit.writes(records=True))
    res = berth(capsys, apply_command, "--work-dir", work, "--kubeconfig", cluster.kubeconfig, "--no-wait")
    assert res.code == 2
    assert res.err.count("error:") == 1
    assert "Secret shop/sh.helm.release.v1.shop.v1 data.release: not a Helm release record" in res.err
    assert audit.writes(records=True)[start:] == []
