"""The shared layer: quantities, selectors, YAML errors, Helm vocab and kind order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from berth.kube import hooks, kinds, quantity, selectors, taints, yamlio
from berth.kube.errors import InputError


@pytest.mark.parametrize(
    ("text", "resource", "amount"),
    [
        ("100m", "cpu", 100),
        ("1", "cpu", 1000),
        ("0.5", "cpu", 500),
        ("2e3", "cpu", 2_000_000),
        ("500Mi", "memory", 500 * 2**20),
        ("32Gi", "memory", 32 * 2**30),
        ("1k", "memory", 1000),
        ("1.5Gi", "memory", int(1.5 * 2**30)),
        ("1m", "memory", 1),  # Value() rounds up
        (110, "pods", 110),
    ],
)
def test_quantities_match_upstream_rounding(text: str, resource: str, amount: int) -> None:
    assert quantity.resource_amount(resource, text) == amount


@pytest.mark.parametrize("bad", ["2x", "", "Gi", "1.2.3", "--1"])
def test_bad_quantity_names_its_place(bad: str) -> None:
    with pytest.raises(InputError, match=r"nodes.yaml document 1.*invalid quantity"):
        quantity.parse(bad, "nodes.yaml document 1: status.allocatable.cpu")


@pytest.mark.parametrize(
    ("sel", "labels", "want"),
    [
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a!=b", {}, True),
        ("a in (x, y),c", {"a": "y", "c": ""}, True),
        ("a notin (x)", {"a": "x"}, False),
        ("!a", {"b": "1"}, True),
        ("!a", {"a": "1"}, False),
        ("name=helm,owner=helm", {"name": "helm", "owner": "helm"}, True),
    ],
)
def test_label_selector_strings(sel: str, labels: dict[str, str], want: bool) -> None:
    assert selectors.parse_label_selector(sel).matches(labels) is want


def test_node_selector_operators() -> None:
    term = {
        "matchExpressions": [
            {"key": "gpu", "operator": "Gt", "values": ["2"]},
            {"key": "zone", "operator": "NotIn", "values": ["z1"]},
        ]
    }
    assert selectors.node_selector_term_matches(term, {"gpu": "4"}, "n1")
    assert not selectors.node_selector_term_matches(term, {"gpu": "x"}, "n1")
    assert not selectors.node_selector_term_matches({}, {"gpu": "4"}, "n1")  # empty term matches nothing
    fields = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert selectors.node_selector_term_matches(fields, {}, "n1")
    assert not selectors.node_selector_term_matches(fields, {}, "n2")


def test_nil_label_selector_matches_nothing_empty_matches_all() -> None:
    assert not selectors.label_selector_matches(None, {"a": "b"})
    assert selectors.label_selector_matches({}, {"a": "b"})


def test_tolerations() -> None:
    taint = {"key": "k", "value": "v", "effect": "NoSchedule"}
    assert taints.tolerates({"operator": "Exists"}, taint)
    assert taints.tolerates({"key": "k", "operator": "Equal", "value": "v"}, taint)
    assert not taints.tolerates({"key": "k", "operator": "Equal", "value": "w"}, taint)
    assert not taints.tolerates({"key": "k", "operator": "Exists", "effect": "NoExecute"}, taint)
    assert taints.first_untolerated([taint], [], ("NoSchedule",)) == taint


@pytest.mark.parametrize(
    ("raw", "weight"),
    [("5", 5), ("-3", -3), (None, 0), ("", 0), (" 1", 0), ("1.5", 0), ("99999999999999999999", 0)],
)
def test_hook_weight_parses_like_helm(raw: str | None, weight: int) -> None:
    assert hooks.parse_weight(raw) == weight


def test_hook_events() -> None:
    assert hooks.parse_event(" Pre-Install ") is hooks.HookEvent.PRE_INSTALL
    assert hooks.parse_event("test-success") is hooks.HookEvent.TEST
    assert hooks.parse_event("test-failure") is None
    assert hooks.parse_event("crd-install") is None


def test_kind_orders_pinned_whole() -> None:
    assert ",".join(kinds.INSTALL_ORDER).startswith("PriorityClass,Namespace,NetworkPolicy,ResourceQuota")
    assert kinds.UNINSTALL_ORDER[:2] == ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
    assert len(kinds.INSTALL_ORDER) == len(kinds.UNINSTALL_ORDER) == 38
    assert set(kinds.INSTALL_ORDER) == set(kinds.UNINSTALL_ORDER)
    items = ["Zeta", "Deployment", "Alpha", "Namespace"]
    assert kinds.sort_for_install(items, str) == ["Namespace", "Deployment", "Alpha", "Zeta"]


def test_yaml_errors_name_file_and_document() -> None:
    with pytest.raises(InputError, match=r"w.yaml, document 2, line \d+: malformed YAML"):
        yamlio.load_documents("a: 1\n---\nb: [\n", "w.yaml")
    with pytest.raises(InputError, match=r"w.yaml, document 1.*expected a Kubernetes object"):
        yamlio.load_objects("- 1\n- 2\n", "w.yaml")
    objs = yamlio.load_objects(
        "kind: List\nitems:\n- {kind: Pod, metadata: {name: a}}\n---\nkind: Node\n", "x"
    )
    assert [o["kind"] for _, o in objs] == ["Pod", "Node"]


def test_write_atomic(tmp_path: Path) -> None:
    target = tmp_path / "d" / "f.yaml"
    yamlio.write_atomic(target, "a: 1\n")
    assert target.read_text() == "a: 1\n"


@pytest.mark.parametrize(
    "text", ["line one\nline two\n", "no final newline\nsecond", "  indented\nx\n", "tail \nspace\n", "\n"]
)
def test_dump_writes_multiline_strings_as_blocks_and_round_trips(text: str) -> None:
    out = yamlio.dump({"config.yaml": text})
    assert yamlio.load_one(out) == {"config.yaml": text}
    if not any(line.endswith(" ") for line in text.split("\n")) and text.strip():
        assert out.startswith("config.yaml: |")  # readable: an embedded config stays one line per line


def test_dump_all_keeps_one_line_strings_plain() -> None:
    out = yamlio.dump_all([{"kind": "ConfigMap", "data": {"a": "b"}}, {"kind": "Secret"}])
    assert out == "kind: ConfigMap\ndata:\n  a: b\n---\nkind: Secret\n"


def test_object_reference_names_the_object_and_defaults_the_namespace() -> None:
    from berth.kube.objects import object_reference

    pvc = {"metadata": {"name": "data", "uid": "u-1", "resourceVersion": "7"}}
    assert object_reference(pvc, "PersistentVolumeClaim") == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": "default",
        "name": "data",
        "uid": "u-1",
        "resourceVersion": "7",
    }
    assert object_reference({"metadata": {"namespace": "ns", "name": "p"}}, "Pod")["namespace"] == "ns"


def test_compact_interns_keys_and_short_strings_in_a_copy() -> None:
    from berth.kube.objects import compact

    long_value = "x" * 200
    a, b = (
        json.loads(json.dumps({"status": {"phase": "Running", "message": long_value}, "n": [1, "On"]}))
        for _ in range(2)
    )
    ca, cb = compact(a), compact(b)
    assert ca == a and ca is not a and ca["status"] is not a["status"]
    assert next(iter(ca["status"])) is next(iter(cb["status"]))
    assert ca["status"]["phase"] is cb["status"]["phase"] and ca["n"][1] is cb["n"][1]
    assert ca["status"]["message"] is a["status"]["message"]  # long strings are shared, not interned
