"""`berth schedule manifests`: the objects that run a configuration in a cluster, in both shapes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from berth.kube import canonical, yamlio
from berth.kube.errors import BerthError, InputError
from berth.schedule import config as config_mod
from berth.schedule import deploy_cli, manifests, rbac
from berth.schedule.plugins.registry import default_registry

TWO_PROFILES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  resourceName: berth-scheduler
profiles:
  # spreads
  - schedulerName: academy-default
  # piles pods with the same app label onto one node; no volume plugins
  - schedulerName: academy-concentrate
    plugins:
      multiPoint:
        enabled:
          - name: Concentrate
            weight: 10
        disabled:
          - name: VolumeRestrictions
          - name: NodeVolumeLimits
          - name: VolumeBinding
          - name: VolumeZone
    pluginConfig:
      - name: Concentrate
        args:
          labelKey: app
"""
NO_LEADER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: solo
"""


def render(text: str, tmp_path: Path, **options: Any) -> manifests.Rendered:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    reg = default_registry()
    cfg = config_mod.load(path, reg)
    opts = manifests.DeployOptions(image="example.com/berth:1", **options)
    return manifests.render(text, cfg, reg, opts, source=str(path))


def by_kind(rendered: manifests.Rendered, kind: str) -> list[dict[str, Any]]:
    return [o for o in rendered.objects if o["kind"] == kind]


def test_profiles_shape_is_one_of_each_in_apply_order(tmp_path: Path) -> None:
    rendered = render(TWO_PROFILES, tmp_path)
    assert [(o["kind"], o["metadata"]["name"]) for o in rendered.objects] == [
        ("ServiceAccount", "berth-scheduler"),
        ("ClusterRole", "berth-scheduler"),
        ("ClusterRoleBinding", "berth-scheduler"),
        ("ConfigMap", "berth-scheduler"),
        ("Deployment", "berth-scheduler"),
    ]
    sa, role, binding, cm, deploy = rendered.objects
    assert sa["metadata"]["namespace"] == "berth-system"
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "berth-scheduler", "namespace": "berth-system"}
    ]
    assert cm["data"] == {"config.yaml": TWO_PROFILES}  # verbatim, comments included
    pod = deploy["spec"]["template"]
    assert pod["spec"]["serviceAccountName"] == "berth-scheduler"
    assert pod["metadata"]["annotations"] == {
        manifests.CONFIG_HASH_ANNOTATION: canonical.sha256_text(TWO_PROFILES)
    }
    assert deploy["metadata"]["annotations"] == {
        manifests.SCHEDULER_NAMES_ANNOTATION: "academy-default,academy-concentrate"
    }
    container = pod["spec"]["containers"][0]
    assert container["image"] == "example.com/berth:1"
    assert container["args"] == [
        "schedule",
        "run",
        "--config",
        "/etc/berth/config.yaml",
        "--leader-elect",
        "--metrics-port",
        "10259",
    ]
    assert container["volumeMounts"] == [{"name": "config", "mountPath": "/etc/berth", "readOnly": True}]
    assert pod["spec"]["volumes"] == [{"name": "config", "configMap": {"name": "berth-scheduler"}}]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert "strategy" not in deploy["spec"]  # a lease guards the rollout


def test_profiles_shape_role_is_the_union(tmp_path: Path) -> None:
    rendered = render(TWO_PROFILES, tmp_path)
    (role,) = by_kind(rendered, "ClusterRole")
    resources = {(r["apiGroups"][0], r["resources"][0]) for r in role["rules"]}
    # academy-default keeps the volume plugins, so the one process needs their reads.
    assert ("storage.k8s.io", "csinodes") in resources
    assert role["metadata"]["annotations"][rbac.WHY_ANNOTATION].startswith("core/namespaces [list,watch]")


def test_separate_shape_one_scheduler_per_profile(tmp_path: Path) -> None:
    rendered = render(TWO_PROFILES, tmp_path, shape=manifests.Shape.SEPARATE, namespace="sched")
    names = ["berth-scheduler-academy-default", "berth-scheduler-academy-concentrate"]
    for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment"):
        assert [o["metadata"]["name"] for o in by_kind(rendered, kind)] == names, kind
    reg = default_registry()
    leases = []
    for cm, profile_name in zip(
        by_kind(rendered, "ConfigMap"), ["academy-default", "academy-concentrate"], strict=True
    ):
        path = tmp_path / f"{profile_name}.yaml"
        path.write_text(cm["data"]["config.yaml"])
        cfg = config_mod.load(path, reg)  # each reduced config is valid on its own
        assert cfg.scheduler_names == (profile_name,)
        leases.append((cfg.leader_election.resource_namespace, cfg.leader_election.resource_name))
    assert leases == [("kube-system", "academy-default"), ("kube-system", "academy-concentrate")]
    roles = {r["metadata"]["name"]: r for r in by_kind(rendered, "ClusterRole")}
    default_resources = {x["resources"][0] for x in roles[names[0]]["rules"]}
    concentrate_rules = roles[names[1]]["rules"]
    assert "csinodes" in default_resources
    # academy-concentrate disables the volume plugins, so its own role has no storage rules.
    assert not any(x["apiGroups"] == ["storage.k8s.io"] for x in concentrate_rules)
    lease = {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": ["academy-concentrate"],
        "verbs": ["get", "update"],
    }
    assert lease in concentrate_rules
    binding = by_kind(rendered, "ClusterRoleBinding")[1]
    assert binding["subjects"][0] == {"kind": "ServiceAccount", "name": names[1], "namespace": "sched"}
    deploy = by_kind(rendered, "Deployment")[1]
    assert deploy["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == names[1]


def test_without_leader_election_recreate_and_no_lease(tmp_path: Path) -> None:
    rendered = render(NO_LEADER, tmp_path)
    (deploy,) = by_kind(rendered, "Deployment")
    assert deploy["spec"]["strategy"] == {"type": "Recreate"}
    assert "--leader-elect" not in deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    (role,) = by_kind(rendered, "ClusterRole")
    assert not any(r["resources"] == ["leases"] for r in role["rules"])


def test_default_lease_is_flagged(tmp_path: Path) -> None:
    text = TWO_PROFILES.replace("  resourceName: berth-scheduler\n", "  leaderElect: true\n")
    rendered = render(text, tmp_path)
    assert any(
        "kube-system/kube-scheduler, which the cluster's own kube-scheduler holds" in n
        for n in rendered.notes
    )
    assert not any("kube-scheduler holds" in n for n in render(TWO_PROFILES, tmp_path).notes)


def test_output_is_deterministic_and_round_trips(tmp_path: Path) -> None:
    first = render(TWO_PROFILES, tmp_path, shape=manifests.Shape.SEPARATE).yaml()
    second = render(TWO_PROFILES, tmp_path, shape=manifests.Shape.SEPARATE).yaml()
    assert first == second
    docs = [doc.body for doc in yamlio.load_documents(first)]
    assert docs == list(render(TWO_PROFILES, tmp_path, shape=manifests.Shape.SEPARATE).objects)


@pytest.mark.parametrize(
    ("text", "options", "where"),
    [
        pytest.param(
            TWO_PROFILES.replace("academy-concentrate", "Academy_Concentrate"),
            {"shape": manifests.Shape.SEPARATE},
            "profiles[1].schedulerName",
            id="scheduler-name-not-a-dns-label",
        ),
        pytest.param(TWO_PROFILES, {"namespace": "Bad_NS"}, "--namespace", id="bad-namespace"),
        pytest.param(TWO_PROFILES, {"name": "x" * 64}, "--name", id="name-too-long"),
    ],
)
def test_names_that_cannot_be_object_names(
    tmp_path: Path, text: str, options: dict[str, Any], where: str
) -> None:
    with pytest.raises(InputError) as info:
        render(text, tmp_path, **options)
    assert where in str(info.value)
    assert "DNS label" in str(info.value)


def invoke(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run `manifests` the way the root `berth` entry point does (BerthError -> `error:` + exit code)."""
    try:
        deploy_cli.manifests_command.main(
            args=argv, prog_name="berth schedule manifests", standalone_mode=False
        )
        code = 0
    except BerthError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = 2
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_yaml_and_json_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(TWO_PROFILES)
    base = ["--config", str(path), "--image", "img:1", "--namespace", "ns1", "--shape", "separate"]
    code, out_yaml, _ = invoke(base, capsys)
    assert code == 0
    code, out_json, _ = invoke([*base, "-o", "json"], capsys)
    assert code == 0
    listed = json.loads(out_json)
    assert listed["kind"] == "List"
    assert listed["items"] == [d.body for d in yamlio.load_documents(out_yaml)]
    assert len(listed["items"]) == 10


