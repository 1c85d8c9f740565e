"""Admission: an ordered chain of small plugins that see every create and update after decoding and defaulting,
mutating ones first, then validating ones, as kube-apiserver's admission plugin list.

The write path (:mod:`berth.cluster.api.write`) builds one :class:`Attributes` per write and calls
:meth:`Chain.admit` (mutating plugins in order) and, after the object's own validation, :meth:`Chain.validate`
(validating plugins in order). A plugin raises :class:`~berth.cluster.errors.ApiError` to refuse the write. Plugins
read the cluster through :class:`~berth.cluster.host.ApiHost` and never write: the chain runs under the store's
writer lock, so what they read is what the write will be judged against.

The plugins (one module each, in chain order):

- mutating: ``NamespaceLifecycle`` (no new content in a missing or terminating namespace), ``LimitRanger``
  (container defaults from LimitRanges), ``ServiceAccount`` (the pod's account must exist), ``Priority`` (a pod's
  priority from its PriorityClass or the global default);
- validating: ``RBACEscalation`` (no granting of permissions one does not hold -- upstream checks this in the RBAC
  storage, berth in the chain), ``LimitRanger`` (claims and updates within the ranges), ``ResourceQuota``.

Not modelled: webhooks, ValidatingAdmissionPolicy, and the plugins that only matter to a real node (NodeRestriction,
PodSecurity, ...).
"""

from __future__ import annotations

from berth.cluster.admission.chain import CREATE, UPDATE, Attributes, Chain, MutatingPlugin, ValidatingPlugin
from berth.cluster.admission.limit_ranger import LimitRanger
from berth.cluster.admission.namespace_lifecycle import NamespaceLifecycle
from berth.cluster.admission.priority import Priority
from berth.cluster.admission.rbac_escalation import RBACEscalation
from berth.cluster.admission.resource_quota import ResourceQuota
from berth.cluster.admission.service_account import ServiceAccount
from berth.cluster.host import ApiHost
from berth.kube.objects import Obj

__all__ = [
    "CREATE",
    "UPDATE",
    "Attributes",
    "Chain",
    "MutatingPlugin",
    "ValidatingPlugin",
    "api_bind",
    "default_chain",
]


def default_chain() -> Chain:
    """berth's plugins in kube-apiserver's recommended order (one LimitRanger serves both phases)."""
    ranger = LimitRanger()
    return Chain(
        [NamespaceLifecycle(), ranger, ServiceAccount(), Priority()],
        [RBACEscalation(), ranger, ResourceQuota()],
    )


def api_bind(
    api: ApiHost, namespace: str, pod_name: str, binding: Obj, user: str, dry_run: bool = False
) -> None:
    """Bind a pod as ``POST pods/<name>/binding`` does (kept for callers of the old name; the write itself is
    :meth:`berth.cluster.api.Api.bind`)."""
    api.bind(namespace, pod_name, binding, user, dry_run)
