"""Helm 4's release records, read and written exactly as Helm stores them by default (the Secret driver).

One Secret per revision in the release namespace (helm/helm ``pkg/storage/driver/secrets.go``, ``util.go``,
``pkg/storage/storage.go``)::

    name    sh.helm.release.v1.<release>.v<revision>          type   helm.sh/release.v1
    labels  name, owner=helm, status, version, createdAt (on create) / modifiedAt (on update)
    data    release: base64(gzip(JSON(release)))              (gzip at best compression; read: gunzip only
                                                               when the gzip magic 1f 8b 08 leads)

The release JSON is Helm's ``release.Release`` with its field names and order (``pkg/release/v1``)::

    {name, info: {first_deployed, last_deployed, deleted, description, status, notes}, chart, config, manifest,
     hooks: [{name, kind, path, manifest, events, last_run: {started_at, completed_at, phase}, weight,
              delete_policies, output_log_policies}], version, namespace, apply_method}

Helm finds a release's records by the labels ``owner=helm,name=<release>``; the highest version is "the" release,
all of them its history. Creating a record first drops the oldest beyond ``--history-max`` (10), never the
deployed one. What each action writes when -- pending, deployed or failed, the previous revision superseded -- is
:mod:`berth.install.recorder`; this module is the format and the storage.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from berth.install import kubeops
from berth.install import split as split_mod
from berth.kube import yamlio
from berth.kube.errors import InputError

STORAGE_PREFIX = "sh.helm.release.v1"
SECRET_TYPE = "helm.sh/release.v1"
OWNER = "helm"
SYSTEM_LABELS = ("name", "owner", "status", "version", "createdAt", "modifiedAt")
HISTORY_MAX = 10
"""``helm upgrade``/``rollback``'s ``--history-max`` default."""
GZIP_MAGIC = b"\x1f\x8b\x08"


class Status(StrEnum):
    """``pkg/release/common/status.go``."""

    UNKNOWN = "unknown"
    DEPLOYED = "deployed"
    UNINSTALLED = "uninstalled"
    SUPERSEDED = "superseded"
    FAILED = "failed"
    UNINSTALLING = "uninstalling"
    PENDING_INSTALL = "pending-install"
    PENDING_UPGRADE = "pending-upgrade"
    PENDING_ROLLBACK = "pending-rollback"


PENDING = frozenset({Status.PENDING_INSTALL, Status.PENDING_UPGRADE, Status.PENDING_ROLLBACK})


class UnreadableRecord(InputError):
    """A release Secret whose ``data.release`` is not a Helm release (exit 2: nothing is written)."""


def record_name(release: str, version: int) -> str:
    return f"{STORAGE_PREFIX}.{release}.v{version}"


