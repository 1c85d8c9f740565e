"""Discovery documents, legacy and aggregated, built from the live resource registry.

kubectl 1.35 asks ``/api`` and ``/apis`` for the aggregated ``APIGroupDiscoveryList`` (``apidiscovery.k8s.io/v2``)
and only believes it when the response ``Content-Type`` names that type exactly; older clients and ``kubectl auth
can-i`` read the legacy ``APIVersions`` / ``APIGroupList`` / ``APIResourceList`` documents. Both are derived from
the same :class:`~berth.cluster.resources.Registry`, so a CRD shows up in both the moment it is established.
"""

from __future__ import annotations

from typing import Any

from berth.cluster.resources import SUBRESOURCE_KINDS, SUBRESOURCE_VERBS, Registry, ResourceType

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

VERSION_INFO: dict[str, str] = {
    "major": "1",
    "minor": "35",
    "emulationMajor": "1",
    "emulationMinor": "35",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "34",
    "gitVersion": "v1.35.0",
    "gitCommit": "berth",
    "gitTreeState": "clean",
    "buildDate": "2025-12-17T00:00:00Z",
    "goVersion": "go1.25.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def aggregated_type(accept: str) -> str | None:
    """The aggregated discovery content type the client accepts (None: answer the legacy document)."""
    accept = accept.replace(" ", "")
    if "as=APIGroupDiscoveryList" not in accept:
        return None
    for part in accept.split(","):
        if "as=APIGroupDiscoveryList" in part and "v=v2;" in part + ";" and "v=v2beta1" not in part:
            return AGGREGATED_V2
    return AGGREGATED_V2BETA1


def _types_in(registry: Registry, group: str, version: str) -> list[ResourceType]:
    return sorted(
        (t for t in registry.all() if t.group == group and version in t.all_versions), key=lambda t: t.plural
    )


def _sub_kind(t: ResourceType, sub: str, version: str) -> tuple[str, str, str]:
    if sub in SUBRESOURCE_KINDS:
        return SUBRESOURCE_KINDS[sub]
    return (t.group, version, t.kind)


def _sub_verbs(sub: str) -> list[str]:
    return list(SUBRESOURCE_VERBS.get(sub, ("get",)))


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    """``APIResourceList`` for ``/api/v1`` or ``/apis/<group>/<version>`` (None if not served)."""
    types = _types_in(registry, group, version)
    if not types:
        return None
    resources: list[dict[str, Any]] = []
    for t in types:
        entry: dict[str, Any] = {
            "name": t.plural,
            "singularName": t.singular,
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": sorted(t.verbs),
        }
        if t.short_names:
            entry["shortNames"] = list(t.short_names)
        if t.categories:
            entry["categories"] = list(t.categories)
        resources.append(entry)
        for sub in t.subresources_at(version):
            g, v, k = _sub_kind(t, sub, version)
            s: dict[str, Any] = {
                "name": f"{t.plural}/{sub}",
                "singularName": "",
                "namespaced": t.namespaced,
                "kind": k,
                "verbs": _sub_verbs(sub),
            }
            if g != t.group or sub in SUBRESOURCE_KINDS:
                s["group"], s["version"] = g, v
            resources.append(s)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def api_versions() -> dict[str, Any]:
    """Legacy ``/api``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}],
    }


def _group_doc(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    """Legacy ``/apis``."""
    groups = [_group_doc(g, vs) for g, vs in registry.group_versions() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    """Legacy ``/apis/<group>``."""
    for g, vs in registry.group_versions():
        if g == group and g:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(g, vs)}
    return None


def _aggregated_resource(t: ResourceType, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": t.plural,
        "responseKind": {"group": t.group, "version": version, "kind": t.kind},
        "scope": "Namespaced" if t.namespaced else "Cluster",
        "singularResource": t.singular,
        "verbs": sorted(t.verbs),
    }
    if t.short_names:
        out["shortNames"] = list(t.short_names)
    if t.categories:
        out["categories"] = list(t.categories)
    subs = []
    for sub in t.subresources_at(version):
        g, v, k = _sub_kind(t, sub, version)
        subs.append(
            {
                "subresource": sub,
                "responseKind": {"group": g, "version": v, "kind": k},
                "verbs": _sub_verbs(sub),
            }
        )
    if subs:
        out["subresources"] = subs
    return out


def aggregated(registry: Registry, core: bool, content_type: str) -> dict[str, Any]:
    """``APIGroupDiscoveryList`` for ``/api`` (core) or ``/apis`` (every named group)."""
    items = []
    for group, versions in registry.group_versions():
        if (group == "") != core:
            continue
        vdocs = []
        for v in versions:
            types = _types_in(registry, group, v)
            vdocs.append(
                {
                    "version": v,
                    "freshness": "Current",
                    "resources": [_aggregated_resource(t, v) for t in types],
                }
            )
        items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": vdocs})
    api_version = "apidiscovery.k8s.io/v2" if content_type == AGGREGATED_V2 else "apidiscovery.k8s.io/v2beta1"
    return {"kind": "APIGroupDiscoveryList", "apiVersion": api_version, "metadata": {}, "items": items}
