"""The minimal ClusterRole a scheduler configuration needs, computed from what its enabled plugins touch.

Why this exists: the usual way to run a second scheduler is to bind it to ``system:kube-scheduler`` (or copy that
role), which grants everything every default plugin could ever read -- PVs, CSI objects, DRA objects, PDBs --
whether or not the configured profiles enable those plugins, and which must be patched by hand for the scheduler's
own lease name. berth computes the role instead, from three sources, each verb being one that ``berth schedule
run`` actually sends (``tests/schedule/live/test_rbac_live.py`` runs the scheduler with exactly this role, then
removes each verb of each rule in turn and watches it fail):

1. **The scheduler core**, which every configuration needs: pod and node informers (``list/watch``: informers
   list, then watch; nothing GETs single objects), ``pods/status`` ``patch`` (the ``PodScheduled`` condition and
   ``status.nominatedNodeName``, :class:`berth.schedule.live.events.StatusWriter`), and ``create`` and ``patch``
   Events in ``events.k8s.io`` (the group :class:`berth.schedule.live.events.EventRecorder` writes to: an Event
   that repeats becomes a series whose count is patched, as kube-scheduler's recorder does; upstream's
   ``system:kube-scheduler`` role also grants ``update``, which the recorder never sends).
2. **Leader election**, only when ``leaderElection.leaderElect`` is true: ``create`` on leases (``create`` cannot be
   restricted by name) and ``get/update`` restricted by ``resourceNames`` to the configured lease.
3. **Each enabled, active plugin** (union over all profiles and extension points): what its module declares in
   ``PluginSpec.api_access`` (reads, and writes with their verbs, e.g. VolumeBinding's
   ``update:persistentvolumes``) -- the plugins' own declarations are the one source. Plugins berth accepts
   in configuration but does not run (``PluginSpec.active`` False) add nothing: the scheduler never touches what
   they would read, and a ``note:`` names them.

An ``api_access`` entry is ``[VERB[,VERB...]:]RESOURCE[.GROUP][/SUBRESOURCE]``. Without verbs, a resource is read through
an informer (``list, watch``), ``*/binding`` is ``create`` and ``*/status`` is ``patch``. A bare resource name
must be one of :data:`KNOWN_RESOURCES` (which knows its API group); anything else needs its group spelled out, e.g.
``widgets.example.com``.

Rules are merged per (group, resource, resourceNames) and sorted by (group, resource, verbs), one resource per
rule, so the output is deterministic and each rule can say which plugins need it (``Rule.why``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.kube import yamlio
from berth.kube.errors import InputError
from berth.schedule import config as config_mod
from berth.schedule.framework.interface import PluginSpec
from berth.schedule.plugins.registry import Registry

READ: tuple[str, ...] = ("list", "watch")  # what an informer sends
WRITE_STATUS: tuple[str, ...] = ("patch",)  # berth writes status subresources with merge patches
RECORD_EVENTS: tuple[str, ...] = ("create", "patch")  # an Event, then its series count (a repeat)
EVENTS_GROUP = "events.k8s.io"  # the group berth.schedule.live.events posts to
VERBS: frozenset[str] = frozenset(
    ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
)

WHY_ANNOTATION = "berth.dev/why"
CORE = "core"  # the label used in ``Rule.why`` for needs of the scheduler itself, not of a plugin

# Bare resource name -> API group. One home for the groups of everything a scheduler plugin reads.
KNOWN_RESOURCES: dict[str, str] = {
    "pods": "",
    "nodes": "",
    "namespaces": "",
    "services": "",
    "replicationcontrollers": "",
    "persistentvolumeclaims": "",
    "persistentvolumes": "",
    "events": "",
    "bindings": "",
    "replicasets": "apps",
    "statefulsets": "apps",
    "poddisruptionbudgets": "policy",
    "storageclasses": "storage.k8s.io",
    "csinodes": "storage.k8s.io",
    "csidrivers": "storage.k8s.io",
    "csistoragecapacities": "storage.k8s.io",
    "volumeattachments": "storage.k8s.io",
    "priorityclasses": "scheduling.k8s.io",
    "leases": "coordination.k8s.io",
    "resourceclaims": "resource.k8s.io",
    "resourceslices": "resource.k8s.io",
    "deviceclasses": "resource.k8s.io",
}

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_GROUP = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class Need:
    """One permission someone needs: verbs on a resource (optionally only on named objects), and who needs it."""

    group: str
    resource: str
    verbs: frozenset[str]
    who: str
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """One merged PolicyRule (one resource) and the reasons it exists."""

    group: str
    resource: str
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...]
    why: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"apiGroups": [self.group], "resources": [self.resource]}
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        out["verbs"] = list(self.verbs)
        return out

    def describe(self) -> str:
        """``pods get,list,watch: core (...), NodeName`` -- the line a reviewer reads."""
        group = self.group or "core"
        names = f" {','.join(self.resource_names)}" if self.resource_names else ""
        return f"{group}/{self.resource}{names} [{','.join(self.verbs)}]: {', '.join(self.why)}"


@dataclass(frozen=True)
class RoleResult:
    """The computed role: sorted rules, and notes for the operator (fallbacks used, inactive plugins)."""

    rules: tuple[Rule, ...]
    notes: tuple[str, ...]

    def read_only(self) -> RoleResult:
        """What ``berth schedule shadow`` needs: the informers' ``list, watch`` and nothing else -- no
        subresource, no named object (a Lease), no write verb."""
        rules = tuple(
            Rule(r.group, r.resource, tuple(v for v in r.verbs if v in READ), (), r.why)
            for r in self.rules
            if not r.resource_names and "/" not in r.resource and set(READ) <= set(r.verbs)
        )
        return RoleResult(rules, self.notes)

    def why_text(self) -> str:
        """The ``berth.dev/why`` annotation: one line per rule, in rule order."""
        return "\n".join(rule.describe() for rule in self.rules)

    def cluster_role(self, name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": name}
        if labels:
            metadata["labels"] = dict(labels)
        metadata["annotations"] = {WHY_ANNOTATION: self.why_text()}
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": metadata,
            "rules": [rule.to_dict() for rule in self.rules],
        }


def parse_entry(entry: str, who: str, where: str) -> Need:
    """Parse one ``[VERBS:]RESOURCE[.GROUP][/SUB]`` entry; a malformed one names the plugin and the fix."""
    text = entry.strip()
    verbs_part, sep, target = text.partition(":")
    if not sep:
        verbs_part, target = "", text
    base, _, sub = target.partition("/")
    resource, dot, group = base.partition(".")
    if not dot:
        if resource not in KNOWN_RESOURCES:
            raise InputError(
                f"{entry!r}: unknown resource {resource!r}; spell out its API group, e.g. {resource}.example.com "
                f"(known bare names: {', '.join(sorted(KNOWN_RESOURCES))})",
                where,
            )
        group = KNOWN_RESOURCES[resource]
    elif group == "core":
        group = ""
    if not _NAME.match(resource) or (sub and not _NAME.match(sub)) or (group and not _GROUP.match(group)):
        raise InputError(f"{entry!r}: expected [VERB[,VERB]:]RESOURCE[.GROUP][/SUBRESOURCE]", where)
    if verbs_part:
        verbs = frozenset(v.strip() for v in verbs_part.split(","))
        unknown = sorted(v for v in verbs if v not in VERBS)
        if unknown:
            raise InputError(
                f"{entry!r}: unknown verb(s) {', '.join(unknown)}; use {', '.join(sorted(VERBS))}", where
            )
    elif sub == "binding":
        verbs = frozenset(("create",))
    elif sub == "status":
        verbs = frozenset(WRITE_STATUS)
    else:
        verbs = frozenset(READ)
    return Need(group, f"{resource}/{sub}" if sub else resource, verbs, who)


def core_needs(cfg: config_mod.SchedulerConfiguration) -> list[Need]:
    """What the scheduler itself needs, whatever the plugins: informers, status patches, events, the lease."""
    needs = [
        Need("", "pods", frozenset(READ), f"{CORE} (pod informer: queue and cache)"),
        Need("", "nodes", frozenset(READ), f"{CORE} (node informer: cache)"),
        Need(
            "", "pods/status", frozenset(WRITE_STATUS), f"{CORE} (PodScheduled condition, nominatedNodeName)"
        ),
        Need(EVENTS_GROUP, "events", frozenset(RECORD_EVENTS), f"{CORE} (Scheduled/FailedScheduling events)"),
    ]
    le = cfg.leader_election
    if le.leader_elect:
        lease = f"{le.resource_namespace}/{le.resource_name}"
        needs.append(
            Need("coordination.k8s.io", "leases", frozenset(("create",)), f"leader election ({lease})")
        )
        needs.append(
            Need(
                "coordination.k8s.io",
                "leases",
                frozenset(("get", "update")),
                f"leader election ({lease})",
                (le.resource_name,),
            )
        )
    return needs


def enabled_plugins(cfg: config_mod.SchedulerConfiguration) -> list[str]:
    """Every plugin enabled at any extension point of any profile, in first-seen order."""
    seen: dict[str, None] = {}
    for profile in cfg.profiles:
        for point in sorted(profile.plugins):
            for ref in profile.plugins[point]:
                seen.setdefault(ref.name, None)
    return list(seen)


def plugin_needs(name: str, spec: PluginSpec | None) -> tuple[list[Need], list[str]]:
    """One plugin's needs and the notes to show about how they were found."""
    notes: list[str] = []
    where = f"plugin {name} (PluginSpec.api_access)"
    entries: tuple[str, ...] = spec.api_access if spec is not None else ()
    if not entries:
        notes.append(
            f"plugin {name} declares no API access: assuming it needs only what the scheduler core already has "
            "(pods, nodes); declare PluginSpec.api_access if it reads or writes more"
        )
    needs = [parse_entry(entry, name, where) for entry in entries]
    return needs, notes


