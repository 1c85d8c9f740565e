"""KubeSchedulerConfiguration: defaults, plugin-set merge and multiPoint expansion, args defaulting, to_dict, load.

Pipelines are checked against upstream kube-scheduler 1.35 semantics (spec sections 2.1-2.4 and 2.8), using a
registry of fake plugins whose extension points are those of the real ones (test_config_fakes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_config_fakes as fakes

from berth.kube.errors import InputError, MultiInputError
from berth.schedule import config, defaults
from berth.schedule.framework.interface import POINT_NAMES, PluginSpec

HEAD = {"apiVersion": config.API_VERSION, "kind": config.KIND}

DEFAULT_SCORE = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("VolumeBinding", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]
DEFAULT_FILTER = [
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
]
DEFAULT_PRE_SCORE = [
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesFit",
    "VolumeBinding",
    "PodTopologySpread",
    "InterPodAffinity",
    "NodeResourcesBalancedAllocation",
]


def parse(doc: dict[str, Any], registry: Any = None) -> config.SchedulerConfiguration:
    return config.parse({**HEAD, **doc}, "test.yaml", registry or fakes.fake_registry())


def one_profile(plugins: dict[str, Any], **extra: Any) -> config.Profile:
    cfg = parse({"profiles": [{"schedulerName": "p", "plugins": plugins, **extra}]})
    return cfg.profiles[0]


def score(profile: config.Profile) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in profile.plugins["score"]]


# --- the default tables --------------------------------------------------------------------------------------------


def test_default_plugin_table_is_pinned_whole() -> None:
    text = ", ".join(f"{p.name}:{p.weight}" if p.weight else p.name for p in defaults.DEFAULT_PLUGINS)
    assert text == (
        "SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, "
        "NodePorts, NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
        "PodTopologySpread:2, InterPodAffinity:2, DynamicResources, DefaultPreemption, "
        "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder"
    )


def test_default_plugins_cover_the_in_tree_registry_names() -> None:
    from berth.schedule.plugins.registry import IN_TREE_MODULES

    names = {p.name for p in defaults.DEFAULT_PLUGINS}
    assert names == set(IN_TREE_MODULES) - {"Concentrate"}


def test_default_config_pipelines_per_extension_point() -> None:
    cfg = config.default_config(fakes.fake_registry())
    assert cfg.scheduler_names == ("default-scheduler",)
    p = cfg.profiles[0]
    assert set(p.plugins) == set(POINT_NAMES)
    assert p.names("preEnqueue") == ("SchedulingGates", "DynamicResources", "DefaultPreemption")
    assert p.names("queueSort") == ("PrioritySort",)
    assert list(p.names("filter")) == DEFAULT_FILTER
    assert list(p.names("preScore")) == DEFAULT_PRE_SCORE
    assert score(p) == DEFAULT_SCORE
    assert p.names("postFilter") == ("DynamicResources", "DefaultPreemption")
    assert p.names("reserve") == ("VolumeBinding", "DynamicResources")
    assert p.names("preBind") == ("VolumeBinding", "DynamicResources")
    assert p.names("bind") == ("DefaultBinder",)
    assert p.names("permit") == () and p.names("postBind") == ()
    # weights only on score refs
    assert all(r.weight == 0 for r in p.plugins["filter"])
    assert p.percentage_of_nodes_to_score is None


def test_default_top_level_values() -> None:
    cfg = config.default_config(fakes.fake_registry())
    assert cfg.parallelism == 16
    assert cfg.percentage_of_nodes_to_score == 0
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert cfg.leader_election == config.LeaderElection(
        True, 15.0, 10.0, 2.0, "leases", "kube-scheduler", "kube-system"
    )
    assert cfg.client_connection == config.ClientConnection(
        "", "", "application/vnd.kubernetes.protobuf", 50.0, 100
    )
    assert (cfg.enable_profiling, cfg.enable_contention_profiling, cfg.delay_cache_until_active) == (
        True,
        True,
        False,
    )
    assert cfg.extenders == ()


def test_default_args_are_added_for_every_enabled_plugin_with_an_args_type() -> None:
    cfg = config.default_config(fakes.fake_registry())
    args = cfg.profiles[0].plugin_args
    assert sorted(args) == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    assert args["DefaultPreemption"].to_dict() == {
        "minCandidateNodesPercentage": 10,
        "minCandidateNodesAbsolute": 100,
    }
    # Concentrate is registered but not enabled: no args are made up for it.
    assert "Concentrate" not in args


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param({}, {"parallelism": 16}, id="empty"),
        pytest.param({"parallelism": 4}, {"parallelism": 4}, id="parallelism"),
        pytest.param({"percentageOfNodesToScore": 30}, {"percentage_of_nodes_to_score": 30}, id="percentage"),
        pytest.param(
            {"podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20},
            {"pod_initial_backoff_seconds": 2, "pod_max_backoff_seconds": 20},
            id="backoff",
        ),
        pytest.param(
            {"enableProfiling": False},
            {"enable_profiling": False, "enable_contention_profiling": False},
            id="no-profiling",
        ),
        pytest.param(
            {"enableProfiling": False, "enableContentionProfiling": True},
            {"enable_contention_profiling": True},
            id="contention-explicit",
        ),
        pytest.param({"delayCacheUntilActive": True}, {"delay_cache_until_active": True}, id="delay-cache"),
    ],
)
def test_top_level_fields(doc: dict[str, Any], expected: dict[str, Any]) -> None:
    cfg = parse(doc)
    for attr, value in expected.items():
        assert getattr(cfg, attr) == value


@pytest.mark.parametrize(
    ("leader", "expected"),
    [
        pytest.param({"leaseDuration": "30s"}, {"lease_duration_seconds": 30.0}, id="lease"),
        pytest.param({"leaseDuration": "0s"}, {"lease_duration_seconds": 15.0}, id="zero-duration-defaults"),
        pytest.param(
            {"renewDeadline": "1m0s", "leaseDuration": "2m"}, {"renew_deadline_seconds": 60.0}, id="minutes"
        ),
        pytest.param(
            {"leaderElect": False, "resourceLock": "endpoints"}, {"leader_elect": False}, id="off-any-lock"
        ),
        pytest.param({"resourceName": "x", "resourceNamespace": "y"}, {"resource_name": "x"}, id="names"),
    ],
)
def test_leader_election(leader: dict[str, Any], expected: dict[str, Any]) -> None:
    le = parse({"leaderElection": leader}).leader_election
    for attr, value in expected.items():
        assert getattr(le, attr) == value


def test_client_connection_zero_means_default() -> None:
    cc = parse({"clientConnection": {"qps": 0, "burst": 0, "kubeconfig": "/k"}}).client_connection
    assert (cc.qps, cc.burst, cc.kubeconfig) == (50.0, 100, "/k")
    cc = parse(
        {"clientConnection": {"qps": 5.5, "burst": 7, "contentType": "application/json"}}
    ).client_connection
    assert (cc.qps, cc.burst, cc.content_type) == (5.5, 7, "application/json")


# --- profiles ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profiles", "names"),
    [
        pytest.param(None, ("default-scheduler",), id="no-profiles-field"),
        pytest.param([], ("default-scheduler",), id="empty-list"),
        pytest.param([{}], ("default-scheduler",), id="lone-unnamed"),
        pytest.param([{"schedulerName": "a"}], ("a",), id="lone-named"),
        pytest.param([{"schedulerName": "a"}, {"schedulerName": "b"}], ("a", "b"), id="two"),
    ],
)
def test_profile_names(profiles: Any, names: tuple[str, ...]) -> None:
    doc = {} if profiles is None else {"profiles": profiles}
    assert parse(doc).scheduler_names == names


def test_profile_percentage_and_lookup() -> None:
    cfg = parse(
        {"profiles": [{"schedulerName": "a", "percentageOfNodesToScore": 100}, {"schedulerName": "b"}]}
    )
    assert cfg.profile("a") is not None and cfg.profile("a").percentage_of_nodes_to_score == 100  # type: ignore[union-attr]
    assert cfg.profile("b").percentage_of_nodes_to_score is None  # type: ignore[union-attr]
    assert cfg.profile("nope") is None


def test_plugins_omitted_or_empty_give_the_defaults() -> None:
    a = parse({"profiles": [{"schedulerName": "a"}]}).profiles[0]
    b = one_profile({})
    assert a.plugins == b.plugins


# --- merge_plugin_set (upstream mergePluginSet) --------------------------------------------------------------------

E = config.Entry


def names_weights(s: config.PluginSet) -> list[tuple[str, int | None]]:
    return [(e.name, e.weight) for e in s.enabled]


@pytest.mark.parametrize(
    ("default", "custom", "expected"),
    [
        pytest.param([E("A"), E("B", 2)], [], [("A", None), ("B", 2)], id="no-custom"),
        pytest.param(
            [E("A"), E("B", 2)], [E("B", 5)], [("A", None), ("B", 5)], id="replace-in-place-keeps-position"
        ),
        pytest.param(
            [E("A"), E("B")], [E("C"), E("A", 4)], [("A", 4), ("B", None), ("C", None)], id="custom-appended"
        ),
        pytest.param(
            [E("A")], [E("C"), E("C")], [("A", None), ("C", None), ("C", None)], id="duplicates-kept"
        ),
        pytest.param([E("A")], [E("A", 1), E("A", 2)], [("A", 2), ("A", 1)], id="last-duplicate-replaces"),
    ],
)
def test_merge_plugin_set_enabled(
    default: list[config.Entry], custom: list[config.Entry], expected: Any
) -> None:
    merged = config.merge_plugin_set(config.PluginSet(tuple(default)), config.PluginSet(tuple(custom)))
    assert names_weights(merged) == expected


@pytest.mark.parametrize(
    ("disabled", "expected"),
    [
        pytest.param(["B"], ["A", "C", "X"], id="one"),
        pytest.param(["*"], ["X"], id="star-drops-all-defaults"),
        pytest.param(["X"], ["A", "B", "C", "X"], id="disabling-a-custom-one-does-not-drop-it"),
    ],
)
def test_merge_plugin_set_disabled(disabled: list[str], expected: list[str]) -> None:
    default = config.PluginSet((E("A"), E("B"), E("C")))
    custom = config.PluginSet((E("X"),), tuple(E(n) for n in disabled))
    merged = config.merge_plugin_set(default, custom)
    assert [e.name for e in merged.enabled] == expected
    assert [e.name for e in merged.disabled] == disabled


# --- resolved pipelines: every merge rule --------------------------------------------------------------------------


def test_score_enabled_default_is_moved_first_with_its_weight() -> None:
    p = one_profile({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}})
    assert score(p)[0] == ("NodeResourcesFit", 5)
    assert [n for n, _ in score(p)[1:]] == [n for n, _ in DEFAULT_SCORE if n != "NodeResourcesFit"]


def test_score_enabled_without_weight_beats_multipoint_weight() -> None:
    p = one_profile({"score": {"enabled": [{"name": "TaintToleration"}]}})
    assert score(p)[0] == ("TaintToleration", 1)


def test_score_enabled_weight_beats_user_multipoint_weight() -> None:
    p = one_profile(
        {
            "multiPoint": {"enabled": [{"name": "Concentrate", "weight": 5}]},
            "score": {"enabled": [{"name": "Concentrate", "weight": 9}]},
        },
        pluginConfig=[{"name": "Concentrate", "args": {"labelKey": "app"}}],
    )
    assert score(p)[0] == ("Concentrate", 9)
    assert [n for n, _ in score(p)].count("Concentrate") == 1


def test_multipoint_weight_override_keeps_default_position() -> None:
    p = one_profile({"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 7}]}})
    assert score(p) == [*DEFAULT_SCORE[:-1], ("ImageLocality", 7)]
    p = one_profile({"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 10}]}})
    assert score(p)[0] == ("TaintToleration", 10)
    assert list(p.names("filter")) == DEFAULT_FILTER


@pytest.mark.parametrize("weight", [pytest.param(None, id="unset"), pytest.param(0, id="zero")])
def test_weight_unset_or_zero_means_one(weight: int | None) -> None:
    entry: dict[str, Any] = {"name": "TaintToleration"}
    if weight is not None:
        entry["weight"] = weight
    p = one_profile({"multiPoint": {"enabled": [entry]}})
    assert dict(score(p))["TaintToleration"] == 1


def test_custom_multipoint_plugin_goes_after_defaults_and_only_where_it_implements() -> None:
    p = one_profile(
        {"multiPoint": {"enabled": [{"name": "Concentrate", "weight": 5}]}},
        pluginConfig=[{"name": "Concentrate", "args": {"labelKey": "app"}}],
    )
    assert score(p) == [*DEFAULT_SCORE, ("Concentrate", 5)]
    assert p.names("preScore")[-1] == "Concentrate"
    assert "Concentrate" not in p.names("filter") and "Concentrate" not in p.names("preFilter")


def test_custom_specific_point_plugin_goes_after_multipoint_plugins() -> None:
    p = one_profile(
        {"score": {"enabled": [{"name": "Concentrate", "weight": 10}]}},
        pluginConfig=[{"name": "Concentrate", "args": {"labelKey": "app"}}],
    )
    assert score(p) == [*DEFAULT_SCORE, ("Concentrate", 10)]


def test_order_overridden_then_multipoint_then_other_specific() -> None:
    p = one_profile(
        {
            "score": {
                "enabled": [
                    {"name": "Concentrate", "weight": 4},
                    {"name": "ImageLocality", "weight": 6},
                    {"name": "NodeAffinity"},
                ]
            }
        },
        pluginConfig=[{"name": "Concentrate", "args": {"labelKey": "app"}}],
    )
    assert score(p) == [
        ("ImageLocality", 6),
        ("NodeAffinity", 1),
        ("TaintToleration", 3),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("Concentrate", 4),
    ]


def test_filter_override_moves_plugin_first() -> None:
    p = one_profile({"filter": {"enabled": [{"name": "NodeResourcesFit"}]}})
    assert list(p.names("filter")) == [
        "NodeResourcesFit",
        *[n for n in DEFAULT_FILTER if n != "NodeResourcesFit"],
    ]


def test_disabling_under_score_alone_leaves_prescore_and_filter() -> None:
    p = one_profile({"score": {"disabled": [{"name": "TaintToleration"}]}})
    assert "TaintToleration" not in p.names("score")
    assert "TaintToleration" in p.names("preScore")
    assert "TaintToleration" in p.names("filter")


def test_disabling_in_multipoint_removes_it_everywhere() -> None:
    p = one_profile({"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}})
    assert all("NodeResourcesFit" not in p.names(pt) for pt in POINT_NAMES)
    assert "NodeResourcesFit" not in p.plugin_args


def test_star_disabled_at_a_point_skips_multipoint_expansion_there() -> None:
    p = one_profile(
        {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality", "weight": 2}]}}
    )
    assert score(p) == [("ImageLocality", 2)]
    assert list(p.names("preScore")) == DEFAULT_PRE_SCORE


def test_star_disabled_in_multipoint_keeps_only_what_the_user_lists() -> None:
    p = one_profile(
        {
            "multiPoint": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "PrioritySort"}, {"name": "NodeName"}, {"name": "DefaultBinder"}],
            }
        }
    )
    assert {pt: p.names(pt) for pt in POINT_NAMES if p.names(pt)} == {
        "queueSort": ("PrioritySort",),
        "filter": ("NodeName",),
        "bind": ("DefaultBinder",),
    }
    assert p.plugin_args == {}


def test_plugin_enabled_in_multipoint_but_disabled_at_one_point() -> None:
    p = one_profile(
        {
            "multiPoint": {"enabled": [{"name": "Concentrate", "weight": 2}]},
            "score": {"disabled": [{"name": "Concentrate"}]},
        },
        pluginConfig=[{"name": "Concentrate", "args": {"labelKey": "app"}}],
    )
    assert "Concentrate" not in p.names("score")


def test_spec_2_8_example() -> None:
    doc = {
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": "concentrate-scheduler",
                "percentageOfNodesToScore": 100,
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": "Concentrate", "weight": 5}],
                        "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                    }
                },
                "pluginConfig": [
                    {"name": "Concentrate", "args": {"labelKey": "app.kubernetes.io/instance"}},
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                    {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
                ],
            },
        ]
    }
    cfg = parse(doc)
    default, concentrate = cfg.profiles
    assert score(default) == DEFAULT_SCORE
    assert concentrate.percentage_of_nodes_to_score == 100
    assert score(concentrate) == [
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("ImageLocality", 1),
        ("Concentrate", 5),
    ]
    assert "NodeResourcesBalancedAllocation" not in concentrate.names("preScore")
    args = concentrate.plugin_args
    assert args["Concentrate"].to_dict() == {"labelKey": "app.kubernetes.io/instance"}
    assert args["PodTopologySpread"].to_dict() == {"defaultingType": "List"}
    assert "NodeResourcesBalancedAllocation" not in args
    # user entries first in their order, then defaults for the other enabled plugins (sorted by name)
    names = [pc["name"] for pc in cfg.raw["profiles"][1]["pluginConfig"]]
    assert names == [
        "Concentrate",
        "NodeResourcesFit",
        "PodTopologySpread",
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "VolumeBinding",
    ]
    assert cfg.profiles[0].plugin_args["PodTopologySpread"].to_dict() == {"defaultingType": "System"}


def test_args_for_a_plugin_not_enabled_anywhere_are_accepted() -> None:
    p = one_profile({}, pluginConfig=[{"name": "Concentrate", "args": {"labelKey": "team"}}])
    assert p.plugin_args["Concentrate"].to_dict() == {"labelKey": "team"}
    assert "Concentrate" not in p.enabled_plugins()


def test_args_may_carry_their_type_meta() -> None:
    args = {"apiVersion": config.API_VERSION, "kind": "ConcentrateArgs", "labelKey": "app"}
    p = one_profile({}, pluginConfig=[{"name": "Concentrate", "args": args}])
    assert p.plugin_args["Concentrate"].to_dict() == {"labelKey": "app"}


def test_argless_plugin_with_empty_args_is_fine() -> None:
    p = one_profile({}, pluginConfig=[{"name": "PrioritySort", "args": {}}, {"name": "NodeName"}])
    assert "PrioritySort" not in p.plugin_args


def test_user_plugin_from_the_registry_is_usable() -> None:
    spec = PluginSpec(name="MyScore", plugin_class=fakes.plugin_class("MyScore", ("preScore", "score")))
    reg = fakes.fake_registry((spec,))
    cfg = parse(
        {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "MyScore", "weight": 3}]}}}]}, reg
    )
    p = cfg.profiles[0]
    assert score(p)[-1] == ("MyScore", 3)
    assert p.names("preScore")[-1] == "MyScore"


def test_extender_ignored_resources_go_into_node_resources_fit_args_of_every_profile() -> None:
    cfg = parse(
        {
            "profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}],
            "extenders": [
                {
                    "urlPrefix": "http://x",
                    "filterVerb": "filter",
                    "managedResources": [
                        {"name": "example.com/gpu", "ignoredByScheduler": True},
                        {"name": "example.com/fpga"},
                    ],
                }
            ],
        }
    )
    for p in cfg.profiles:
        assert p.plugin_args["NodeResourcesFit"].to_dict()["ignoredResources"] == ["example.com/gpu"]
    (ext,) = cfg.extenders
    assert ext.is_filter and not ext.is_prioritizer and not ext.is_binder
    assert ext.managed_resources == (
        config.ManagedResource("example.com/gpu", True),
        config.ManagedResource("example.com/fpga", False),
    )


def test_extender_fields_decode() -> None:
    (ext,) = parse(
        {
            "extenders": [
                {
                    "urlPrefix": "https://ext",
                    "prioritizeVerb": "prio",
                    "bindVerb": "bind",
                    "weight": 5,
                    "enableHTTPS": True,
                    "tlsConfig": {"insecure": True, "serverName": "ext", "caData": "aGVsbG8="},
                    "httpTimeout": "30s",
                    "nodeCacheCapable": True,
                    "ignorable": True,
                }
            ]
        }
    ).extenders
    assert (ext.weight, ext.http_timeout_seconds, ext.is_binder, ext.ignorable) == (5, 30.0, True, True)
    assert ext.tls_config == {"insecure": True, "serverName": "ext", "caData": "aGVsbG8="}


# --- to_dict -------------------------------------------------------------------------------------------------------


def test_to_dict_is_the_defaulted_document() -> None:
    cfg = config.default_config(fakes.fake_registry())
    doc = config.to_dict(cfg)
    assert doc["apiVersion"] == config.API_VERSION and doc["kind"] == config.KIND
    assert doc["leaderElection"]["leaseDuration"] == "15s"
    assert doc["leaderElection"]["retryPeriod"] == "2s"
    assert doc["clientConnection"]["contentType"] == "application/vnd.kubernetes.protobuf"
    (profile,) = doc["profiles"]
    assert profile["schedulerName"] == "default-scheduler"
    assert list(profile["plugins"]) == ["multiPoint"]
    assert [e["name"] for e in profile["plugins"]["multiPoint"]["enabled"]] == [
        p.name for p in defaults.DEFAULT_PLUGINS
    ]
    first = profile["pluginConfig"][0]
    assert first["args"]["kind"] == "DefaultPreemptionArgs"
    # a copy: changing it does not change the configuration
    doc["parallelism"] = 99
    assert cfg.raw["parallelism"] == 16


def test_to_dict_expanded_lists_what_runs() -> None:
    cfg = parse({"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 4}]}}}]})
    plugins = config.to_dict(cfg, expanded=True)["profiles"][0]["plugins"]
    assert "multiPoint" not in plugins and "permit" not in plugins
    assert plugins["score"]["enabled"][0] == {"name": "ImageLocality", "weight": 4}
    assert plugins["bind"]["enabled"] == [{"name": "DefaultBinder"}]


def test_to_dict_keeps_the_user_sets_and_round_trips() -> None:
    doc = {
        "profiles": [
            {
                "schedulerName": "x",
                "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}},
            }
        ]
    }
    cfg = parse(doc)
    out = config.to_dict(cfg)
    assert out["profiles"][0]["plugins"]["score"] == {"disabled": [{"name": "ImageLocality"}]}
    again = config.parse(out, "round-trip", fakes.fake_registry())
    assert again.profiles == cfg.profiles


# --- load ------------------------------------------------------------------------------------------------------------


def test_load_reads_a_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: academy-default\n"
        "- schedulerName: academy-concentrate\n"
        "  plugins:\n"
        "    multiPoint:\n"
        "      enabled: [{name: Concentrate, weight: 10}]\n"
        "  pluginConfig:\n"
        "  - {name: Concentrate, args: {labelKey: app}}\n"
    )
    cfg = config.load(path, fakes.fake_registry())
    assert cfg.scheduler_names == ("academy-default", "academy-concentrate")
    assert score(cfg.profiles[1])[-1] == ("Concentrate", 10)
    assert cfg.source == str(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "the file is empty", id="empty"),
        pytest.param("apiVersion: v1\n---\nkind: x\n", "found 2", id="two-documents"),
        pytest.param("a: [\n", "malformed YAML", id="malformed"),
    ],
)
def test_load_file_problems(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        config.load(path, fakes.fake_registry())
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert err.value.exit_code == 2


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        config.load(tmp_path / "nope.yaml", fakes.fake_registry())


def test_problems_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 0\n"
    )
    with pytest.raises(MultiInputError) as err:
        config.load(path, fakes.fake_registry())
    assert err.value.problems == [
        f"{path}: parallelism: Invalid value: 0: should be an integer value greater than zero"
    ]


# --- against the real in-tree plugins -------------------------------------------------------------------------------


def test_real_registry_default_profile_matches_upstream_expansion() -> None:
    """Upstream ``ExpandedPluginsV1`` (testing/defaults) without the removed cloud plugins, plus DynamicResources
    (DRA is on in 1.34/1.35) -- pinned whole, point by point."""
    p = config.default_config().profiles[0]
    got = {
        pt: [f"{r.name}:{r.weight}" if pt == "score" else r.name for r in p.plugins[pt]] for pt in POINT_NAMES
    }
    assert got == {
        "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
        "queueSort": ["PrioritySort"],
        "preFilter": [
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
        ],
        "filter": DEFAULT_FILTER,
        "postFilter": ["DynamicResources", "DefaultPreemption"],
        "preScore": DEFAULT_PRE_SCORE,
        "score": [f"{n}:{w}" for n, w in DEFAULT_SCORE],
        "reserve": ["VolumeBinding", "DynamicResources"],
        "permit": [],
        "preBind": ["VolumeBinding", "DynamicResources"],
        "bind": ["DefaultBinder"],
        "postBind": [],
    }
    assert sorted(p.plugin_args) == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]


def test_real_registry_spec_2_8_example(tmp_path: Path) -> None:
    path = tmp_path / "example.yaml"
    path.write_text(
        """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler            # defaults: spread
