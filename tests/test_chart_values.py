"""charts/berth-scheduler's values, with the real helm: the schema refuses wrong shapes, every value lands where a
chart user expects it, and `helm lint --strict` passes over the combinations.

(That the default render equals `berth schedule manifests` is tests/schedule/test_chart.py's.)
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from berth.kube import tools, yamlio

CHART = Path(__file__).resolve().parents[1] / "charts" / "berth-scheduler"
NO_LEADER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: solo
"""


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tools.find("helm").path, *args], capture_output=True, text=True, timeout=120, check=False
    )


def deployment(*args: str) -> dict[str, Any]:
    proc = helm("template", "rel", str(CHART), "--namespace", "sched", *args)
    assert proc.returncode == 0, proc.stderr
    (found,) = [d.body for d in yamlio.load_documents(proc.stdout) if d.body.get("kind") == "Deployment"]
    return found


def pod_spec(*args: str) -> dict[str, Any]:
    spec: dict[str, Any] = deployment(*args)["spec"]["template"]["spec"]
    return spec


VALUE_SETS = {
    "defaults": [],
    "image": ["--set", "image.repository=registry.example/berth,image.tag=1.2.3,image.pullPolicy=Always"],
    "placement": [
        "--set", "replicas=2,priorityClassName=system-cluster-critical,nodeSelector.pool=system",
        "--set", "tolerations[0].key=dedicated,tolerations[0].operator=Exists,tolerations[0].effect=NoSchedule",
        "--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                 ".matchExpressions[0].key=zone",
        "--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                 ".matchExpressions[0].operator=Exists",
    ],
    "pod": ["--set", "podAnnotations.team=platform,resources.limits.memory=256Mi", "--set-json", 'extraArgs=["-v"]'],
}  # fmt: skip


@pytest.mark.parametrize("args", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_lint_strict_passes(args: list[str]) -> None:
    proc = helm("lint", "--strict", str(CHART), *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[ERROR]" not in proc.stdout and "[WARNING]" not in proc.stdout


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--set", "image=x"], "/image"),  # the issue: once rendered as image: "map[repository:x]"
        (["--set", "image.pullPolicy=Sometimes"], "/image/pullPolicy"),
        (["--set", "image.repository="], "/image/repository"),
        (["--set", "replicas=0"], "/replicas"),
        (["--set", "nodeSelector.pool=1"], "/nodeSelector/pool"),
        (["--set", "imagePullPolicy=Always"], "imagePullPolicy"),  # the old key: unknown now
        (["--set", "plugins[0]=not-a-class"], "/plugins/0"),
    ],
    ids=[
        "image-string",
        "pull-policy",
        "empty-repository",
        "zero-replicas",
        "selector-number",
        "old-key",
        "plugin",
    ],
)
def test_the_schema_refuses_a_wrong_shape(args: list[str], where: str) -> None:
    proc = helm("template", "rel", str(CHART), *args)
    assert proc.returncode != 0
    assert "values don't meet the specifications of the schema" in proc.stderr
    assert where in proc.stderr


def test_image_is_repository_and_tag_defaulting_to_the_app_version() -> None:
    app_version = yamlio.load_file(CHART / "Chart.yaml")[0].body["appVersion"]
    (default,) = pod_spec()["containers"]
    assert (default["image"], default["imagePullPolicy"]) == (
        f"berth-scheduler:{app_version}",
        "IfNotPresent",
    )
    (custom,) = pod_spec(*VALUE_SETS["image"])["containers"]
    assert (custom["image"], custom["imagePullPolicy"]) == ("registry.example/berth:1.2.3", "Always")


def test_more_than_one_replica_always_elects_a_leader(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(NO_LEADER)
    one = deployment("--set-file", f"config={config}")
    assert one["spec"]["replicas"] == 1 and one["spec"]["strategy"] == {"type": "Recreate"}
    assert "--leader-elect" not in one["spec"]["template"]["spec"]["containers"][0]["args"]
    three = deployment("--set-file", f"config={config}", "--set", "replicas=3")
    assert (
        three["spec"]["replicas"] == 3 and "strategy" not in three["spec"]
    )  # a rolling update is safe with a lease
    assert "--leader-elect" in three["spec"]["template"]["spec"]["containers"][0]["args"]
    proc = helm("template", "rel", str(CHART), "--set", "shadow=true,replicas=2")
    assert proc.returncode != 0 and "shadow: true runs one replica" in proc.stderr


def test_placement_and_pod_values_land_in_the_pod_spec() -> None:
    assert not {"nodeSelector", "tolerations", "affinity", "priorityClassName"} & pod_spec().keys()
    spec = pod_spec(*VALUE_SETS["placement"])
    assert spec["priorityClassName"] == "system-cluster-critical"
    assert spec["nodeSelector"] == {"pool": "system"}
    assert spec["tolerations"] == [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    term = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]
    assert term == {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}
    pod = deployment(*VALUE_SETS["pod"])["spec"]["template"]
    assert pod["metadata"]["annotations"]["team"] == "platform"
    assert "berth.dev/config-sha256" in pod["metadata"]["annotations"]
    (container,) = pod["spec"]["containers"]
    assert container["resources"]["limits"] == {"memory": "256Mi"}
    assert container["args"][-1] == "-v"  # extra arguments come after the chart's own
