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
- :func:`unknown_fields` / :func:`strict_decoding_error`: ``fieldValidation=Strict`` for built-ins against the v1.35
  schema table (400 ``strict decoding error: unknown field "spec.x"``).
- :func:`decode_error`: the 400 Go's JSON decoder gives for a built-in whose values have the wrong JSON type
  (``json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32``) or whose
  Secret data is not base64.
- :func:`admit_custom_resource`: structural-schema pruning (drops fields the schema does not declare unless
  ``x-kubernetes-preserve-unknown-fields``), defaulting (``default``) and validation (type, nullable, required,
  enum, bounds, lengths, pattern, item counts, list-map key uniqueness, int-or-string, embedded resources).

Pure: objects in, (object, errors) out; :func:`raise_if_invalid` turns errors into the 422 ``ApiError``.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from berth.cluster import errors, schema
from berth.cluster.errors import FieldError
from berth.kube import quantity, selectors
from berth.kube.errors import InputError

Obj = dict[str, Any]

# -- name and label syntax (k8s.io/apimachinery/pkg/util/validation) ------------------------------------------------

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
TOTAL_ANNOTATION_SIZE = 256 * 1024
CONFIG_MAP_MAX_BYTES = 1024 * 1024

_DNS1123_LABEL = re.compile(f"^{DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL = re.compile(f"^{DNS1035_LABEL_FMT}$")
_QUALIFIED_NAME = re.compile(f"^{QUALIFIED_NAME_FMT}$")
_LABEL_VALUE = re.compile(f"^{LABEL_VALUE_FMT}$")
_CONFIG_KEY = re.compile(f"^{CONFIG_KEY_FMT}$")


def _regex_error(what: str, fmt: str, examples: Sequence[str]) -> str:
    msg = what
    if examples:
        msg += " (e.g. " + ",  or ".join(f"'{e}'" for e in examples) + ", "
    else:
        msg += " ("
    return msg + f"regex used for validation is '{fmt}')"


def _max_len(limit: int) -> str:
    return f"must be no more than {limit} characters"


def is_dns1123_label(value: str) -> list[str]:
    """Upstream ``IsDNS1123Label``: the problems (empty list = valid)."""
    out = []
    if len(value) > DNS1123_LABEL_MAX:
        out.append(_max_len(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL.match(value):
        out.append(
            _regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                "start and end with an alphanumeric character",
                DNS1123_LABEL_FMT,
                ["my-name", "123-abc"],
            )
        )
    return out


def is_dns1123_subdomain(value: str) -> list[str]:
    """Upstream ``IsDNS1123Subdomain``."""
    out = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        out.append(_max_len(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN.match(value):
        out.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character",
                DNS1123_SUBDOMAIN_FMT,
                ["example.com"],
            )
        )
    return out


def is_dns1035_label(value: str) -> list[str]:
    """Upstream ``IsDNS1035Label`` (Service names)."""
    out = []
    if len(value) > DNS1123_LABEL_MAX:
        out.append(_max_len(DNS1123_LABEL_MAX))
    if not _DNS1035_LABEL.match(value):
        out.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                DNS1035_LABEL_FMT,
                ["my-name", "abc-123"],
            )
        )
    return out


