"""start()/stop(), options validation, the shared informer loop, and event aggregation."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from berth.cluster import controllers, errors
from berth.cluster import store as S
from berth.cluster.api import Api
from berth.cluster.controllers.events import EventRecorder
from berth.cluster.controllers.informer import Handler, InformerFactory

from .conftest import Cluster, pod, wait_for


def test_unknown_disabled_controller_is_rejected_with_the_known_names() -> None:
    with pytest.raises(ValueError, match=r"unknown controller\(s\) \['kubelett'\]; known: nodes, kubelet"):
        controllers.start(Api(), controllers.ControllerOptions(disabled=frozenset({"kubelett"})))


def test_stop_is_idempotent_and_ends_every_thread() -> None:
    before = set(threading.enumerate())
    running = controllers.start(Api(), controllers.ControllerOptions(nodes=1))
    assert running.wait_synced(5)
    running.stop()
    running.stop()
    wait_for(lambda: not (set(threading.enumerate()) - before), what="threads gone")


def test_disabled_controllers_do_not_run(make_cluster: Any) -> None:
    c: Cluster = make_cluster(disabled=frozenset({"kubelet"}))
    assert c.controllers.get("kubelet") is None
    assert c.controllers.get("replicaset") is not None
    c.api.create("pods", pod("idle"), "default")
    c.api.create(
        "configmaps",
        {
            "metadata": {
                "name": "x",
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": "gone"}],
            }
        },
        "default",
    )
    wait_for(
        lambda: not c.api.list("configmaps", "default", field_selector="metadata.name=x")[0], what="gc ran"
    )
    assert c.get("pods", "idle")["status"]["phase"] == "Pending"


def test_pod_start_delay_holds_pods_pending_first(make_cluster: Any) -> None:
    c: Cluster = make_cluster(pod_start_delay=0.3)
    watch = c.api.watch("pods", "default")
    try:
        c.api.create("pods", pod("slow"), "default")
        wait_for(lambda: c.get("pods", "slow")["status"].get("phase") == "Running", what="running")
        phases = []
        while (ev := watch.next_event(0.01)) is not None:
            phases.append(ev[1]["status"].get("phase"))
        assert phases[0] == "Pending" and phases[-1] == "Running"
    finally:
        watch.close()


class _GoneFirst:
    """A real Api whose first watch per resource fails with 410 (a compacted store)."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.failed: set[str] = set()
        self.lists: dict[str, int] = {}

    def list(self, resource: str, *a: Any, **kw: Any) -> Any:
        self.lists[resource] = self.lists.get(resource, 0) + 1
        return self.api.list(resource, *a, **kw)

    def watch(self, resource: str, *a: Any, **kw: Any) -> Any:
        if resource not in self.failed:
            self.failed.add(resource)
            raise errors.too_old_resource_version(1, 100)
        return self.api.watch(resource, *a, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)


def test_shared_loop_relists_after_410_and_keeps_following() -> None:
    api = Api()
    proxy = _GoneFirst(api)
    stop = threading.Event()
    factory = InformerFactory(proxy, stop)
    cms = factory.informer("configmaps")
    pods = factory.informer("pods")
    factory.start()
    try:
        wait_for(
            lambda: proxy.lists.get("configmaps", 0) >= 2 and proxy.lists.get("pods", 0) >= 2, what="relists"
        )
        api.create("configmaps", {"metadata": {"name": "after"}}, "default")
        api.create("pods", pod("after"), "default")
        wait_for(lambda: cms.get("default/after") and pods.get("default/after"), what="both informers follow")
        late = factory.informer("secrets")
        api.create("secrets", {"metadata": {"name": "s"}}, "default")
        wait_for(lambda: late.get("default/s"), what="informer added while running")
    finally:
        factory.stop()


def test_repeated_events_are_aggregated_into_one_with_a_count() -> None:
    api = Api()
    rec = EventRecorder(api)
    rec.start()
    try:
        cm = api.create("configmaps", {"metadata": {"name": "c"}}, "default")
        for _ in range(3):
            rec.event(cm, "Warning", "FailedCreate", "Error creating: quota")
        rec.event(cm, "Normal", "Other", "different")
        assert rec.flush()
        events = {e["reason"]: e for e in api.list("events", "default")[0]}
        assert events["FailedCreate"]["count"] == 3
        assert events["Other"]["count"] == 1
        assert events["FailedCreate"]["involvedObject"]["kind"] == "ConfigMap"
        assert events["FailedCreate"]["type"] == "Warning"
    finally:
        rec.stop()


def test_many_similar_events_are_combined_as_upstream_does() -> None:
    """A ReplicaSet retrying pods a quota refuses: each try names a new pod. Nine distinct messages stay apart; from
    the tenth on they share one "(combined from similar events)" Event whose count grows."""
    api = Api()
    rec = EventRecorder(api)
    rec.start()
    try:
        rs = api.create("configmaps", {"metadata": {"name": "rs"}}, "default")
        for i in range(12):
            rec.event(rs, "Warning", "FailedCreate", f'Error creating: pods "web-{i}" is forbidden')
        rec.event(rs, "Normal", "SuccessfulCreate", "Created pod: web-x")
        assert rec.flush()
        failed = [e for e in api.list("events", "default")[0] if e["reason"] == "FailedCreate"]
        plain = [e for e in failed if not e["message"].startswith("(combined")]
        (combined,) = [e for e in failed if e["message"].startswith("(combined")]
        assert len(plain) == 9 and all(e["count"] == 1 for e in plain)
        assert combined["count"] == 3
        assert (
            combined["message"]
            == '(combined from similar events): Error creating: pods "web-11" is forbidden'
        )
    finally:
        rec.stop()


