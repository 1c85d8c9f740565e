"""The two deployment shapes of a multi-profile scheduler, measured side by side on the demo's cluster.

Why: "one scheduler with two profiles" (KEP-1451) versus "two schedulers with one profile each" is the choice a
team makes before writing any manifest, and its costs are usually argued, not measured. The demo measures four:

a. what you write -- objects and YAML lines ``berth schedule manifests --shape profiles|separate`` emits;
b. what the API server sees -- watches, lists and requests from each shape's ServiceAccounts (audit log) while
   the shape starts and idles for a few seconds;
c. what happens to pods when it is down -- one new pod per profile while the single scheduler is stopped, and
   while only one of the two separate schedulers is stopped;
d. what a third behaviour costs -- a third profile: configuration lines, objects, processes and informer
   connections added.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.demo.admin import Admin, DemoError, Identity, Traffic, utc_now, wait_for
from berth.kube import yamlio
from berth.schedule import (
    DeployOptions,
    DeployShape,
    InformerBackoff,
    LiveOptions,
    LiveScheduler,
    RenderedManifests,
    SchedulerConfiguration,
    compute_rbac,
    informer_resources,
    load_config,
    manifest_units,
    parse_config,
    render_manifests,
)

IMAGE = "berth-scheduler:0.1.0"
SA_NAMESPACE = "berth-system"

THIRD_PROFILE = """\
- schedulerName: academy-binpack
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""
"""The third behaviour of (d): pack by resources (upstream's MostAllocated strategy), no new plugin."""


@dataclass(frozen=True)
class Written:
    objects: int
    lines: int
    kinds: dict[str, int]


@dataclass(frozen=True)
class Down:
    """New pods per profile while (part of) the shape is stopped: profile -> node ('' = still Pending)."""

    stopped: tuple[str, ...]
    placement: dict[str, str]
    resumed: float = 0.0
    """Seconds from restarting what was stopped until its Pending pods were bound."""

    @property
    def pending(self) -> list[str]:
        return sorted(p for p, node in self.placement.items() if not node)


@dataclass(frozen=True)
class ThirdCost:
    config_lines: int
    objects: int
    processes: int
    informers: int


@dataclass(frozen=True)
class ShapeFigures:
    shape: str
    processes: int
    rules: tuple[int, ...]
    written: Written
    traffic: Traffic
    per_process: tuple[int, ...]
    """Informers each process configured (served or not)."""
    down: Down
    third: ThirdCost


@dataclass
class Comparison:
    profiles: ShapeFigures
    separate: ShapeFigures
    window: float
    notes: list[str] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str, str]]:
        """The 4-row table: (what, one scheduler with two profiles, two schedulers with one profile each)."""
        p, s = self.profiles, self.separate

        def written(f: ShapeFigures) -> str:
            kinds = ", ".join(f"{n} {k}" for k, n in f.written.kinds.items())
            return f"{f.written.objects} objects ({kinds}); {f.written.lines} lines of YAML"

        def seen(f: ShapeFigures) -> str:
            t = f.traffic
            return (
                f"{f.processes} process{'es' if f.processes != 1 else ''}, {t.watches} watch connections, "
                f"{t.lists} lists, "
                f"{t.requests} requests in {self.window:g}s"
            )

        def down(f: ShapeFigures) -> str:
            pending = f.down.pending
            placed = sorted(k for k in f.down.placement if k not in pending)
            text = f"stop {' + '.join(f.down.stopped)}: {len(pending)} of {len(f.down.placement)} new pods Pending"
            if pending:
                text += f" ({', '.join(pending)})"
            if placed:
                text += f"; {', '.join(placed)} still placed"
            if f.down.resumed:
                text += f"; bound {f.down.resumed:.1f}s after the restart"
            return text

        def third(f: ShapeFigures) -> str:
            c = f.third
            return (
                f"+{c.config_lines} config lines, +{c.objects} objects, +{c.processes} "
                f"process{'es' if c.processes != 1 else ''}, "
                f"+{c.informers} informer connections"
            )

        return [
            ("what you write", written(p), written(s)),
            ("what the API server sees", seen(p), seen(s)),
            ("when it is down", down(p), down(s)),
            ("a third behaviour costs", third(p), third(s)),
        ]


# --- (a) and (d): from the manifests ------------------------------------------------------------------------


def written(rendered: RenderedManifests) -> Written:
    kinds: dict[str, int] = {}
    for obj in rendered.objects:
        kind = str(obj.get("kind") or "")
        kinds[kind] = kinds.get(kind, 0) + 1
    return Written(len(rendered.objects), len(rendered.yaml().splitlines()), kinds)


