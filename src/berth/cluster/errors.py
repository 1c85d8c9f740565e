"""Kubernetes ``Status`` failures as one Python exception, with upstream's wording.

Every layer of the embedded API server (store, handlers, patch engines, validation, RBAC) reports a failure by
raising :class:`ApiError`; the HTTP layer turns it into the JSON ``Status`` body clients parse. The constructors
below reproduce the messages of k8s.io/apimachinery ``pkg/api/errors`` and ``pkg/util/validation/field`` because
kubectl prints them verbatim and tests (ours and users') compare against what a real cluster says.

This module is pure: no I/O, no imports from the server.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)
"""Upstream ``registry/rest.OptimisticLockErrorMsg``: the tail of a stale-resourceVersion 409."""


class Reason(StrEnum):
    """``Status.reason`` values (metav1.StatusReason) the server uses."""

    NOT_FOUND = "NotFound"
    ALREADY_EXISTS = "AlreadyExists"
    CONFLICT = "Conflict"
    INVALID = "Invalid"
    BAD_REQUEST = "BadRequest"
    FORBIDDEN = "Forbidden"
    UNAUTHORIZED = "Unauthorized"
    GONE = "Gone"
    EXPIRED = "Expired"
    UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
    REQUEST_ENTITY_TOO_LARGE = "RequestEntityTooLarge"
    METHOD_NOT_ALLOWED = "MethodNotAllowed"
    NOT_ACCEPTABLE = "NotAcceptable"
    INTERNAL_ERROR = "InternalError"
    TIMEOUT = "Timeout"


class CauseType(StrEnum):
    """``StatusCause.reason`` values (field.ErrorType plus apply conflicts)."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"
    FIELD_MANAGER_CONFLICT = "FieldManagerConflict"
    UNKNOWN_FIELD = "FieldValueUnknown"
    NAMESPACE_TERMINATING = "NamespaceTerminating"


# field.ErrorType.String(): the words a cause message starts with.
_TYPE_WORDS: dict[CauseType, str] = {
    CauseType.NOT_FOUND: "Not found",
    CauseType.REQUIRED: "Required value",
    CauseType.DUPLICATE: "Duplicate value",
    CauseType.INVALID: "Invalid value",
    CauseType.NOT_SUPPORTED: "Unsupported value",
    CauseType.FORBIDDEN: "Forbidden",
    CauseType.TOO_LONG: "Too long",
    CauseType.TOO_MANY: "Too many",
    CauseType.INTERNAL: "Internal error",
    CauseType.TYPE_INVALID: "Invalid value",
}
# Types whose body never shows the bad value (field.Error.ErrorBody).
_NO_VALUE_TYPES = {CauseType.REQUIRED, CauseType.FORBIDDEN, CauseType.TOO_LONG, CauseType.INTERNAL}


class _Omit:
    """Marker for "no bad value to show" (upstream ``omitValue``)."""

    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()


def go_quote(text: str) -> str:
    """Approximate Go's ``%q`` for a string (double quotes, backslash escapes, printable unicode kept)."""
    return json.dumps(text, ensure_ascii=False)