def merge(needs: Iterable[Need]) -> tuple[Rule, ...]:
    """Union verbs and reasons per (group, resource, resourceNames); sort by (group, resource, verbs)."""
    verbs: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
    why: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
    for need in needs:
        key = (need.group, need.resource, tuple(sorted(need.resource_names)))
        verbs.setdefault(key, set()).update(need.verbs)
        why.setdefault(key, set()).add(need.who)
    rules = [
        Rule(key[0], key[1], tuple(sorted(verbs[key])), key[2], tuple(sorted(why[key], key=_why_order)))
        for key in verbs
    ]
    # A named rule whose verbs an unnamed rule for the same resource already grants adds nothing.
    unnamed = {(r.group, r.resource): set(r.verbs) for r in rules if not r.resource_names}
    rules = [
        r
        for r in rules
        if not (r.resource_names and set(r.verbs) <= unnamed.get((r.group, r.resource), set()))
    ]
    rules.sort(key=lambda r: (r.group, r.resource, r.verbs, r.resource_names))
    return tuple(rules)


def _why_order(who: str) -> tuple[int, str]:
    return (0 if who.startswith(CORE) or who.startswith("leader election") else 1, who)


def compute(cfg: config_mod.SchedulerConfiguration, registry: Registry) -> RoleResult:
    """The minimal role for ``cfg``: core needs, the lease when leader election is on, and every enabled plugin's."""
    needs = core_needs(cfg)
    notes: list[str] = []
    inactive: list[str] = []
    for name in enabled_plugins(cfg):
        spec = registry.get(name)
        if spec is not None and not spec.active:
            inactive.append(name)  # never run, so the scheduler never touches what it would read
            continue
        plugin, plugin_notes = plugin_needs(name, spec)
        needs += plugin
        notes += plugin_notes
    if inactive:
        notes.append(
            f"enabled but not active yet in berth: {', '.join(sorted(inactive))}; the scheduler skips them, so "
            "the role grants nothing for them (regenerate it when berth activates them)"
        )
    return RoleResult(merge(needs), tuple(notes))


def to_yaml(role: Mapping[str, Any], result: RoleResult) -> str:
    """The ClusterRole as YAML with a ``# why:`` comment above each rule (the annotation carries the same)."""
    text = yamlio.dump(dict(role))
    lines = text.splitlines()
    out: list[str] = []
    in_rules = False
    index = 0
    for line in lines:
        if line == "rules:":
            in_rules = True
        elif in_rules and line.startswith("- ") and index < len(result.rules):
            out.append(f"# why: {', '.join(result.rules[index].why)}")
            index += 1
        elif in_rules and not line.startswith((" ", "-")):
            in_rules = False
        out.append(line)
    return "\n".join(out) + "\n"


def to_json(role: Mapping[str, Any]) -> str:
    return json.dumps(role, indent=2) + "\n"