def render(text: str, registry: Any, shape: DeployShape, source: str) -> RenderedManifests:
    cfg = parse_config(yamlio.load_one(text, source), source, registry)
    return render_manifests(text, cfg, registry, DeployOptions(image=IMAGE, shape=shape), source)


def informer_count(cfg: SchedulerConfiguration, registry: Any, admin: Admin) -> int:
    """Informers (one list + one long-lived watch each) a process with ``cfg`` opens on this cluster: the
    resources its plugins read that the API server serves (an unserved one is skipped with a warning)."""
    return sum(1 for r in informer_resources(cfg, registry) if admin.serves(r.group, r.version, r.plural))


def third_cost(text: str, registry: Any, shape: DeployShape, source: str, admin: Admin) -> ThirdCost:
    """What adding :data:`THIRD_PROFILE` to the configuration ``text`` adds in ``shape``."""
    if not text.endswith("\n"):
        text += "\n"
    three = text + THIRD_PROFILE
    before = render(text, registry, shape, source)
    after = render(three, registry, shape, f"{source} + academy-binpack")
    cfg2 = parse_config(yamlio.load_one(text, source), source, registry)
    cfg3 = parse_config(yamlio.load_one(three, source), source, registry)
    if shape is DeployShape.PROFILES:
        lines = len(THIRD_PROFILE.splitlines())
        processes = 0
        informers_added = informer_count(cfg3, registry, admin) - informer_count(cfg2, registry, admin)
    else:
        new_units = manifest_units(three, cfg3, registry, DeployOptions(image=IMAGE, shape=shape), source)
        unit = new_units[-1]
        lines = len(unit.config_text.splitlines())  # a whole configuration file of its own
        processes = 1
        informers_added = informer_count(unit.config, registry, admin)
    return ThirdCost(lines, len(after.objects) - len(before.objects), processes, informers_added)


# --- (b) and (c): live ----------------------------------------------------------------------------------------


def start_scheduler(
    cfg: SchedulerConfiguration, registry: Any, identity: Identity, seed: int
) -> LiveScheduler:
    """A live scheduler authenticated as ``identity`` (quick retries: the demo's waits are seconds long)."""
    options = LiveOptions(
        kubeconfig=str(identity.kubeconfig),
        seed=seed,
        backoff=InformerBackoff(initial=0.2, cap=2.0, jitter=0.5),
    )
    return LiveScheduler(cfg, registry, options).start()


class Fleet:
    """The schedulers a step started, so that every one of them is stopped whatever happens."""

    def __init__(self) -> None:
        self.running: list[LiveScheduler] = []

    def add(self, sched: LiveScheduler) -> LiveScheduler:
        self.running.append(sched)
        return sched

    def stop(self, sched: LiveScheduler) -> None:
        if sched in self.running:
            self.running.remove(sched)
        sched.stop(timeout=5.0)

    def stop_all(self) -> None:
        while self.running:
            self.stop(self.running[-1])


def _resume(
    admin: Admin,
    fleet: Fleet,
    cfg: SchedulerConfiguration,
    registry: Any,
    identity: Identity,
    seed: int,
    namespace: str,
    pods: list[str],
) -> float:
    """Start the stopped scheduler again; seconds until ``pods`` (Pending while it was away) are bound."""
    started = time.monotonic()
    sched = fleet.add(start_scheduler(cfg, registry, identity, seed))
    wait_for(
        lambda: all(admin.node_of(namespace, name) for name in pods),
        30,
        f"the restarted scheduler to bind {', '.join(pods)}",
    )
    took = time.monotonic() - started
    fleet.stop(sched)
    return took


def settled_traffic(admin: Admin, users: list[str], until: str, watching: int) -> Traffic:
    """:meth:`Admin.traffic` once every closed watch has been logged (the server notices a client that went
    away within about a second of idling, and only then writes the watch's audit line): at least ``watching``
    watches (the stopped schedulers' informers, each watching when stopped), and no change for 0.6 s. A quiet
    spell alone is not enough on a loaded machine: one scheduler's watches could all still be unnoticed."""
    seen: list[Traffic] = []

    def stable() -> bool:
        seen.append(admin.traffic(users, until))
        time.sleep(0.6)
        now = admin.traffic(users, until)
        return now.watches >= max(1, watching) and now == seen[-1]

    wait_for(stable, 60, "the stopped schedulers' watches to close")
    return admin.traffic(users, until)


def _watching(sched: LiveScheduler) -> int:
    """How many watches ``sched`` holds open (one per informer the API server serves)."""
    return sum(1 for inf in sched.informers.values() if inf.served)


