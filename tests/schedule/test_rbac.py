"""`berth schedule rbac`: the role is the union of what the core, leader election and enabled plugins need."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from berth.kube import yamlio
from berth.kube.errors import BerthError, InputError
from berth.schedule import config as config_mod
from berth.schedule import deploy_cli, rbac
from berth.schedule.framework import interface as fw
from berth.schedule.plugins.registry import Registry, default_registry

DEFAULT_PLUGINS = (
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
)
VOLUME_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")
READ = ["list", "watch"]


def _in_tree_access() -> dict[str, tuple[str, ...]]:
    reg = default_registry()
    specs = [reg.get(name) for name in reg.names()]
    return {spec.name: spec.api_access for spec in specs if spec is not None}


IN_TREE_ACCESS = _in_tree_access()


class _Stub(fw.Plugin):
    NAME = "Stub"


def registry(reads: dict[str, tuple[str, ...]] | None = None, declared: bool = True) -> Registry:
    """Stub specs declaring what the in-tree plugins declare (``reads`` overrides some); ``declared=False`` leaves
    them declaring nothing."""
    table = IN_TREE_ACCESS | (reads or {})
    return Registry(
        fw.PluginSpec(name=name, plugin_class=_Stub, api_access=entries if declared else ())
        for name, entries in table.items()
    )


def profile(name: str, plugins: tuple[str, ...]) -> config_mod.Profile:
    # rbac only looks at which plugins are enabled, not at which point; spread them over two points.
    half = len(plugins) // 2
    return config_mod.Profile(
        scheduler_name=name,
        plugins={
            "filter": tuple(config_mod.PluginRef(p) for p in plugins[:half]),
            "score": tuple(config_mod.PluginRef(p, 1) for p in plugins[half:]),
        },
        plugin_args={},
    )


def configuration(*profiles: config_mod.Profile, leader: bool = True) -> config_mod.SchedulerConfiguration:
    return config_mod.SchedulerConfiguration(
        profiles=profiles,
        leader_election=config_mod.LeaderElection(
            leader_elect=leader, resource_name="berth-scheduler", resource_namespace="kube-system"
        ),
    )


def rule_table(result: rbac.RoleResult) -> list[tuple[str, str, str, str]]:
    return [(r.group, r.resource, ",".join(r.verbs), ",".join(r.resource_names)) for r in result.rules]


CORE_RULES = [
    ("", "nodes", "list,watch", ""),
    ("", "pods", "list,watch", ""),
    ("", "pods/status", "patch", ""),
    ("events.k8s.io", "events", "create,patch", ""),
]
LEASE_RULES = [
    ("coordination.k8s.io", "leases", "create", ""),
    ("coordination.k8s.io", "leases", "get,update", "berth-scheduler"),
]


def sort_rules(rows: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    return sorted(rows, key=lambda r: (r[0], r[1], tuple(r[2].split(",")), r[3]))


def test_default_profile_role_is_pinned_whole() -> None:
    result = rbac.compute(configuration(profile("default-scheduler", DEFAULT_PLUGINS)), registry())
    assert rule_table(result) == [
        ("", "namespaces", "list,watch", ""),
        ("", "nodes", "list,watch", ""),
        ("", "persistentvolumeclaims", "list,update,watch", ""),
        ("", "persistentvolumes", "list,update,watch", ""),
        ("", "pods", "delete,list,watch", ""),
        ("", "pods/binding", "create", ""),
        ("", "pods/status", "patch", ""),
        ("", "replicationcontrollers", "list,watch", ""),
        ("", "services", "list,watch", ""),
        ("apps", "replicasets", "list,watch", ""),
        ("apps", "statefulsets", "list,watch", ""),
        ("coordination.k8s.io", "leases", "create", ""),
        ("coordination.k8s.io", "leases", "get,update", "berth-scheduler"),
        ("events.k8s.io", "events", "create,patch", ""),
        ("policy", "poddisruptionbudgets", "list,watch", ""),
        ("resource.k8s.io", "deviceclasses", "list,watch", ""),
        ("resource.k8s.io", "resourceclaims", "list,watch", ""),
        ("resource.k8s.io", "resourceslices", "list,watch", ""),
        ("storage.k8s.io", "csidrivers", "list,watch", ""),
        ("storage.k8s.io", "csinodes", "list,watch", ""),
        ("storage.k8s.io", "csistoragecapacities", "list,watch", ""),
        ("storage.k8s.io", "storageclasses", "list,watch", ""),
        ("storage.k8s.io", "volumeattachments", "list,watch", ""),
    ]


def test_inactive_plugins_add_nothing_and_are_noted() -> None:
    """A plugin berth accepts but does not run is never called, so the scheduler never reads what it would."""
    table = dict(IN_TREE_ACCESS)
    reg = Registry(
        fw.PluginSpec(name=name, plugin_class=_Stub, api_access=entries, active=name != "DynamicResources")
        for name, entries in table.items()
    )
    result = rbac.compute(configuration(profile("p", DEFAULT_PLUGINS)), reg)
    assert not any(r.group == "resource.k8s.io" for r in result.rules)
    assert not any("DynamicResources" in r.why for r in result.rules)
    assert any("not active yet in berth: DynamicResources" in n for n in result.notes)


CASES: list[Any] = [
    pytest.param(
        ("PrioritySort", "Concentrate", "DefaultBinder"),
        True,
        sort_rules([*CORE_RULES, *LEASE_RULES, ("", "pods/binding", "create", "")]),
        id="concentrate-only-leader-elect",
    ),
    pytest.param(
        ("PrioritySort", "Concentrate", "DefaultBinder"),
        False,
        sort_rules([*CORE_RULES, ("", "pods/binding", "create", "")]),
        id="concentrate-only-no-leader-elect",
    ),
    pytest.param(
        ("PrioritySort", "NodeResourcesFit", "InterPodAffinity", "DefaultBinder"),
        False,
        sort_rules([*CORE_RULES, ("", "pods/binding", "create", ""), ("", "namespaces", "list,watch", "")]),
        id="inter-pod-affinity-adds-namespaces",
    ),
    pytest.param(
        ("PrioritySort", "DefaultPreemption", "DefaultBinder"),
        False,
        sort_rules(
            [
                *[r for r in CORE_RULES if r[1] != "pods"],
                ("", "pods", "delete,list,watch", ""),
                ("", "pods/binding", "create", ""),
                ("policy", "poddisruptionbudgets", "list,watch", ""),
            ]
        ),
        id="preemption-deletes-pods-and-reads-pdbs",
    ),
]


@pytest.mark.parametrize(("plugins", "leader", "expected"), CASES)
def test_role_contents(plugins: tuple[str, ...], leader: bool, expected: list[Any]) -> None:
    result = rbac.compute(configuration(profile("p", plugins), leader=leader), registry())
    assert rule_table(result) == expected


def test_volume_plugins_disabled_drop_every_storage_rule() -> None:
    without = tuple(p for p in DEFAULT_PLUGINS if p not in VOLUME_PLUGINS)
    role = rbac.compute(configuration(profile("p", without)), registry())
    resources = {(r.group, r.resource) for r in role.rules}
    assert not any(group == "storage.k8s.io" for group, _ in resources)
    assert ("", "persistentvolumes") not in resources
    assert ("", "persistentvolumeclaims") not in resources
    full = rbac.compute(configuration(profile("p", DEFAULT_PLUGINS)), registry())
    assert (
        len(full.rules) - len(role.rules) == 7
    )  # pv, pvc, storageclasses, csinodes, csidrivers, capacities, va


@pytest.mark.parametrize("leader", [True, False], ids=["leader-elect", "no-leader-elect"])
def test_leases_only_with_leader_election(leader: bool) -> None:
    result = rbac.compute(configuration(profile("p", ("DefaultBinder",)), leader=leader), registry())
    leases = [r for r in result.rules if r.resource == "leases"]
    if leader:
        assert [(r.verbs, r.resource_names) for r in leases] == [
            (("create",), ()),
            (("get", "update"), ("berth-scheduler",)),
        ]
        assert all(r.why == ("leader election (kube-system/berth-scheduler)",) for r in leases)
    else:
        assert leases == []


def test_profiles_union_and_why_names_the_plugins() -> None:
    cfg = configuration(
        profile("a", ("PrioritySort", "InterPodAffinity", "DefaultBinder")),
        profile("b", ("PrioritySort", "PodTopologySpread", "DefaultBinder")),
    )
    rules = {(r.group, r.resource): r for r in rbac.compute(cfg, registry()).rules}
    assert rules[("", "namespaces")].why == ("InterPodAffinity",)
    assert rules[("apps", "replicasets")].why == ("PodTopologySpread",)
    assert rules[("", "pods")].why[0].startswith("core (")
    assert set(rules[("", "pods")].why[1:]) == {"InterPodAffinity", "PodTopologySpread", "PrioritySort"}
    assert rules[("", "pods/binding")].why == ("DefaultBinder",)


def test_output_is_independent_of_profile_and_plugin_order() -> None:
    plugins = ("PrioritySort", "InterPodAffinity", "DefaultPreemption", "VolumeZone", "DefaultBinder")
    outputs = set()
    for perm in itertools.permutations(plugins, len(plugins)):
        cfg = configuration(profile("a", perm), profile("b", ("PodTopologySpread",)))
        result = rbac.compute(cfg, registry())
        outputs.add(rbac.to_yaml(result.cluster_role("r"), result))
        reversed_cfg = configuration(profile("b", ("PodTopologySpread",)), profile("a", perm))
        result = rbac.compute(reversed_cfg, registry())
        outputs.add(rbac.to_yaml(result.cluster_role("r"), result))
    assert len(outputs) == 1


def test_declared_reads_win_over_the_table() -> None:
    reg = registry({"Concentrate": ("pods", "priorityclasses")})
    result = rbac.compute(configuration(profile("p", ("Concentrate",)), leader=False), reg)
    assert ("scheduling.k8s.io", "priorityclasses") in {(r.group, r.resource) for r in result.rules}
    assert result.notes == ()


def test_a_plugin_declaring_nothing_gets_nothing_beyond_the_core_and_is_noted() -> None:
    """The plugins' own declarations are the one source: there is no table to fall back on."""
    result = rbac.compute(
        configuration(profile("p", ("InterPodAffinity",)), leader=False), registry(declared=False)
    )
    assert ("", "namespaces") not in {(r.group, r.resource) for r in result.rules}
    assert rule_table(result) == sort_rules(CORE_RULES)
    assert any("InterPodAffinity declares no API access" in n for n in result.notes)


