"""Helm 4's kind order tables -- the one home for them (helm/helm ``pkg/release/v1/util/kind_sorter.go``).

Install creates namespaces, RBAC and config before the workloads that use them. Uninstall walks the opposite way
and removes *validating then mutating webhooks first*: a webhook whose backing Deployment is already gone would
otherwise reject every later deletion. Unlisted kinds go last, alphabetically; the API group is ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

INSTALL_ORDER: tuple[str, ...] = (
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
)

ARGOCD_ORDER: tuple[str, ...] = tuple(
    k
    for k in INSTALL_ORDER
    if k not in {"PriorityClass", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
)
"""Argo CD's kind order inside one phase and wave (gitops-engine ``pkg/sync/sync_tasks.go``, argo-cd v3.5): Helm 3's
old install order, which is this one without PriorityClass and the webhook kinds. Every kind it does not list ranks
after all of these and *equal to each other* (then only the name decides), where Helm sorts unlisted kinds by kind
name (:mod:`berth.install.export_argocd` ranks them)."""

UNINSTALL_ORDER: tuple[str, ...] = (
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
    "Ingress",
    "IngressClass",
    "Service",
    "CronJob",
    "Job",
    "StatefulSet",
    "HorizontalPodAutoscaler",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
    "DaemonSet",
    "RoleBindingList",
    "RoleBinding",
    "RoleList",
    "Role",
    "ClusterRoleBindingList",
    "ClusterRoleBinding",
    "ClusterRoleList",
    "ClusterRole",
    "CustomResourceDefinition",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "ConfigMap",
    "SecretList",
    "Secret",
    "ServiceAccount",
    "PodDisruptionBudget",
    "PodSecurityPolicy",
    "LimitRange",
    "ResourceQuota",
    "NetworkPolicy",
    "Namespace",
    "PriorityClass",
)

_INSTALL_INDEX = {k: i for i, k in enumerate(INSTALL_ORDER)}
_UNINSTALL_INDEX = {k: i for i, k in enumerate(UNINSTALL_ORDER)}

T = TypeVar("T")


def install_key(kind: str) -> tuple[int, str]:
    """Sort key of a kind in install order: listed kinds by position, unknown kinds after, alphabetically."""
    idx = _INSTALL_INDEX.get(kind)
    return (idx, "") if idx is not None else (len(INSTALL_ORDER), kind)


def uninstall_key(kind: str) -> tuple[int, str]:
    idx = _UNINSTALL_INDEX.get(kind)
    return (idx, "") if idx is not None else (len(UNINSTALL_ORDER), kind)


def sort_for_install(items: Sequence[T], kind_of: Callable[[T], str]) -> list[T]:
    """Stable sort by install order (ties keep their input order, as Helm's sort.SliceStable)."""
    return sorted(items, key=lambda it: install_key(kind_of(it)))


def sort_for_uninstall(items: Sequence[T], kind_of: Callable[[T], str]) -> list[T]:
    return sorted(items, key=lambda it: uninstall_key(kind_of(it)))