def test_disabled_recorder_writes_nothing() -> None:
    api = Api()
    rec = EventRecorder(api, enabled=False)
    rec.start()
    try:
        cm = api.create("configmaps", {"metadata": {"name": "c"}}, "default")
        rec.event(cm, "Normal", "X", "y")
        assert rec.flush()
        assert not api.list("events", "default")[0]
    finally:
        rec.stop()


class _PlainWatch:
    """Only the contract (next_event/close): no ``revision``, so the loop orders events one at a time."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def next_event(self, timeout: float | None = None) -> Any:
        return self.inner.next_event(timeout)

    def close(self) -> None:
        self.inner.close()


class _PlainApi:
    def __init__(self, api: Api) -> None:
        self.api = api

    def watch(self, *a: Any, **kw: Any) -> Any:
        return _PlainWatch(self.api.watch(*a, **kw))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)


@pytest.mark.parametrize("plain", [False, True], ids=["batched", "per-event"])
def test_shared_loop_delivers_across_resources_in_write_order(plain: bool) -> None:
    api = Api()
    source: Any = _PlainApi(api) if plain else api
    stop = threading.Event()
    factory = InformerFactory(source, stop)
    seen: list[str] = []
    lock = threading.Lock()

    def record(obj: dict[str, Any]) -> None:
        with lock:
            seen.append(obj["metadata"]["name"])

    for resource in ("configmaps", "secrets", "pods"):
        factory.informer(resource).add_handler(Handler(on_add=record))
    factory.start()
    try:
        assert factory.wait_synced(10)
        written = []
        for i in range(30):
            name = f"o{i}"
            written.append(name)
            if i % 3 == 0:
                api.create("configmaps", {"metadata": {"name": name}}, "default")
            elif i % 3 == 1:
                api.create("secrets", {"metadata": {"name": name}}, "default")
            else:
                api.create("pods", pod(name), "default")
        wait_for(lambda: len(seen) == 30, what="all events")
        assert seen == written
    finally:
        factory.stop()


def test_quiet_informers_wake_up_in_write_order_after_bursts_of_other_kinds() -> None:
    """Watches of quiet kinds are skipped without being read; when their kind is written again, the event still
    comes in the store's order, however many writes of other kinds went by (more than the store keeps in memory)."""
    api = Api(S.Store(retain=64))
    stop = threading.Event()
    factory = InformerFactory(api, stop)
    seen: list[str] = []
    lock = threading.Lock()

    def record(obj: dict[str, Any]) -> None:
        with lock:
            seen.append(obj["metadata"]["name"])

    kinds = ("configmaps", "secrets", "pods")
    for resource in kinds:
        factory.informer(resource).add_handler(Handler(on_add=record))
    factory.start()
    try:
        assert factory.wait_synced(10)
        written: list[str] = []
        for burst, size in enumerate((100, 1, 30, 1, 1, 80, 1)):
            resource = kinds[burst % 3]
            for i in range(size):
                name = f"b{burst}-{i}"
                written.append(name)
                body = pod(name) if resource == "pods" else {"metadata": {"name": name}}
                api.create(resource, body, "default")
            expected = len(written)
            wait_for(lambda: len(seen) >= expected, what=f"burst {burst} delivered")  # noqa: B023
        assert seen == written
        assert all(factory.informer(r).relists == 1 for r in kinds)  # no 410: nothing was re-listed
    finally:
        factory.stop()


class _SleepWatchingStore:
    """The Api's store, noting when a waiter starts sleeping until any write (the informer loop when idle)."""

    def __init__(self, store: S.Store) -> None:
        self.store = store
        self.sleeps = 0

    def wait(self, after: int, timeout: float | None) -> bool:
        self.sleeps += 1
        return self.store.wait(after, timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class _SleepWatchingApi:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.store = _SleepWatchingStore(api.store)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)


def test_an_idle_loop_sleeps_until_a_write_a_new_informer_or_stop() -> None:
    api = Api()
    source = _SleepWatchingApi(api)
    stop = threading.Event()
    factory = InformerFactory(source, stop)
    factory.IDLE = 3600.0  # only a wake-up can end the sleep within the test
    cms = factory.informer("configmaps")
    factory.start()
    try:
        assert factory.wait_synced(10)
        wait_for(lambda: source.store.sleeps >= 1, what="the loop asleep")
        api.create("configmaps", {"metadata": {"name": "woken"}}, "default")
        wait_for(lambda: cms.get("default/woken"), what="a write wakes the loop")
        slept = source.store.sleeps
        wait_for(lambda: source.store.sleeps > slept, what="asleep again")
        late = factory.informer("secrets")
        assert late.wait_synced(30)
        wait_for(lambda: source.store.sleeps > slept + 1, what="asleep again")
    finally:
        factory.stop(timeout=30)
    assert factory._thread is not None and not factory._thread.is_alive()