def test_the_former_field_name_still_declares_access() -> None:
    spec = fw.PluginSpec(name="Old", plugin_class=_Stub, reads=("widgets.example.com",))
    assert spec.api_access == ("widgets.example.com",)


def test_unknown_plugin_without_reads_is_noted_not_guessed() -> None:
    class Mine(fw.Plugin):
        NAME = "Mine"

    reg = Registry([fw.PluginSpec(name="Mine", plugin_class=Mine)])
    result = rbac.compute(configuration(profile("p", ("Mine",)), leader=False), reg)
    assert rule_table(result) == sort_rules(CORE_RULES)
    assert any("plugin Mine declares no API access" in n for n in result.notes)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        pytest.param("pods", ("", "pods", READ), id="bare-core"),
        pytest.param("replicasets", ("apps", "replicasets", READ), id="bare-apps"),
        pytest.param("pods/binding", ("", "pods/binding", ["create"]), id="binding-is-create"),
        pytest.param("pods/status", ("", "pods/status", ["patch"]), id="status-is-patch"),
        pytest.param("widgets.example.com", ("example.com", "widgets", READ), id="qualified"),
        pytest.param("delete:pods", ("", "pods", ["delete"]), id="verbs"),
        pytest.param(
            "patch,update:widgets.example.com/status",
            ("example.com", "widgets/status", ["patch", "update"]),
            id="verbs-group-subresource",
        ),
        pytest.param("configmaps.core", ("", "configmaps", READ), id="explicit-core-group"),
    ],
)
def test_parse_entry(entry: str, expected: tuple[str, str, list[str]]) -> None:
    need = rbac.parse_entry(entry, "P", "here")
    assert (need.group, need.resource, sorted(need.verbs)) == expected


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param("widgets", "unknown resource 'widgets'; spell out its API group", id="unknown-bare"),
        pytest.param("frob:pods", "unknown verb(s) frob", id="bad-verb"),
        pytest.param("Pods.example.com", "expected [VERB[,VERB]:]RESOURCE", id="uppercase"),
        pytest.param("pods.example.com/Sub", "expected [VERB[,VERB]:]RESOURCE", id="bad-subresource"),
    ],
)
def test_parse_entry_errors_name_the_plugin(entry: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        rbac.parse_entry(entry, "P", "plugin P (PluginSpec.api_access)")
    assert message in str(info.value)
    assert str(info.value).startswith("plugin P (PluginSpec.api_access): ")


def test_yaml_has_one_why_comment_per_rule_and_parses_back() -> None:
    result = rbac.compute(configuration(profile("p", DEFAULT_PLUGINS)), registry())
    role = result.cluster_role("berth-scheduler")
    text = rbac.to_yaml(role, result)
    comments = [line for line in text.splitlines() if line.startswith("# why: ")]
    assert len(comments) == len(result.rules)
    assert comments[0] == f"# why: {', '.join(result.rules[0].why)}"
    assert yamlio.load_one(text) == role
    assert role["metadata"]["annotations"][rbac.WHY_ANNOTATION].count("\n") == len(result.rules) - 1
    assert json.loads(rbac.to_json(role)) == role


def test_every_in_tree_plugin_declares_parseable_reads() -> None:
    """The contract with the plugin modules: each declares its access and every entry parses (else `rbac` fails
    for everyone)."""
    reg = default_registry()
    for name in reg.names():
        spec = reg.get(name)
        assert spec is not None
        needs, _ = rbac.plugin_needs(name, spec)
        assert needs, name


TWO_PROFILES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  resourceName: berth-scheduler
profiles:
  - schedulerName: academy-default
  - schedulerName: academy-concentrate
    plugins:
      multiPoint:
        enabled:
          - name: Concentrate
            weight: 10
    pluginConfig:
      - name: Concentrate
        args:
          labelKey: app
"""


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run a deploy command the way the root ``berth`` entry point does (BerthError -> `error:` + exit code)."""
    assert argv[:1] == ["schedule"]
    command = {"rbac": deploy_cli.rbac_command, "manifests": deploy_cli.manifests_command}[argv[1]]
    try:
        command.main(args=argv[2:], prog_name=f"berth schedule {argv[1]}", standalone_mode=False)
        code = 0
    except BerthError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = 2
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prints_the_role_for_a_real_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(TWO_PROFILES)
    code, out, _ = run_cli(["schedule", "rbac", "--config", str(path), "-o", "json"], capsys)
    assert code == 0
    role = json.loads(out)
    assert role["kind"] == "ClusterRole"
    leases = [r for r in role["rules"] if r["resources"] == ["leases"]]
    assert leases == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": ["berth-scheduler"],
            "verbs": ["get", "update"],
        },
    ]
    resources = {(r["apiGroups"][0], r["resources"][0]) for r in role["rules"]}
    assert ("storage.k8s.io", "csinodes") in resources  # the default profile keeps the volume plugins
    code, again, _ = run_cli(["schedule", "rbac", "--config", str(path), "-o", "json"], capsys)
    assert again == out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("kind: [", "malformed YAML", id="malformed-yaml"),
        pytest.param(
            TWO_PROFILES.replace("labelKey: app", "labelKey: ''"), "labelKey", id="invalid-plugin-args"
        ),
        pytest.param(
            TWO_PROFILES.replace("Concentrate", "NoSuchPlugin"), "NoSuchPlugin", id="unknown-plugin"
        ),
    ],
)
def test_cli_bad_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    code, out, err = run_cli(["schedule", "rbac", "--config", str(path)], capsys)
    assert code == 2
    assert out == ""
    assert message in err
    assert str(path) in err


