"""KubeSchedulerConfiguration problems: strict decoding, validation and framework-build checks, all reported at once.

Each case names the exact line a user sees (field path first, upstream ``field.Error`` wording), without the
file prefix, which :func:`problems` strips.
"""

from __future__ import annotations

from typing import Any

import pytest
import test_config_fakes as fakes

from berth.kube.errors import MultiInputError
from berth.schedule import config

HEAD = {"apiVersion": config.API_VERSION, "kind": config.KIND}
SRC = "cfg.yaml"


def problems(doc: Any, with_head: bool = True) -> list[str]:
    data = {**HEAD, **doc} if with_head and isinstance(doc, dict) else doc
    with pytest.raises(MultiInputError) as err:
        config.parse(data, SRC, fakes.fake_registry())
    assert err.value.exit_code == 2
    lines = err.value.problems
    assert all(line.startswith(f"{SRC}: ") for line in lines)
    return [line[len(SRC) + 2 :] for line in lines]


def prof(**fields: Any) -> dict[str, Any]:
    return {"profiles": [{"schedulerName": "p", **fields}]}


CONC_ARGS = [{"name": "Concentrate", "args": {"labelKey": "app"}}]

CASES = [
    # --- document and type meta
    pytest.param(
        {"kind": config.KIND},
        ['apiVersion: Required value: set apiVersion: "kubescheduler.config.k8s.io/v1"'],
        False,
        id="apiVersion-missing",
    ),
    pytest.param(
        {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": config.KIND},
        [
            'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported values: '
            '"kubescheduler.config.k8s.io/v1" (v1beta2 and v1beta3 were removed in Kubernetes 1.28/1.29; v1 is '
            "the only version)"
        ],
        False,
        id="apiVersion-removed-beta",
    ),
    pytest.param(
        {"apiVersion": config.API_VERSION, "kind": "KubeProxyConfiguration"},
        ['kind: Unsupported value: "KubeProxyConfiguration": supported values: "KubeSchedulerConfiguration"'],
        False,
        id="wrong-kind",
    ),
    pytest.param(
        ["not", "a", "mapping"],
        [
            'Invalid value: ["not", "a", "mapping"]: must be a KubeSchedulerConfiguration object (a mapping), '
            "not a list"
        ],
        False,
        id="not-a-mapping",
    ),
    # --- strict decoding
    pytest.param({"paralelism": 4}, ['unknown field "paralelism"'], True, id="unknown-top-level-field"),
    pytest.param(
        prof(plugins={"scor": {}}),
        ['profiles[0].plugins: unknown field "scor"'],
        True,
        id="unknown-nested-field",
    ),
    pytest.param(
        prof(plugins={"placementScore": {}}),
        ['profiles[0].plugins: unknown field "placementScore"'],
        True,
        id="1.36-point-is-unknown-in-1.35",
    ),
    pytest.param(
        {"parallelism": "16"},
        ['parallelism: Invalid value: "16": must be an integer'],
        True,
        id="wrong-type-int",
    ),
    pytest.param(
        {"enableProfiling": "yes please"},
        ['enableProfiling: Invalid value: "yes please": must be a boolean (true or false)'],
        True,
        id="wrong-type-bool",
    ),
    pytest.param(
        prof(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": "heavy"}]}}),
        ['profiles[0].plugins.score.enabled[0].weight: Invalid value: "heavy": must be an integer'],
        True,
        id="weight-wrong-type",
    ),
    pytest.param(
        prof(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": 2**31}]}}),
        [
            "profiles[0].plugins.score.enabled[0].weight: Invalid value: 2147483648: must fit in a 32-bit signed integer"
        ],
        True,
        id="weight-overflows-int32",
    ),
    pytest.param(
        prof(plugins={"score": {"enabled": "ImageLocality"}}),
        ['profiles[0].plugins.score.enabled: Invalid value: "ImageLocality": must be a list, not a string'],
        True,
        id="enabled-not-a-list",
    ),
    pytest.param(
        prof(plugins={"score": {"enabled": [{"weight": 2}]}}),
        ["profiles[0].plugins.score.enabled[0].name: Required value"],
        True,
        id="plugin-name-missing",
    ),
    pytest.param(
        {"leaderElection": {"leaseDuration": 15}},
        [
            'leaderElection.leaseDuration: Invalid value: 15: must be a duration string such as "15s" or "1m30s"'
        ],
        True,
        id="duration-not-a-string",
    ),
    pytest.param(
        {"profiles": "default-scheduler"},
        ['profiles: Invalid value: "default-scheduler": must be a list, not a string'],
        True,
        id="profiles-not-a-list",
    ),
    # --- top-level validation
    pytest.param(
        {"parallelism": 0},
        ["parallelism: Invalid value: 0: should be an integer value greater than zero"],
        True,
        id="parallelism-zero",
    ),
    pytest.param(
        {"percentageOfNodesToScore": 120},
        ["percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]"],
        True,
        id="percentage-120",
    ),
    pytest.param(
        prof(percentageOfNodesToScore=-1),
        ["profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"],
        True,
        id="profile-percentage-negative",
    ),
    pytest.param(
        {"podInitialBackoffSeconds": 0},
        ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"],
        True,
        id="initial-backoff-zero",
    ),
    pytest.param(
        {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
        ["podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"],
        True,
        id="backoff-order",
    ),
    pytest.param(
        {"leaderElection": {"resourceLock": "endpointsleases"}},
        [
            'leaderElection.resourceLock: Invalid value: "endpointsleases": resourceLock value must be "leases"'
        ],
        True,
        id="resource-lock",
    ),
    pytest.param(
        {"leaderElection": {"leaseDuration": "5s", "renewDeadline": "10s"}},
        ['leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`'],
        True,
        id="lease-not-longer-than-renew",
    ),
    pytest.param(
        {"leaderElection": {"retryPeriod": "-2s"}},
        ['leaderElection.retryPeriod: Invalid value: "-2s": must be greater than zero'],
        True,
        id="negative-duration",
    ),
    pytest.param(
        {"clientConnection": {"burst": -1}},
        ["clientConnection.burst: Invalid value: -1: must be non-negative"],
        True,
        id="burst-negative",
    ),
    # --- profiles
    pytest.param(
        {"profiles": [{"schedulerName": "x"}, {"schedulerName": "y"}, {"schedulerName": "x"}]},
        ['profiles[2].schedulerName: Duplicate value: "x"'],
        True,
        id="duplicate-scheduler-name",
    ),
    pytest.param(
        {"profiles": [{"schedulerName": "a"}, {}]},
        ["profiles[1].schedulerName: Required value"],
        True,
        id="unnamed-among-several",
    ),
    pytest.param(
        {"profiles": [{"schedulerName": ""}]},
        ["profiles[0].schedulerName: Required value"],
        True,
        id="lone-explicit-empty-name",
    ),
    # --- queue sort
    pytest.param(
        {
            "profiles": [
                {"schedulerName": "a"},
                {
                    "schedulerName": "b",
                    "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                },
            ]
        },
        [
            'profiles[1].plugins.queueSort: Invalid value: {"enabled": [{"name": "PrioritySort"}]}: must be the '
            "same for all profiles"
        ],
        True,
        id="queue-sort-set-differs",
    ),
    pytest.param(
        {
            "profiles": [
                {
                    "schedulerName": "a",
                    "plugins": {
                        "queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "QSort"}]},
                    },
                }
            ]
        },
        [
            "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"
        ],
        True,
        id="two-queue-sorts",
    ),
    pytest.param(
        {
            "profiles": [
                {"schedulerName": "a"},
                {
                    "schedulerName": "b",
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "QSort"}], "disabled": [{"name": "PrioritySort"}]}
                    },
                },
            ]
        },
        [
            'profiles[1].plugins.queueSort: Invalid value: "QSort": different queue sort plugins for profile "b": '
            '"QSort", first: "PrioritySort" (all profiles share one queue, so they must use the same queue sort)'
        ],
        True,
        id="queue-sort-differs-via-multipoint",
    ),
    pytest.param(
        prof(plugins={"multiPoint": {"disabled": [{"name": "PrioritySort"}]}}),
        [
            "profiles[0].plugins.queueSort: Invalid value: 0: only one queue sort plugin required for profile with "
            'scheduler name "p", but got 0'
        ],
        True,
        id="no-queue-sort",
    ),
    # --- plugin names and placement
    pytest.param(
        prof(plugins={"filter": {"enabled": [{"name": "NodeNam"}]}}),
        [
            'profiles[0].plugins.filter.enabled[0].name: Not found: "NodeNam": no plugin of that name is '
            'registered (in-tree, entry point or --plugin MODULE:CLASS); did you mean "NodeName"?'
        ],
        True,
        id="unknown-plugin-enabled",
    ),
    pytest.param(
        prof(plugins={"score": {"disabled": [{"name": "ImageLocalty"}]}}),
        [
            'profiles[0].plugins.score.disabled[0].name: Not found: "ImageLocalty": no plugin of that name is '
            'registered (in-tree, entry point or --plugin MODULE:CLASS); did you mean "ImageLocality"?'
        ],
        True,
        id="unknown-plugin-disabled",
    ),
    pytest.param(
        prof(plugins={"multiPoint": {"enabled": [{"name": "Zzzzz"}]}}),
        [
            'profiles[0].plugins.multiPoint.enabled[0].name: Not found: "Zzzzz": no plugin of that name is '
            "registered (in-tree, entry point or --plugin MODULE:CLASS)"
        ],
        True,
        id="unknown-plugin-multipoint",
    ),
    pytest.param(
        prof(pluginConfig=[{"name": "Concentrat", "args": {"labelKey": "x"}}]),
        [
            'profiles[0].pluginConfig[0].name: Not found: "Concentrat": no plugin of that name is registered '
            '(in-tree, entry point or --plugin MODULE:CLASS); did you mean "Concentrate"?'
        ],
        True,
        id="unknown-plugin-config",
    ),
    pytest.param(
        prof(plugins={"filter": {"enabled": [{"name": "EBSLimits"}]}}),
        [
            'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
            '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
        ],
        True,
        id="removed-plugin",
    ),
    pytest.param(
        prof(plugins={"score": {"enabled": [{"name": "NodeName", "weight": 2}]}}),
        [
            'profiles[0].plugins.score.enabled[0].name: Invalid value: "NodeName": plugin "NodeName" does not '
            "extend ScorePlugin plugin"
        ],
        True,
        id="does-not-extend",
    ),
    pytest.param(
        prof(plugins={"filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeName"}]}}),
        [
            'profiles[0].plugins.filter.enabled[1].name: Duplicate value: "NodeName": plugin "NodeName" already '
            'registered as "FilterPlugin"'
        ],
        True,
        id="duplicate-at-a-point",
    ),
    pytest.param(
        prof(
            plugins={"multiPoint": {"enabled": [{"name": "Concentrate"}, {"name": "Concentrate"}]}},
            pluginConfig=CONC_ARGS,
        ),
        [
            'profiles[0].plugins.multiPoint.enabled[1].name: Duplicate value: "Concentrate": plugin "Concentrate" '
            'already registered as "PreScorePlugin"'
        ],
        True,
        id="duplicate-in-multipoint",
    ),
    pytest.param(
        prof(plugins={"multiPoint": {"disabled": [{"name": "DefaultBinder"}]}}),
        [
            "profiles[0].plugins.bind: Required value: at least one bind plugin is needed for profile with "
            'scheduler name "p"'
        ],
        True,
        id="no-bind-plugin",
    ),
    pytest.param(
        prof(plugins={"score": {"enabled": [{"name": "ImageLocality", "weight": -2}]}}),
        [
            "profiles[0].plugins.score.enabled[0].weight: Invalid value: -2: must not be negative (unset or 0 means 1)"
        ],
        True,
        id="negative-weight",
    ),
    # --- pluginConfig
    pytest.param(
        prof(pluginConfig=[*CONC_ARGS, {"name": "Concentrate", "args": {"labelKey": "b"}}]),
        ['profiles[0].pluginConfig[1]: Duplicate value: "Concentrate"'],
        True,
        id="duplicate-plugin-config",
    ),
    pytest.param(
        prof(pluginConfig=[{"name": "Concentrate", "args": {}}]),
        ["profiles[0].pluginConfig[0].args.labelKey: Required value: labelKey is required"],
        True,
        id="args-validation",
    ),
    pytest.param(
        prof(pluginConfig=[{"name": "Concentrate", "args": {"labelKey": "a", "extra": 1}}]),
        ['profiles[0].pluginConfig[0].args: unknown field "extra"'],
        True,
        id="args-unknown-field",
    ),
    pytest.param(
        prof(pluginConfig=[{"name": "PrioritySort", "args": {"x": 1}}]),
        [
            'profiles[0].pluginConfig[0].args: Invalid value: {"x": 1}: plugin PrioritySort takes no args; remove '
            "this pluginConfig entry"
        ],
        True,
        id="args-for-argless-plugin",
    ),
    pytest.param(
        prof(pluginConfig=[{"args": {}}]),
        ["profiles[0].pluginConfig[0].name: Required value: the plugin these args are for"],
        True,
        id="plugin-config-without-name",
    ),
    pytest.param(
        prof(pluginConfig=[{"name": "GCEPDLimits"}]),
        [
            'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version '
            '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
        ],
        True,
        id="plugin-config-removed-plugin",
    ),
    # --- extenders
    pytest.param(
        {"extenders": [{"urlPrefix": "http://e", "prioritizeVerb": "p"}]},
        ["extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"],
        True,
        id="extender-weight",
    ),
    pytest.param(
        {
            "extenders": [
                {"urlPrefix": "http://a", "bindVerb": "b"},
                {"urlPrefix": "http://b", "bindVerb": "b"},
            ]
        },
        [
            'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'
        ],
        True,
        id="extender-two-binders",
    ),
    pytest.param(
        {"extenders": [{"urlPrefix": "http://a", "managedResources": [{"name": "cpu"}]}]},
        ['extenders[0].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name'],
        True,
        id="extender-native-resource",
    ),
    pytest.param(
        {
            "extenders": [
                {"urlPrefix": "http://a", "managedResources": [{"name": "example.com/gpu"}]},
                {"urlPrefix": "http://b", "managedResources": [{"name": "example.com/gpu"}]},
            ]
        },
        [
            'extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": duplicate extender managed '
            "resource name"
        ],
        True,
        id="extender-duplicate-resource",
    ),
    pytest.param(
        {"extenders": [{"urlPrefix": "http://a", "tlsConfig": {"caData": "not base64!"}}]},
        ['extenders[0].tlsConfig.caData: Invalid value: "<data>": must be base64-encoded bytes'],
        True,
        id="extender-tls-data",
    ),
]