def test_cli_plugin_flag_reaches_the_container(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_rbac_plugin.py").write_text(
        "from berth.schedule.framework import interface as fw\n"
        "class Widgets(fw.ScorePlugin):\n"
        "    NAME = 'Widgets'\n"
        "    def score(self, state, pod, node):\n"
        "        return 0, fw.Status()\n"
        "SPEC = fw.PluginSpec(name='Widgets', plugin_class=Widgets, reads=('widgets.example.com',))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = NO_LEADER + "    plugins:\n      score:\n        enabled:\n          - name: Widgets\n"
    path = tmp_path / "c.yaml"
    path.write_text(config)
    code, out, err = invoke(
        ["--config", str(path), "--image", "img:1", "--plugin", "my_rbac_plugin:SPEC", "-o", "json"], capsys
    )
    assert code == 0, err
    items = json.loads(out)["items"]
    (deploy,) = [i for i in items if i["kind"] == "Deployment"]
    assert deploy["spec"]["template"]["spec"]["containers"][0]["args"][-2:] == [
        "--plugin",
        "my_rbac_plugin:SPEC",
    ]
    (role,) = [i for i in items if i["kind"] == "ClusterRole"]
    assert {
        "apiGroups": ["example.com"],
        "resources": ["widgets"],
        "verbs": ["list", "watch"],
    } in role["rules"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--image", "i"], "--config", id="no-config"),
        pytest.param(["--config", "CONFIG"], "--image", id="no-image"),
        pytest.param(["--config", "CONFIG", "--image", "i", "--shape", "both"], "--shape", id="bad-shape"),
        pytest.param(["--config", "MISSING", "--image", "i"], "file not found", id="missing-file"),
        pytest.param(
            ["--config", "CONFIG", "--image", " "], "--image: ' ' is not an image reference", id="bad-image"
        ),
        pytest.param(["--config", "BAD", "--image", "i"], "profiles[0]", id="invalid-config"),
    ],
)
def test_cli_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(TWO_PROFILES)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        NO_LEADER.replace("schedulerName: solo", "schedulerName: solo\n    percentageOfNodesToScore: 300")
    )
    paths = {"CONFIG": str(good), "MISSING": str(tmp_path / "missing.yaml"), "BAD": str(bad)}
    code, out, err = invoke([paths.get(a, a) for a in argv], capsys)
    assert code == 2
    assert out == ""
    assert message in err


