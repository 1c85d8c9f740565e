"""pods/ephemeralcontainers (``kubectl debug``) and pods/resize: each changes only its part of the pod."""

from __future__ import annotations

from typing import Any

import pytest

from berth.cluster.api import Api, ApiError
from berth.cluster.store import Store


@pytest.fixture()
def api() -> Api:
    a = Api(Store(retain=50))
    a.create(
        "pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}},
                    {"name": "side", "image": "envoy"},
                ]
            },
        },
        "default",
    )
    return a


def debugger(name: str = "dbg", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "targetContainerName": "app", **extra}


def add(api: Api, *containers: dict[str, Any]) -> dict[str, Any]:
    patch = {"spec": {"ephemeralContainers": list(containers)}}
    return api.patch("pods", "p", patch, "strategic", "default", subresource="ephemeralcontainers")


def causes(exc: pytest.ExceptionInfo[ApiError]) -> list[tuple[str, str]]:
    return [(c["field"], c["reason"]) for c in exc.value.causes]


def test_ephemeral_container_is_added_and_nothing_else_changes(api: Api) -> None:
    before = api.get("pods", "p", "default")
    patch = {"spec": {"ephemeralContainers": [debugger()], "containers": [{"name": "app", "image": "evil"}]}}
    after = api.patch("pods", "p", patch, "strategic", "default", subresource="ephemeralcontainers")
    assert after["spec"]["ephemeralContainers"] == [debugger()]
    assert after["spec"]["containers"] == before["spec"]["containers"]
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    # a second debug session adds beside the first (strategic merge by name)
    again = add(api, debugger("dbg2"))
    assert [c["name"] for c in again["spec"]["ephemeralContainers"]] == ["dbg", "dbg2"]


def test_ephemeral_containers_may_not_be_changed_or_removed(api: Api) -> None:
    add(api, debugger())
    with pytest.raises(ApiError) as changed:
        api.update(
            "pods",
            {**api.get("pods", "p", "default"), "spec": {"ephemeralContainers": [debugger(image="alpine")]}},
            "default",
            subresource="ephemeralcontainers",
        )
    assert changed.value.code == 422
    assert causes(changed) == [("spec.ephemeralContainers[0]", "FieldValueForbidden")]
    cur = api.get("pods", "p", "default")
    with pytest.raises(ApiError) as removed:
        api.update(
            "pods",
            {**cur, "spec": {**cur["spec"], "ephemeralContainers": []}},
            "default",
            subresource="ephemeralcontainers",
        )
    assert removed.value.code == 422
    assert 'existing ephemeral containers "dbg" may not be removed' in removed.value.message


def test_ephemeral_container_names_are_unique_and_images_required(api: Api) -> None:
    with pytest.raises(ApiError) as bad:
        add(api, debugger("side"), {"name": "noimage"}, debugger("withport", ports=[{"containerPort": 80}]))
    assert bad.value.code == 422
    assert causes(bad) == [
        ("spec.ephemeralContainers[0].name", "FieldValueDuplicate"),
        ("spec.ephemeralContainers[1].image", "FieldValueRequired"),
        ("spec.ephemeralContainers[2].ports", "FieldValueForbidden"),
    ]
    assert "ephemeralContainers" not in api.get("pods", "p", "default")["spec"]


def test_resize_changes_only_container_resources(api: Api) -> None:
    patch = {
        "spec": {
            "containers": [{"name": "app", "image": "evil", "resources": {"requests": {"cpu": "250m"}}}],
            "nodeName": "elsewhere",
        }
    }
    out = api.patch("pods", "p", patch, "strategic", "default", subresource="resize")
    app, side = out["spec"]["containers"]
    assert app["image"] == "nginx" and app["resources"] == {"requests": {"cpu": "250m"}}
    assert side["image"] == "envoy" and "nodeName" not in out["spec"]


def test_other_subresources_are_not_found(api: Api) -> None:
    with pytest.raises(ApiError) as exc:
        api.patch("pods", "p", {"spec": {}}, "merge", "default", subresource="exec")
    assert exc.value.code == 404
