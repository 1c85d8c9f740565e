"""``/metrics``: kube-apiserver's request metrics, read with the real kubectl as a Prometheus scrape would."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from berth.cluster import Cluster

from .conftest import Kubectl


def _samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return out


def _value(samples: list[tuple[dict[str, str], float]], **labels: str) -> float:
    return sum(v for got, v in samples if all(got.get(k) == want for k, want in labels.items()))


def test_metrics_count_requests_by_verb_resource_scope_and_code(kubectl: Kubectl, cluster: Cluster) -> None:
    kubectl.ok("create", "configmap", "a")
    kubectl.ok("create", "configmap", "b", "--dry-run=server")
    kubectl.ok("get", "configmap", "a")
    kubectl.ok("get", "configmaps")
    assert kubectl.run("get", "configmap", "missing").returncode != 0
    kubectl.ok(
        "apply", "--server-side", "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    )
    text = kubectl.ok("get", "--raw", "/metrics")
    samples = _samples(text)
    total = samples["apiserver_request_total"]
    common = {
        "group": "",
        "version": "v1",
        "resource": "configmaps",
        "component": "apiserver",
        "subresource": "",
    }
    assert _value(total, verb="POST", scope="namespace", code="201", dry_run="", **common) == 1
    assert _value(total, verb="POST", scope="namespace", code="201", dry_run="All", **common) == 1
    assert _value(total, verb="GET", scope="resource", code="200", **common) >= 1
    assert _value(total, verb="GET", scope="resource", code="404", **common) == 1
    assert _value(total, verb="LIST", scope="namespace", code="200", **common) >= 1
    assert _value(total, verb="APPLY", scope="resource", code="201", **common) == 1
    count = samples["apiserver_request_duration_seconds_count"]
    assert _value(count, verb="GET", scope="resource", **common) == _value(
        total, verb="GET", scope="resource", **common
    )
    buckets = {s[0]["le"] for s in samples["apiserver_request_duration_seconds_bucket"]}
    assert {"0.005", "1.0", "60.0", "+Inf"} <= buckets
    objects = samples["apiserver_storage_objects"]
    assert _value(objects, resource="configmaps") == 2
    assert _value(objects, resource="namespaces") == 4
    inflight = samples["apiserver_current_inflight_requests"]
    assert _value(inflight, request_kind="readOnly") == 1  # the scrape itself
    assert _value(inflight, request_kind="mutating") == 0


def test_metrics_need_the_nonresource_permission(kubectl: Kubectl) -> None:
    kubectl.ok("create", "serviceaccount", "bot")
    token = kubectl.ok("create", "token", "bot").strip()
    denied = kubectl.run("get", "--raw", "/metrics", "--token", token)
    assert denied.returncode != 0 and 'cannot get path "/metrics"' in denied.stderr
    kubectl.ok("create", "clusterrole", "scrape", "--verb=get", "--non-resource-url=/metrics")
    kubectl.ok(
        "create", "clusterrolebinding", "scrape", "--clusterrole=scrape", "--serviceaccount=default:bot"
    )
    assert "apiserver_request_total" in kubectl.ok("get", "--raw", "/metrics", "--token", token)
