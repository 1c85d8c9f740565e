"""What a plan needs the cluster to allow, asked before its first write.

Why a module of its own: ``install apply`` and every executor built on it (upgrade, uninstall, rollback, test)
check the identity's permissions up front with access reviews, so a run that would stop half-way at a 403 is
refused before it changes anything, naming each missing permission.
"""

from __future__ import annotations

from berth.install import kubeops
from berth.install.plan import Phase, PlanObject, Step


def needed_permissions(steps: tuple[Step, ...]) -> list[tuple[str, str, str, str, str]]:
    """(verb, apiVersion, kind, namespace-or-empty, subresource) the steps need, in first-use order."""
    out: dict[tuple[str, str, str, str, str], None] = {}

    def add(verb: str, o: PlanObject | tuple[str, str], ns: str, sub: str = "") -> None:
        api, kind = (o.api_version, o.kind) if isinstance(o, PlanObject) else o
        out[(verb, api, kind, ns, sub)] = None

    for step in steps:
        for o in step.objects:
            ns = o.namespace
            if step.phase == Phase.NAMESPACE.value:
                add("get", o, "")
                add("create", o, "")
            elif step.phase == Phase.DELETE.value:
                add("delete", o, ns)
            elif step.phase == Phase.PRUNE.value:
                add("get", o, ns)
                add("delete", o, ns)
            elif step.phase == Phase.READINESS.value:
                add("get", o, ns)
            else:
                for verb in ("get", "patch", "create"):
                    add(verb, o, ns)
                if step.is_hook and (
                    o.delete_before_create or o.delete_on_failure or o in step.delete_after_success
                ):
                    add("delete", o, ns)
                if o.kind == "Job" and (step.is_hook or step.phase == Phase.READINESS.value):
                    add("list", ("v1", "Pod"), ns)
                    add("get", ("v1", "Pod"), ns, "log")
    return list(out)


RECORD_VERBS = ("list", "create", "update", "delete")
"""What Helm's Secret driver does to release records (and so berth, writing them)."""


def check_permissions(
    kube: kubeops.KubeOps, steps: tuple[Step, ...], release_ns: str, records: bool = False
) -> list[str]:
    """Lines ``cannot VERB RESOURCE in namespace NS`` for every permission the identity lacks ([] when the
    cluster does not answer access reviews: the run then reports a 403 where it happens). ``records``: the run
    also reads and writes the release's Helm records (Secrets in the release namespace)."""
    missing: list[str] = []
    seen: set[tuple[str, str, str, str]] = set()
    needs = needed_permissions(steps)
    if records:
        needs += [(verb, "v1", "Secret", release_ns, "") for verb in RECORD_VERBS]
    for verb, api, kind, ns, sub in needs:
        res = kube.try_resource(api, kind)
        if res is None:  # a custom resource whose CRD this plan creates: checked when applied
            continue
        where = (ns or release_ns) if res.namespaced else ""
        key = (verb, res.qualified + (f"/{sub}" if sub else ""), where, "")
        if key in seen:
            continue
        seen.add(key)
        allowed = kube.can_i(verb, res, where, sub)
        if allowed is None:
            return []
        if not allowed:
            what = res.qualified + (f"/{sub}" if sub else "")
            missing.append(
                f"cannot {verb} {what}" + (f" in namespace {where}" if where else " (cluster-scoped)")
            )
    return missing
