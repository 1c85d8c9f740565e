"""PodTopologySpreadArgs (``defaultConstraints``, ``defaultingType``): strict decoding, upstream's defaults and
validation (``validation_pluginargs.go``), in the plugin's own words. Split from
:mod:`berth.schedule.plugins.pod_topology_spread` so the plugin module holds the algorithm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.schedule.plugins import helper

ARGS_KIND = "PodTopologySpreadArgs"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
HONOR = "Honor"
IGNORE = "Ignore"
MAX_INT32 = 2**31 - 1

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"


@dataclass(frozen=True)
class TopologySpreadConstraint:
    """A (default) topology spread constraint as written in ``defaultConstraints``."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: Mapping[str, Any] | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "maxSkew": self.max_skew,
            "topologyKey": self.topology_key,
            "whenUnsatisfiable": self.when_unsatisfiable,
        }
        if self.label_selector is not None:
            out["labelSelector"] = dict(self.label_selector)
        if self.min_domains is not None:
            out["minDomains"] = self.min_domains
        if self.node_affinity_policy is not None:
            out["nodeAffinityPolicy"] = self.node_affinity_policy
        if self.node_taints_policy is not None:
            out["nodeTaintsPolicy"] = self.node_taints_policy
        if self.match_label_keys:
            out["matchLabelKeys"] = list(self.match_label_keys)
        return out


# Applied by the plugin (not written into args) when defaultingType is System.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(3, "kubernetes.io/hostname", SCHEDULE_ANYWAY),
    TopologySpreadConstraint(5, "topology.kubernetes.io/zone", SCHEDULE_ANYWAY),
)


def _decode_constraint(raw: Any, path: str, problems: list[str]) -> TopologySpreadConstraint:
    r = helper.ArgsReader(raw, path, problems)
    max_skew = r.get_int("maxSkew", 0)
    key = r.get_str("topologyKey", "")
    when = r.get_str("whenUnsatisfiable", "")
    selector = r.get_mapping("labelSelector")
    min_domains = r.get_int("minDomains", 0) if r.has("minDomains") else None
    affinity_policy = r.get_str("nodeAffinityPolicy", "") if r.has("nodeAffinityPolicy") else None
    taints_policy = r.get_str("nodeTaintsPolicy", "") if r.has("nodeTaintsPolicy") else None
    match_label_keys = r.get_str_list("matchLabelKeys")
    r.finish()
    return TopologySpreadConstraint(
        max_skew, key, when, selector, min_domains, affinity_policy, taints_policy, match_label_keys
    )


def _constraint_problems(
    constraints: Sequence[TopologySpreadConstraint], index: int, list_path: str
) -> list[str]:
    c = constraints[index]
    p = f"{list_path}[{index}]"
    out: list[str] = []
    if c.max_skew <= 0:
        out.append(helper.invalid(f"{p}.maxSkew", c.max_skew, "not in valid range (0, inf)"))
    if not c.topology_key:
        out.append(helper.required(f"{p}.topologyKey", "can not be empty"))
    else:
        out.extend(helper.qualified_name_problems(c.topology_key, f"{p}.topologyKey"))
    if not c.when_unsatisfiable:
        out.append(helper.required(f"{p}.whenUnsatisfiable", "can not be empty"))
    elif c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        out.append(
            helper.not_supported(
                f"{p}.whenUnsatisfiable", c.when_unsatisfiable, [DO_NOT_SCHEDULE, SCHEDULE_ANYWAY]
            )
        )
    if c.label_selector is not None:
        out.append(
            helper.forbidden(
                f"{p}.labelSelector", "constraint must not define a selector, as they deduced for each pod"
            )
        )
    for other in constraints[:index]:
        if other.topology_key == c.topology_key and other.when_unsatisfiable == c.when_unsatisfiable:
            out.append(helper.duplicate(p, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
            break
    return out


@dataclass(frozen=True)
class PodTopologySpreadArgs:
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None, path: str) -> tuple[PodTopologySpreadArgs, list[str]]:
        problems: list[str] = []
        r = helper.ArgsReader(raw, path, problems, ARGS_KIND)
        raw_constraints = r.get_list("defaultConstraints") or []
        defaulting = r.get_str("defaultingType", "") or SYSTEM_DEFAULTING
        r.finish()
        list_path = r.at("defaultConstraints")
        constraints = tuple(
            _decode_constraint(c, f"{list_path}[{i}]", problems) for i, c in enumerate(raw_constraints)
        )
        if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            problems.append(
                helper.not_supported(r.at("defaultingType"), defaulting, [LIST_DEFAULTING, SYSTEM_DEFAULTING])
            )
        elif defaulting == SYSTEM_DEFAULTING and constraints:
            problems.append(
                helper.invalid(r.at("defaultingType"), defaulting, "when .defaultConstraints are not empty")
            )
        for i in range(len(constraints)):
            problems.extend(_constraint_problems(constraints, i, list_path))
        return cls(constraints, defaulting), problems

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"defaultingType": self.defaulting_type}
        if self.default_constraints:
            out["defaultConstraints"] = [c.to_dict() for c in self.default_constraints]
        return out

    def effective_default_constraints(self) -> tuple[TopologySpreadConstraint, ...]:
        """What the plugin applies to pods without constraints of their own."""
        if self.defaulting_type == SYSTEM_DEFAULTING:
            return SYSTEM_DEFAULT_CONSTRAINTS
        return self.default_constraints