def now() -> str:
    """A timestamp as Go marshals ``time.Time`` (RFC 3339, UTC, with fractional seconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---- the encoding ---------------------------------------------------------------------------------------------


def encode(rel: dict[str, Any]) -> str:
    """``data.release`` as Helm writes it: base64(gzip(JSON)), gzip at best compression (no name, no mtime)."""
    raw = json.dumps(rel, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def decode(data: str, where: str) -> dict[str, Any]:
    """A release from ``data.release`` (as Helm's ``decodeRelease``); :class:`UnreadableRecord` naming ``where``
    when it is not one."""
    try:
        raw = base64.b64decode(data, validate=True)
        if raw[:3] == GZIP_MAGIC:
            raw = gzip.decompress(raw)
        rel = json.loads(raw)
    except (binascii.Error, ValueError, OSError, EOFError, zlib.error) as exc:
        raise UnreadableRecord(
            f"not a Helm release record ({type(exc).__name__}: {exc}); berth writes nothing until it is repaired "
            "or deleted (kubectl delete secret ...)",
            where,
        ) from exc
    if not isinstance(rel, dict) or not isinstance(rel.get("info"), dict):
        raise UnreadableRecord("not a Helm release record (no info)", where)
    return rel


def status_of(rel: dict[str, Any]) -> str:
    return str((rel.get("info") or {}).get("status") or Status.UNKNOWN.value)


def version_of(rel: dict[str, Any]) -> int:
    return int(rel.get("version") or 0)


def secret(rel: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """The Secret holding ``rel`` (``newSecretsObject``): ``labels`` plus name/owner/status/version."""
    all_labels = {
        **labels,
        "name": str(rel["name"]),
        "owner": OWNER,
        "status": status_of(rel),
        "version": str(version_of(rel)),
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": record_name(str(rel["name"]), version_of(rel)),
            "namespace": str(rel["namespace"]),
            "labels": all_labels,
        },
        "type": SECRET_TYPE,
        "data": {"release": base64.b64encode(encode(rel).encode("ascii")).decode("ascii")},
    }


# ---- building a record ----------------------------------------------------------------------------------------


def info(
    status: Status,
    description: str,
    first_deployed: str,
    last_deployed: str,
    notes: str = "",
    deleted: str = "",
) -> dict[str, Any]:
    """``release.Info`` in Helm's field order; zero times and empty strings left out as Helm marshals them."""
    out: dict[str, Any] = {}
    for key, value in (
        ("first_deployed", first_deployed),
        ("last_deployed", last_deployed),
        ("deleted", deleted),
        ("description", description),
        ("status", status.value),
        ("notes", notes),
    ):
        if value:
            out[key] = value
    return out


def release(
    name: str,
    namespace: str,
    version: int,
    rel_info: dict[str, Any],
    base: dict[str, Any],
    manifest_text: str,
    hook_list: list[dict[str, Any]],
) -> dict[str, Any]:
    """``release.Release`` in Helm's field order (``config``, ``manifest`` and ``hooks`` left out when empty)."""
    out: dict[str, Any] = {"name": name, "info": rel_info, "chart": base.get("chart") or {}}
    if base.get("config"):
        out["config"] = base["config"]
    if manifest_text:
        out["manifest"] = manifest_text
    if hook_list:
        out["hooks"] = hook_list
    out.update({"version": version, "namespace": namespace, "apply_method": "ssa"})
    return out


def _document(source: str, body: dict[str, Any]) -> str:
    return f"---\n# Source: {source}\n{yamlio.dump(body).rstrip()}\n"


def manifest(result: split_mod.Split, skip: frozenset[Any] = frozenset()) -> str:
    """The release manifest: every release object (ordinary, Secrets, templated CRDs -- not ``crds/`` ones, not
    hooks) in render order, each as ``---\\n# Source: <template>\\n<object>``, as Helm joins them."""
    objs = [*result.ordinary, *result.secrets, *(c for c in result.crds if not c.from_crds_dir)]
    return "".join(
        _document(o.source, o.body) for o in sorted(objs, key=lambda o: o.order) if o.ref not in skip
    )


def hooks(result: split_mod.Split, skip: frozenset[Any] = frozenset()) -> list[dict[str, Any]]:
    """``release.Hook`` per hook object, as Helm's manifest sorter records them (never run yet)."""
    out = []
    for h in result.hooks:
        if h.obj.ref in skip:
            continue
        entry: dict[str, Any] = {
            "name": h.obj.name,
            "kind": h.obj.kind,
            "path": h.obj.source,
            "manifest": yamlio.dump(h.obj.body).rstrip(),
            "events": [e.value for e in h.events],
            "last_run": {"phase": ""},
        }
        if h.weight:
            entry["weight"] = h.weight
        if h.listed_policies:
            entry["delete_policies"] = list(h.listed_policies)
        if h.log_policies:
            entry["output_log_policies"] = list(h.log_policies)
        out.append(entry)
    return out


def parsed(rel: dict[str, Any]) -> split_mod.Split:
    """A record's manifest and hooks as berth reads a render (what adopting a release Helm installed starts from)."""
    text = str(rel.get("manifest") or "")
    for h in rel.get("hooks") or []:
        text += f"---\n# Source: {h.get('path') or 'hook'}\n{h.get('manifest') or ''}\n"
    return split_mod.from_render(text)


# ---- the storage ----------------------------------------------------------------------------------------------


class Store:
    """One release's records in its namespace, through the one client wrapper (list by labels, create, replace,
    delete: the verbs Helm's Secret driver uses, so the same RBAC serves both)."""

    def __init__(self, kube: kubeops.KubeOps, namespace: str, name: str) -> None:
        self.kube = kube
        self.namespace = namespace
        self.name = name
        self.res = kube.resource("v1", "Secret")

    def history(self) -> list[dict[str, Any]]:
        """Every record of the release, oldest first; :class:`UnreadableRecord` on one Helm could not read."""
        items = self.kube.list(self.res, self.namespace, f"owner={OWNER},name={self.name}")
        out = []
        for item in items:
            where = f"Secret {self.namespace}/{(item.get('metadata') or {}).get('name')} data.release"
            raw = (item.get("data") or {}).get("release")
            try:
                text = base64.b64decode(str(raw or ""), validate=True).decode("ascii")
            except (binascii.Error, ValueError) as exc:
                raise UnreadableRecord(f"not base64 ({exc})", where) from exc
            out.append(decode(text, where))
        return sorted(out, key=version_of)

    @staticmethod
    def deployed(history: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The newest deployed revision (Helm's ``Storage.Deployed``)."""
        found = [r for r in history if status_of(r) == Status.DEPLOYED.value]
        return found[-1] if found else None

    def create(
        self, rel: dict[str, Any], max_history: int = 0, history: list[dict[str, Any]] | None = None
    ) -> None:
        """Store a new revision (Helm's ``Storage.Create``): first drop the oldest records beyond
        ``max_history - 1`` (0: no limit), never the deployed one. ``history``: the records as the caller has
        just read them (else they are listed again)."""
        if max_history > 0:
            self._trim(max_history - 1, self.history() if history is None else history)
        body = secret(rel, {"createdAt": str(int(datetime.now(UTC).timestamp()))})
        status, data = self.kube.request("POST", self.res.path(self.namespace), body=body)
        if status == 409:
            raise InputError(
                f"release {self.name} revision {version_of(rel)} already exists (another install or upgrade ran "
                "at the same time?); check `helm history` and retry",
                f"Secret {self.namespace}/{record_name(self.name, version_of(rel))}",
            )
        self.kube.check(f"create Secret {self.namespace}/{body['metadata']['name']}", status, data)

    def update(self, rel: dict[str, Any]) -> None:
        """Replace a revision's record (Helm's ``Update``: labels rebuilt, ``modifiedAt`` set)."""
        body = secret(rel, {"modifiedAt": str(int(datetime.now(UTC).timestamp()))})
        name = str(body["metadata"]["name"])
        status, data = self.kube.request("PUT", self.res.path(self.namespace, name), body=body)
        self.kube.check(f"update Secret {self.namespace}/{name}", status, data)

    def delete(self, version: int) -> None:
        self.kube.delete(self.res, record_name(self.name, version), self.namespace)

    def _trim(self, keep: int, history: list[dict[str, Any]]) -> None:
        if len(history) <= keep:
            return
        deployed = self.deployed(history)
        drop = [r for r in history if deployed is None or version_of(r) != version_of(deployed)]
        for rel in drop[: len(history) - keep]:
            self.delete(version_of(rel))
