"""`berth schedule rbac` is minimal, proven on the embedded cluster: the live scheduler runs the seed exercise
(examples/two-profiles, leader election on) as a ServiceAccount bound to exactly the computed ClusterRole and binds
every pod without a single 403; and with any one verb of any one rule taken away, it fails visibly -- a missing
permission in its report (the informers, the lease, events, status and volume writes all report 403s), pods left
unbound, or informers never synced (``/readyz`` failing).

Every case uses pods that touch every rule: one pod per profile, one that cannot be scheduled (``pods/status``
patch, FailedScheduling; a node label is touched until it has failed often enough for its Event to become a
series, which is patched), and one with two WaitForFirstConsumer claims (VolumeBinding's PV and claim updates).
One cluster serves the module; each case has its own namespace, ServiceAccount, PV and a fresh lease.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from berth.demo import admin as admin_mod
from berth.kube import client as kube_client
from berth.kube import yamlio
from berth.schedule import config as config_mod
from berth.schedule import rbac
from berth.schedule.live import api
from berth.schedule.live.run import LiveScheduler
from berth.schedule.plugins import registry as registry_mod

from .conftest import FAST, TWO_PROFILES, Env, eventually, pod, start_cluster
from .test_volumes_live import claim, pod_with_claims, storage_class, volume

REGISTRY = registry_mod.default_registry()
CONFIG = config_mod.load(TWO_PROFILES / "config.yaml", REGISTRY)
ROLE = rbac.compute(CONFIG, REGISTRY)
LEASE = CONFIG.leader_election
SA_NAMESPACE = LEASE.resource_namespace  # berth-system, where the Deployment would run
# Whether the role lets the scheduler evict (DefaultPreemption active and declaring ``delete:pods``): then every case
# also needs a pod that can only be placed by preempting another, or the rule would go untested.
PREEMPTS = any(r.group == "" and r.resource == "pods" and "delete" in r.verbs for r in ROLE.rules)
PREEMPTION_NODE = "node-4"


def rule_id(rule: rbac.Rule, verb: str) -> str:
    names = f"[{','.join(rule.resource_names)}]" if rule.resource_names else ""
    return f"{verb}-{rule.group or 'core'}/{rule.resource}{names}"


def without(index: int, verb: str) -> list[dict[str, Any]]:
    """The computed role's rules with one verb of one rule removed (the rule goes when it had only that verb)."""
    rules: list[dict[str, Any]] = []
    for i, rule in enumerate(ROLE.rules):
        d = rule.to_dict()
        if i == index:
            d["verbs"] = [v for v in d["verbs"] if v != verb]
            if not d["verbs"]:
                continue
        rules.append(d)
    return rules


REMOVALS = [
    pytest.param(i, verb, id=rule_id(rule, verb)) for i, rule in enumerate(ROLE.rules) for verb in rule.verbs
]


@dataclass
class Outcome:
    """What one run showed: the scheduler's permission report, what got done, and whether it was ready."""

    missing: list[tuple[str, str, str]]
    bound: set[str]
    status_written: bool
    events: Counter[str]
    series: bool  # an Event of the case repeated: its series count was patched
    ready: bool

    def complete(self, names: set[str]) -> bool:
        return (
            self.bound >= names
            and self.status_written
            and self.events["Scheduled"] >= len(names)
            and self.events["FailedScheduling"] >= 1
            and self.series
        )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Env, admin_mod.Admin]]:
    data = tmp_path_factory.mktemp("rbac-live") / "data"
    c = start_cluster(data)
    client = kube_client.api_client(c.kubeconfig)
    adm = admin_mod.Admin(c, data.parent / "kubeconfigs")
    adm.kubeconfig_dir.mkdir()
    env = Env(c, data, client)
    try:
        adm.ensure_namespace(SA_NAMESPACE)
        for sc in (
            storage_class("local", "kubernetes.io/no-provisioner"),
            storage_class("fast", "csi.example.com"),
        ):
            env.call("POST", "/apis/storage.k8s.io/v1/storageclasses", sc)
        yield env, adm
    finally:
        adm.close()
        client.close()
        c.stop()


