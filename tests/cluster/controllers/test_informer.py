"""Informers list, then follow a watch; they index by owner, replay to late handlers and re-list after 410."""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

from berth.cluster import errors
from berth.cluster.api import Api
from berth.cluster.controllers.informer import OWNER_UID_INDEX, Handler, Informer, key_of, split_key, strip
from berth.kube.objects import Obj

from .conftest import wait_for


def cm(name: str, owner_uid: str | None = None) -> Obj:
    meta: dict[str, Any] = {"name": name}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": owner_uid}]
    return {"metadata": meta, "data": {"k": "v"}}


def test_cache_follows_creates_updates_and_deletes() -> None:
    api = Api()
    api.create("configmaps", cm("before"), "default")
    seen: list[tuple[str, str]] = []
    inf = Informer(api, "configmaps")
    inf.add_handler(
        Handler(
            on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
            on_update=lambda _o, n: seen.append(("update", n["metadata"]["name"])),
            on_delete=lambda o: seen.append(("delete", o["metadata"]["name"])),
        )
    )
    inf.start()
    try:
        assert inf.wait_synced(5)
        assert inf.get("default/before") is not None
        api.create("configmaps", cm("after", owner_uid="u1"), "default")
        obj = api.get("configmaps", "before", "default")
        obj["data"] = {"k": "changed"}
        api.update("configmaps", obj, "default")
        api.delete("configmaps", "before", "default")
        wait_for(lambda: ("delete", "before") in seen, what="delete event")
        assert seen == [("add", "before"), ("add", "after"), ("update", "before"), ("delete", "before")]
        assert inf.get("default/before") is None
        assert [o["metadata"]["name"] for o in inf.by_index(OWNER_UID_INDEX, "u1")] == ["after"]
    finally:
        inf.stop()
        inf.join(2)


def test_late_handler_gets_current_objects_replayed() -> None:
    api = Api()
    api.create("configmaps", cm("a"), "default")
    inf = Informer(api, "configmaps")
    inf.start()
    try:
        assert inf.wait_synced(5)
        got: list[str] = []
        inf.add_handler(Handler(on_add=lambda o: got.append(o["metadata"]["name"])))
        assert "a" in got
    finally:
        inf.stop()