def is_path_segment_name(value: str) -> list[str]:
    """Upstream ``IsValidPathSegmentName`` (RBAC object names)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_qualified_name(value: str) -> list[str]:
    """Upstream ``IsQualifiedName``: label and annotation keys (``[prefix/]name``)."""
    parts = value.split("/")
    out: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            _regex_error(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character",
                QUALIFIED_NAME_FMT,
                ["MyName", "my.name", "123-abc"],
            )
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        out.append("name part " + _max_len(QUALIFIED_NAME_MAX))
    if name and not _QUALIFIED_NAME.match(name):
        out.append(
            "name part "
            + _regex_error(
                "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character",
                QUALIFIED_NAME_FMT,
                ["MyName", "my.name", "123-abc"],
            )
        )
    return out


def is_label_value(value: str) -> list[str]:
    """Upstream ``IsValidLabelValue``."""
    out = []
    if len(value) > LABEL_VALUE_MAX:
        out.append(_max_len(LABEL_VALUE_MAX))
    if not _LABEL_VALUE.match(value):
        out.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character",
                LABEL_VALUE_FMT,
                ["MyValue", "my_value", "12345"],
            )
        )
    return out


def is_config_map_key(value: str) -> list[str]:
    """Upstream ``IsConfigMapKey`` (ConfigMap and Secret data keys)."""
    out = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        out.append(_max_len(DNS1123_SUBDOMAIN_MAX))
    if not _CONFIG_KEY.match(value):
        out.append(
            _regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                CONFIG_KEY_FMT,
                ["key.name", "KEY_NAME", "key-name"],
            )
        )
    if value in (".", ".."):
        out.append(f"must not be '{value}'")
    elif value.startswith(".."):
        out.append("must not start with '..'")
    return out


class _KnownGood:
    """One syntax check that remembers the strings it passed (up to a bound: clients choose them).

    Namespaces, label keys and values, annotation and data keys, container names repeat from object to object, so a
    hot write path mostly skips the regexes; object names do not repeat and are checked directly.
    """

    __slots__ = ("_check", "_ok")

    LIMIT = 8192

    def __init__(self, check: Callable[[str], list[str]]) -> None:
        self._check = check
        self._ok: set[str] = set()

    def __call__(self, value: str) -> list[str]:
        if value in self._ok:
            return []
        problems = self._check(value)
        if not problems and len(self._ok) < self.LIMIT:
            self._ok.add(value)
        return problems


_dns1123_label_problems = _KnownGood(is_dns1123_label)
_qualified_name_problems = _KnownGood(is_qualified_name)
_label_value_problems = _KnownGood(is_label_value)
_config_key_problems = _KnownGood(is_config_map_key)


# -- name rules per kind ----------------------------------------------------------------------------------------

NAME_RULES: dict[str, str] = {
    "Namespace": "dns1123-label",
    "Service": "dns1035-label",
    "Role": "path-segment",
    "ClusterRole": "path-segment",
    "RoleBinding": "path-segment",
    "ClusterRoleBinding": "path-segment",
    "CustomResourceDefinition": "crd",
}
"""Kinds whose names follow another rule than the default DNS-1123 subdomain."""

_NAME_CHECKS = {
    "dns1123-subdomain": is_dns1123_subdomain,
    "dns1123-label": is_dns1123_label,
    "dns1035-label": is_dns1035_label,
    "path-segment": is_path_segment_name,
    "crd": is_dns1123_subdomain,
}


def name_problems(kind: str, name: str, prefix: bool = False) -> list[str]:
    """Problems with ``name`` as the name of a ``kind`` (``prefix``: a generateName, trailing dash allowed)."""
    rule = NAME_RULES.get(kind, "dns1123-subdomain")
    if prefix and rule != "path-segment" and name.endswith("-"):
        name = name[:-1] + "a"
    return _NAME_CHECKS[rule](name)


# -- metadata -------------------------------------------------------------------------------------------------------


def validate_metadata(obj: Mapping[str, Any], namespaced: bool | None = None) -> list[FieldError]:
    """``ValidateObjectMeta``: name/generateName, namespace, labels, annotations."""
    kind = str(obj.get("kind") or "")
    meta = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return [errors.required("metadata.name", "name or generateName is required")]
    out: list[FieldError] = []
    name = meta.get("name")
    generate = meta.get("generateName")
    if generate:
        out += [
            errors.invalid_value("metadata.generateName", generate, m)
            for m in name_problems(kind, str(generate), True)
        ]
    if not name and not generate:
        out.append(errors.required("metadata.name", "name or generateName is required"))
    elif name:
        problems = name_problems(kind, str(name))
        if problems:
            out += [errors.invalid_value("metadata.name", name, m) for m in problems]
    namespace = meta.get("namespace")
    if namespaced is True and not namespace:
        out.append(errors.required("metadata.namespace"))
    elif namespaced is False:
        pass  # upstream clears the namespace of cluster-scoped objects before validating (rest.BeforeCreate)
    elif namespace:
        out += [
            errors.invalid_value("metadata.namespace", namespace, m)
            for m in _dns1123_label_problems(str(namespace))
        ]
    labels = meta.get("labels")
    if labels and (type(labels) is dict or isinstance(labels, Mapping)):
        for key, value in labels.items():
            out += [
                errors.invalid_value("metadata.labels", key, m) for m in _qualified_name_problems(str(key))
            ]
            if not isinstance(value, str):
                out.append(errors.type_invalid(f"metadata.labels[{key}]", value, "must be a string"))
            else:
                out += [
                    errors.invalid_value(f"metadata.labels[{key}]", value, m)
                    for m in _label_value_problems(value)
                ]
    annotations = meta.get("annotations")
    if annotations and (type(annotations) is dict or isinstance(annotations, Mapping)):
        size = 0
        for key, value in annotations.items():
            out += [
                errors.invalid_value("metadata.annotations", key, m)
                for m in _qualified_name_problems(str(key).lower())
            ]
            size += len(str(key)) + len(str(value))
        if size > TOTAL_ANNOTATION_SIZE:
            out.append(
                errors.FieldError(
                    errors.CauseType.TOO_LONG,
                    "metadata.annotations",
                    errors.OMIT,
                    f"must have at most {TOTAL_ANNOTATION_SIZE} bytes",
                )
            )
    return out


# -- built-in kinds -------------------------------------------------------------------------------------------------


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
                    for m in _dns1123_label_problems(str(cname))
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
            problems = _config_key_problems(text)
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


# -- strict field validation ----------------------------------------------------------------------------------------


def unknown_fields(obj: Any, node: schema.Node | None = None, path: str = "") -> list[str]:
    """Paths of fields the schema does not declare (``fieldValidation=Strict``), e.g. ``spec.replicass``."""
    if node is None:
        if not isinstance(obj, Mapping):
            return []
        node = schema.for_kind(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        if node is None:
            return []
    out: list[str] = []
    _unknown(obj, node, path, out)
    return out


def _unknown(obj: Any, node: schema.Node, path: str, out: list[str]) -> None:
    kind = type(obj)
    if kind is dict:
        if node.preserve_unknown_fields or node.is_any or (node.embedded_resource and not node.is_struct):
            return
        props = node.properties
        open_map = node.is_map or isinstance(node.schema.get("additionalProperties"), Mapping)
        for key, value in obj.items():
            if node.is_struct and key not in props and not open_map:
                out.append(f"{path}.{key}" if path else str(key))
                continue
            if type(value) in (dict, list):
                _unknown(value, node.field(key), f"{path}.{key}" if path else str(key), out)
    elif kind is list:
        item = node.items()
        for i, value in enumerate(obj):
            if type(value) in (dict, list):
                _unknown(value, item, f"{path}[{i}]", out)


def strict_decoding_error(paths: Sequence[str]) -> errors.ApiError:
    """400 ``strict decoding error: unknown field "spec.x", unknown field "spec.y"``."""
    return errors.bad_request("strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths))


# -- decoding built-ins: the type errors Go's JSON decoder reports --------------------------------------------------


def _go_type(node: schema.Node) -> str:
    """How Go names the type at ``node`` (``int32``, ``[]v1.Container``, ``map[string]string``, ``v1.PodSpec``)."""
    if node.ref:
        package, _, name = node.ref.rpartition(".")
        return f"{package.rpartition('.')[2]}.{name}"
    types = node.types - {"null"}
    fmt = node.schema.get("format")
    if "array" in types:
        return "[]" + _go_type(node.items())
    if "object" in types:
        extra = node.schema.get("additionalProperties")
        return (
            "map[string]" + _go_type(node.sub(extra))
            if isinstance(extra, Mapping)
            else "map[string]interface {}"
        )
    if "integer" in types:
        return str(fmt) if fmt in ("int32", "int64") else "int64"
    if "number" in types:
        return "float64"
    if "boolean" in types:
        return "bool"
    if "string" in types:
        return "[]uint8" if fmt == "byte" else "string"
    return "interface {}"


_KIND_OF: dict[type, str] = {
    bool: "bool",
    int: "int",
    float: "float",
    str: "string",
    list: "array",
    dict: "object",
}
_GO_JSON_NAME = {"bool": "bool", "int": "number", "float": "number", "string": "string", "array": "array"}


def _json_kind(value: Any) -> str:
    """The JSON type name Go's decoder prints (``bool``, ``number``, ``string``, ``array``, ``object``)."""
    return _GO_JSON_NAME.get(_KIND_OF.get(type(value), "object"), "object")