def prepare(env: Env, adm: admin_mod.Admin, case: str) -> set[str]:
    """The case's namespace and pods (created before the scheduler starts); returns the pods that must bind."""
    adm.ensure_namespace(case)
    pv = volume(f"pv-{case}", "local")
    pv["metadata"]["labels"] = {"case": case}
    env.call("POST", "/api/v1/persistentvolumes", pv)
    static = claim("static", "local", case)
    static["spec"]["selector"] = {"matchLabels": {"case": case}}
    for c in (static, claim("dynamic", "fast", case)):
        env.call("POST", f"/api/v1/namespaces/{case}/persistentvolumeclaims", c)
    pods = [
        pod("a", case, "academy-default", labels={"app": "a"}),
        pod("b", case, "academy-concentrate", labels={"app": "b"}),
        {**pod_with_claims("db", ["static", "dynamic"], "academy-default")},
    ]
    pods[2]["metadata"]["namespace"] = case
    # Too big for any node, and only node-1 matches its selector while the poke label is on: each time it is
    # switched on, NodeAffinity's queueing hint retries the pod (a change that does not make a node match would not).
    stuck = pod("stuck", case, "academy-default", cpu="1000")
    stuck["spec"]["nodeSelector"] = {"berth.dev/poke": "on"}
    for p in [*pods, stuck]:
        env.create(p)
    must_bind = {p["metadata"]["name"] for p in pods}
    if PREEMPTS:
        # A low-priority pod bound to node-4 and a high-priority one that fits there only once it is evicted.
        victim = pod("victim", case, "academy-default", cpu="2")
        victim["spec"]["nodeName"] = PREEMPTION_NODE
        preemptor = pod("preemptor", case, "academy-default", cpu="2500m")
        preemptor["spec"]["nodeSelector"] = {"kubernetes.io/hostname": PREEMPTION_NODE}
        preemptor["spec"]["priority"] = 1000
        env.create(victim)
        env.create(preemptor)
        must_bind.add("preemptor")
    return must_bind


def clean_up(env: Env, case: str) -> None:
    """Delete the case's pods (at once: the embedded cluster simulates no grace period) so that node-4 is free for
    the next case's preemption, and the lease, which a forbidden release would leave held for leaseDuration."""
    for p in env.pods(case):
        env.call("DELETE", f"/api/v1/namespaces/{case}/pods/{p['metadata']['name']}")
    lease = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE.resource_namespace}/leases/{LEASE.resource_name}"
    try:
        env.call("DELETE", lease)
    except api.ApiError as exc:
        if exc.status != 404:
            raise


def observe(env: Env, sched: LiveScheduler, case: str) -> Outcome:
    pods = {p["metadata"]["name"]: p for p in env.pods(case)}
    bound = {name for name, p in pods.items() if (p.get("spec") or {}).get("nodeName")}
    conditions = ((pods.get("stuck") or {}).get("status") or {}).get("conditions") or []
    status_written = any(
        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions
    )
    items = env.call("GET", f"/apis/events.k8s.io/v1/namespaces/{case}/events").get("items") or []
    ours = [e for e in items if e.get("reportingController", "").startswith("academy-")]
    events = Counter(str(e.get("reason")) for e in ours)
    series = any(e.get("series") for e in ours)
    ok, _ = sched._ready()
    return Outcome(list(sched.permissions.missing), bound, status_written, events, series, ok)


class Poke:
    """Switches a label of node-1 on and off now and then: NodeAffinity retries the ``stuck`` pod when node-1
    comes to match its selector, and its third failure (the first regards the pod before its status was written)
    makes its Event a series."""

    def __init__(self, env: Env, every: float = 0.5) -> None:
        self._env = env
        self._every = every
        self._last = 0.0
        self._count = 0

    def __call__(self) -> None:
        if time.monotonic() - self._last < self._every:
            return
        self._last = time.monotonic()
        self._count += 1
        api.call(
            self._env.client,
            "PATCH",
            "/api/v1/nodes/node-1",
            body={"metadata": {"labels": {"berth.dev/poke": "on" if self._count % 2 else "off"}}},
            content_type="application/merge-patch+json",
        )