class _GoneOnceApi:
    """Delegates to a real Api, but the first watch fails with 410 as a compacted store would."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.lists = 0
        self.failed = threading.Event()

    def list(self, *a: Any, **kw: Any) -> Any:
        self.lists += 1
        return self.api.list(*a, **kw)

    def watch(self, *a: Any, **kw: Any) -> Any:
        if not self.failed.is_set():
            self.failed.set()
            raise errors.too_old_resource_version(1, 100)
        return self.api.watch(*a, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)


def test_410_on_watch_triggers_a_relist() -> None:
    api = Api()
    api.create("configmaps", cm("a"), "default")
    proxy = _GoneOnceApi(api)
    inf = Informer(proxy, "configmaps")
    inf.start()
    try:
        wait_for(lambda: proxy.lists >= 2, what="a second list after 410")
        api.create("configmaps", cm("b"), "default")
        wait_for(lambda: inf.get("default/b"), what="watch after relist")
    finally:
        inf.stop()


def test_error_event_in_stream_triggers_a_relist() -> None:
    api = Api()

    class ErrorOnce:
        def __init__(self) -> None:
            self.sent = False

        def next_event(self, timeout: float | None = None) -> tuple[str, Obj] | None:
            if not self.sent:
                self.sent = True
                return ("ERROR", errors.too_old_resource_version(1, 5).status())
            return None

        def close(self) -> None:
            pass

    class Proxy(_GoneOnceApi):
        def watch(self, *a: Any, **kw: Any) -> Any:
            if not self.failed.is_set():
                self.failed.set()
                return ErrorOnce()
            return self.api.watch(*a, **kw)

    proxy = Proxy(api)
    inf = Informer(proxy, "configmaps")
    inf.start()
    try:
        wait_for(lambda: proxy.lists >= 2, what="relist after an ERROR event")
    finally:
        inf.stop()


def test_keys_round_trip() -> None:
    assert key_of({"metadata": {"name": "n", "namespace": "ns"}}) == "ns/n"
    assert key_of({"metadata": {"name": "node-1"}}) == "node-1"
    assert split_key("ns/n") == ("ns", "n")
    assert split_key("node-1") == ("", "node-1")


def test_a_quiet_watch_fast_forwards_past_other_resources_without_reading_them() -> None:
    api = Api()
    watch = api.watch("configmaps", resource_version=str(api.store.revision))
    for i in range(5):
        api.create("secrets", {"metadata": {"name": f"s{i}"}}, "default")
    assert watch.fast_forward()
    assert watch.revision == api.store.revision
    api.create("configmaps", cm("c"), "default")
    assert not watch.fast_forward()  # an event of its own resource: it must be read
    ev = watch.next_event(0)
    assert ev is not None and ev[0] == "ADDED" and ev[1]["metadata"]["name"] == "c"
    assert watch.fast_forward()
    assert watch.next_event(0) is None
    watch.close()


def test_fast_forward_keeps_undelivered_events() -> None:
    api = Api()
    api.create("configmaps", cm("a"), "default")
    watch = api.watch("configmaps", resource_version="0")  # "0": the current objects first, as ADDED
    assert not watch.fast_forward()  # the initial ADDED is still pending
    ev = watch.next_event(0)
    assert ev is not None and ev[1]["metadata"]["name"] == "a"
    watch.close()


def test_cached_pods_share_status_resources_with_their_spec_where_equal() -> None:
    """The kubelet reports each container's resources; the cache keeps one dict where status and spec agree, and
    the status's own where a resize is under way -- the values read the same either way."""
    main = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "64Mi"}}
    side = {"requests": {"cpu": "50m"}}
    pod: Obj = {
        "metadata": {"name": "p", "managedFields": [{"manager": "x"}]},
        "spec": {
            "initContainers": [{"name": "side", "resources": dict(side), "restartPolicy": "Always"}],
            "containers": [{"name": "main", "resources": dict(main)}, {"name": "plain"}],
        },
        "status": {
            "initContainerStatuses": [
                {
                    "name": "side",
                    "resources": {"requests": {"cpu": "50m"}},
                    "allocatedResources": {"cpu": "50m"},
                }
            ],
            "containerStatuses": [
                {
                    "name": "main",
                    "resources": {"requests": {"cpu": "80m", "memory": "64Mi"}, "limits": {"memory": "64Mi"}},
                    "allocatedResources": {"cpu": "100m", "memory": "64Mi"},
                },
                {"name": "plain", "resources": {}},
            ],
        },
    }
    before = copy.deepcopy(pod)
    pod = strip(pod)
    assert "managedFields" not in pod["metadata"]
    assert "managedFields" in before["metadata"]  # a new object: the delivered one is left as it was
    spec, status = pod["spec"], pod["status"]
    (side_status,) = status["initContainerStatuses"]
    assert side_status["resources"] is spec["initContainers"][0]["resources"]
    assert side_status["allocatedResources"] is spec["initContainers"][0]["resources"]["requests"]
    main_status, plain_status = status["containerStatuses"]
    # a resize in progress: allocated already, not actuated -- only what is equal is shared
    assert main_status["resources"] is not spec["containers"][0]["resources"]
    assert main_status["resources"]["requests"]["cpu"] == "80m"
    assert main_status["allocatedResources"] is spec["containers"][0]["resources"]["requests"]
    assert plain_status["resources"] == {}


def test_cached_objects_have_interned_keys_and_short_strings() -> None:
    """Decoded objects repeat the same keys and short values; the cache keeps one string of each (about half a
    decoded pod's memory), and the copy reads the same."""
    decoded = [json.loads(json.dumps({**cm(f"c{i}"), "status": {"phase": "Running"}})) for i in range(2)]
    assert next(iter(decoded[0]["metadata"])) is not next(
        iter(decoded[1]["metadata"])
    )  # as a decoder makes them
    a, b = (strip(o) for o in decoded)
    assert a == decoded[0] and b == decoded[1]
    assert next(iter(a["metadata"])) is next(iter(b["metadata"]))
    assert a["status"]["phase"] is b["status"]["phase"]