def _accepts(node: schema.Node, value: Any) -> bool:
    if value is None:
        return True
    accepted = node.accepted
    if accepted is None:
        return True
    kind = _KIND_OF.get(type(value), "object")
    return kind in accepted or (kind == "float" and "int" in accepted and float(value).is_integer())


def _type_error(value: Any, node: schema.Node, path: tuple[str, ...], struct: str) -> str | None:
    if not _accepts(node, value):
        where = ".".join(path)
        return f"json: cannot unmarshal {_json_kind(value)} into Go struct field {struct}.{where} of type {_go_type(node)}"
    kind = type(value)
    if kind is str:
        if node.is_bytes:
            try:
                base64.b64decode(value.encode("ascii"), validate=True)
            except (binascii.Error, ValueError, UnicodeEncodeError):
                return f"illegal base64 data at input byte {_bad_base64_offset(value)}"
    elif kind is dict:
        if node.is_any or node.preserve_unknown_fields:
            return None
        inner = node.ref.rpartition(".")[2] if node.ref else struct
        props = node.properties
        strict = node.is_struct and not node.is_map
        for key, child in value.items():
            if strict and key not in props:
                continue  # unknown fields are a strict-validation matter, not a decode error
            problem = _type_error(child, node.field(key), (*path, key), inner)
            if problem:
                return problem
    elif kind is list:
        item = node.items()
        for child in value:
            problem = _type_error(child, item, path, struct)
            if problem:
                return problem
    return None


