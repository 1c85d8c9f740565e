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
