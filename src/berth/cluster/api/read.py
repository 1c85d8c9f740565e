"""Reads: get one object, list a page of objects (selectors, limit and continue)."""

from __future__ import annotations

import base64
import builtins
import json
from dataclasses import dataclass

from berth.cluster import errors as E
from berth.cluster import eventsv1, objmeta
from berth.cluster import store as S
from berth.cluster.api.base import ApiBase
from berth.cluster.resources import ResourceType
from berth.kube import selectors
from berth.kube.errors import InputError
from berth.kube.objects import Obj


@dataclass(frozen=True)
class ListResult:
    """One page of a list: items, the list's resourceVersion, the continue token and remaining count."""

    items: list[Obj]
    resource_version: str
    continue_token: str = ""
    remaining: int | None = None


# Field selectors each resource supports beyond metadata.name / metadata.namespace (upstream field label conversion).
FIELD_LABELS: dict[str, tuple[str, ...]] = {
    "pods": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    ),
    "events": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "events.events.k8s.io": (
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
        "regarding.apiVersion",
        "regarding.resourceVersion",
        "regarding.fieldPath",
        "reason",
        "reportingController",
        "type",
    ),
    "secrets": ("type",),
    "nodes": ("spec.unschedulable",),
    "namespaces": ("status.phase",),
    "replicasets.apps": ("status.replicas",),
    "jobs.batch": ("status.successful",),
    "replicationcontrollers": ("status.replicas",),
    "certificatesigningrequests.certificates.k8s.io": ("spec.signerName",),
}


def field_value(obj: Obj, path: str) -> str:
    if path == "source":
        return str(((obj.get("source") or {}).get("component")) or "")
    if path == "status.podIPs":
        return ",".join(str(p.get("ip", "")) for p in ((obj.get("status") or {}).get("podIPs") or []))
    return selectors.field_value(obj, path)


