"""Facts about the target, recorded offline and optionally checked against a live cluster.

Offline, a render *assumes* things: the Kubernetes version, that ``lookup`` finds nothing, that this is an
install (``.Release.IsInstall``). The facts file records those assumptions next to what the chart needs from the
cluster that it does not bring itself: CRDs of the custom resources it renders, and Secrets its pods reference
but the chart does not render. ``--live`` checks them against a cluster and lists each unmet one with the fix.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Protocol

from berth.install import split as split_mod
from berth.install.package import Package, run_collector
from berth.kube.errors import ToolError
from berth.kube.hooks import HookEvent

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


_TOKEN_SPLIT = re.compile(r"[^A-Za-z0-9.-]+")


def hook_made_secrets(result: split_mod.Split, namespace: str) -> dict[tuple[str, str], str]:
    """Secrets a pre-install hook Job or Pod names in its command, args or env values, with that hook: the
    admission-webhook pattern (ingress-nginx's ``kube-webhook-certgen create --secret-name=NAME``) makes the Secret
    a Deployment mounts at install time, so it is not a prerequisite to create by hand."""
    out: dict[tuple[str, str], str] = {}
    for h in result.hooks:
        if HookEvent.PRE_INSTALL not in h.events or h.obj.kind not in ("Job", "Pod"):
            continue
        ns = h.obj.namespace or namespace
        for spec in _pod_specs(h.obj.body):
            for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
                words = [*((c or {}).get("command") or []), *((c or {}).get("args") or [])]
                words += [str((e or {}).get("value") or "") for e in (c or {}).get("env") or []]
                for token in _TOKEN_SPLIT.split(" ".join(str(w) for w in words)):
                    out.setdefault((ns, token), f"pre-install hook {h.obj.kind} {ns}/{h.obj.name}")
    return out


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
    made_by_hooks = hook_made_secrets(result, namespace)
    hook_secrets: dict[tuple[str, str], str] = {}
    for o in result.all_objects():
        if o.kind == split_mod.CRD_KIND:
            continue  # a CRD's schema describes pod specs, it runs none (and a large one is most of the render)
        for name in referenced_secrets(o.body):
            key = (o.namespace or namespace, name)
            if key in made_by_hooks:
                hook_secrets[key] = made_by_hooks[key]
            elif key not in rendered_secrets:
                required_secrets.add(key)
    rendered_ns = sorted(o.name for o in result.ordinary if o.kind == "Namespace")
    facts: dict[str, Any] = {
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
            "capabilities": f"kube {kube_version}, the built-in API versions and kinds a stock cluster serves, and the chart's crds/ CRDs",
        },
    }
    if hook_secrets:  # only when there are some: the fact count of other charts stays as it was
        facts["hookSecrets"] = [
            {"namespace": ns, "name": n, "createdBy": by} for (ns, n), by in sorted(hook_secrets.items())
        ]
    return facts


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


@dataclass(frozen=True)
class LiveCRD:
    name: str
    group: str
    kind: str
    versions: tuple[str, ...]


class LiveCluster(Protocol):
    """The few reads the live check needs (a fake in tests, :class:`KubeCluster` for real)."""

    context: str

    def server_version(self) -> str: ...

    def crds(self) -> list[LiveCRD]: ...

    def namespace_exists(self, name: str) -> bool: ...

    def secret_exists(self, namespace: str, name: str) -> bool: ...


class KubeCluster:
    """:class:`LiveCluster` over the official client, built by :func:`berth.kube.client.connect`."""

    def __init__(self, kubeconfig: str | None, context: str | None) -> None:
        from berth.kube import client

        conn = client.connect(kubeconfig, context)
        self.context = conn.context
        self._api = conn.api_client

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        from kubernetes.client.exceptions import ApiException

        try:
            return fn(*args)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise ToolError(
                f"live check ({what}) failed in context {self.context}: {exc.status} {exc.reason}"
            ) from exc
        except Exception as exc:  # urllib3 connection errors and the like
            raise ToolError(f"cannot reach the cluster of context {self.context} ({what}): {exc}") from exc

    def server_version(self) -> str:
        from kubernetes import client as k8s

        info = self._call("version", k8s.VersionApi(self._api).get_code)
        return str(getattr(info, "git_version", "") or "")

    def crds(self) -> list[LiveCRD]:
        from kubernetes import client as k8s

        listing = self._call("list CRDs", k8s.ApiextensionsV1Api(self._api).list_custom_resource_definition)
        out = []
        for item in getattr(listing, "items", None) or []:
            spec = item.spec
            versions = tuple(v.name for v in spec.versions or [] if v.served)
            out.append(LiveCRD(item.metadata.name, spec.group, spec.names.kind, versions))
        return out

    def namespace_exists(self, name: str) -> bool:
        from kubernetes import client as k8s

        return self._call("read namespace", k8s.CoreV1Api(self._api).read_namespace, name) is not None

    def secret_exists(self, namespace: str, name: str) -> bool:
        from kubernetes import client as k8s

        api = k8s.CoreV1Api(self._api)
        return self._call("read secret", api.read_namespaced_secret, name, namespace) is not None


def live_facts(facts: dict[str, Any], cluster: LiveCluster) -> tuple[dict[str, Any], list[Unmet]]:
    """Check the offline facts against a cluster: what is there, and what is missing with the fix."""
    crds = cluster.crds()
    by_name = {c.name: c for c in crds}
    by_kind = {(c.group, c.kind): c for c in crds}
    unmet: list[Unmet] = []
    chart_crds = []
    for c in facts.get("chartCRDs", []):
        live = by_name.get(c["name"])
        state = "absent (the plan creates it)"
        if live is not None:
            missing = [v for v in c["versions"] if v not in live.versions]
            state = f"present, serving {', '.join(live.versions)}"
            if missing:
                state += f"; the chart needs {', '.join(missing)} too (the plan's crds step updates it)"
        chart_crds.append({"name": c["name"], "state": state})
    for r in facts.get("requiredCRDs", []):
        if (r["group"], r["kind"]) not in by_kind:
            unmet.append(
                Unmet(
                    f"no CRD serves {r['kind']} ({r['apiVersion']}) in context {cluster.context}",
                    f"install the operator or CRDs that provide {r['group']} first",
                )
            )
    secrets = []
    for s in facts.get("requiredSecrets", []):
        present = cluster.secret_exists(s["namespace"], s["name"])
        secrets.append({**s, "present": present})
        if not present:
            unmet.append(
                Unmet(
                    f"Secret {s['namespace']}/{s['name']} is missing in context {cluster.context}",
                    f"kubectl create secret generic {s['name']} -n {s['namespace']} --from-literal=KEY=VALUE",
                )
            )
    ns = facts.get("namespace", {}).get("name", "")
    report = {
        "context": cluster.context,
        "serverVersion": cluster.server_version(),
        "namespaceExists": cluster.namespace_exists(ns) if ns else False,
        "chartCRDs": chart_crds,
        "requiredSecrets": secrets,
    }
    return report, unmet


def collect(
    pkg: Package,
    result: split_mod.Split,
    namespace: str,
    env: dict[str, str],
    cluster: LiveCluster | None = None,
) -> dict[str, Any]:
    """All facts: offline ones, then the package collector's keys (if it has one), then live checks (with a
    ``cluster``). ``unmet`` lists each requirement not met, with its fix."""
    facts = offline_facts(result, namespace, pkg.kube_version)
    if pkg.collector is not None:
        facts.update(run_collector(pkg, {**os.environ, **env}))
    if cluster is None:
        unmet = unmet_offline(facts)
    else:
        facts["live"], unmet = live_facts(facts, cluster)
    facts["unmet"] = [{"requirement": u.what, "fix": u.fix} for u in unmet]
    return facts