def test_lease_namespace_other_than_the_schedulers_is_noted(tmp_path: Path) -> None:
    text = TWO_PROFILES.replace(
        "  resourceName: berth-scheduler\n", "  resourceName: b\n  resourceNamespace: ops\n"
    )
    notes = render(text, tmp_path, namespace="sched").notes
    assert any("resourceNamespace is ops, the scheduler runs in sched" in n for n in notes)
    same = TWO_PROFILES.replace(
        "  resourceName: berth-scheduler\n", "  resourceName: b\n  resourceNamespace: s\n"
    )
    assert not any("resourceNamespace" in n for n in render(same, tmp_path, namespace="s").notes)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two-profiles" / "config.yaml"
CHART_VALUES = Path(__file__).resolve().parents[2] / "charts" / "berth-scheduler" / "values.yaml"


def test_example_config_uses_berths_own_lease_and_the_chart_agrees(tmp_path: Path) -> None:
    """kube-system/kube-scheduler is the cluster's own scheduler's lease; the example, the manifests rendered for it
    and the chart's default configuration all use berth's lease in the scheduler's namespace instead."""
    text = EXAMPLE.read_text(encoding="utf-8")
    rendered = render(text, tmp_path)
    assert not any("lease" in n.lower() for n in rendered.notes), rendered.notes
    cfg = config_mod.load(EXAMPLE, default_registry())
    le = cfg.leader_election
    assert (le.leader_elect, le.resource_namespace, le.resource_name) == (
        True,
        manifests.DEFAULT_NAMESPACE,
        "berth-scheduler",
    )
    (role,) = by_kind(rendered, "ClusterRole")
    assert {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": ["berth-scheduler"],
        "verbs": ["get", "update"],
    } in role["rules"]
    chart_config = yamlio.load_one(yamlio.load_one(CHART_VALUES.read_text(encoding="utf-8"))["config"])
    assert chart_config["leaderElection"] == yamlio.load_one(text)["leaderElection"]


def test_shadow_runs_berth_schedule_shadow_on_a_read_only_role(tmp_path: Path) -> None:
    text = TWO_PROFILES.replace("  resourceName: berth-scheduler\n", "  leaderElect: true\n")
    rendered = render(text, tmp_path, shadow=True, name="berth-shadow")
    (deploy,) = by_kind(rendered, "Deployment")
    args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:2] == ["schedule", "shadow"] and "--leader-elect" not in args and "--metrics-port" in args
    (role,) = by_kind(rendered, "ClusterRole")
    assert role["rules"] and all(r["verbs"] == ["list", "watch"] for r in role["rules"])
    assert not any(r["resources"] in (["leases"], ["events"], ["pods/binding"]) for r in role["rules"])
    assert not any("lease" in n for n in rendered.notes)  # a shadow takes no lease
    full = render(text, tmp_path)
    assert any("kube-scheduler holds" in n for n in full.notes)