def _decodes(value: Any, node: schema.Node) -> bool:
    """Whether ``value`` fits ``node`` for Go's decoder: exactly ``_type_error(...) is None``, without building paths.

    The common case (a body that decodes) takes only this walk; :func:`_type_error` runs only to word a failure.
    Scalars of a type :attr:`schema.Node.scalar_fits` lists are accepted without a call.
    """
    kind = type(value)
    if kind is dict:
        accepted = node.accepted
        if accepted is not None and "object" not in accepted:
            return False
        if node.is_any or node.preserve_unknown_fields:
            return True
        if node.is_struct:  # unknown fields are a strict-validation matter, not a decode error
            declared = node.declared
            for key, child in value.items():
                sub = declared.get(key)
                if sub is not None and type(child) not in sub.scalar_fits and not _decodes(child, sub):
                    return False
            return True
        sub = node.additional
        fits = sub.scalar_fits
        for child in value.values():  # noqa: SIM110 - a loop, not all() over a generator: most maps are short
            if type(child) not in fits and not _decodes(child, sub):
                return False
        return True
    if kind is list:
        accepted = node.accepted
        if accepted is not None and "array" not in accepted:
            return False
        item = node.items()
        fits = item.scalar_fits
        for child in value:  # noqa: SIM110 - as above
            if type(child) not in fits and not _decodes(child, item):
                return False
        return True
    return _type_error(value, node, (), "") is None


def _bad_base64_offset(text: str) -> int:
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, ch in enumerate(text):
        if ch not in alphabet and ch != "=":
            return i
    return max(len(text) - (len(text) % 4 or 4), 0)


def decode_error(obj: Mapping[str, Any]) -> errors.ApiError | None:
    """The 400 a real server gives when a built-in object's JSON does not fit its Go types, else None.

    E.g. ``Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go
    struct field DeploymentSpec.spec.replicas of type int32``; invalid base64 in Secret ``data`` likewise.
    """
    api_version = str(obj.get("apiVersion") or "")
    kind = str(obj.get("kind") or "")
    node = schema.for_kind(api_version, kind)
    if node is None:
        return None
    value = obj if type(obj) is dict else dict(obj)
    if _decodes(value, node):
        return None
    problem = _type_error(value, node, (), kind)
    if problem is None:
        return None
    version = api_version.rpartition("/")[2]
    return errors.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {problem}')


# -- custom resources: prune, default, validate ---------------------------------------------------------------------

