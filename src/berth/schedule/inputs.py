"""The simulation's input files: the cluster file (nodes, bound pods, PriorityClasses, objects plugins read) and
the workload file (pods and the controllers that make them), read, validated and expanded into pods.

Why a module of its own: reading and checking the files (every problem an InputError naming the file, the document
and the field) and expanding controllers as the real controllers would are a job of their own;
:mod:`berth.schedule.simulate` runs the scheduler over what this module produces.

Controllers expand into the pods the real controllers would create -- same names, labels and ownerReferences -- so
plugins that look at owners or labels (spreading, Concentrate) decide as they would on a cluster:

- Deployment ``web`` -> ReplicaSet ``web-<pod-template-hash>`` -> pods ``web-<hash>-<5 chars>``
  (label ``pod-template-hash``; the hash is FNV-32a of the template, encoded like ``rand.SafeEncodeString``);
- ReplicaSet ``rs`` -> pods ``rs-<5 chars>``; StatefulSet ``db`` -> ``db-0``, ``db-1`` ... (labels
  ``controller-revision-hash``, ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index``;
  ``hostname``/``subdomain`` set); Job ``j`` -> ``j-<5 chars>`` (``batch.kubernetes.io/job-name``,
  ``batch.kubernetes.io/controller-uid`` and the legacy ``job-name``/``controller-uid``; Indexed jobs
  ``j-<i>-<5 chars>`` with ``batch.kubernetes.io/job-completion-index``).

The 5-character suffixes and UIDs come from a ``random.Random`` seeded by ``--seed``, so a run is reproducible; a
generated name already taken is drawn again, as upstream's ``generateName`` retries on conflict. ``priorityClassName``
resolves to ``priority`` (a ``globalDefault`` class applies to pods naming none).
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.kube import quantity, yamlio
from berth.kube.errors import InputError
from berth.kube.naming import SUFFIX_ALPHABET, random_suffix
from berth.kube.naming import pod_template_hash as template_hash
from berth.kube.objects import Obj
from berth.kube.selectors import label_selector_matches

ALPHANUMS = SUFFIX_ALPHABET  # upstream k8s.io/apimachinery/pkg/util/rand

SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}

# kind -> the apiVersion a document of that kind must have (when it names one).
API_VERSIONS = {
    "Node": "v1",
    "Pod": "v1",
    "Namespace": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
    "Service": "v1",
    "ReplicationController": "v1",
    "PersistentVolumeClaim": "v1",
    "PersistentVolume": "v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1",
    "CSIDriver": "storage.k8s.io/v1",
    "CSIStorageCapacity": "storage.k8s.io/v1",
    "VolumeAttachment": "storage.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
}
# Objects plugins read (spreading selectors, namespaces, storage, disruption budgets): handed to the scheduler's
# object cache as they are.
OBJECT_KINDS = (
    "Namespace",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "PodDisruptionBudget",
)
CLUSTER_KINDS = ("Node", "Pod", "PriorityClass", *OBJECT_KINDS)
WORKLOAD_KINDS = (
    "Pod",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "Job",
    "PriorityClass",
    "Namespace",
    "Service",
    "PersistentVolumeClaim",
)


@dataclass(frozen=True)
class Sourced:
    """An object and where it came from (``file, document N (Kind ns/name)``), for messages."""

    obj: Obj
    where: str


@dataclass
class PriorityClasses:
    values: dict[str, int] = field(default_factory=lambda: dict(SYSTEM_PRIORITY_CLASSES))
    global_default: tuple[str, int] | None = None

    def add(self, obj: Obj, where: str) -> None:
        name = str((obj.get("metadata") or {}).get("name") or "")
        if not name:
            raise InputError("PriorityClass has no metadata.name", where)
        value = obj.get("value")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"value: Required value: an integer priority is required, got {value!r}", where)
        self.values[name] = value
        if obj.get("globalDefault") is True:
            if self.global_default is not None and self.global_default[0] != name:
                raise InputError(
                    f"globalDefault: Invalid value: true: PriorityClass {self.global_default[0]!r} is already "
                    "marked as default; only one default can exist",
                    where,
                )
            self.global_default = (name, value)

    def apply(self, pod: Obj, where: str) -> None:
        """Admission's Priority plugin: resolve ``priorityClassName`` (or the global default) into ``priority``."""
        spec = pod.setdefault("spec", {})
        name = spec.get("priorityClassName")
        if name:
            if name not in self.values:
                raise InputError(
                    f"spec.priorityClassName: no PriorityClass with name {name} was found", where
                )
            spec["priority"] = self.values[name]
        elif self.global_default is not None:
            spec["priorityClassName"] = self.global_default[0]
            spec["priority"] = self.global_default[1]


