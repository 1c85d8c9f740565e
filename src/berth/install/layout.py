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

import functools
import os
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from berth.kube import canonical, yamlio
from berth.kube.errors import InputError

if TYPE_CHECKING:
    import queue

    from berth.install import split as split_mod
    from berth.kube import objects

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
    """The object's file: the document as Helm rendered it when the split kept it (and known parsed from now on:
    :data:`_OBJECTS`), else emitted from its body."""
    if obj.text:
        if obj.body.get("kind") != "List":
            _remember(obj.text, obj.body)
        return obj.text
    return f"# Source: {obj.source}\n" + yamlio.dump(obj.body)


Twins = dict[tuple[str, int], Path]
"""Files one render wrote, by SHA-256 and mode: a file with the same content and mode is a hard link to its twin."""


class Background:
    """File writes done in order by a thread of their own while the caller goes on: creating a render's files is
    mostly the file system's time, during which the thread does not hold the interpreter, so setup builds the
    index, the facts and the plan meanwhile (a chart the size of kai-scheduler's has ~350 files). :meth:`wait`
    before the files are read or moved: it raises the first write's error, as the write itself would have."""

    def __init__(self) -> None:
        import queue  # setup writes files only once Helm has rendered: not on its way to Helm

        self._queue: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="berth-files", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (write := self._queue.get()) is not None:
            if self._error is None:  # after a failure the rest is skipped, as a raise would skip it
                try:
                    write()
                except BaseException as exc:  # raised again by wait(), in the caller's thread
                    self._error = exc

    def put(self, write: Callable[[], object]) -> None:
        self._queue.put(write)

    def wait(self) -> None:
        """Every write done; raises the first that failed."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            raise self._error


class _Writer:
    """Writes the files of one split, making each folder once. With ``twins`` a file whose content and mode were
    written before (a hook in several events, the ``--is-upgrade`` variant's unchanged objects) becomes a hard link
    to that file: creating a file costs far more than linking one on some file systems (~1 ms on this project's
    test machines), and a render of a large chart has hundreds. With ``background`` the writes are queued there
    (the SHA-256 each call returns is the content's). A plain class: a dataclass costs every process that imports
    this module (setup, before it starts Helm) ~0.3 ms to create."""

    def __init__(
        self, root: Path, made: set[Path], twins: Twins | None = None, background: Background | None = None
    ) -> None:
        self.root = root
        self.made = made
        self.twins = twins
        self.background = background

    def __call__(self, rel: str, text: str, mode: int = 0o644) -> str:
        path = self.root / rel
        parent = None
        if path.parent not in self.made:
            parent = path.parent
            self.made.add(path.parent)
        data = text.encode("utf-8")
        sha = canonical.sha256_text(data)
        twin = self.twins.get((sha, mode)) if self.twins is not None else None
        if self.background is None:
            _write_file(path, data, mode, parent, twin)
        else:
            self.background.put(functools.partial(_write_file, path, data, mode, parent, twin))
        if self.twins is not None:
            self.twins.setdefault((sha, mode), path)
        return sha


def _write_file(path: Path, data: bytes, mode: int, parent: Path | None, twin: Path | None) -> None:
    """One file of :class:`_Writer` (its folder made first when ``parent``): a hard link to ``twin`` where it can be,
    else written."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    if twin is not None:
        try:
            os.link(twin, path)
            return
        except OSError:
            pass  # already there, or no hard links on this file system: write it
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        if path.stat().st_nlink > 1:  # never write through a link into its twin
            path.unlink()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        else:
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.fchmod(fd, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def link_or_copy(src: str, dst: str) -> str:
    """``shutil.copytree``'s ``copy_function`` for the files of a render, which nothing writes into in place (they
    are replaced whole, and :class:`_Writer` never writes through a link): a hard link where the file system allows
    one, else a copy. Recording a revision links the render it keeps instead of creating every file again."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


def _write(root: Path, rel: str, text: str, mode: int = 0o644) -> str:
    return _Writer(root, set())(rel, text, mode)


def write_split(
    result: split_mod.Split,
    root: Path,
    name: str,
    install_only: frozenset[objects.Ref] = frozenset(),
    lookup_sources: Iterable[str] = (),
    twins: Twins | None = None,
    background: Background | None = None,
) -> list[WrittenFile]:
    """Write every object of ``result`` under ``root`` plus the manifest index; return the files written.

    ``install_only`` marks objects absent from the ``--is-upgrade`` render (``.Release.IsInstall`` only);
    ``lookup_sources`` (the templates that call ``lookup``) are listed in the index as ``lookupTemplates``.
    Identical files are hard links (:class:`_Writer`): within the split, and with ``twins`` also to the files of
    another split written before (the install variant of the same render). With ``background`` the files are
    written there (:meth:`Background.wait` before they are read).
    """
    files = result.file_names
    write = _Writer(root, set(), {} if twins is None else twins, background)
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
        entry(obj, rel, "crd", write(rel, _text(obj)))
    for obj in result.ordinary:
        rel = f"manifests/{files[obj.ref]}"
        entry(obj, rel, "ordinary", write(rel, _text(obj)))
    if result.secrets:
        (root / "secrets").mkdir(parents=True, exist_ok=True)
        os.chmod(root / "secrets", 0o700)
    for obj in result.secrets:
        rel = f"secrets/{files[obj.ref]}"
        entry(obj, rel, "secret", write(rel, _text(obj), 0o600))
    for hook in result.hooks:
        text = _text(hook.obj)
        rels = []
        mode = 0o600 if hook.obj.kind == "Secret" and hook.obj.ref.group == "" else 0o644
        for event in dict.fromkeys(hook.events):
            rel = f"lifecycle/{event.value}/{files[hook.obj.ref]}"
            sha = write(rel, text, mode)
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
    write(INDEX_FILE, yamlio.dump(doc))
    return written


_OBJECTS: dict[str, dict[str, Any]] = {}
"""The object of every file text this process wrote or read: a command that reads a work dir more than once (upgrade
reads the render before and after setting it up again, the previous revision for its prune list) parses each file
once, and a render just written is not parsed again. Objects are shared: nothing changes them in place."""


def read_split(root: Path) -> tuple[split_mod.Split, frozenset[objects.Ref]]:
    """Read a written split back (from the index, in render order) and split it again by the same rules;
    also return the identities marked install-only."""
    from berth.install import split as split_mod  # imported by setup while Helm runs
    from berth.kube import objects

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
        text = _read(path)
        obj = _object_of(text, path)
        rendered.append(
            split_mod.RenderedObject(
                obj, objects.ref(obj), str(item.get("source", rel)), i, str(obj.get("apiVersion")), text
            )
        )
        if item.get("installOnly"):
            install_only.add(objects.ref(obj))
    return split_mod.split(rendered), frozenset(install_only)


def read_object(path: Path) -> dict[str, Any]:
    """The one object of a file of a written split (parsed once per process, :data:`_OBJECTS`); do not change it."""
    return _object_of(_read(path), path)


def _object_of(text: str, path: Path) -> dict[str, Any]:
    obj = _OBJECTS.get(text)
    if obj is None:
        objs = yamlio.load_objects(text, str(path))
        if len(objs) != 1:
            raise InputError(f"expected one object, found {len(objs)}; re-run berth install setup", str(path))
        obj = objs[0][1]
        _remember(text, obj)
    return obj


_OBJECTS_KEPT = 20_000


def _remember(text: str, obj: dict[str, Any]) -> None:
    """Keep ``obj`` as the parse of ``text`` (the memo is emptied when it grows past :data:`_OBJECTS_KEPT`, so a
    long-lived process such as a test run does not keep every render it ever saw)."""
    if len(_OBJECTS) >= _OBJECTS_KEPT:
        _OBJECTS.clear()
    _OBJECTS.setdefault(text, obj)


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
    found = []
    for top in RENDER_FOLDERS:
        for path in (root / top).rglob("*") if (root / top).is_dir() else []:
            if path.is_file():
                found.append((path.relative_to(root).as_posix(), canonical.sha256_text(path.read_bytes())))
    return _digest(found)


def _digest(files: Iterable[tuple[str, str]]) -> str:
    """:func:`render_digest` of (path under the render root, SHA-256) pairs: the render's folders in their order,
    each sorted as paths sort."""
    kept = [
        (RENDER_FOLDERS.index(rel.split("/", 1)[0]), PurePosixPath(rel).parts, f"{rel} {sha}")
        for rel, sha in files
        if rel.split("/", 1)[0] in RENDER_FOLDERS
        and rel != "lifecycle/plan.yaml"
        and not rel.startswith("upgrade/spec/")
    ]
    return canonical.sha256_text("\n".join(line for _, _, line in sorted(kept)))


RENDER_ID_FILE = "spec/render-id"
"""``W/out/spec/render-id``: the :func:`render_digest` of the render, written by setup (revisions keep it with
``spec/``). A generated script embeds it and refuses an ``out/`` that holds another render."""


def write_render_id(root: Path, written: Iterable[WrittenFile] | None = None) -> str:
    """Record the render's id; ``written`` (every file :func:`write_split` wrote under ``root``, with the paths
    relative to it) spares reading them back."""
    digest = render_digest(root) if written is None else _digest((w.path, w.sha256) for w in written)
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