def _down_pods(
    admin: Admin, namespace: str, prefix: str, profiles: tuple[str, ...], settle: float
) -> dict[str, str]:
    """Create one pod per profile, wait ``settle`` seconds, return profile -> node ('' = Pending); then delete
    them so the next measurement starts clean."""
    names = {p: f"{prefix}-{p}" for p in profiles}
    for profile, name in names.items():
        admin.create_pod(namespace, name, profile, f"{prefix}-{profile}")
    time.sleep(settle)
    return {p: admin.node_of(namespace, n) for p, n in names.items()}


def measure(
    admin: Admin,
    registry: Any,
    example: Path,
    namespace: str,
    fleet: Fleet,
    seed: int,
    window: float,
    settle: float,
    while_separate: Callable[[], None] | None = None,
) -> Comparison:
    """Run both shapes on the cluster, one after the other, and measure (a)-(d)."""
    text = (example / "config.yaml").read_text(encoding="utf-8")
    source = str(example / "config.yaml")
    cfg = parse_config(yamlio.load_one(text, source), source, registry)
    profiles = tuple(p.scheduler_name for p in cfg.profiles)
    separate_files = [example / "separate" / f"{p}.yaml" for p in profiles]
    for path in separate_files:
        if not path.is_file():
            raise DemoError(f"{path} is missing: the separate shape needs one configuration per profile")

    # one scheduler, two profiles
    role = compute_rbac(cfg, registry).cluster_role("x")["rules"]
    ident = admin.identity("berth-shape-profiles", SA_NAMESPACE, role)
    sched = fleet.add(start_scheduler(cfg, registry, ident, seed))
    if not sched.wait_synced(20):
        raise DemoError("the two-profile scheduler did not sync its informers within 20s")
    informers_p = (len(sched.informers),)
    time.sleep(window)
    until = utc_now()
    watching_p = _watching(sched)
    fleet.stop(sched)
    traffic_p = settled_traffic(admin, [ident.user], until, watching_p)
    down_p = _down_pods(admin, namespace, "down-one", profiles, settle)
    resumed_p = _resume(
        admin, fleet, cfg, registry, ident, seed, namespace, [f"down-one-{p}" for p in profiles]
    )
    for p in profiles:
        admin.delete_pod(namespace, f"down-one-{p}")

    # two schedulers, one profile each
    idents: list[Identity] = []
    scheds: list[LiveScheduler] = []
    rules_s: list[int] = []
    for path in separate_files:
        one = load_config(path, registry)
        rules = compute_rbac(one, registry).cluster_role("x")["rules"]
        rules_s.append(len(rules))
        ident_s = admin.identity(f"berth-shape-{one.profiles[0].scheduler_name}", SA_NAMESPACE, rules)
        idents.append(ident_s)
        scheds.append(fleet.add(start_scheduler(one, registry, ident_s, seed)))
    for s in scheds:
        if not s.wait_synced(20):
            raise DemoError("a one-profile scheduler did not sync its informers within 20s")
    informers_s = tuple(len(s.informers) for s in scheds)
    time.sleep(window)
    until = utc_now()
    if while_separate is not None:
        while_separate()  # after the window: its binds and events are not counted as the shape's idle traffic
    stopped, kept = scheds[-1], scheds[0]
    fleet.stop(stopped)
    names = {p: f"down-half-{p}" for p in profiles}
    for p, n in names.items():
        admin.create_pod(namespace, n, p, f"down-half-{p}")
    kept_profile = profiles[0]
    wait_for(
        lambda: admin.node_of(namespace, names[kept_profile]),
        20,
        f"the running {kept_profile} scheduler to bind its pod",
    )
    time.sleep(min(settle, 1.0))
    down_s = {p: admin.node_of(namespace, n) for p, n in names.items()}
    fleet.stop(kept)
    traffic_s = settled_traffic(admin, [i.user for i in idents], until, sum(_watching(s) for s in scheds))
    stopped_cfg = load_config(separate_files[-1], registry)
    resumed_s = _resume(
        admin, fleet, stopped_cfg, registry, idents[-1], seed, namespace, [names[profiles[-1]]]
    )
    for n in names.values():
        admin.delete_pod(namespace, n)

    shapes = (DeployShape.PROFILES, DeployShape.SEPARATE)
    rendered = {shape: render(text, registry, shape, source) for shape in shapes}
    third = {shape: third_cost(text, registry, shape, source, admin) for shape in shapes}
    return Comparison(
        ShapeFigures(
            "profiles", 1, (len(role),), written(rendered[shapes[0]]), traffic_p, informers_p,
            Down(("the scheduler",), down_p, resumed_p), third[shapes[0]],
        ),
        ShapeFigures(
            "separate", len(scheds), tuple(rules_s), written(rendered[shapes[1]]), traffic_s, informers_s,
            Down((profiles[-1],), down_s, resumed_s), third[shapes[1]],
        ),
        window,
    )  # fmt: skip