def _render_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return go_quote(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class FieldError:
    """One field-level problem (upstream ``field.Error``): what kind, where, the bad value, and why."""

    type: CauseType
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    def body(self) -> str:
        """``ErrorBody()``: e.g. ``Invalid value: "Bad_Name": a lowercase RFC 1123 ...``."""
        words = _TYPE_WORDS.get(self.type, str(self.type))
        if self.type in _NO_VALUE_TYPES or self.bad_value is OMIT:
            text = words
        else:
            text = f"{words}: {_render_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def error(self) -> str:
        """``Error()``: ``<field>: <body>``, also for an empty path (``field.NewPath("")``), which upstream prints
        as ``: Forbidden: static pods cannot be resized``."""
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        """The ``StatusCause`` dict; ``field`` is left out when empty (``omitempty`` in upstream's JSON)."""
        if not self.field:
            return {"reason": str(self.type), "message": self.body()}
        return {"reason": str(self.type), "message": self.body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(CauseType.REQUIRED, field, OMIT, detail)


def invalid_value(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(CauseType.INVALID, field, value, detail)


def not_supported(field: str, value: Any, supported: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(s) for s in supported) if supported else ""
    return FieldError(CauseType.NOT_SUPPORTED, field, value, detail)


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(CauseType.TYPE_INVALID, field, value, detail)


def forbidden_field(field: str, detail: str) -> FieldError:
    return FieldError(CauseType.FORBIDDEN, field, OMIT, detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(CauseType.DUPLICATE, field, value)


def aggregate(messages: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message as-is, several as ``[a, b]`` (duplicates dropped)."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class ApiError(Exception):
    """A Kubernetes ``Status`` failure: HTTP code, machine reason, human message, optional details.

    ``details`` is the ``StatusDetails`` dict (keys among ``name``, ``group``, ``kind``, ``uid``, ``causes``,
    ``retryAfterSeconds``) or None.
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        list_meta: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = int(code)
        self.reason = str(reason)
        self.message = message
        self.details = details
        self.list_meta = list_meta
        """``Status.metadata`` (a ``ListMeta``): the fresh ``continue`` token a 410 for an expired one carries."""

    def status(self) -> dict[str, Any]:
        """The ``Status`` object (``kind: Status``, ``apiVersion: v1``) to send as the response body."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta or {}),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body

    @property
    def causes(self) -> list[dict[str, str]]:
        """``details.causes`` (empty when absent)."""
        return list((self.details or {}).get("causes") or [])

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.reason!r}, {self.message!r})"


def qualified_resource(resource_plural: str, group: str) -> str:
    """``schema.GroupResource.String()``: ``pods``, ``deployments.apps``."""
    return f"{resource_plural}.{group}" if group else resource_plural


def qualified_kind(kind: str, group: str) -> str:
    """``schema.GroupKind.String()``: ``Pod``, ``Deployment.apps``."""
    return f"{kind}.{group}" if group else kind


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    if kind:
        d["kind"] = kind
    d.update({k: v for k, v in extra.items() if v})
    return d


def not_found(resource_plural: str, group: str, name: str) -> ApiError:
    """404 NotFound: ``deployments.apps "web" not found``."""
    return ApiError(
        404,
        Reason.NOT_FOUND,
        f"{qualified_resource(resource_plural, group)} {go_quote(name)} not found",
        _details(name, group, resource_plural),
    )


def path_not_found() -> ApiError:
    """404 for an unknown URL (no details), as the real server's mux answers."""
    return ApiError(404, Reason.NOT_FOUND, "the server could not find the requested resource", {})


def already_exists(resource_plural: str, group: str, name: str) -> ApiError:
    """409 AlreadyExists: ``pods "p" already exists``."""
    return ApiError(
        409,
        Reason.ALREADY_EXISTS,
        f"{qualified_resource(resource_plural, group)} {go_quote(name)} already exists",
        _details(name, group, resource_plural),
    )


def conflict(resource_plural: str, group: str, name: str, why: str = OPTIMISTIC_LOCK_MESSAGE) -> ApiError:
    """409 Conflict: ``Operation cannot be fulfilled on configmaps "x": <why>`` (default: stale resourceVersion)."""
    return ApiError(
        409,
        Reason.CONFLICT,
        f"Operation cannot be fulfilled on {qualified_resource(resource_plural, group)} {go_quote(name)}: {why}",
        _details(name, group, resource_plural),
    )


def apply_conflict(message: str, causes: Sequence[dict[str, str]]) -> ApiError:
    """409 Conflict from server-side apply (``NewApplyConflict``): only causes in details."""
    return ApiError(409, Reason.CONFLICT, message, {"causes": list(causes)})


def invalid(kind: str, name: str, errors: Sequence[FieldError], group: str = "") -> ApiError:
    """422 Invalid: ``Pod "Bad_Name" is invalid: metadata.name: Invalid value: ...`` with one cause per error."""
    qk = qualified_kind(kind, group)
    message = f"{qk} {go_quote(name)} is invalid"
    if errors:
        message += ": " + aggregate([e.error() for e in errors])
    details = _details(name, group, kind)
    details["causes"] = [e.cause() for e in errors]
    return ApiError(422, Reason.INVALID, message, details)


def bad_request(message: str) -> ApiError:
    """400 BadRequest with the given message."""
    return ApiError(400, Reason.BAD_REQUEST, message)


def forbidden(resource_plural: str, group: str, name: str, why: str) -> ApiError:
    """403 Forbidden (``NewForbidden``): ``pods "p" is forbidden: <why>``; ``forbidden: <why>`` with no resource."""
    if not resource_plural and not group:
        message = f"forbidden: {why}"
    elif not name:
        message = f"{qualified_resource(resource_plural, group)} is forbidden: {why}"
    else:
        message = f"{qualified_resource(resource_plural, group)} {go_quote(name)} is forbidden: {why}"
    return ApiError(403, Reason.FORBIDDEN, message, _details(name, group, resource_plural))


def unauthorized(message: str = "Unauthorized") -> ApiError:
    """401 Unauthorized, as the real server answers anonymous or bad-token requests."""
    return ApiError(401, Reason.UNAUTHORIZED, message)


def gone(message: str) -> ApiError:
    """410 Gone."""
    return ApiError(410, Reason.GONE, message)


def expired(message: str) -> ApiError:
    """410 Expired (``NewResourceExpired``): e.g. ``too old resource version: 1 (113)``."""
    return ApiError(410, Reason.EXPIRED, message)


def too_old_resource_version(requested: int | str, oldest: int | str) -> ApiError:
    """410 Expired with upstream's wording for a compacted revision."""
    return expired(f"too old resource version: {requested} ({oldest})")


def unsupported_media_type(accepted: Sequence[str] | str) -> ApiError:
    """415 UnsupportedMediaType; given a list of accepted types, upstream's negotiation message."""
    if isinstance(accepted, str):
        message = accepted
    else:
        message = (
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(accepted)
        )
    return ApiError(415, Reason.UNSUPPORTED_MEDIA_TYPE, message)


MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
"""Upstream apiserver's default request body limit (3 MiB)."""


def request_entity_too_large(limit: int = MAX_REQUEST_BODY_BYTES) -> ApiError:
    """413 RequestEntityTooLarge: ``Request entity too large: limit is 3145728``."""
    return ApiError(413, Reason.REQUEST_ENTITY_TOO_LARGE, f"Request entity too large: limit is {limit}")


def method_not_allowed(action: str, resource: str = "") -> ApiError:
    """405 MethodNotAllowed (``NewMethodNotSupported``) for ``action`` (a verb) on ``resource``.

    ``resource`` is ``<plural>``, ``<plural>.<group>`` or ``<plural>/<subresource>``; details name the plural
    and group as upstream does. The message is upstream's fixed text.
    """
    base = resource.split("/", 1)[0]
    plural, _, group = base.partition(".")
    return ApiError(
        405,
        Reason.METHOD_NOT_ALLOWED,
        "the server does not allow this method on the requested resource",
        _details("", group, plural),
    )


def internal(message: str) -> ApiError:
    """500 InternalError: ``Internal error occurred: <message>``."""
    return ApiError(
        500, Reason.INTERNAL_ERROR, f"Internal error occurred: {message}", {"causes": [{"message": message}]}
    )