@pytest.mark.parametrize(("doc", "expected", "with_head"), CASES)
def test_problem(doc: Any, expected: list[str], with_head: bool) -> None:
    assert problems(doc, with_head) == expected


def test_all_problems_are_reported_together() -> None:
    doc = {
        "parallelism": 0,
        "percentageOfNodesToScore": 120,
        "unknownThing": True,
        "profiles": [
            {"schedulerName": "x", "plugins": {"score": {"enabled": [{"name": "Nope", "weight": 1}]}}},
            {"schedulerName": "x", "pluginConfig": [{"name": "Concentrate", "args": {}}]},
        ],
        "podMaxBackoffSeconds": 0,
    }
    assert problems(doc) == [
        'unknown field "unknownThing"',
        'profiles[0].plugins.score.enabled[0].name: Not found: "Nope": no plugin of that name is registered '
        "(in-tree, entry point or --plugin MODULE:CLASS)",
        "profiles[1].pluginConfig[0].args.labelKey: Required value: labelKey is required",
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
        'profiles[1].schedulerName: Duplicate value: "x"',
        "percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]",
        "podMaxBackoffSeconds: Invalid value: 0: must be greater than or equal to PodInitialBackoffSeconds",
    ]


def test_error_message_lists_every_problem_with_the_file() -> None:
    with pytest.raises(MultiInputError) as err:
        config.parse({**HEAD, "parallelism": -1, "podInitialBackoffSeconds": 0}, SRC, fakes.fake_registry())
    text = str(err.value)
    assert text.startswith(f"invalid KubeSchedulerConfiguration {SRC} (2 problem(s)):")
    assert f"  - {SRC}: parallelism: Invalid value: -1" in text
    assert f"  - {SRC}: podInitialBackoffSeconds: Invalid value: 0" in text


def test_disabling_a_removed_plugin_is_tolerated() -> None:
    cfg = config.parse(
        {**HEAD, **prof(plugins={"filter": {"disabled": [{"name": "EBSLimits"}]}})},
        SRC,
        fakes.fake_registry(),
    )
    assert "EBSLimits" not in cfg.profiles[0].names("filter")


def test_score_total_overflow_guard() -> None:
    s = config.PluginSet((config.Entry("A", 2**62), config.Entry("B", 2**62)))
    implements = {"A": frozenset({"score"}), "B": frozenset({"score"})}
    weights, overflow = config.score_weights(s, config.PluginSet(), implements)
    assert weights == {"A": 2**62, "B": 2**62} and overflow
    _, overflow = config.score_weights(
        config.PluginSet((config.Entry("A", 100),)), s, {"A": frozenset({"score"})}
    )
    assert not overflow
