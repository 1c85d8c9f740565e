"""The on-disk form of a split render (``W/out`` and each package base): write it, and read it back.

Layout under one root::

    manifests/<slug>.yaml              ordinary objects and CRDs (never Secrets, never hooks)
    secrets/<slug>.yaml                v1 Secrets (folder 0700, files 0600)
    lifecycle/<event>/<slug>.yaml      hook objects, one copy in every event that runs them
    spec/manifest-index.yaml           every file with identity, role, template source and render position

The index keeps the render position so a split read back from disk orders hooks exactly like the fresh one
(ties at equal weight, name and kind fall back to template path and document order).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.install import split as split_mod
from berth.kube import canonical, objects, yamlio
from berth.kube.errors import InputError

API_VERSION = "berth.dev/v1alpha1"
INDEX_FILE = "spec/manifest-index.yaml"


@dataclass(frozen=True)
class WrittenFile:
    path: str
    """Relative to the root."""
    sha256: str
    ref: objects.Ref
    role: str


def _text(obj: split_mod.RenderedObject) -> str:
    return f"# Source: {obj.source}\n" + yamlio.dump(obj.body)


def _write(root: Path, rel: str, text: str, mode: int = 0o644) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, mode)
    return canonical.sha256_text(data)


def write_split(
    result: split_mod.Split,
    root: Path,
    name: str,
    install_only: frozenset[objects.Ref] = frozenset(),
    lookup_sources: Iterable[str] = (),
) -> list[WrittenFile]:
    """Write every object of ``result`` under ``root`` plus the manifest index; return the files written.

    ``install_only`` marks objects absent from the ``--is-upgrade`` render (``.Release.IsInstall`` only);
    ``lookup_sources`` (the templates that call ``lookup``) are listed in the index as ``lookupTemplates``.
    """
    files = result.file_names
    written: list[WrittenFile] = []
    index: list[dict[str, Any]] = []

    def entry(
        obj: split_mod.RenderedObject, rel: str, role: str, sha: str, extra: dict[str, Any] | None = None
    ) -> None:
        written.append(WrittenFile(rel, sha, obj.ref, role))
        item: dict[str, Any] = {
            "file": rel,
            "apiVersion": obj.api_version,
            "kind": obj.kind,
            "name": obj.name,
        }
        if obj.namespace:
            item["namespace"] = obj.namespace
        item.update({"role": role, "source": obj.source, "order": obj.order})
        if extra:
            item.update(extra)
        if obj.ref in install_only:
            item["installOnly"] = True
        index.append(item)

    for obj in result.crds:
        rel = f"manifests/{files[obj.ref]}"
        entry(obj, rel, "crd", _write(root, rel, _text(obj)))
    for obj in result.ordinary:
        rel = f"manifests/{files[obj.ref]}"
        entry(obj, rel, "ordinary", _write(root, rel, _text(obj)))
    if result.secrets:
        (root / "secrets").mkdir(parents=True, exist_ok=True)
        os.chmod(root / "secrets", 0o700)
    for obj in result.secrets:
        rel = f"secrets/{files[obj.ref]}"
        entry(obj, rel, "secret", _write(root, rel, _text(obj), 0o600))
    for hook in result.hooks:
        text = _text(hook.obj)
        rels = []
        mode = 0o600 if hook.obj.kind == "Secret" and hook.obj.ref.group == "" else 0o644
        for event in dict.fromkeys(hook.events):
            rel = f"lifecycle/{event.value}/{files[hook.obj.ref]}"
            sha = _write(root, rel, text, mode)
            written.append(WrittenFile(rel, sha, hook.obj.ref, "hook"))
            rels.append(rel)
        entry_item: dict[str, Any] = {"events": [e.value for e in hook.events], "files": rels}
        index.append(
            {
                "file": rels[0],
                "apiVersion": hook.obj.api_version,
                "kind": hook.obj.kind,
                "name": hook.obj.name,
                **({"namespace": hook.obj.namespace} if hook.obj.namespace else {}),
                "role": "hook",
                "source": hook.obj.source,
                "order": hook.obj.order,
                **entry_item,
                **({"installOnly": True} if hook.obj.ref in install_only else {}),
            }
        )
    index.sort(key=lambda i: int(i["order"]))
    spec: dict[str, Any] = {"files": index, "warnings": list(result.warnings)}
    lookups = sorted(set(lookup_sources))
    if lookups:
        spec["lookupTemplates"] = lookups
    doc = {
        "apiVersion": API_VERSION,
        "kind": "ManifestIndex",
        "metadata": {"name": f"{name}-manifest-index"},
        "spec": spec,
    }
    _write(root, INDEX_FILE, yamlio.dump(doc))
    return written


def read_split(root: Path) -> tuple[split_mod.Split, frozenset[objects.Ref]]:
    """Read a written split back (from the index, in render order) and split it again by the same rules;
    also return the identities marked install-only."""
    index_path = root / INDEX_FILE
    docs = yamlio.load_file(index_path)
    body = docs[0].body if docs else None
    if not isinstance(body, dict) or not isinstance((body.get("spec") or {}).get("files"), list):
        raise InputError(
            "not a manifest index (spec.files missing); re-run berth install setup", str(index_path)
        )
    rendered: list[split_mod.RenderedObject] = []
    install_only: set[objects.Ref] = set()
    for i, item in enumerate(body["spec"]["files"]):
        rel = str(item.get("file"))
        path = root / rel
        objs = yamlio.load_objects(_read(path), str(path))
        if len(objs) != 1:
            raise InputError(f"expected one object, found {len(objs)}", str(path))
        obj = objs[0][1]
        rendered.append(
            split_mod.RenderedObject(
                obj, objects.ref(obj), str(item.get("source", rel)), i, str(obj.get("apiVersion"))
            )
        )
        if item.get("installOnly"):
            install_only.add(objects.ref(obj))
    return split_mod.split(rendered), frozenset(install_only)


def lookup_templates(root: Path) -> frozenset[str]:
    """The templates of the render under ``root`` that call ``lookup`` (``lookupTemplates`` in its index; empty for a
    render written before berth recorded them)."""
    path = root / INDEX_FILE
    if not path.is_file():
        return frozenset()
    docs = yamlio.load_file(path)
    spec = (docs[0].body or {}).get("spec") if docs and isinstance(docs[0].body, dict) else None
    found = spec.get("lookupTemplates") if isinstance(spec, dict) else None
    return frozenset(str(s) for s in found) if isinstance(found, list) else frozenset()


RENDER_FOLDERS = ("manifests", "secrets", "lifecycle", "upgrade")
"""What of a render (``W/out`` or ``W/out/revisions/<N>``) holds the objects and hooks a run applies."""


def render_digest(root: Path) -> str:
    """SHA-256 of the objects and hooks of the render under ``root`` (paths and bytes; not ``spec/``, whose
    facts and answers do not reach the cluster, nor the review copy of the plan, which names the work dir). Two
    renders with the same digest apply the same thing: what tells a work dir set up again with other inputs from
    the render a receipt says was applied."""
    entries = []
    for top in RENDER_FOLDERS:
        for path in sorted((root / top).rglob("*")) if (root / top).is_dir() else []:
            rel = path.relative_to(root).as_posix()
            if path.is_file() and rel != "lifecycle/plan.yaml" and not rel.startswith("upgrade/spec/"):
                entries.append(f"{rel} {canonical.sha256_text(path.read_bytes())}")
    return canonical.sha256_text("\n".join(entries))


RENDER_ID_FILE = "spec/render-id"
"""``W/out/spec/render-id``: the :func:`render_digest` of the render, written by setup (revisions keep it with
``spec/``). A generated script embeds it and refuses an ``out/`` that holds another render."""


def write_render_id(root: Path) -> str:
    digest = render_digest(root)
    (root / RENDER_ID_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / RENDER_ID_FILE).write_text(digest + "\n", encoding="utf-8")
    return digest


def render_id(root: Path) -> str:
    """The render's id: what setup recorded in ``spec/render-id``, else (a render set up by an older berth) its
    :func:`render_digest`."""
    path = root / RENDER_ID_FILE
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    return render_digest(root)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(
            "file listed in the manifest index is missing; re-run berth install setup", str(path)
        ) from exc