def test_cli_missing_config_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["schedule", "rbac", "--config", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2
    assert "file not found" in err


CONCENTRATE_ONLY = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: packer
    plugins:
      multiPoint:
        disabled:
          - name: "*"
        enabled:
          - name: PrioritySort
          - name: Concentrate
          - name: DefaultBinder
    pluginConfig:
      - name: Concentrate
        args: {labelKey: app}
"""


def test_cli_concentrate_only_config_needs_only_core_and_binding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONCENTRATE_ONLY)
    code, out, err = run_cli(["schedule", "rbac", "--config", str(path), "--name", "packer"], capsys)
    assert code == 0, err
    role = yamlio.load_one(out)
    assert role["metadata"]["name"] == "packer"
    assert [(r["apiGroups"][0], r["resources"][0], ",".join(r["verbs"])) for r in role["rules"]] == [
        ("", "nodes", "list,watch"),
        ("", "pods", "list,watch"),
        ("", "pods/binding", "create"),
        ("", "pods/status", "patch"),
        ("events.k8s.io", "events", "create,patch"),
    ]
    assert "# why: core (pod informer: queue and cache), Concentrate, PrioritySort" in out
    assert "# why: DefaultBinder" in out


def test_cli_values_output_is_the_chart_rbac_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONCENTRATE_ONLY)
    code, out, _ = run_cli(["schedule", "rbac", "--config", str(path), "-o", "values"], capsys)
    assert code == 0
    values = yamlio.load_one(out)
    assert set(values) == {"rbac"}
    code, out_json, _ = run_cli(["schedule", "rbac", "--config", str(path), "-o", "json"], capsys)
    role = json.loads(out_json)
    assert values["rbac"]["rules"] == role["rules"]
    assert values["rbac"]["why"] == role["metadata"]["annotations"][rbac.WHY_ANNOTATION]
