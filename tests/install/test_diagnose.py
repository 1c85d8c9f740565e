"""What a wait reads from the cluster while it waits: which conditions and events say it cannot succeed, after
which grace, which are only shown, and what a timeout message then lists."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from berth.install import diagnose

SA_MESSAGE = (
    'Error creating: pods "migrate-" is forbidden: error looking up service account edge/runner: '
    'serviceaccount "runner" not found'
)


def event(
    uid: str, reason: str, message: str, etype: str = "Warning", kind: str = "Job", name: str = "migrate",
    at: str = "2026-01-01T00:00:01Z", count: int = 1,
) -> dict[str, Any]:  # fmt: skip
    return {
        "involvedObject": {"kind": kind, "namespace": "edge", "name": name, "uid": uid},
        "reason": reason, "message": message, "type": etype, "count": count, "lastTimestamp": at,
    }  # fmt: skip


def pod(
    name: str, owner: str, waiting: tuple[str, str] | None = None, unscheduled: str = ""
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Pending", "conditions": []}
    if waiting:
        status["containerStatuses"] = [
            {"name": "main", "image": "registry.example.com/app:typo",
             "state": {"waiting": {"reason": waiting[0], "message": waiting[1]}}}
        ]  # fmt: skip
    if unscheduled:
        status["conditions"].append(
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unscheduled}
        )
    return {
        "metadata": {
            "name": name,
            "namespace": "edge",
            "uid": f"uid-{name}",
            "ownerReferences": [{"uid": owner}],
        },
        "status": status,
    }


def job(uid: str = "job-1") -> dict[str, Any]:
    return {"kind": "Job", "metadata": {"name": "migrate", "namespace": "edge", "uid": uid}, "status": {}}


@dataclass
class FakeCluster:
    """What a wait reads, changeable between looks; and a clock the test moves."""

    pods: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    now: float = 0.0
    refuse: bool = False

    def list_objects(
        self, api_version: str, kind: str, namespace: str, label_selector: str = ""
    ) -> list[Any]:
        if self.refuse:
            raise RuntimeError("403 Forbidden")
        return {"Pod": self.pods, "Event": self.events, "ReplicaSet": []}[kind]

    def clock(self) -> float:
        return self.now


def watch(cluster: FakeCluster, kind: str = "Job") -> tuple[diagnose.Watch, list[str]]:
    shown: list[str] = []
    return diagnose.Watch(cluster, kind, "edge", cluster.clock, shown.append), shown


def test_a_missing_service_account_fails_after_its_grace_naming_it() -> None:
    cluster = FakeCluster(events=[event("job-1", "FailedCreate", SA_MESSAGE)])
    w, shown = watch(cluster)
    assert w.look(job()) is None  # first seen: within the grace
    assert shown == [f"Warning FailedCreate Job edge/migrate: {SA_MESSAGE}"]
    cluster.now = diagnose.CREATE_GRACE_SECONDS - 0.5
    assert w.look(job()) is None
    cluster.now = diagnose.CREATE_GRACE_SECONDS + 0.5
    cause = w.look(job())
    assert cause is not None and cause.reason == "FailedCreate" and cause.object == "Job edge/migrate"
    assert cause.text("Job edge/migrate").startswith(
        f"FailedCreate: {SA_MESSAGE}. Fix: create the ServiceAccount"
    )
    assert "kubectl create serviceaccount runner -n edge" in cause.fix
    assert shown == [f"Warning FailedCreate Job edge/migrate: {SA_MESSAGE}"]  # a repeat is not shown again


def test_a_cause_that_heals_within_its_grace_starts_over() -> None:
    cluster = FakeCluster(events=[], pods=[pod("migrate-a", "job-1", ("ErrImagePull", "pull access denied"))])
    w, _ = watch(cluster)
    assert w.look(job()) is None
    cluster.now, cluster.pods = 5.0, [pod("migrate-a", "job-1")]  # the pull went through
    assert w.look(job()) is None
    cluster.now, cluster.pods = 10.0, [pod("migrate-a", "job-1", ("ImagePullBackOff", "Back-off pulling"))]
    assert w.look(job()) is None
    cluster.now = 10.0 + diagnose.PULL_GRACE_SECONDS - 1
    assert w.look(job()) is None  # 29 s since it came back, although 39 s since it was first seen
    cluster.now = 10.0 + diagnose.PULL_GRACE_SECONDS + 1
    cause = w.look(job())
    assert cause is not None and cause.reason == "ImagePullBackOff"
    assert (
        cause.object == "Pod edge/migrate-a (container main)" and "registry.example.com/app:typo" in cause.fix
    )


@pytest.mark.parametrize(
    ("waiting", "fix"),
    [
        (("InvalidImageName", 'couldn\'t parse image name "Bad::Image"'), "correct the image reference"),
        (("CreateContainerConfigError", 'configmap "settings" not found'), "create the Configmap settings"),
        (("CreateContainerConfigError", 'secret "creds" not found'), "create the Secret creds"),
    ],
)
def test_container_states_that_do_not_heal_by_themselves(waiting: tuple[str, str], fix: str) -> None:
    causes, notes = diagnose.pod_causes(pod("p", "x", waiting))
    assert [c.reason for c in causes] == [waiting[0]] and fix in causes[0].fix and notes == []


def test_an_unschedulable_pod_is_shown_but_never_fails_the_wait() -> None:
    message = "0/3 nodes are available: 3 Insufficient cpu."
    cluster = FakeCluster(
        pods=[pod("migrate-a", "job-1", unscheduled=message)],
        events=[event("uid-migrate-a", "FailedScheduling", message, kind="Pod", name="migrate-a")],
    )
    w, shown = watch(cluster)
    for t in (0.0, 100.0, 1000.0):
        cluster.now = t
        assert w.look(job()) is None
    assert shown == [f"Warning FailedScheduling Pod edge/migrate-a: {message}"]
    report = w.report()
    assert "--- last events ---" in report and message in report
    assert "Pod edge/migrate-a: not scheduled (Unschedulable): 0/3 nodes are available" in report


def test_events_of_other_objects_and_normal_events_are_not_shown() -> None:
    cluster = FakeCluster(
        pods=[pod("migrate-a", "job-1")],
        events=[
            event("job-0", "FailedCreate", SA_MESSAGE),  # an earlier Job of the same name (another uid)
            event("uid-migrate-a", "Scheduled", "assigned to node-1", "Normal", "Pod", "migrate-a"),
            event("uid-other", "BackOff", "restarting", kind="Pod", name="other"),
        ],
    )
    w, shown = watch(cluster)
    assert w.look(job()) is None
    cluster.now = 100.0
    assert w.look(job()) is None  # the earlier Job's FailedCreate is not this one's cause
    assert shown == [] and "Normal Scheduled Pod edge/migrate-a: assigned to node-1" in w.report()


def test_a_crd_names_conflict_fails_after_a_short_grace_with_its_message() -> None:
    crd = {
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com"},
        "status": {"conditions": [{"type": "NamesAccepted", "status": "False", "reason": "KindConflict",
                                   "message": '"Widget" is already in use'}]},
    }  # fmt: skip
    cluster = FakeCluster()
    w, _ = watch(cluster, "CustomResourceDefinition")
    assert w.look(crd) is None
    cluster.now = diagnose.CRD_GRACE_SECONDS
    cause = w.look(crd)
    assert cause is not None and cause.reason == "NamesAccepted=False (KindConflict)"
    assert cause.message == '"Widget" is already in use' and "group example.com" in cause.fix


def test_a_replica_failure_condition_names_the_deployment() -> None:
    deployment = {
        "kind": "Deployment", "metadata": {"name": "app", "namespace": "edge", "uid": "d"},
        "spec": {"selector": {"matchLabels": {"app": "app"}}},
        "status": {"conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                   "message": SA_MESSAGE}]},
    }  # fmt: skip
    cluster = FakeCluster()
    w, _ = watch(cluster, "Deployment")
    w.look(deployment)
    cluster.now = diagnose.CREATE_GRACE_SECONDS
    cause = w.look(deployment)
    assert cause is not None and cause.object == "Deployment edge/app"
    assert cause.reason == "ReplicaFailure (FailedCreate)" and "ServiceAccount edge/runner" in cause.fix


@pytest.mark.parametrize(
    "message",
    ['pods "x-" is forbidden: exceeded quota: compute, requested: cpu=1, used: cpu=4, limited: cpu=4',
     'Internal error occurred: failed calling webhook "v.example.com": connection refused'],
)  # fmt: skip
def test_create_failures_that_may_heal_are_no_cause(message: str) -> None:
    assert diagnose.create_cause("Job edge/x", "FailedCreate", message) is None


def test_a_cluster_that_refuses_the_reads_leaves_the_plain_wait() -> None:
    cluster = FakeCluster(refuse=True)
    w, shown = watch(cluster)
    assert w.look(job()) is None and shown == [] and w.report() == ""


def test_looks_are_rate_limited_unless_forced() -> None:
    cluster = FakeCluster(events=[event("job-1", "FailedCreate", SA_MESSAGE)])
    w, shown = watch(cluster)
    cluster.events = []
    w.look(job())
    cluster.events = [event("job-1", "FailedCreate", SA_MESSAGE)]
    cluster.now = diagnose.LOOK_INTERVAL_SECONDS / 2
    w.look(job())
    assert shown == []  # not looked again yet
    w.look(job(), force=True)
    assert len(shown) == 1