_ROOT_META = ("apiVersion", "kind", "metadata")
_JSON_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def prune(value: Any, s: Mapping[str, Any], root: bool = False) -> Any:
    """Drop fields the structural schema does not declare, and nulls of non-nullable fields (in a copy)."""
    if isinstance(value, dict):
        if s.get("x-kubernetes-preserve-unknown-fields") is True and not s.get("properties"):
            return value
        props = s.get("properties") or {}
        extra = s.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, child in value.items():
            if root and key in _ROOT_META:
                out[key] = child
            elif key in props:
                if child is None and not (
                    isinstance(props[key], Mapping) and props[key].get("nullable") is True
                ):
                    continue  # upstream drops nulls of non-nullable fields before defaulting
                out[key] = prune(child, props[key])
            elif isinstance(extra, Mapping):
                out[key] = prune(child, extra)
            elif (
                extra is True
                or s.get("x-kubernetes-preserve-unknown-fields") is True
                or (s.get("x-kubernetes-embedded-resource") is True and key in _ROOT_META)
            ):
                out[key] = child
        return out
    if isinstance(value, list):
        items = s.get("items")
        return [prune(v, items) for v in value] if isinstance(items, Mapping) else value
    return value


def apply_defaults(value: Any, s: Mapping[str, Any]) -> Any:
    """Fill ``default`` values of missing properties (recursively, in a copy)."""
    if isinstance(value, dict):
        out = dict(value)
        props = s.get("properties") or {}
        for key, sub in props.items():
            if key not in out and isinstance(sub, Mapping) and "default" in sub:
                out[key] = copy.deepcopy(sub["default"])
            if key in out and isinstance(sub, Mapping):
                out[key] = apply_defaults(out[key], sub)
        extra = s.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in out:
                if key not in props:
                    out[key] = apply_defaults(out[key], extra)
        return out
    if isinstance(value, list):
        items = s.get("items")
        return [apply_defaults(v, items) for v in value] if isinstance(items, Mapping) else value
    return value


