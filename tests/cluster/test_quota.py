"""LimitRanger and ResourceQuota admission (pure functions and through the Api), and quantity formatting."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from berth.cluster import quota
from berth.cluster.api import Api, ApiError
from berth.cluster.store import Store
from berth.kube import quantity


def pod(name: str = "p", *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": list(containers) or [{"name": "c", "image": "nginx"}], **spec},
    }


def container(
    name: str = "c", requests: dict[str, str] | None = None, limits: dict[str, str] | None = None
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "nginx", "resources": res}


def limit_range(**item: Any) -> dict[str, Any]:
    lr = {"metadata": {"name": "lr"}, "spec": {"limits": [{"type": "Container", **item}]}}
    quota.default_limit_range(lr)
    return lr


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [
        (Fraction(0), False, "0"),
        (Fraction(3, 2), False, "1500m"),
        (Fraction(2), False, "2"),
        (Fraction(3000), False, "3k"),
        (Fraction(1500), False, "1500"),
        (Fraction(192 * 2**20), True, "192Mi"),
        (Fraction(2**30), True, "1Gi"),
        (Fraction(1000), True, "1k"),  # below 1024 a binary quantity prints as decimal
        (Fraction(3000), True, "3000"),
    ],
)
def test_format_quantity_like_upstream(value: Fraction, binary: bool, text: str) -> None:
    assert quantity.canonical(value, binary) == text


def test_limit_range_item_defaults_chain_from_max_and_min() -> None:
    lr = limit_range(max={"cpu": "2"}, min={"memory": "64Mi"}, default={"memory": "256Mi"})
    item = lr["spec"]["limits"][0]
    assert item["default"] == {"memory": "256Mi", "cpu": "2"}
    assert item["defaultRequest"] == {"memory": "256Mi", "cpu": "2"}  # from default, which wins over min


def test_limit_ranger_fills_defaults_and_says_so() -> None:
    p = pod("p", container("app", requests={"cpu": "50m"}), container("side"))
    quota.limit_pod(
        p, [limit_range(default={"cpu": "500m"}, defaultRequest={"cpu": "100m", "memory": "64Mi"})]
    )
    app, side = p["spec"]["containers"]
    assert app["resources"] == {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"cpu": "500m"}}
    assert side["resources"] == {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m"}}
    assert p["metadata"]["annotations"][quota.LIMIT_RANGER_ANNOTATION] == (
        "LimitRanger plugin set: memory request for container app; cpu limit for container app; "
        "cpu, memory request for container side; cpu limit for container side"
    )


def test_limit_ranger_refuses_what_breaks_min_max_and_ratio() -> None:
    lr = limit_range(min={"cpu": "100m"}, max={"cpu": "1"}, maxLimitRequestRatio={"cpu": "4"})
    with pytest.raises(ApiError) as low:
        quota.limit_pod(pod("p", container(requests={"cpu": "50m"}, limits={"cpu": "150m"})), [lr])
    assert low.value.code == 403
    assert (
        low.value.message
        == 'pods "p" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
    )
    with pytest.raises(ApiError) as several:
        quota.limit_pod(pod("q", container(requests={"cpu": "200m"}, limits={"cpu": "2"})), [lr])
    assert several.value.message == (
        'pods "q" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
        "cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000]"
    )


def test_pod_usage_counts_requests_limits_and_init_containers() -> None:
    p = pod(
        "p",
        container("a", requests={"cpu": "250m", "memory": "64Mi"}, limits={"cpu": "500m"}),
        container("b", requests={"cpu": "250m"}),
        initContainers=[container("init", requests={"cpu": "2"})],
    )
    used = quota.object_usage("pods", p)
    assert used["pods"] == 1 and used["count/pods"] == 1
    assert used["requests.cpu"] == used["cpu"] == 2  # the init container's 2 beats the sum, 500m
    assert used["requests.memory"] == 64 * 2**20 and used["limits.cpu"] == Fraction(1, 2)
    finished = pod("done")
    finished["status"] = {"phase": "Succeeded"}
    assert quota.object_usage("pods", finished) == {}


def test_scoped_quota_counts_only_its_pods() -> None:
    best_effort = {"spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"]}}
    assert quota.matches(best_effort, "pods", pod())
    assert not quota.matches(best_effort, "pods", pod("p", container(requests={"cpu": "1"})))
    assert not quota.matches(best_effort, "services", {"spec": {}})
    high = {
        "spec": {
            "hard": {"pods": "1"},
            "scopeSelector": {
                "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]
            },
        }
    }
    assert quota.matches(high, "pods", pod(priorityClassName="high"))
    assert not quota.matches(high, "pods", pod(priorityClassName="low"))


# ---- through the Api -------------------------------------------------------------------------------------------


@pytest.fixture()
def api() -> Api:
    return Api(Store(retain=50))


def test_quota_refuses_the_pod_that_would_exceed_it(api: Api) -> None:
    api.create(
        "resourcequotas",
        {
            "metadata": {"name": "q"},
            "spec": {"hard": {"pods": "2", "requests.cpu": "1", "requests.memory": "1Gi"}},
        },
        "default",
    )
    small = container(requests={"cpu": "400m", "memory": "256Mi"})
    api.create("pods", pod("a", small), "default")
    api.create("pods", pod("b", small), "default")
    with pytest.raises(ApiError) as over:
        api.create("pods", pod("c", small), "default")
    assert over.value.code == 403
    assert over.value.message == (
        'pods "c" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=400m, '
        "used: pods=2,requests.cpu=800m, limited: pods=2,requests.cpu=1"
    )
    with pytest.raises(ApiError) as unset:
        api.create("pods", pod("d", container("x"), container("y", requests={"cpu": "1m"})), "default")
    assert unset.value.message == (
        'pods "d" is forbidden: failed quota: q: must specify requests.cpu for: x; requests.memory for: x,y'
    )
    # a finished pod no longer counts, so there is room again
    done = api.get("pods", "a", "default")
    done["status"] = {"phase": "Succeeded"}
    api.update("pods", done, "default", subresource="status")
    api.create("pods", pod("c", small), "default")
    # other namespaces are not limited by it
    api.create("namespaces", {"metadata": {"name": "free"}})
    api.create("pods", pod("e"), "free")


def test_count_quota_limits_any_resource(api: Api) -> None:
    api.create(
        "resourcequotas", {"metadata": {"name": "q"}, "spec": {"hard": {"count/configmaps": "1"}}}, "default"
    )
    api.create("configmaps", {"metadata": {"name": "one"}}, "default")
    with pytest.raises(ApiError) as over:
        api.create("configmaps", {"metadata": {"name": "two"}}, "default")
    assert "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1" in over.value.message


def test_limit_range_defaults_pods_through_the_api(api: Api) -> None:
    api.create(
        "limitranges",
        {
            "metadata": {"name": "lr"},
            "spec": {"limits": [{"type": "Container", "default": {"memory": "128Mi"}}]},
        },
        "default",
    )
    lr = api.get("limitranges", "lr", "default")
    assert lr["spec"]["limits"][0]["defaultRequest"] == {"memory": "128Mi"}
    created = api.create("pods", pod("p"), "default")
    res = created["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"memory": "128Mi"}, "requests": {"memory": "128Mi"}}
    assert (
        "memory request for container c" in created["metadata"]["annotations"][quota.LIMIT_RANGER_ANNOTATION]
    )
