"""Splitting a render by Helm's rules: hook parsing, identities, file names and the per-event run order."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.install import split
from berth.kube import objects
from berth.kube.errors import InputError
from berth.kube.hooks import DeletePolicy, HookEvent

from .helpers import doc, hook


@pytest.mark.parametrize(
    ("raw", "expected", "warns"),
    [
        ("5", 5, False),
        ("-3", -3, False),
        ("+2", 2, False),
        ("0", 0, False),
        ("1.5", 0, True),
        (" 1", 0, True),
        ("", 0, False),
        ("abc", 0, True),
        ("99999999999999999999", 0, True),
    ],
    ids=["int", "negative", "plus", "zero", "decimal", "leading-space", "empty", "word", "overflow"],
)
def test_weight_is_parsed_like_go_atoi(raw: str, expected: int, warns: bool) -> None:
    result = split.from_render(hook("ConfigMap", "c", "pre-install", weight=raw))
    assert result.hooks[0].weight == expected
    assert any("hook-weight" in w for w in result.warnings) is warns


@pytest.mark.parametrize(
    ("annotation", "effective", "listed"),
    [
        (None, (DeletePolicy.BEFORE_HOOK_CREATION,), ()),
        ("hook-succeeded", (DeletePolicy.HOOK_SUCCEEDED,), ("hook-succeeded",)),
        (
            " Hook-Succeeded , before-hook-creation",
            (DeletePolicy.HOOK_SUCCEEDED, DeletePolicy.BEFORE_HOOK_CREATION),
            ("hook-succeeded", "before-hook-creation"),
        ),
        ("hook-succeded", (), ("hook-succeded",)),
        ("", (), ("",)),
        ("hook-failed", (DeletePolicy.HOOK_FAILED,), ("hook-failed",)),
    ],
    ids=[
        "default-when-absent",
        "listed",
        "trimmed-lowercased",
        "typo-disables-default",
        "empty-string",
        "failed",
    ],
)
def test_delete_policy_default_only_when_list_is_empty(
    annotation: str | None, effective: tuple[DeletePolicy, ...], listed: tuple[str, ...]
) -> None:
    h = split.from_render(hook("Job", "j", "pre-install", policy=annotation, api="batch/v1")).hooks[0]
    assert h.listed_policies == listed
    assert h.delete_policies == effective


@pytest.mark.parametrize(
    "value",
    ["pre-install,crd-install", "crd-install", "", "pre-install,", "test-failure"],
    ids=["one-unknown-part", "helm2-event", "empty", "trailing-comma", "test-failure"],
)
def test_unknown_event_drops_the_whole_document_with_a_warning(value: str) -> None:
    result = split.from_render(hook("ConfigMap", "x", value) + doc("ConfigMap", "plain"))
    assert [o.name for o in result.all_objects()] == ["plain"]
    assert any("unknown hook event" in w and "ConfigMap ns/x" in w for w in result.warnings)


def test_events_are_trimmed_lowercased_and_test_success_is_test() -> None:
    result = split.from_render(hook("Pod", "p", " Pre-Install , TEST-success"))
    assert result.hooks[0].events == (HookEvent.PRE_INSTALL, HookEvent.TEST)


def test_helm_reported_drops_become_warnings() -> None:
    result = split.from_render(doc("ConfigMap", "a"), dropped_hook_events=["pre-install,crd-install"])
    assert result.warnings and "pre-install,crd-install" in result.warnings[0]


def test_classification_ordinary_crd_secret_hook() -> None:
    text = (
        doc(
            "CustomResourceDefinition",
            "things.x.io",
            None,
            api="apiextensions.k8s.io/v1",
            source="c/crds/t.yaml",
        )
        + doc("Secret", "s")
        + doc("ConfigMap", "c")
        + hook("Secret", "hook-secret", "pre-install")
    )
    result = split.from_render(text)
    assert [o.name for o in result.crds] == ["things.x.io"]
    assert result.crds[0].from_crds_dir
    assert [o.name for o in result.secrets] == ["s"]
    assert [o.name for o in result.ordinary] == ["c"]
    assert [h.obj.name for h in result.hooks] == ["hook-secret"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (doc("ConfigMap", None), "has no metadata.name"),
        (
            "---\n# Source: c/templates/g.yaml\napiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\n",
            "generateName is not supported",
        ),
        ("---\n# Source: c/templates/s.yaml\njust a string\n", "must be a Kubernetes object"),
        ("---\n# Source: c/templates/l.yaml\n- a\n- b\n", "must be a Kubernetes object"),
        ("---\n# Source: c/templates/k.yaml\nmetadata: {name: x}\n", "no kind or apiVersion"),
        (doc("ConfigMap", "dup") + doc("ConfigMap", "dup", source="c/templates/y.yaml"), "rendered twice"),
        (doc("ConfigMap", "dup") + hook("ConfigMap", "dup", "pre-install"), "rendered twice"),
        (doc("ConfigMap", "@@@"), "no letter or digit left"),
    ],
    ids=[
        "nameless",
        "generate-name",
        "scalar",
        "list",
        "no-kind",
        "duplicate",
        "hook-also-in-base",
        "name-erased",
    ],
)
def test_bad_documents_are_refused_with_their_place(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        split.from_render(text)
    assert "c/templates/" in str(info.value) or "ConfigMap" in str(info.value)


@pytest.mark.parametrize(
    ("ref", "slug"),
    [
        (
            objects.Ref("apps", "Deployment", "kai-scheduler", "kai-operator"),
            "deployment-kai-scheduler-kai-operator",
        ),
        (
            objects.Ref("rbac.authorization.k8s.io", "ClusterRole", "", "system:aggregate-to-edit"),
            "clusterrole-systemaggregate-to-edit",
        ),
        (objects.Ref("", "ConfigMap", "ns", "My_Config.v2"), "configmap-ns-my-config-v2"),
    ],
    ids=["namespaced", "cluster-scoped-colon", "underscore-dot-case"],
)
def test_slug(ref: objects.Ref, slug: str) -> None:
    assert split.slug(ref) == slug


def test_colliding_slugs_get_stable_identity_suffixes() -> None:
    a = objects.Ref("", "Role", "a-b", "c")
    b = objects.Ref("", "Role", "a", "b-c")
    other = objects.Ref("", "Role", "x", "y")
    names = split.file_names([a, b, other])
    assert names[other] == "role-x-y.yaml"
    assert names[a] != names[b]
    assert names[a].startswith("role-a-b-c-") and names[b].startswith("role-a-b-c-")
    # identity-based: the same suffix whatever else is in the render or in which order
    assert split.file_names([b, a]) == {a: names[a], b: names[b]}


def test_event_order_is_weight_then_name_then_kind() -> None:
    # helm template prints hooks kind-sorted; the split re-sorts by kind itself, so input order does not matter
    text = (
        hook("Job", "migrate", "pre-install", weight="0", api="batch/v1")
        + hook("ServiceAccount", "runner", "pre-install")
        + hook("ConfigMap", "migrate", "pre-install")
        + hook("Role", "runner", "pre-install", weight="1.5", api="rbac.authorization.k8s.io/v1")
        + hook("ServiceAccount", "zz-first", "pre-install", weight="-1")
        + hook("ConfigMap", "b", "pre-install", weight="10")
        + hook("ConfigMap", "a", "post-install")
    )
    result = split.from_render(text)
    order = [(h.obj.kind, h.obj.name) for h in result.hooks_for(HookEvent.PRE_INSTALL)]
    assert order == [
        ("ServiceAccount", "zz-first"),
        ("ConfigMap", "migrate"),
        ("Job", "migrate"),
        ("ServiceAccount", "runner"),
        ("Role", "runner"),
        ("ConfigMap", "b"),
    ]
    assert [h.obj.name for h in result.hooks_for(HookEvent.POST_INSTALL)] == ["a"]


def test_event_listed_twice_runs_twice_and_warns() -> None:
    result = split.from_render(hook("Job", "j", "pre-install,pre-install", api="batch/v1"))
    assert len(result.hooks_for(HookEvent.PRE_INSTALL)) == 2
    assert any("listed twice" in w for w in result.warnings)


def test_crd_hooks_are_never_deletable() -> None:
    result = split.from_render(
        hook(
            "CustomResourceDefinition",
            "g.x.io",
            "pre-install",
            policy="hook-succeeded",
            api="apiextensions.k8s.io/v1",
        )
    )
    assert not result.hooks[0].deletable


def test_release_namespace_twins_are_duplicates_but_cluster_scoped_kinds_are_not() -> None:
    text = (
        doc("ConfigMap", "cfg", None)
        + doc("ConfigMap", "cfg", "rel", source="c/templates/y.yaml")
        + doc("ClusterRole", "cr", None, api="rbac.authorization.k8s.io/v1")
        + doc("ConfigMap", "other", "elsewhere")
        + doc("ConfigMap", "other", None)
    )
    problems = split.release_namespace_duplicates(split.from_render(text), "rel")
    assert problems == [
        "ConfigMap rel/cfg is rendered twice: c/templates/x.yaml (no namespace, so the release namespace) and c/templates/y.yaml"
    ]


HELM_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)
"""The lines between two documents of Helm's output: what split._chunks must cut at."""


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="-\n \ta\r#", max_size=30))
def test_a_render_is_cut_at_the_lines_the_separator_pattern_matches(text: str) -> None:
    """The string search that cuts a render into documents cuts exactly where ``^---[ \\t]*$`` matches."""
    assert split._chunks(text) == HELM_SEPARATOR.split(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "---",
        "---x",
        "----\n",
        "--- \t",
        "a\n--- \n--- \t\n---",
        "---\n---\n",
        "x---\n",
        "a\r\n---\r\nb",
        "a\n---  ",
    ],
)
def test_separator_edge_cases(text: str) -> None:
    assert split._chunks(text) == HELM_SEPARATOR.split(text)