def validate_schema(value: Any, s: Mapping[str, Any], path: str) -> list[FieldError]:
    """OpenAPI v3 (structural subset) validation with kube-openapi's messages."""
    out: list[FieldError] = []
    where = path or "<root>"
    if value is None:
        if s.get("nullable") is True or not s:
            return out
        if s.get("type"):
            return [errors.invalid_value(where, None, f'{where} in body must be of type {s["type"]}: "null"')]
        return out
    stype = s.get("type")
    if s.get("x-kubernetes-int-or-string") is True:
        if not (isinstance(value, str) or _JSON_TYPES["integer"](value)):
            out.append(
                errors.invalid_value(
                    where,
                    _json_type(value),
                    f'{where} in body must be of type integer,string: "{_json_type(value)}"',
                )
            )
            return out
    elif isinstance(stype, str) and stype in _JSON_TYPES and not _JSON_TYPES[stype](value):
        out.append(
            errors.invalid_value(
                where, _json_type(value), f'{where} in body must be of type {stype}: "{_json_type(value)}"'
            )
        )
        return out
    enum = s.get("enum")
    if isinstance(enum, list) and value not in enum:
        out.append(
            errors.not_supported(where, value, [str(e) if not isinstance(e, str) else e for e in enum])
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "maximum" in s:
            bound = s["maximum"]
            if value > bound or (s.get("exclusiveMaximum") and value == bound):
                op = "less than" if s.get("exclusiveMaximum") else "less than or equal to"
                out.append(errors.invalid_value(where, value, f"{where} in body should be {op} {bound}"))
        if "minimum" in s:
            bound = s["minimum"]
            if value < bound or (s.get("exclusiveMinimum") and value == bound):
                op = "greater than" if s.get("exclusiveMinimum") else "greater than or equal to"
                out.append(errors.invalid_value(where, value, f"{where} in body should be {op} {bound}"))
    if isinstance(value, str):
        if "maxLength" in s and len(value) > s["maxLength"]:
            out.append(
                errors.FieldError(
                    errors.CauseType.TOO_LONG,
                    where,
                    errors.OMIT,
                    f"may not be more than {s['maxLength']} bytes",
                )
            )
        if "minLength" in s and len(value) < s["minLength"]:
            out.append(
                errors.invalid_value(
                    where, value, f"{where} in body should be at least {s['minLength']} chars long"
                )
            )
        pattern = s.get("pattern")
        if isinstance(pattern, str) and not re.search(pattern, value):
            out.append(errors.invalid_value(where, value, f"{where} in body should match '{pattern}'"))
    if isinstance(value, list):
        if "maxItems" in s and len(value) > s["maxItems"]:
            out.append(
                errors.FieldError(
                    errors.CauseType.TOO_MANY, where, len(value), f"must have at most {s['maxItems']} items"
                )
            )
        if "minItems" in s and len(value) < s["minItems"]:
            out.append(
                errors.invalid_value(
                    where, len(value), f"{where} in body should have at least {s['minItems']} items"
                )
            )
        items = s.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                out += validate_schema(item, items, f"{path}[{i}]")
        out += _list_uniqueness(value, s, path)
    if isinstance(value, dict):
        props = s.get("properties") or {}
        for key in s.get("required") or []:
            if key not in value:
                out.append(errors.required(f"{path}.{key}" if path else key))
        extra = s.get("additionalProperties")
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else str(key)
            if key in props and isinstance(props[key], Mapping):
                out += validate_schema(child, props[key], child_path)
            elif isinstance(extra, Mapping):
                out += validate_schema(child, extra, child_path)
        if "maxProperties" in s and len(value) > s["maxProperties"]:
            out.append(
                errors.FieldError(
                    errors.CauseType.TOO_MANY,
                    where,
                    len(value),
                    f"must have at most {s['maxProperties']} items",
                )
            )
    for sub_key in ("allOf",):
        for sub in s.get(sub_key) or []:
            if isinstance(sub, Mapping):
                out += validate_schema(value, sub, path)
    for sub_key in ("anyOf", "oneOf"):
        options = [o for o in s.get(sub_key) or [] if isinstance(o, Mapping)]
        if options:
            passing = sum(1 for o in options if not validate_schema(value, o, path))
            if passing == 0 or (sub_key == "oneOf" and passing > 1):
                what = (
                    "must validate one and only one schema (oneOf)"
                    if sub_key == "oneOf"
                    else "must validate at least one schema (anyOf)"
                )
                out.append(errors.invalid_value(where, _short(value), f"{where} in body {what}"))
    return out


def _short(value: Any) -> Any:
    return value if not isinstance(value, dict | list) else json.dumps(value, sort_keys=True)[:80]


def _list_uniqueness(value: list[Any], s: Mapping[str, Any], path: str) -> list[FieldError]:
    list_type = s.get("x-kubernetes-list-type")
    out: list[FieldError] = []
    if list_type == "set":
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                out.append(errors.duplicate(f"{path}[{i}]", item))
            seen.append(item)
    elif list_type == "map":
        keys = s.get("x-kubernetes-list-map-keys") or []
        seen_keys: list[tuple[Any, ...]] = []
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                continue
            ident = tuple(item.get(k) for k in keys)
            if ident in seen_keys:
                out.append(errors.duplicate(f"{path}[{i}]", {k: item.get(k) for k in keys}))
            seen_keys.append(ident)
    return out


def admit_custom_resource(
    obj: Mapping[str, Any], open_api_schema: Mapping[str, Any] | None
) -> tuple[Obj, list[FieldError]]:
    """Prune, default and validate a custom resource against its CRD version's ``openAPIV3Schema``.

    Returns the object to store and every problem (metadata included). A version without a schema only gets the
    metadata checks.
    """
    stored: Obj = copy.deepcopy(dict(obj))
    problems = validate_metadata(stored)
    if not open_api_schema:
        return stored, problems
    s = dict(open_api_schema)
    stored = prune(stored, s, root=True)
    stored = apply_defaults(stored, s)
    body = {k: v for k, v in stored.items() if k not in _ROOT_META}
    body_schema = dict(s)
    body_schema["properties"] = {k: v for k, v in (s.get("properties") or {}).items() if k not in _ROOT_META}
    body_schema["required"] = [r for r in s.get("required") or [] if r not in _ROOT_META]
    problems += validate_schema(body, body_schema, "")
    return stored, problems


def field_errors_text(problems: Iterable[FieldError]) -> list[str]:
    """Each problem as ``<field>: <body>`` (for logs and CLI output)."""
    return [p.error() for p in problems]


# -- pods/resize (in-place resize, KEP-1287) -------------------------------------------------------------------------

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
"""Set by the kubelet on the API mirror of a static pod; such pods cannot be resized."""

_RESIZABLE = ("cpu", "memory")
_RESIZE_RESTART_POLICIES = ("NotRequired", "RestartContainer")


def _amount(value: Any) -> Fraction | None:
    """A quantity's value, or None when it does not parse (the pod validation reports that elsewhere)."""
    try:
        return quantity.parse(value)
    except (InputError, ValueError, TypeError):
        return None


def validate_resize_policy(policies: Any, path: str, pod_restart_policy: Any) -> list[FieldError]:
    """Upstream's validateResizePolicy: each resource once, cpu or memory, NotRequired or RestartContainer, and
    only NotRequired in a pod whose restartPolicy is Never. Note that upstream reports most of these at the list's
    path, not the item's."""
    out: list[FieldError] = []
    seen: set[Any] = set()
    for i, p in enumerate(policies if isinstance(policies, list) else []):
        p = p if isinstance(p, Mapping) else {}
        name, restart = p.get("resourceName") or "", p.get("restartPolicy") or ""
        if name in seen:
            out.append(errors.duplicate(f"{path}[{i}]", name))
        seen.add(name)
        if not name:
            out.append(errors.required(path))
        elif name not in _RESIZABLE:
            out.append(errors.not_supported(path, name, _RESIZABLE))
        if not restart:
            out.append(errors.required(path))
        elif restart not in _RESIZE_RESTART_POLICIES:
            out.append(errors.not_supported(path, restart, _RESIZE_RESTART_POLICIES))
        if pod_restart_policy == "Never" and restart != "NotRequired":
            out.append(
                errors.invalid_value(path, restart, "must be 'NotRequired' when `restartPolicy` is 'Never'")
            )
    return out


def pod_qos_class(spec: Mapping[str, Any]) -> str:
    """Upstream's ComputePodQOS -- the one QoS computation (status.qosClass, resize checks, quota scopes): cpu and
    memory only, init and regular containers, or the pod-level ``spec.resources`` when set; amounts compared as
    quantities (``1`` equals ``1000m``), zero requests and limits ignored."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    pod_level = spec.get("resources")
    holders: list[Any] = (
        [{"resources": pod_level}]
        if isinstance(pod_level, Mapping) and (pod_level.get("requests") or pod_level.get("limits"))
        else [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    )
    for c in holders:
        res = (c.get("resources") if isinstance(c, dict) else None) or {}
        for name, v in (res.get("requests") or {}).items():
            amount = _amount(v)
            if name in _RESIZABLE and amount is not None and amount > 0:
                requests[name] = requests.get(name, Fraction(0)) + amount
        found: set[str] = set()
        for name, v in (res.get("limits") or {}).items():
            amount = _amount(v)
            if name in _RESIZABLE and amount is not None and amount > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + amount
        if not found.issuperset(_RESIZABLE):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and len(requests) == len(limits) and all(limits.get(n) == r for n, r in requests.items()):
        return "Guaranteed"
    return "Burstable"


def _sidecar(c: Mapping[str, Any]) -> bool:
    return c.get("restartPolicy") == "Always"


def _resources_removed(new: Mapping[str, Any] | None, old: Mapping[str, Any] | None) -> bool:
    return any(name not in (new or {}) for name in old or {})


def _without_cpu_memory_updates(c: Mapping[str, Any], old: Mapping[str, Any]) -> dict[str, Any]:
    """Upstream's dropCPUMemoryResourcesFromContainer: ``c`` with its cpu/memory amounts put back to ``old``'s.
    A list the old container did not have at all is dropped whole, as upstream does."""
    out = dict(c)
    res = c.get("resources") or {}
    old_res = old.get("resources") or {}
    munged: dict[str, Any] = {}
    for key in ("limits", "requests"):
        old_list = old_res.get(key)
        if not old_list:
            continue
        values = {k: v for k, v in (res.get(key) or {}).items() if k not in _RESIZABLE}
        values.update({k: v for k, v in old_list.items() if k in _RESIZABLE})
        munged[key] = values
    out["resources"] = munged
    return out


def _same_container(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Semantic equality of two containers: a missing or empty ``resources`` list or map is no difference."""

    def norm(c: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in c.items() if v not in (None, [], {})}
        res = {k: v for k, v in (c.get("resources") or {}).items() if v not in (None, [], {})}
        if res:
            out["resources"] = res
        else:
            out.pop("resources", None)
        return out

    return norm(a) == norm(b)


def _resize_supported(pod: Mapping[str, Any]) -> bool:
    """Upstream's isPodResizeRequestSupported: the first running (regular) container's status tells whether its node
    reports ``resources``; a pod with no running container is given the benefit of the doubt."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if isinstance(cs, Mapping) and isinstance((cs.get("state") or {}).get("running"), Mapping):
            return cs.get("resources") is not None
    return True


def validate_pod_resize(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """What kube-apiserver 1.35's ValidatePodResize refuses in a ``pods/resize`` (``new`` is the stored pod with
    the resize's containers' ``resources`` and ``resizePolicy`` merged in, as upstream's resize strategy leaves it).

    Since 1.34 memory limits may be lowered whatever the resizePolicy (the kubelet guards against OOM kills), so
    there is no memory-limit rule. Upstream's version-skew check applies: the first running container whose status
    reports no ``resources`` means a node without resize support (berth's kubelet reports them for every container).
    """
    old_meta = old.get("metadata") or {}
    old_spec = old.get("spec") or {}
    new_spec = new.get("spec") or {}

    def pod_level(spec: Mapping[str, Any]) -> bool:
        res = spec.get("resources") or {}
        return bool(res.get("requests") or res.get("limits"))

    if pod_level(old_spec) or pod_level(new_spec):
        return [errors.forbidden_field("", "pods with pod-level resources cannot be resized")]
    if MIRROR_POD_ANNOTATION in (old_meta.get("annotations") or {}):
        return [errors.forbidden_field("", "static pods cannot be resized")]
    if (old_spec.get("os") or {}).get("name") == "windows":
        return [errors.forbidden_field("", "windows pods cannot be resized")]
    problems: list[FieldError] = []
    # Upstream compares status.qosClass, which it computed from the same spec at creation; computing it again
    # keeps a pod whose stored class came out differently (berth's create-time defaulting) resizable.
    if pod_qos_class(old_spec) != pod_qos_class(new_spec):
        shown = str((new.get("status") or {}).get("qosClass") or "")
        problems.append(
            errors.invalid_value("spec", shown, "Pod QOS Class may not change as a result of resizing")
        )
    if not _resize_supported(old):
        problems.append(errors.forbidden_field("spec", "Pod running on node without support for resize"))
    kinds = (("initContainers", True), ("containers", False))
    pairs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for key, _ in kinds:
        before = [c for c in old_spec.get(key) or [] if isinstance(c, dict)]
        after = [c for c in new_spec.get(key) or [] if isinstance(c, dict)]
        if len(before) != len(after) or any(
            a.get("name") != b.get("name") for a, b in zip(after, before, strict=True)
        ):
            return [*problems, errors.forbidden_field("spec", "only cpu and memory resources are mutable")]
        pairs[key] = list(zip(after, before, strict=True))
    # Removing a request or a limit is not supported (regular containers and sidecars).
    for key, init in kinds:
        for i, (c, was) in enumerate(pairs[key]):
            if init and not _sidecar(was):
                continue
            path = f"spec.{key}[{i}].resources"
            res, old_res = c.get("resources") or {}, was.get("resources") or {}
            if _resources_removed(res.get("requests"), old_res.get("requests")):
                problems.append(
                    errors.forbidden_field(f"{path}.requests", "resource requests cannot be removed")
                )
            if _resources_removed(res.get("limits"), old_res.get("limits")):
                problems.append(errors.forbidden_field(f"{path}.limits", "resource limits cannot be removed"))
    for c, was in pairs["containers"]:
        if not _same_container(_without_cpu_memory_updates(c, was), was):
            problems.append(errors.forbidden_field("spec", "only cpu and memory resources are mutable"))
    for c, was in pairs["initContainers"]:
        if _sidecar(was):
            if not _same_container(_without_cpu_memory_updates(c, was), was):
                problems.append(
                    errors.forbidden_field(
                        "spec", "only cpu and memory resources for sidecar containers are mutable"
                    )
                )
        elif not _same_container(c, was):
            problems.append(
                errors.forbidden_field("spec", "resources for non-sidecar init containers are immutable")
            )
    return problems
