"""The table of resource types the embedded API server serves, and the registry that adds CRDs to it.

Discovery, OpenAPI, URL routing, the store's keys and the in-process :class:`~berth.cluster.api.Api` all read this
one table, so "which kinds exist, under which group/version, namespaced or not, with which subresources" has one
home. Built-in entries mirror what a v1.35 kube-apiserver advertises (plural, singular, short names, categories,
subresources). Custom resources join at runtime through :meth:`Registry.add` when a CRD is established and leave
through :meth:`Registry.remove`.

A type is addressed by its *resource key*: ``<plural>`` for the core group, ``<plural>.<group>`` otherwise
(``pods``, ``deployments.apps``, ``widgets.example.com``), the same form kubectl prints.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

ALL_VERBS: tuple[str, ...] = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
CREATE_ONLY: tuple[str, ...] = ("create",)


@dataclass(frozen=True)
class ResourceType:
    """One served resource: its names, scope, subresources and behaviour flags.

    ``version`` is the preferred (stored) version; ``versions`` lists every served version, preferred first.
    ``generation`` says whether writes outside metadata/status bump ``metadata.generation``;
    ``virtual`` marks create-only review kinds (access reviews, token reviews) that are answered, never stored.
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    versions: tuple[str, ...] = ()
    generation: bool = False
    virtual: bool = False
    custom: bool = False
    list_kind: str = ""
    storage_version: str = ""
    """The version objects are stored at, when it is not ``version`` (a CRD whose storage version is not the
    preferred one)."""
    version_subresources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per served version, its subresources, when they differ by version (CRDs); empty: ``subresources`` for all."""

    # cached_property (computed once per type; the fields are frozen): every request reads these several times.
    @cached_property
    def resource(self) -> str:
        """The resource key: ``pods`` or ``deployments.apps``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @cached_property
    def api_version(self) -> str:
        """``v1`` or ``apps/v1`` for the preferred version."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def api_version_for(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    @cached_property
    def all_versions(self) -> tuple[str, ...]:
        return self.versions or (self.version,)

    @cached_property
    def stored_version(self) -> str:
        """The version objects are stored at (and a stored object's ``apiVersion`` names)."""
        return self.storage_version or self.version

    @cached_property
    def stored_api_version(self) -> str:
        return self.api_version_for(self.stored_version)

    def subresources_at(self, version: str | None) -> tuple[str, ...]:
        """The subresources served at ``version`` (None: the preferred version's)."""
        if version and self.version_subresources:
            for v, subs in self.version_subresources:
                if v == version:
                    return subs
            return ()
        return self.subresources

    @property
    def kind_list(self) -> str:
        return self.list_kind or f"{self.kind}List"


def _t(
    group: str,
    version: str,
    kind: str,
    plural: str,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    cats: tuple[str, ...] = (),
    sub: tuple[str, ...] = (),
    verbs: tuple[str, ...] = ALL_VERBS,
    versions: tuple[str, ...] = (),
    generation: bool = False,
    virtual: bool = False,
) -> ResourceType:
    return ResourceType(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        short_names=short,
        categories=cats,
        subresources=sub,
        verbs=verbs,
        versions=versions,
        generation=generation,
        virtual=virtual,
    )


ALL = ("all",)
NO_CONTAINER_SUBRESOURCES = ("attach", "exec", "portforward", "proxy")
"""Pod subresources that need a running container: listed in discovery and authorized like upstream, then answered
with a clear 400 (no container runs in the embedded cluster)."""
_NO_DC = tuple(v for v in ALL_VERBS if v != "deletecollection")

BUILTIN: tuple[ResourceType, ...] = (
    # core/v1
    _t("", "v1", "Binding", "bindings", verbs=CREATE_ONLY, virtual=True),
    _t("", "v1", "ConfigMap", "configmaps", short=("cm",)),
    _t("", "v1", "Endpoints", "endpoints", short=("ep",)),
    _t("", "v1", "Event", "events", short=("ev",)),
    _t("", "v1", "LimitRange", "limitranges", short=("limits",)),
    _t("", "v1", "Namespace", "namespaces", False, ("ns",), sub=("status", "finalize"), verbs=_NO_DC),
    _t("", "v1", "Node", "nodes", False, ("no",), sub=("status",)),
    _t("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", short=("pvc",), sub=("status",)),
    _t("", "v1", "PersistentVolume", "persistentvolumes", False, ("pv",), sub=("status",)),
    _t(
        "",
        "v1",
        "Pod",
        "pods",
        short=("po",),
        cats=ALL,
        sub=(
            "status",
            "binding",
            "log",
            "eviction",
            "ephemeralcontainers",
            "resize",
            *NO_CONTAINER_SUBRESOURCES,
        ),
        generation=True,
    ),
    _t("", "v1", "PodTemplate", "podtemplates"),
    _t(
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        short=("rc",),
        cats=ALL,
        sub=("status", "scale"),
        generation=True,
    ),
    _t("", "v1", "ResourceQuota", "resourcequotas", short=("quota",), sub=("status",)),
    _t("", "v1", "Secret", "secrets"),
    _t("", "v1", "ServiceAccount", "serviceaccounts", short=("sa",), sub=("token",)),
    _t("", "v1", "Service", "services", short=("svc",), cats=ALL, sub=("status",), verbs=_NO_DC),
    # apps/v1
    _t("apps", "v1", "ControllerRevision", "controllerrevisions"),
    _t("apps", "v1", "DaemonSet", "daemonsets", short=("ds",), cats=ALL, sub=("status",), generation=True),
    _t(
        "apps", "v1", "Deployment", "deployments", short=("deploy",), cats=ALL, sub=("status", "scale"), generation=True
    ),
    _t("apps", "v1", "ReplicaSet", "replicasets", short=("rs",), cats=ALL, sub=("status", "scale"), generation=True),
    _t(
        "apps", "v1", "StatefulSet", "statefulsets", short=("sts",), cats=ALL, sub=("status", "scale"), generation=True
    ),
    # batch/v1
    _t("batch", "v1", "CronJob", "cronjobs", short=("cj",), cats=ALL, sub=("status",), generation=True),
    _t("batch", "v1", "Job", "jobs", cats=ALL, sub=("status",), generation=True),
    # autoscaling
    _t(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        short=("hpa",),
        cats=ALL,
        sub=("status",),
        versions=("v2", "v1"),
        generation=True,
    ),
    # rbac
    _t("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    _t("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    _t("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    _t("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    # apiextensions
    _t(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        False,
        ("crd", "crds"),
        cats=("api-extensions",),
        sub=("status",),
        generation=True,
    ),
    # coordination, scheduling, storage, policy, events, networking, discovery, node
    _t("coordination.k8s.io", "v1", "Lease", "leases"),
    _t("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",)),
    _t("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False),
    _t("storage.k8s.io", "v1", "CSINode", "csinodes", False),
    _t("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities"),
    _t("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ("sc",)),
    _t("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False, sub=("status",)),
    _t("storage.k8s.io", "v1", "VolumeAttributesClass", "volumeattributesclasses", False, ("vac",)),
    _t("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", short=("pdb",), sub=("status",), generation=True),
    _t("events.k8s.io", "v1", "Event", "events", short=("ev",)),
    _t("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False),
    _t("networking.k8s.io", "v1", "Ingress", "ingresses", short=("ing",), sub=("status",), generation=True),
    _t("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", short=("netpol",), generation=True),
    # stored as data: no IP is allocated from a ServiceCIDR and no IPAddress is made for a Service
    _t("networking.k8s.io", "v1", "IPAddress", "ipaddresses", False, ("ip",)),
    _t("networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs", False, sub=("status",)),
    # stored as data: API priority and fairness does not limit requests here
    _t("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", False, sub=("status",), generation=True),
    _t(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        False,
        sub=("status",),
        generation=True,
    ),
    _t("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
    _t("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    # resource.k8s.io (DRA, GA in 1.34): stored as data -- no driver publishes devices and nothing allocates claims
    # (the scheduler's DynamicResources plugin reads them)
    _t("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False, generation=True),
    _t("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", sub=("status",)),
    _t("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates"),
    _t("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False),
    # stored as data: charts ship them (metrics-server, KEDA, custom-metrics adapters; CSRs from operators), but no
    # API is aggregated and no certificate is signed
    _t("apiregistration.k8s.io", "v1", "APIService", "apiservices", False, cats=("api-extensions",), sub=("status",)),
    _t(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        False,
        short=("csr",),
        sub=("status", "approval"),
    ),
    _t(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        False,
        cats=("api-extensions",),
        generation=True,
    ),
    _t(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        False,
        cats=("api-extensions",),
        generation=True,
    ),
    _t(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        False,
        cats=("api-extensions",),
        sub=("status",),
        generation=True,
    ),
    _t(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        False,
        cats=("api-extensions",),
        generation=True,
    ),
    # authorization / authentication: create-only reviews, answered and never stored
    _t("authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", True,
       verbs=CREATE_ONLY, virtual=True),
    _t("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False,
       verbs=CREATE_ONLY, virtual=True),
    _t("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False,
       verbs=CREATE_ONLY, virtual=True),
    _t("authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", False,
       verbs=CREATE_ONLY, virtual=True),
    _t("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False,
       verbs=CREATE_ONLY, virtual=True),
    _t("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", False, verbs=CREATE_ONLY, virtual=True),
)  # fmt: skip

# Subresources whose reply kind differs from the parent's: (parent resource key, subresource) -> (group, version, kind)
SUBRESOURCE_KINDS: dict[str, tuple[str, str, str]] = {
    "scale": ("autoscaling", "v1", "Scale"),
    "binding": ("", "v1", "Binding"),
    "eviction": ("policy", "v1", "Eviction"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
}
SUBRESOURCE_VERBS: dict[str, tuple[str, ...]] = {
    "status": ("get", "patch", "update"),
    "scale": ("get", "patch", "update"),
    "binding": ("create",),
    "eviction": ("create",),
    "token": ("create",),
    "log": ("get",),
    "finalize": ("update",),
    "ephemeralcontainers": ("get", "patch", "update"),
    "approval": ("get", "patch", "update"),
    "resize": ("get", "patch", "update"),
    "attach": ("create", "get"),
    "exec": ("create", "get"),
    "portforward": ("create", "get"),
    "proxy": ("create", "delete", "get", "patch", "update"),
}

# Preferred group order in discovery (like the real server's priority list); CRD groups follow alphabetically.
GROUP_ORDER: tuple[str, ...] = (
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
)


class Registry:
    """The live set of resource types: built-ins plus the CRDs established so far. Thread-safe.

    ``generation`` increases on every change so discovery/OpenAPI documents can be cached per generation.
    """

    def __init__(self, types: Iterable[ResourceType] = BUILTIN) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, ResourceType] = {}
        self.generation = 0
        for t in types:
            self._by_key[t.resource] = t

    def add(self, rtype: ResourceType) -> None:
        with self._lock:
            self._by_key[rtype.resource] = rtype
            self.generation += 1

    def remove(self, resource: str) -> None:
        with self._lock:
            self._by_key.pop(resource, None)
            self.generation += 1

    def get(self, resource: str) -> ResourceType | None:
        return self._by_key.get(resource)

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._by_key.values())

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at ``/apis/<group>/<version>/<plural>`` (None if that version is not served)."""
        t = self._by_key.get(f"{plural}.{group}" if group else plural)
        if t is None or version not in t.all_versions:
            return None
        return t

    def by_kind(self, group: str, kind: str) -> ResourceType | None:
        for t in self.all():
            if t.group == group and t.kind == kind:
                return t
        return None

    def group_versions(self) -> list[tuple[str, list[str]]]:
        """Served groups in discovery order with their versions, preferred first."""
        groups: dict[str, list[str]] = {}
        for t in self.all():
            vs = groups.setdefault(t.group, [])
            for v in t.all_versions:
                if v not in vs:
                    vs.append(v)
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        names = sorted(groups, key=lambda g: (order.get(g, len(order)), g))
        return [(g, _sort_versions(groups[g])) for g in names]


def _version_priority(v: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA > beta > alpha, higher numbers first (returned as a sort key)."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (3, 0, 0)
    major = int(m.group(1))
    stage = {"None": 0, "beta": 1, "alpha": 2}[str(m.group(2))]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor)


def _sort_versions(versions: list[str]) -> list[str]:
    return sorted(versions, key=_version_priority)