@dataclass(frozen=True)
class ClusterInput:
    nodes: tuple[Sourced, ...]
    bound_pods: tuple[Sourced, ...]
    priority_classes: PriorityClasses
    objects: tuple[Sourced, ...] = ()


@dataclass(frozen=True)
class WorkloadInput:
    pods: tuple[Sourced, ...]
    objects: tuple[Sourced, ...]  # Services, PVCs, the controllers' ReplicaSets/StatefulSets ...


# --- reading files -----------------------------------------------------------------------------------------------


def _describe(source: str, doc: yamlio.Document, obj: Obj) -> str:
    raw = obj.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = str(meta.get("name") or meta.get("generateName") or "")
    ns = str(meta.get("namespace") or "")
    ident = f"{ns}/{name}" if ns and name else name
    kind = str(obj.get("kind"))
    return (
        f"{source}, document {doc.index + 1} ({kind} {ident})"
        if ident
        else f"{source}, document {doc.index + 1}"
    )


def _read(path: str, allowed: Sequence[str], what: str) -> list[Sourced]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError as exc:
        raise InputError(f"file not found (the {what} file)", path) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the {what} file: {exc}", path) from exc
    out: list[Sourced] = []
    for doc, obj in yamlio.load_objects(text, path):
        where = _describe(path, doc, obj)
        kind = str(obj.get("kind"))
        if kind not in allowed:
            raise InputError(
                f"kind {kind!r} is not supported in the {what} file (expected one of: {', '.join(allowed)})",
                where,
            )
        api_version = obj.get("apiVersion")
        if api_version is not None and api_version != API_VERSIONS[kind]:
            raise InputError(f"apiVersion: {kind} must be {API_VERSIONS[kind]!r}, not {api_version!r}", where)
        meta = obj.get("metadata")
        if meta is None:
            meta = {}
            obj["metadata"] = meta
        if not isinstance(meta, dict):
            raise InputError("metadata: must be a mapping", where)
        if not meta.get("name") and not (kind == "Pod" and meta.get("generateName")):
            raise InputError("metadata.name: Required value", where)
        spec = obj.get("spec")
        if spec is not None and not isinstance(spec, dict):
            raise InputError("spec: must be a mapping", where)
        out.append(Sourced(obj, where))
    return out


def _check_quantities(pod_spec: Mapping[str, Any], prefix: str, where: str) -> None:
    """Every quantity a pod spec holds must parse (the API server rejects such objects)."""

    def check(values: Any, path: str) -> None:
        if values is None:
            return
        if not isinstance(values, dict):
            raise InputError(f"{path}: must be a mapping of resource name to quantity", where)
        for name, q in values.items():
            check_amount(q, f"{path}.{name}", where)

    for group in ("initContainers", "containers"):
        containers = pod_spec.get(group) or []
        if not isinstance(containers, list):
            raise InputError(f"{prefix}{group}: must be a list", where)
        for i, c in enumerate(containers):
            if not isinstance(c, dict):
                raise InputError(f"{prefix}{group}[{i}]: must be a mapping", where)
            resources = c.get("resources") or {}
            if not isinstance(resources, dict):
                raise InputError(f"{prefix}{group}[{i}].resources: must be a mapping", where)
            for part in ("requests", "limits"):
                check(resources.get(part), f"{prefix}{group}[{i}].resources.{part}")
    check(pod_spec.get("overhead"), f"{prefix}overhead")
    pod_resources = pod_spec.get("resources") or {}
    if isinstance(pod_resources, dict):
        for part in ("requests", "limits"):
            check(pod_resources.get(part), f"{prefix}resources.{part}")


