"""Hand-written ``helm template``-style documents for split and plan tests."""

from __future__ import annotations

from typing import Any

from berth.kube import yamlio


def doc(
    kind: str,
    name: str | None,
    namespace: str | None = "ns",
    annotations: dict[str, str] | None = None,
    api: str = "v1",
    source: str = "c/templates/x.yaml",
) -> str:
    meta: dict[str, Any] = {}
    if name is not None:
        meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    if annotations:
        meta["annotations"] = annotations
    body = {"apiVersion": api, "kind": kind, "metadata": meta}
    return f"---\n# Source: {source}\n" + yamlio.dump(body)


def hook(
    kind: str, name: str, event: str, weight: str | None = None, policy: str | None = None, api: str = "v1"
) -> str:
    ann = {"helm.sh/hook": event}
    if weight is not None:
        ann["helm.sh/hook-weight"] = weight
    if policy is not None:
        ann["helm.sh/hook-delete-policy"] = policy
    return doc(kind, name, annotations=ann, api=api)