class Reader(ApiBase):
    """``get`` and ``list`` (the events.k8s.io view of Events is served by :mod:`.events_v1` over these)."""

    def get(self, resource: str, name: str, namespace: str | None = None) -> Obj:
        return self.do_get(self.resource_type(resource), name, namespace)

    def list(
        self, resource: str, namespace: str | None = None, label_selector: str = "", field_selector: str = ""
    ) -> tuple[builtins.list[Obj], str]:
        res = self.do_list(self.resource_type(resource), namespace, label_selector, field_selector)
        return res.items, res.resource_version

    def stored_json(
        self, rt: ResourceType, name: str, namespace: str | None, version: str | None = None
    ) -> tuple[int, str] | None:
        """``(resourceVersion, JSON text)`` of an object as stored, when serving it needs no change (the stored
        version, a kind without conversion) -- what :meth:`do_get` returns, without decoding and re-encoding it.
        None when it is missing or must be converted (use :meth:`do_get`)."""
        if (
            rt.virtual
            or rt.resource == eventsv1.RESOURCE
            or rt.storage_version
            or rt.custom  # read defaults (crds.default_on_read)
            or (version and version != rt.version)
        ):
            return None
        return self.store.get(rt.resource, self._ns_key(rt, namespace), name)

    def do_get(self, rt: ResourceType, name: str, namespace: str | None, version: str | None = None) -> Obj:
        if rt.virtual:
            raise E.method_not_allowed("get", rt.resource)
        return self.present(rt, self._load(rt, name, namespace), version)

    def _selectors(
        self, rt: ResourceType, label_selector: str, field_selector: str
    ) -> tuple[selectors.Selector, tuple[selectors.FieldRequirement, ...]]:
        try:
            labels = selectors.parse_label_selector(label_selector or "")
            fields = selectors.parse_field_selector(field_selector or "")
        except InputError as exc:
            raise E.bad_request(str(exc)) from exc
        allowed = (
            "metadata.name",
            "metadata.namespace",
            *FIELD_LABELS.get(rt.plural if not rt.group else rt.resource, ()),
        )
        if rt.resource == "events":
            allowed = ("metadata.name", "metadata.namespace", *FIELD_LABELS["events"])
        for f in fields:
            if f.field not in allowed:
                raise E.bad_request(
                    f"field label not supported: {f.field}"
                    if not rt.custom
                    else f'"{f.field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
                )
        return labels, fields

    def do_list(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: str = "",
        field_selector: str = "",
        *,
        limit: int = 0,
        continue_token: str = "",
        version: str | None = None,
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> ListResult:
        """One page of a list. Without ``continue``, ``resource_version``/``resource_version_match`` choose the
        state (see :func:`list_revision`); a ``continue`` token reads the first page's revision again (a snapshot:
        later writes do not show), or 410 with a fresh token once that revision was compacted."""
        if rt.virtual:
            raise E.method_not_allowed("list", rt.resource)
        labels, fields = self._selectors(rt, label_selector, field_selector)
        ns = namespace if rt.namespaced and namespace else None
        start_after = ""
        if continue_token:
            if resource_version_match:
                raise _list_options_error("resourceVersionMatch is forbidden when continue is provided")
            if resource_version not in ("", "0"):
                raise E.bad_request("specifying resource version is not allowed when using continue")
            start_after, at = self._continue_from(continue_token)
        else:
            at = list_revision(resource_version, resource_version_match, limit, self.store.revision)
        if at is None:
            entries, rv = self.store.list(rt.resource, ns)
        else:
            try:
                entries, rv = self.store.list_at(rt.resource, ns, at), at
            except S.Compacted as exc:
                if continue_token:
                    fresh = _continue_token(-1, start_after)
                    raise E.ApiError(
                        410, E.Reason.EXPIRED, INCONSISTENT_CONTINUE, None, {"continue": fresh}
                    ) from exc
                raise E.expired("The resourceVersion for the provided list is too old.") from exc
        items: builtins.list[Obj] = []
        filtered = not labels.empty or bool(fields)
        next_key = ""
        remaining = 0
        for ens, ename, (_erv, text) in entries:
            key = f"{ens}/{ename}"
            if start_after and key <= start_after:
                continue
            if limit and len(items) >= limit:
                if not filtered:
                    remaining += 1
                    continue
                obj = objmeta.loads(text)
                if labels.matches((obj.get("metadata") or {}).get("labels") or {}) and (
                    not fields or selectors.fields_match(fields, obj, field_value)
                ):
                    remaining += 1
                continue
            obj = objmeta.loads(text)
            if filtered:
                if not labels.matches((obj.get("metadata") or {}).get("labels") or {}):
                    continue
                if fields and not selectors.fields_match(fields, obj, field_value):
                    continue
            items.append(self.present(rt, obj, version))
            next_key = key
        token_out = ""
        if limit and remaining:
            token_out = _continue_token(rv, next_key)
        return ListResult(items, str(rv), token_out, remaining if token_out else None)

    def _continue_from(self, continue_token: str) -> tuple[str, int | None]:
        """``(last key served, revision to read at)`` of a continue token (None: the latest state)."""
        try:
            token = json.loads(base64.urlsafe_b64decode(continue_token.encode()).decode())
            start_after = str(token["start"])
            token_rv = int(token["rv"])
        except (ValueError, KeyError, TypeError) as exc:
            raise E.bad_request(f"continue key is not valid: {exc}") from exc
        return start_after, (None if token_rv < 0 else token_rv)


INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


def _continue_token(rv: int, start: str) -> str:
    """An opaque continue token: the revision the list is read at (-1: the latest, as upstream's fresh hint after a
    410) and the last key served."""
    return base64.urlsafe_b64encode(json.dumps({"rv": rv, "start": start}).encode()).decode()


def _list_options_error(message: str, value: object = None) -> E.ApiError:
    cause = (
        E.not_supported("resourceVersionMatch", value, ["Exact", "NotOlderThan", ""])
        if value is not None
        else E.forbidden_field("resourceVersionMatch", message)
    )
    return E.invalid("ListOptions", "", [cause], "meta.k8s.io")


def list_revision(resource_version: str, match: str, limit: int, current: int) -> int | None:
    """The revision a list without ``continue`` is read at (None: the latest), as kube-apiserver decides:
    ``resourceVersion`` unset -- the latest (a consistent read); ``0`` -- any (berth: the latest); ``R`` with
    ``resourceVersionMatch=Exact`` (or, the legacy form, no match and a ``limit``) -- exactly R, 410 once R was
    compacted; ``R`` with ``NotOlderThan`` (or no match, no limit) -- the latest. A revision the store has not
    reached is 504 ``Too large resource version``."""
    if match:
        if not resource_version:
            raise _list_options_error("resourceVersionMatch is forbidden unless resourceVersion is provided")
        if match not in ("Exact", "NotOlderThan"):
            raise _list_options_error("", match)
        if match == "Exact" and resource_version == "0":
            raise _list_options_error('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    if resource_version in ("", "0"):
        return None
    try:
        wanted = int(resource_version)
    except ValueError as exc:
        raise E.bad_request(f"invalid resource version {resource_version!r}") from exc
    if wanted > current:
        raise E.ApiError(
            504,
            "Timeout",
            f"Too large resource version: {wanted}, current: {current}",
            {
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            },
        )
    if match == "Exact" or (not match and limit > 0):
        return wanted
    return None