def check_amount(value: Any, path: str, where: str) -> None:
    """A resource amount must be a quantity, finite and not negative (the API server refuses the others): an
    InputError (exit 2) naming the file and document (``where``) and the field (``path``)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{path}: Invalid value: {value!r}: must be a finite quantity", where)
    if isinstance(value, str) and value.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
        raise InputError(f"{path}: Invalid value: {value!r}: must be a finite quantity", where)
    if quantity.parse(value, f"{where}: {path}") < 0:
        raise InputError(f"{path}: Invalid value: {value!r}: must be greater than or equal to 0", where)


def load_cluster(path: str) -> ClusterInput:
    """Nodes, bound pods and PriorityClasses of the cluster file, validated."""
    nodes: list[Sourced] = []
    pods: list[Sourced] = []
    objects: list[Sourced] = []
    classes = PriorityClasses()
    seen: dict[str, str] = {}
    items = _read(path, CLUSTER_KINDS, "cluster")
    if not items:
        raise InputError(
            "the cluster file holds no objects: describe the nodes to schedule onto (kind: Node, with "
            "status.allocatable), and optionally pods already running on them",
            path,
        )
    for item in items:
        kind = item.obj["kind"]
        if kind == "Node":
            name = str(item.obj["metadata"]["name"])
            if name in seen:
                raise InputError(
                    f"metadata.name: Duplicate value: node {name!r} is also defined at {seen[name]}",
                    item.where,
                )
            seen[name] = item.where
            alloc = (item.obj.get("status") or {}).get("allocatable")
            if not alloc:
                raise InputError(
                    "status.allocatable: Required value: the scheduler sees a node without allocatable resources "
                    "as having no room; add e.g. {cpu: '4', memory: 16Gi, pods: '110'}",
                    item.where,
                )
            if not isinstance(alloc, dict):
                raise InputError(
                    "status.allocatable: must be a mapping of resource name to quantity", item.where
                )
            for res, q in alloc.items():
                check_amount(q, f"status.allocatable.{res}", item.where)
            capacity = (item.obj.get("status") or {}).get("capacity")
            if capacity is not None:
                if not isinstance(capacity, dict):
                    raise InputError(
                        "status.capacity: must be a mapping of resource name to quantity", item.where
                    )
                for res, q in capacity.items():
                    check_amount(q, f"status.capacity.{res}", item.where)
            nodes.append(item)
        elif kind == "PriorityClass":
            classes.add(item.obj, item.where)
        elif kind == "Pod":
            spec = item.obj.get("spec") or {}
            if not spec.get("nodeName"):
                raise InputError(
                    "spec.nodeName: Required value: pods in the cluster file are already running somewhere; "
                    "put pods to be scheduled in the workload file",
                    item.where,
                )
            _check_quantities(spec, "spec.", item.where)
            pods.append(item)
        else:
            objects.append(item)
    for item in pods:
        node_name = item.obj["spec"]["nodeName"]
        if node_name not in seen:
            raise InputError(f"spec.nodeName: no Node named {node_name!r} in this file", item.where)
        classes.apply(item.obj, item.where)
    return ClusterInput(tuple(nodes), tuple(pods), classes, tuple(objects))


# --- controllers -------------------------------------------------------------------------------------------------


class Expander:
    """Turns workload objects into the pods their controllers would create."""

    def __init__(self, rng: random.Random, classes: PriorityClasses) -> None:
        self.rng = rng
        self.classes = classes
        self.objects: list[Sourced] = []  # controller objects plugins may look up (owners of the pods)
        self.names: set[str] = set()  # namespace/name of every pod made so far (generated names avoid them)

    def suffix(self) -> str:
        return random_suffix(rng=self.rng)

    def generated_name(self, namespace: str, prefix: str) -> str:
        """Upstream ``generateName``: prefix + 5 random characters, drawn again while the name is taken (the API
        server answers a conflict and the controller retries), so any number of replicas gets unique names --
        deterministically per seed."""
        while True:
            name = f"{prefix}{self.suffix()}"
            if f"{namespace}/{name}" not in self.names:
                return name

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def expand(self, item: Sourced) -> list[Sourced]:
        kind = item.obj["kind"]
        handler: Callable[[Sourced], list[Sourced]] = {
            "Pod": self._pod,
            "Deployment": self._deployment,
            "ReplicaSet": self._replica_set,
            "StatefulSet": self._stateful_set,
            "Job": self._job,
        }.get(kind, lambda _item: [])
        return handler(item)

    # each controller ------------------------------------------------------------------------------------------

    def _pod(self, item: Sourced) -> list[Sourced]:
        pod = item.obj
        meta = pod["metadata"]
        meta.setdefault("namespace", "default")
        if not meta.get("name"):
            meta["name"] = self.generated_name(str(meta["namespace"]), str(meta["generateName"]))
        self.names.add(f"{meta['namespace']}/{meta['name']}")
        meta.setdefault("uid", self.uid())
        spec = pod.get("spec") or {}
        pod["spec"] = spec
        self._check_pod_spec(spec, "spec.", item.where)
        self.classes.apply(pod, item.where)
        return [Sourced(pod, item.where)]

    def _deployment(self, item: Sourced) -> list[Sourced]:
        obj = item.obj
        name, ns = obj["metadata"]["name"], obj["metadata"].get("namespace") or "default"
        template = self._template(item)
        replicas = self._replicas(item)
        tmpl_hash = template_hash(template)
        rs_name = f"{name}-{tmpl_hash}"
        rs_uid = self.uid()
        labels = {**(template.get("metadata") or {}).get("labels", {}), "pod-template-hash": tmpl_hash}
        owner = _owner("apps/v1", "ReplicaSet", rs_name, rs_uid)
        selector = _deep_copy((obj.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = tmpl_hash
        rs_template = {**template, "metadata": {**(template.get("metadata") or {}), "labels": labels}}
        rs_obj: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": rs_name,
                "namespace": ns,
                "uid": rs_uid,
                "labels": dict(labels),
                "ownerReferences": [
                    _owner("apps/v1", "Deployment", name, str(obj["metadata"].get("uid") or ""))
                ],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": rs_template},
        }
        self.objects.append(Sourced(rs_obj, f"{item.where} -> ReplicaSet {ns}/{rs_name}"))
        return [
            self._make_pod(
                item, template, ns, f"{rs_name}-", self.generated_name(ns, f"{rs_name}-"), labels, owner
            )
            for _ in range(replicas)
        ]

    def _replica_set(self, item: Sourced) -> list[Sourced]:
        obj = item.obj
        name, ns = obj["metadata"]["name"], obj["metadata"].get("namespace") or "default"
        template = self._template(item)
        replicas = self._replicas(item)
        obj["metadata"].setdefault("namespace", ns)
        obj["metadata"].setdefault("uid", self.uid())
        owner = _owner("apps/v1", "ReplicaSet", name, str(obj["metadata"]["uid"]))
        self.objects.append(item)
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        return [
            self._make_pod(item, template, ns, f"{name}-", self.generated_name(ns, f"{name}-"), labels, owner)
            for _ in range(replicas)
        ]

    def _stateful_set(self, item: Sourced) -> list[Sourced]:
        obj = item.obj
        name, ns = obj["metadata"]["name"], obj["metadata"].get("namespace") or "default"
        template = self._template(item)
        replicas = self._replicas(item)
        obj["metadata"].setdefault("namespace", ns)
        obj["metadata"].setdefault("uid", self.uid())
        owner = _owner("apps/v1", "StatefulSet", name, str(obj["metadata"]["uid"]))
        self.objects.append(item)
        revision = f"{name}-{template_hash(template)}"
        service = (obj.get("spec") or {}).get("serviceName")
        start = int(((obj.get("spec") or {}).get("ordinals") or {}).get("start") or 0)
        pods = []
        for i in range(start, start + replicas):
            pod_name = f"{name}-{i}"
            labels = {
                **((template.get("metadata") or {}).get("labels") or {}),
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": pod_name,
                "apps.kubernetes.io/pod-index": str(i),
            }
            made = self._make_pod(item, template, ns, "", pod_name, labels, owner)
            made.obj["spec"]["hostname"] = pod_name
            if service:
                made.obj["spec"]["subdomain"] = service
            pods.append(made)
        return pods

    def _job(self, item: Sourced) -> list[Sourced]:
        obj = item.obj
        name, ns = obj["metadata"]["name"], obj["metadata"].get("namespace") or "default"
        spec = obj.get("spec") or {}
        template = self._template(item)
        parallelism = self._count(spec, "parallelism", 1, item.where)
        completions = spec.get("completions")
        count = (
            parallelism
            if completions is None
            else min(parallelism, self._count(spec, "completions", 1, item.where))
        )
        if spec.get("suspend") is True:
            count = 0
        job_uid = str(obj["metadata"].get("uid") or self.uid())
        owner = _owner("batch/v1", "Job", name, job_uid)
        base_labels = {
            **((template.get("metadata") or {}).get("labels") or {}),
            "batch.kubernetes.io/controller-uid": job_uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": job_uid,
            "job-name": name,
        }
        indexed = spec.get("completionMode") == "Indexed"
        pods = []
        for i in range(count):
            labels = dict(base_labels)
            prefix = f"{name}-"
            if indexed:
                labels["batch.kubernetes.io/job-completion-index"] = str(i)
                prefix = f"{name}-{i}-"
            made = self._make_pod(item, template, ns, prefix, self.generated_name(ns, prefix), labels, owner)
            if indexed:
                made.obj["metadata"].setdefault("annotations", {})[
                    "batch.kubernetes.io/job-completion-index"
                ] = str(i)
            pods.append(made)
        return pods

    # shared ---------------------------------------------------------------------------------------------------

    def _template(self, item: Sourced) -> dict[str, Any]:
        spec = item.obj.get("spec") or {}
        template = spec.get("template")
        if not isinstance(template, dict):
            raise InputError("spec.template: Required value: a pod template is needed", item.where)
        tmeta = template.get("metadata") or {}
        if not isinstance(tmeta, dict):
            raise InputError("spec.template.metadata: must be a mapping", item.where)
        labels = tmeta.get("labels") or {}
        if not isinstance(labels, dict):
            raise InputError("spec.template.metadata.labels: must be a mapping", item.where)
        tspec = template.get("spec")
        if not isinstance(tspec, dict):
            raise InputError("spec.template.spec: Required value", item.where)
        self._check_pod_spec(tspec, "spec.template.spec.", item.where)
        selector = spec.get("selector")
        kind = item.obj["kind"]
        if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
            if selector is None:
                raise InputError("spec.selector: Required value", item.where)
            if not isinstance(selector, dict) or not label_selector_matches(selector, labels):
                raise InputError(
                    "spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`",
                    item.where,
                )
        return template

    @staticmethod
    def _check_pod_spec(spec: Mapping[str, Any], prefix: str, where: str) -> None:
        if not spec.get("containers"):
            raise InputError(f"{prefix}containers: Required value", where)
        _check_quantities(spec, prefix, where)

    @staticmethod
    def _count(spec: Mapping[str, Any], key: str, default: int, where: str) -> int:
        value = spec.get(key, default)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"spec.{key}: Invalid value: {value!r}: must be a non-negative integer", where)
        return value

    def _replicas(self, item: Sourced) -> int:
        return self._count(item.obj.get("spec") or {}, "replicas", 1, item.where)

    def _make_pod(
        self,
        item: Sourced,
        template: Mapping[str, Any],
        namespace: str,
        generate_name: str,
        name: str,
        labels: Mapping[str, str],
        owner: dict[str, Any],
    ) -> Sourced:
        tmeta = template.get("metadata") or {}
        meta: dict[str, Any] = {
            "name": name,
            "namespace": namespace,
            "uid": self.uid(),
            "labels": dict(labels),
        }
        self.names.add(f"{namespace}/{name}")
        if generate_name:
            meta["generateName"] = generate_name
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        meta["ownerReferences"] = [owner]
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": _deep_copy(template.get("spec") or {}),
        }
        where = f"{item.where} -> Pod {namespace}/{name}"
        self.classes.apply(pod, where)
        return Sourced(pod, where)


def _owner(api_version: str, kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def load_workload(path: str, rng: random.Random, classes: PriorityClasses) -> WorkloadInput:
    """Every pod the workload file amounts to (in document order), and the objects that come with them."""
    items = _read(path, WORKLOAD_KINDS, "workload")
    for item in items:
        if item.obj["kind"] == "PriorityClass":
            classes.add(item.obj, item.where)
    expander = Expander(rng, classes)
    for item in items:
        if item.obj["kind"] in ("Namespace", "Service", "PersistentVolumeClaim"):
            if item.obj["kind"] != "Namespace":
                item.obj["metadata"].setdefault("namespace", "default")
            expander.objects.append(item)
    pods: list[Sourced] = []
    seen: dict[str, str] = {}
    for item in items:
        for made in expander.expand(item):
            meta = made.obj["metadata"]
            key = f"{meta['namespace']}/{meta['name']}"
            if key in seen:
                raise InputError(f"pod {key} is also created by {seen[key]}", made.where)
            seen[key] = made.where
            pods.append(made)
    return WorkloadInput(tuple(pods), tuple(expander.objects))
