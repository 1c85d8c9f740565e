"""The one object identity (berth.kube.objects): Ref across kinds, the namespace/name key within one resource."""

import pytest

from berth.kube import objects


def _obj(kind: str, name: str, namespace: str | None = None, api_version: str = "v1") -> objects.Obj:
    meta: dict[str, str] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def test_ref_ignores_the_version_and_names_group_kind_namespace_name() -> None:
    a = objects.ref(_obj("Deployment", "web", "prod", "apps/v1"))
    b = objects.ref(_obj("Deployment", "web", "prod", "apps/v1beta1"))
    assert a == b and a == objects.Ref("apps", "Deployment", "prod", "web")
    assert str(a) == "Deployment.apps prod/web"
    assert str(objects.ref(_obj("Namespace", "prod"))) == "Namespace prod"
    assert a.key == "apps|Deployment|prod|web"


@pytest.mark.parametrize(
    ("namespace", "name", "key"),
    [("prod", "web", "prod/web"), ("", "node-1", "node-1"), (None, "node-1", "node-1")],
)
def test_object_key_is_client_go_s_meta_namespace_key(namespace: str | None, name: str, key: str) -> None:
    assert objects.ns_name_key(namespace, name) == key
    assert objects.object_key(_obj("Pod", name, namespace)) == key
    assert objects.split_key(key) == (namespace or "", name)


def test_object_key_of_a_nameless_object_is_empty_not_an_error() -> None:
    assert objects.object_key({"kind": "Pod"}) == ""


def test_the_cluster_and_the_live_scheduler_key_objects_alike() -> None:
    from berth.cluster import objmeta
    from berth.cluster.controllers import informer
    from berth.schedule.live import informers

    # one function, not copies that could drift apart
    assert objmeta.object_key is informer.key_of is informers.object_key is objects.object_key
    assert objmeta.split_key is informer.split_key is objects.split_key