- schedulerName: concentrate-scheduler
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      enabled:  [{name: Concentrate, weight: 5}]
      disabled: [{name: NodeResourcesBalancedAllocation}]
  pluginConfig:
  - {name: Concentrate, args: {labelKey: app.kubernetes.io/instance}}
  - {name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}
  - {name: PodTopologySpread, args: {defaultingType: List}}   # no system-default spreading
"""
    )
    cfg = config.load(path)
    concentrate = cfg.profile("concentrate-scheduler")
    assert concentrate is not None
    assert score(concentrate)[-1] == ("Concentrate", 5)
    assert "NodeResourcesBalancedAllocation" not in concentrate.enabled_plugins()
    fit = config.to_dict(cfg)["profiles"][1]["pluginConfig"][1]
    assert fit["name"] == "NodeResourcesFit"
    assert fit["args"]["kind"] == "NodeResourcesFitArgs"
    assert fit["args"]["scoringStrategy"]["type"] == "MostAllocated"


def test_real_registry_reports_plugin_args_problems() -> None:
    doc = {
        **HEAD,
        "profiles": [
            {
                "pluginConfig": [
                    {"name": "Concentrate", "args": {"labelKey": ""}},
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Sideways"}}},
                ]
            }
        ],
    }
    with pytest.raises(MultiInputError) as err:
        config.parse(doc, "c.yaml")
    assert len(err.value.problems) >= 2
    assert any(p.startswith("c.yaml: profiles[0].pluginConfig[0].args.labelKey") for p in err.value.problems)
    assert any(
        p.startswith("c.yaml: profiles[0].pluginConfig[1].args.scoringStrategy") for p in err.value.problems
    )


# --- upstream framework_test.go TestNewFrameworkMultiPointExpansion, case by case ----------------------------------

ALL_POINTS = frozenset(POINT_NAMES)
UPSTREAM_IMPLEMENTS = {
    "testPlugin": ALL_POINTS - {"preEnqueue"},  # upstream TestPlugin has every point but PreEnqueue
    "scorePlugin1": frozenset({"preScore", "score"}),
    "scorePlugin2": frozenset({"preScore", "score"}),
    "scoreWithNormalizePlugin1": frozenset({"score"}),
    "queueSortPlugin": frozenset({"queueSort"}),
    "bindPlugin": frozenset({"bind"}),
}
T_EVERYWHERE = {p: ["testPlugin"] for p in POINT_NAMES if p != "preEnqueue"}


def pset(enabled: list[Any] = (), disabled: list[str] = ()) -> config.PluginSet:  # type: ignore[assignment]
    entries = [
        E(e, None, f"e{i}") if isinstance(e, str) else E(e[0], e[1], f"e{i}") for i, e in enumerate(enabled)
    ]
    return config.PluginSet(tuple(entries), tuple(E(n, None, f"d{n}") for n in disabled))


def expand_all(sets: dict[str, config.PluginSet]) -> tuple[dict[str, list[Any]], list[str]]:
    multi = sets.get("multiPoint", config.PluginSet())
    out: dict[str, list[Any]] = {}
    errors: list[str] = []
    for point in config.BUILD_ORDER:
        expansion = config.expand_point(
            point, sets.get(point, config.PluginSet()), multi, UPSTREAM_IMPLEMENTS
        )
        errors.extend(bp.message for bp in expansion.problems)
        if expansion.names:
            out[point] = expansion.names
    weights, _ = config.score_weights(sets.get("score", config.PluginSet()), multi, UPSTREAM_IMPLEMENTS)
    if "score" in out:
        out["score"] = [(n, weights[n]) for n in out["score"]]
    return out, errors


@pytest.mark.parametrize(
    ("sets", "want"),
    [
        pytest.param(
            {"multiPoint": pset([("testPlugin", 5)])},
            {**T_EVERYWHERE, "score": [("testPlugin", 5)]},
            id="plugin-expansion",
        ),
        pytest.param(
            {
                "multiPoint": pset(["testPlugin"]),
                "preScore": pset(disabled=["testPlugin"]),
                "score": pset(disabled=["testPlugin"]),
            },
            {p: v for p, v in T_EVERYWHERE.items() if p not in ("preScore", "score")},
            id="disable-multipoint-plugin-at-some-points",
        ),
        pytest.param(
            {"multiPoint": pset(["testPlugin", "scorePlugin1"])},
            {
                **T_EVERYWHERE,
                "preScore": ["testPlugin", "scorePlugin1"],
                "score": [("testPlugin", 1), ("scorePlugin1", 1)],
            },
            id="multiple-multipoint-plugins",
        ),
        pytest.param(
            {"multiPoint": pset(["testPlugin", "scorePlugin1"]), "preScore": pset(disabled=["*"])},
            {
                **{p: v for p, v in T_EVERYWHERE.items() if p != "preScore"},
                "score": [("testPlugin", 1), ("scorePlugin1", 1)],
            },
            id="disable-multipoint-extension-with-star",
        ),
        pytest.param(
            {
                "multiPoint": pset(["scoreWithNormalizePlugin1", "testPlugin", "scorePlugin1"]),
                "score": pset(["scorePlugin1", "testPlugin"]),
            },
            {
                **T_EVERYWHERE,
                "preScore": ["testPlugin", "scorePlugin1"],
                "score": [("scorePlugin1", 1), ("testPlugin", 1), ("scoreWithNormalizePlugin1", 1)],
            },
            id="specified-extension-takes-precedence",
        ),
        pytest.param(
            {
                "multiPoint": pset(["testPlugin", "scorePlugin1"]),
                "score": pset(["scoreWithNormalizePlugin1", "scorePlugin1", "testPlugin"]),
            },
            {
                **T_EVERYWHERE,
                "preScore": ["testPlugin", "scorePlugin1"],
                "score": [("scorePlugin1", 1), ("testPlugin", 1), ("scoreWithNormalizePlugin1", 1)],
            },
            id="precedence-only-when-in-multipoint",
        ),
        pytest.param(
            {
                "multiPoint": pset(["testPlugin", "scorePlugin1"]),
                "score": pset([("scorePlugin1", 5), ("testPlugin", 3)]),
            },
            {
                **T_EVERYWHERE,
                "preScore": ["testPlugin", "scorePlugin1"],
                "score": [("scorePlugin1", 5), ("testPlugin", 3)],
            },
            id="override-multipoint-weights",
        ),
        pytest.param(
            {
                "multiPoint": config.merge_plugin_set(
                    config.PluginSet(), pset(["queueSortPlugin", "bindPlugin", "scorePlugin1"], ["*"])
                )
            },
            {
                "queueSort": ["queueSortPlugin"],
                "preScore": ["scorePlugin1"],
                "score": [("scorePlugin1", 1)],
                "bind": ["bindPlugin"],
            },
            id="disable-and-enable-with-star",
        ),
        pytest.param(
            {
                "multiPoint": pset(["testPlugin", "scorePlugin1"]),
                "score": pset([("scorePlugin1", 5), ("scorePlugin2", 5), ("testPlugin", 3)]),
            },
            {
                **T_EVERYWHERE,
                "preScore": ["testPlugin", "scorePlugin1"],
                "score": [("scorePlugin1", 5), ("testPlugin", 3), ("scorePlugin2", 5)],
            },
            id="override-weights-and-load-once",
        ),
    ],
)
def test_upstream_multipoint_expansion_cases(
    sets: dict[str, config.PluginSet], want: dict[str, list[Any]]
) -> None:
    got, errors = expand_all(sets)
    assert errors == []
    assert got == want


def test_upstream_multipoint_already_registered() -> None:
    _, errors = expand_all({"multiPoint": pset(["testPlugin", "testPlugin"])})
    assert errors[0] == 'plugin "testPlugin" already registered as "PreFilterPlugin"'


def test_load_refuses_repeated_keys(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "parallelism: 4\n"
        "profiles:\n"
        "- schedulerName: a\n"
        "  schedulerName: b\n"
        "parallelism: 8\n"
    )
    with pytest.raises(MultiInputError) as err:
        config.load(path, fakes.fake_registry())
    assert err.value.problems == [
        f'{path}: profiles[0]: key "schedulerName" already set in map (line 6)',
        f'{path}: key "parallelism" already set in map (line 7)',
    ]
