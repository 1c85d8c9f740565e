"""Facts about the target, recorded offline and optionally checked against a live cluster.

Offline, a render *assumes* things: the Kubernetes version, that ``lookup`` finds nothing, that this is an
install (``.Release.IsInstall``). The facts file records those assumptions next to what the chart needs from the
cluster that it does not bring itself: CRDs of the custom resources it renders, and Secrets its pods reference
but the chart does not render. ``--live`` checks them against a cluster and lists each unmet one with the fix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from berth.install import split as split_mod
from berth.install.package import Package, run_collector
from berth.kube.errors import NotImplementedYet

BUILTIN_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "apiregistration.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "node.k8s.io",
        "discovery.k8s.io",
        "certificates.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "events.k8s.io",
        "resource.k8s.io",
    }
)


@dataclass(frozen=True)
class Unmet:
    what: str
    fix: str


def _pod_specs(obj: Any) -> list[dict[str, Any]]:
    """Every pod spec in an object: a mapping that has a ``containers`` list."""
    found: list[dict[str, Any]] = []
    if isinstance(obj, dict):
        if isinstance(obj.get("containers"), list):
            found.append(obj)
        for v in obj.values():
            found += _pod_specs(v)
    elif isinstance(obj, list):
        for v in obj:
            found += _pod_specs(v)
    return found


def referenced_secrets(obj: dict[str, Any]) -> set[str]:
    """Secret names a pod spec reads: volumes, env, envFrom, imagePullSecrets."""
    names: set[str] = set()
    for spec in _pod_specs(obj):
        for vol in spec.get("volumes") or []:
            sec = (vol or {}).get("secret") or {}
            if sec.get("secretName") and not sec.get("optional"):
                names.add(str(sec["secretName"]))
            for src in ((vol or {}).get("projected") or {}).get("sources") or []:
                s = (src or {}).get("secret") or {}
                if s.get("name") and not s.get("optional"):
                    names.add(str(s["name"]))
        for ref in spec.get("imagePullSecrets") or []:
            if (ref or {}).get("name"):
                names.add(str(ref["name"]))
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            for env in (c or {}).get("env") or []:
                key_ref = ((env or {}).get("valueFrom") or {}).get("secretKeyRef") or {}
                if key_ref.get("name") and not key_ref.get("optional"):
                    names.add(str(key_ref["name"]))
            for env_from in (c or {}).get("envFrom") or []:
                s = (env_from or {}).get("secretRef") or {}
                if s.get("name") and not s.get("optional"):
                    names.add(str(s["name"]))
    return names


def offline_facts(result: split_mod.Split, namespace: str, kube_version: str) -> dict[str, Any]:
    """What the render assumed and what the chart needs from the cluster."""
    provided = {
        (
            str(c.body.get("spec", {}).get("group", "")),
            str(c.body.get("spec", {}).get("names", {}).get("kind", "")),
        )
        for c in result.crds
    } | {
        (
            str(h.obj.body.get("spec", {}).get("group", "")),
            str(h.obj.body.get("spec", {}).get("names", {}).get("kind", "")),
        )
        for h in result.hooks
        if h.obj.kind == split_mod.CRD_KIND
    }
    needed: dict[tuple[str, str], str] = {}
    for o in result.all_objects():
        group = o.ref.group
        if group not in BUILTIN_GROUPS and (group, o.kind) not in provided:
            needed.setdefault((group, o.kind), o.api_version)
    rendered_secrets = {(s.namespace or namespace, s.name) for s in result.secrets} | {
        (h.obj.namespace or namespace, h.obj.name) for h in result.hooks if h.obj.kind == "Secret"
    }
    required_secrets: set[tuple[str, str]] = set()
    for o in result.all_objects():
        for name in referenced_secrets(o.body):
            key = (o.namespace or namespace, name)
            if key not in rendered_secrets:
                required_secrets.add(key)
    rendered_ns = sorted(o.name for o in result.ordinary if o.kind == "Namespace")
    return {
        "kubeVersion": {"assumed": kube_version},
        "namespace": {
            "name": namespace,
            "renderedByChart": namespace in rendered_ns,
            "otherNamespaces": [n for n in rendered_ns if n != namespace],
        },
        "chartCRDs": sorted(
            (
                {
                    "name": c.name,
                    "versions": [str(v.get("name")) for v in c.body.get("spec", {}).get("versions") or []],
                }
                for c in result.crds
            ),
            key=lambda d: str(d["name"]),
        ),
        "requiredCRDs": [
            {"apiVersion": api, "kind": kind, "group": group} for (group, kind), api in sorted(needed.items())
        ],
        "requiredSecrets": [{"namespace": ns, "name": n} for ns, n in sorted(required_secrets)],
        "assumptions": {
            "lookup": "returns nothing (offline render)",
            "releaseIsInstall": True,
            "capabilities": f"kube {kube_version}, built-in API versions only",
        },
    }


def unmet_offline(facts: dict[str, Any]) -> list[Unmet]:
    """Requirements an offline run can only state: each with the command that satisfies it."""
    out = [
        Unmet(
            f"CRD for {r['kind']} ({r['apiVersion']}) is not in this chart",
            f"install the operator or CRDs that provide {r['group']} before applying",
        )
        for r in facts.get("requiredCRDs", [])
    ]
    out += [
        Unmet(
            f"Secret {s['namespace']}/{s['name']} is referenced but not rendered",
            f"kubectl create secret generic {s['name']} -n {s['namespace']} --from-literal=KEY=VALUE",
        )
        for s in facts.get("requiredSecrets", [])
    ]
    return out


def collect(
    pkg: Package,
    result: split_mod.Split,
    namespace: str,
    env: dict[str, str],
    live: bool = False,
) -> dict[str, Any]:
    """All facts: offline ones, then the package collector's keys (if it has one), then live checks."""
    facts = offline_facts(result, namespace, pkg.kube_version)
    if pkg.collector is not None:
        facts.update(run_collector(pkg, {**os.environ, **env}))
    if live:
        raise NotImplementedYet("berth install setup --live (needs berth.kube.client, not yet available)")
    facts["unmet"] = [{"requirement": u.what, "fix": u.fix} for u in unmet_offline(facts)]
    return facts
