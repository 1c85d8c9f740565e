"""Admission checks with upstream's 422 wording: names, metadata, required fields of common kinds, custom resources.

Why: installers and tests rely on a bad object failing the way a real API server fails it -- ``Pod "Bad_Name" is
invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of ...`` -- and on
custom resources being defaulted and pruned from their CRD's structural schema before they are stored.

What is checked:

- :func:`validate_object`: ``metadata`` (name or generateName, the kind's name rule -- DNS-1123 subdomain for most
  kinds, DNS-1123 label for Namespaces, DNS-1035 label for Services, path segment for RBAC objects, ``<plural>.<group>``
  for CRDs -- namespace, label and annotation syntax) plus the required fields of common built-ins (Pod containers,
  workload selector/template agreement, Job restart policy, Service ports, ConfigMap/Secret keys, RBAC role refs,
  CRD names/scope/versions). It returns every problem, each with its field path.

Its neighbours (re-exported here, so callers keep one import): ``names.py`` (name, label and metadata syntax),
``decoding.py`` (``fieldValidation=Strict`` unknown fields and the 400s of Go's JSON decoder for built-ins),
``structural.py`` (custom resources: pruning, defaulting and validation against the CRD's structural schema) and
``pod_resources.py`` (QoS class, in-place resize).

Pure: objects in, (object, errors) out; :func:`raise_if_invalid` turns errors into the 422 ``ApiError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.cluster import errors
from berth.cluster.decoding import (
    decode,
    decode_error,
    drop_nulls,
    strict_decoding_error,
    strict_problems,
    unknown_fields,
)
from berth.cluster.errors import FieldError
from berth.cluster.names import (
    CONFIG_MAP_MAX_BYTES,
    NAME_RULES,
    config_key_problems,
    dns1123_label_problems,
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_path_segment_name,
    is_qualified_name,
    name_problems,
    validate_metadata,
)
from berth.cluster.pod_resources import pod_qos_class, validate_pod_resize, validate_resize_policy
from berth.cluster.structural import (
    admit_custom_resource,
    apply_defaults,
    field_errors_text,
    prune,
    validate_schema,
)
from berth.kube import selectors

Obj = dict[str, Any]

__all__ = [
    "NAME_RULES",
    "admit_custom_resource",
    "apply_defaults",
    "decode",
    "decode_error",
    "drop_nulls",
    "field_errors_text",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_path_segment_name",
    "is_qualified_name",
    "name_problems",
    "pod_qos_class",
    "prune",
    "raise_if_invalid",
    "strict_decoding_error",
    "strict_problems",
    "unknown_fields",
    "validate_metadata",
    "validate_object",
    "validate_pod_resize",
    "validate_resize_policy",
    "validate_schema",
]


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _supported(field: str, value: Any, allowed: Sequence[str]) -> list[FieldError]:
    return [] if value in allowed else [errors.not_supported(field, value, allowed)]


def _port(field: str, value: Any) -> list[FieldError]:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        return [errors.invalid_value(field, value, "must be between 1 and 65535, inclusive")]
    return []


def validate_pod_spec(
    spec: Any, path: str, restart_policies: Sequence[str] = ("Always", "OnFailure", "Never")
) -> list[FieldError]:
    """Containers (required, names, images, ports), restartPolicy, volumes names."""
    if type(spec) is not dict and not isinstance(spec, Mapping):
        return [errors.required(path)]
    out: list[FieldError] = []
    containers = spec.get("containers")
    if not containers:
        out.append(errors.required(f"{path}.containers"))
    seen: set[str] = set()
    for list_name in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(list_name) or []):
            where = f"{path}.{list_name}[{i}]"
            if type(c) is not dict and not isinstance(c, Mapping):
                out.append(errors.type_invalid(where, c, "must be an object"))
                continue
            cname = c.get("name")
            if not cname:
                out.append(errors.required(f"{where}.name"))
            else:
                out += [
                    errors.invalid_value(f"{where}.name", cname, m)
                    for m in dns1123_label_problems(str(cname))
                ]
                if cname in seen:
                    out.append(errors.duplicate(f"{where}.name", cname))
                seen.add(str(cname))
            if not c.get("image"):
                out.append(errors.required(f"{where}.image"))
            for j, port in enumerate(c.get("ports") or []):
                if type(port) is dict or isinstance(port, Mapping):
                    if not port.get("containerPort"):
                        out.append(errors.required(f"{where}.ports[{j}].containerPort"))
                    else:
                        out += _port(f"{where}.ports[{j}].containerPort", port.get("containerPort"))
                    if "protocol" in port:
                        out += _supported(
                            f"{where}.ports[{j}].protocol", port["protocol"], ("SCTP", "TCP", "UDP")
                        )
            if "imagePullPolicy" in c:
                out += _supported(
                    f"{where}.imagePullPolicy", c["imagePullPolicy"], ("Always", "IfNotPresent", "Never")
                )
            if c.get("resizePolicy"):
                out += validate_resize_policy(
                    c["resizePolicy"], f"{where}.resizePolicy", spec.get("restartPolicy")
                )
    if "restartPolicy" in spec:
        out += _supported(f"{path}.restartPolicy", spec["restartPolicy"], restart_policies)
    volumes: set[str] = set()
    for i, v in enumerate(spec.get("volumes") or []):
        vname = v.get("name") if isinstance(v, Mapping) else None
        if not vname:
            out.append(errors.required(f"{path}.volumes[{i}].name"))
            continue
        out += [
            errors.invalid_value(f"{path}.volumes[{i}].name", vname, m) for m in is_dns1123_label(str(vname))
        ]
        if vname in volumes:
            out.append(errors.duplicate(f"{path}.volumes[{i}].name", vname))
        volumes.add(str(vname))
    return out


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    return selectors.label_selector_matches(selector, labels)


def _validate_workload(
    obj: Mapping[str, Any], restart_policies: Sequence[str] = ("Always",)
) -> list[FieldError]:
    out: list[FieldError] = []
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return [errors.required("spec")]
    replicas = spec.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or replicas < 0):
        out.append(errors.invalid_value("spec.replicas", replicas, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    if not isinstance(selector, Mapping):
        out.append(errors.required("spec.selector"))
    elif not selector.get("matchLabels") and not selector.get("matchExpressions"):
        out.append(
            errors.invalid_value("spec.selector", selector, "empty selector is invalid for deployment")
        )
    template = spec.get("template")
    if not isinstance(template, Mapping):
        out.append(errors.required("spec.template"))
        return out
    labels = _get(template, "metadata", "labels") or {}
    has_selector = isinstance(selector, Mapping) and bool(
        selector.get("matchLabels") or selector.get("matchExpressions")
    )
    if has_selector and isinstance(selector, Mapping) and not _selector_matches(selector, labels):
        out.append(
            errors.invalid_value(
                "spec.template.metadata.labels", labels, "`selector` does not match template `labels`"
            )
        )
    pod_spec = dict(template.get("spec") or {})
    out += validate_pod_spec(pod_spec, "spec.template.spec")
    if pod_spec.get("restartPolicy", "Always") not in restart_policies:
        out.append(
            errors.not_supported(
                "spec.template.spec.restartPolicy", pod_spec.get("restartPolicy"), restart_policies
            )
        )
    return out


def _validate_kind(obj: Mapping[str, Any]) -> list[FieldError]:
    kind = obj.get("kind")
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    spec = obj.get("spec")
    out: list[FieldError] = []
    if kind == "Pod" and group == "":
        out += validate_pod_spec(spec, "spec")
    elif kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") and group == "apps":
        out += _validate_workload(obj)
        if kind == "Deployment":
            strategy = _get(obj, "spec", "strategy", "type")
            if strategy is not None:
                out += _supported("spec.strategy.type", strategy, ("Recreate", "RollingUpdate"))
    elif kind == "Job" and group == "batch":
        out += _validate_job_spec(spec, "spec")
    elif kind == "CronJob" and group == "batch":
        if not _get(obj, "spec", "schedule"):
            out.append(errors.required("spec.schedule"))
        out += _validate_job_spec(_get(obj, "spec", "jobTemplate", "spec"), "spec.jobTemplate.spec")
    elif kind == "Service" and group == "":
        out += _validate_service(spec)
    elif kind in ("ConfigMap", "Secret") and group == "":
        out += _validate_data(obj)
    elif kind in ("RoleBinding", "ClusterRoleBinding") and group == "rbac.authorization.k8s.io":
        out += _validate_binding(obj)
    elif kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
        out += validate_crd(obj)
    return out


def _validate_job_spec(spec: Any, path: str) -> list[FieldError]:
    if not isinstance(spec, Mapping):
        return [errors.required(path)]
    out: list[FieldError] = []
    template = spec.get("template")
    if not isinstance(template, Mapping):
        return [errors.required(f"{path}.template")]
    pod_spec = template.get("spec")
    out += validate_pod_spec(pod_spec, f"{path}.template.spec", ("OnFailure", "Never"))
    if isinstance(pod_spec, Mapping) and "restartPolicy" not in pod_spec:
        out.append(
            errors.required(f"{path}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"')
        )
    for key in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds"):
        value = spec.get(key)
        if value is not None and (not isinstance(value, int) or value < 0):
            out.append(errors.invalid_value(f"{path}.{key}", value, "must be greater than or equal to 0"))
    return out


def _validate_service(spec: Any) -> list[FieldError]:
    if not isinstance(spec, Mapping):
        spec = {}
    out: list[FieldError] = []
    stype = spec.get("type", "ClusterIP")
    out += _supported("spec.type", stype, ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"))
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if not ports and stype != "ExternalName" and not headless:
        out.append(errors.required("spec.ports"))
    if stype == "ExternalName" and not spec.get("externalName"):
        out.append(errors.required("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, Mapping):
            continue
        out += _port(f"spec.ports[{i}].port", port.get("port"))
        pname = port.get("name")
        if len(ports) > 1 and not pname:
            out.append(errors.required(f"spec.ports[{i}].name"))
        if pname:
            if pname in names:
                out.append(errors.duplicate(f"spec.ports[{i}].name", pname))
            names.add(str(pname))
        if "protocol" in port:
            out += _supported(f"spec.ports[{i}].protocol", port["protocol"], ("SCTP", "TCP", "UDP"))
    return out


def _validate_data(obj: Mapping[str, Any]) -> list[FieldError]:
    out: list[FieldError] = []
    keys: set[str] = set()
    size = 0
    config_map = obj.get("kind") == "ConfigMap"
    for field in ("data", "binaryData") if config_map else ("data", "stringData"):
        data = obj.get(field) or {}
        if type(data) is not dict and not isinstance(data, Mapping):
            out.append(errors.type_invalid(field, data, "must be an object"))
            continue
        for key, value in data.items():
            text = str(key)
            problems = config_key_problems(text)
            if problems:
                out += [errors.invalid_value(f"{field}[{key}]", key, m) for m in problems]
            if config_map and key in keys:
                out.append(errors.duplicate(f"{field}[{key}]", key))
            keys.add(text)
            size += len(text) + len(value if type(value) is str else str(value))
    if size > CONFIG_MAP_MAX_BYTES:
        out.append(
            errors.FieldError(
                errors.CauseType.TOO_LONG, "", errors.OMIT, f"must have at most {CONFIG_MAP_MAX_BYTES} bytes"
            )
        )
    return out


def _validate_binding(obj: Mapping[str, Any]) -> list[FieldError]:
    out: list[FieldError] = []
    ref = obj.get("roleRef")
    if not isinstance(ref, Mapping):
        return [errors.required("roleRef")]
    allowed = ("ClusterRole",) if obj.get("kind") == "ClusterRoleBinding" else ("ClusterRole", "Role")
    if not ref.get("name"):
        out.append(errors.required("roleRef.name"))
    out += _supported("roleRef.kind", ref.get("kind"), allowed)
    if ref.get("apiGroup") != "rbac.authorization.k8s.io":
        out += _supported("roleRef.apiGroup", ref.get("apiGroup"), ("rbac.authorization.k8s.io",))
    for i, subject in enumerate(obj.get("subjects") or []):
        if not isinstance(subject, Mapping):
            continue
        out += _supported(f"subjects[{i}].kind", subject.get("kind"), ("Group", "ServiceAccount", "User"))
        if not subject.get("name"):
            out.append(errors.required(f"subjects[{i}].name"))
        if (
            subject.get("kind") == "ServiceAccount"
            and obj.get("kind") == "ClusterRoleBinding"
            and not subject.get("namespace")
        ):
            out.append(errors.required(f"subjects[{i}].namespace"))
    return out


def validate_crd(obj: Mapping[str, Any]) -> list[FieldError]:
    """CustomResourceDefinition essentials: name = ``<plural>.<group>``, names, scope, exactly one storage version."""
    out: list[FieldError] = []
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return [errors.required("spec")]
    group = str(spec.get("group") or "")
    raw_names = spec.get("names")
    names: Mapping[str, Any] = raw_names if isinstance(raw_names, Mapping) else {}
    plural = str(names.get("plural") or "")
    if not group:
        out.append(errors.required("spec.group"))
    elif "." not in group:
        out.append(errors.invalid_value("spec.group", group, "should be a domain with at least one dot"))
    else:
        out += [errors.invalid_value("spec.group", group, m) for m in is_dns1123_subdomain(group)]
    name = _get(obj, "metadata", "name")
    if name and plural and group and name != f"{plural}.{group}":
        out.append(errors.invalid_value("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not plural:
        out.append(errors.required("spec.names.plural"))
    else:
        out += [errors.invalid_value("spec.names.plural", plural, m) for m in is_dns1035_label(plural)]
    if not names.get("kind"):
        out.append(errors.required("spec.names.kind"))
    out += _supported("spec.scope", spec.get("scope"), ("Cluster", "Namespaced"))
    versions = spec.get("versions") or []
    if not versions:
        out.append(
            errors.required("spec.versions", "must have exactly one version marked as storage version")
        )
    else:
        storage = [v for v in versions if isinstance(v, Mapping) and v.get("storage") is True]
        if len(storage) != 1:
            out.append(
                errors.invalid_value(
                    "spec.versions",
                    [v.get("name") for v in versions if isinstance(v, Mapping)],
                    "must have exactly one version marked as storage version",
                )
            )
        seen: set[str] = set()
        for i, v in enumerate(versions):
            vname = v.get("name") if isinstance(v, Mapping) else None
            if not vname:
                out.append(errors.required(f"spec.versions[{i}].name"))
                continue
            out += [
                errors.invalid_value(f"spec.versions[{i}].name", vname, m)
                for m in is_dns1035_label(str(vname))
            ]
            if vname in seen:
                out.append(errors.duplicate(f"spec.versions[{i}].name", vname))
            seen.add(str(vname))
    return out


def validate_object(obj: Mapping[str, Any], namespaced: bool | None = None) -> list[FieldError]:
    """Every problem with a built-in object (metadata plus the kind's required fields), with field paths."""
    return validate_metadata(obj, namespaced) + _validate_kind(obj)


def raise_if_invalid(obj: Mapping[str, Any], problems: Sequence[FieldError]) -> None:
    """Raise the 422 ``Invalid`` ApiError for ``obj`` when there are problems."""
    if problems:
        group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        name = str(_get(obj, "metadata", "name") or _get(obj, "metadata", "generateName") or "")
        raise errors.invalid(str(obj.get("kind") or ""), name, problems, group=group)