def run_case(
    env: Env,
    adm: admin_mod.Admin,
    case: str,
    rules: list[dict[str, Any]],
    timeout: float,
    also_done: Callable[[], bool] = lambda: True,
) -> tuple[Outcome, set[str]]:
    """Run the scheduler as a ServiceAccount with ``rules`` until everything is done (the case's pods, and
    ``also_done``) or a 403 shows, then stop it (a graceful stop releases the lease: get + update) and report what
    happened."""
    must_bind = prepare(env, adm, case)
    ident = adm.identity(case, SA_NAMESPACE, rules)
    opts = replace(FAST, kubeconfig=str(ident.kubeconfig), leader_elect=True, identity=case)
    sched = LiveScheduler(CONFIG, REGISTRY, opts).start()
    try:
        poke = Poke(env)

        def settled() -> Outcome | None:
            out = observe(env, sched, case)
            if out.missing or (out.complete(must_bind) and also_done()):
                return out
            if out.events["FailedScheduling"] and not out.series:
                poke()
            return None

        with contextlib.suppress(AssertionError):  # a silent failure: judged from what was (not) done
            eventually(settled, timeout, "the scheduler to finish or report a missing permission")
    finally:
        sched.stop()
    outcome = observe(env, sched, case)
    clean_up(env, case)
    return outcome, must_bind


def test_the_computed_role_runs_the_seed_exercise(cluster: tuple[Env, admin_mod.Admin]) -> None:
    env, adm = cluster
    adm.ensure_namespace("academy")
    for _doc, obj in yamlio.load_objects((TWO_PROFILES / "workload.yaml").read_text(encoding="utf-8")):
        env.create(obj)
    rules = [r.to_dict() for r in ROLE.rules]

    def seed_bound() -> list[dict[str, Any]] | None:
        pods = env.pods("academy")
        return pods if len(pods) == 12 and all(p["spec"].get("nodeName") for p in pods) else None

    # The seed pods come from Deployments (the cluster's controllers create them asynchronously, possibly after
    # the case's pods): the scheduler runs until they are bound too, not only the case's pods.
    outcome, must_bind = run_case(env, adm, "full", rules, timeout=120, also_done=lambda: bool(seed_bound()))
    assert outcome.missing == []
    assert outcome.ready
    assert outcome.complete(must_bind), outcome
    pods = seed_bound()
    assert pods is not None, "the 12 seed pods bound"
    by_app: dict[str, Counter[str]] = {"spread": Counter(), "packed": Counter()}
    for p in pods:
        by_app[p["metadata"]["labels"]["app"]][p["spec"]["nodeName"]] += 1
    assert list(by_app["packed"].values()) == [6]
    assert max(by_app["spread"].values()) <= 2
    # Exactly what the role grants was used: every verb of every rule shows in the audit log for this identity
    # (a watch is logged when it ends, shortly after the scheduler stopped).
    granted = set()
    for rule in ROLE.rules:
        resource, _, sub = rule.resource.partition("/")
        qualified = f"{resource}.{rule.group}" if rule.group else resource
        granted |= {(verb, qualified, sub) for verb in rule.verbs}

    def used() -> set[tuple[str, str, str]]:
        return {
            (rec["verb"], rec["resource"], rec["subresource"])
            for rec in env.audit()
            if rec.get("user") == f"{admin_mod.SA_USER_PREFIX}{SA_NAMESPACE}:full"
            and 200 <= int(rec.get("code") or 0) < 300
            and rec.get("resource")  # not discovery
        }

    with contextlib.suppress(AssertionError):
        eventually(lambda: granted <= used(), 60, "every granted verb in the audit log")
    assert sorted(granted - used()) == [], "granted but never used"
    assert sorted(used() - granted) == [], "used but not granted"


@pytest.mark.parametrize(("index", "verb"), REMOVALS)
def test_each_verb_of_each_rule_is_needed(
    cluster: tuple[Env, admin_mod.Admin], index: int, verb: str
) -> None:
    env, adm = cluster
    rule = ROLE.rules[index]
    case = f"minus-{index}-{verb}"
    outcome, must_bind = run_case(env, adm, case, without(index, verb), timeout=8)
    visible = bool(outcome.missing) or not outcome.ready or not outcome.bound >= must_bind
    assert visible, f"removing {verb} from {rule.describe()} went unnoticed: {outcome}"
    if outcome.missing:  # the report names exactly the permission taken away
        assert outcome.missing == [(verb, rule.group, rule.resource)], outcome.missing
