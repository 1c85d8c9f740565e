"""Name, label and metadata syntax with upstream's messages (``k8s.io/apimachinery/pkg/util/validation`` and
``ValidateObjectMeta``): which names each kind accepts, label and annotation rules, ``metadata`` as a whole."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from berth.cluster import errors
from berth.cluster.errors import FieldError

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


dns1123_label_problems = _KnownGood(is_dns1123_label)
_qualified_name_problems = _KnownGood(is_qualified_name)
_label_value_problems = _KnownGood(is_label_value)
config_key_problems = _KnownGood(is_config_map_key)


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
    if prefix and rule != "path-segment":
        name = mask_trailing_dash(name)
    return _NAME_CHECKS[rule](name)


def mask_trailing_dash(name: str) -> str:
    """A prefix checked as a name (generateName, the ``*Prefix`` CEL formats): its trailing dash, after which a
    suffix comes, stands for a letter."""
    return name[:-1] + "a" if name.endswith("-") else name


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
            for m in dns1123_label_problems(str(namespace))
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
