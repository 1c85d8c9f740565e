"""Kubeconfig files: finding them as kubectl does, merging them, writing the embedded cluster's.

One way to find the cluster, for every part of berth (:func:`locate`), in kubectl's order:

1. ``--kubeconfig FILE`` (it must exist);
2. ``$KUBECONFIG``, a list of files separated by ``:`` (``;`` on Windows), merged as kubectl merges them: for
   each cluster, user and context name the first file that defines it wins, and so does the first
   ``current-context``; files that do not exist are skipped;
3. ``~/.kube/config``;

and only where kubectl would find nothing: the embedded cluster's ``./.berth/cluster/kubeconfig`` (what ``berth
cluster up`` writes by default; it also prints the ``export KUBECONFIG=...`` line), then the pod's ServiceAccount
(in-cluster, as client-go falls back to it).

The embedded cluster writes ``DIR/kubeconfig`` with one cluster, one admin user (bearer token) and one context, so
``KUBECONFIG=DIR/kubeconfig kubectl ...`` and the official client work unchanged. Readers here only resolve names
(current context, its server); building API clients is :mod:`berth.kube.client`'s job.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.kube import yamlio
from berth.kube.errors import InputError

DEFAULT_CONTEXT = "berth"
EMBEDDED = Path(".berth") / "cluster" / "kubeconfig"
"""Where ``berth cluster up`` (default ``--data``) writes its kubeconfig, relative to the working directory."""

FLAG, ENV, HOME, EMBEDDED_SOURCE, IN_CLUSTER = (
    "--kubeconfig",
    "$KUBECONFIG",
    "~/.kube/config",
    "the embedded cluster's kubeconfig",
    "in-cluster ServiceAccount",
)
# A file named in a kubeconfig (certificate, key, token file, exec command) is relative to that kubeconfig.
_FILE_FIELDS = {
    "clusters": ("cluster", ("certificate-authority",)),
    "users": ("user", ("client-certificate", "client-key", "tokenFile")),
}


@dataclass(frozen=True)
class Location:
    """Where the cluster comes from: kubeconfig files to merge, in order, or (no files) the ServiceAccount."""

    paths: tuple[str, ...]
    source: str

    @property
    def in_cluster(self) -> bool:
        return not self.paths

    def describe(self) -> str:
        """For messages: ``KUBECONFIG=/a:/b``, ``--kubeconfig /x``, ``~/.kube/config (/root/.kube/config)``."""
        if self.in_cluster:
            return self.source
        joined = os.pathsep.join(self.paths)
        if self.source == ENV:
            return f"KUBECONFIG={joined}"
        if self.source == FLAG:
            return f"--kubeconfig {joined}"
        return f"{self.source} ({joined})"


@dataclass(frozen=True)
class Context:
    """A resolved context: its name, the cluster's server URL and namespace (``default`` when unset)."""

    name: str
    cluster: str
    user: str
    server: str
    namespace: str = "default"


def locate(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Location:
    """The kubeconfig files a client uses (module docstring); ``explicit`` is ``--kubeconfig`` (one file, as
    kubectl's flag is)."""
    if explicit:
        return Location((os.fspath(explicit),), FLAG)
    env = os.environ.get("KUBECONFIG", "")
    listed = tuple(p for p in env.split(os.pathsep) if p)
    if listed:
        return Location(listed, ENV)
    home = Path.home() / ".kube" / "config"
    if home.is_file():
        return Location((str(home),), HOME)
    embedded = (cwd or Path.cwd()) / EMBEDDED
    if embedded.is_file():
        return Location((str(embedded),), EMBEDDED_SOURCE)
    return Location((), IN_CLUSTER)


def default_path() -> str:
    """The first file :func:`locate` would read (for messages and writers); ``~/.kube/config`` when none."""
    location = locate()
    return location.paths[0] if location.paths else str(Path.home() / ".kube" / "config")


def render(
    server: str, token: str, name: str = DEFAULT_CONTEXT, ca_pem: bytes | None = None
) -> dict[str, Any]:
    """A kubeconfig document for one server with a bearer token (and the CA that signed its certificate)."""
    cluster: dict[str, Any] = {"server": server}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": f"{name}-admin", "user": {"token": token}}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": f"{name}-admin", "namespace": "default"}}
        ],
        "current-context": name,
    }


def write(
    path: str | os.PathLike[str],
    server: str,
    token: str,
    name: str = DEFAULT_CONTEXT,
    ca_pem: bytes | None = None,
) -> Path:
    """Write a kubeconfig (mode 0600: it holds the admin token) and return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    yamlio.write_atomic(target, yamlio.dump(render(server, token, name, ca_pem)), mode=0o600)
    return target


def as_location(path: str | os.PathLike[str] | Location | None) -> Location:
    """``path`` as a :class:`Location`: a located one as it is, a file as ``--kubeconfig``, None located."""
    if isinstance(path, Location):
        return path
    return locate(path)


def _absolute(body: dict[str, Any], fields: tuple[str, ...], base: Path) -> dict[str, Any]:
    out = dict(body)
    for name in fields:
        value = out.get(name)
        if isinstance(value, str) and value and not os.path.isabs(value):
            out[name] = str(base / value)
    command = out.get("exec", {}).get("command") if isinstance(out.get("exec"), dict) else None
    if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
        out["exec"] = {**out["exec"], "command": str(base / command)}
    return out


def _read_one(path: Path) -> dict[str, Any] | None:
    docs = yamlio.load_file(path)
    if not docs:
        return None  # an empty file is an empty config to kubectl
    if len(docs) != 1 or not isinstance(docs[0].body, dict):
        raise InputError("a kubeconfig must be one YAML mapping", str(path))
    data: dict[str, Any] = docs[0].body
    return data


def load(path: str | os.PathLike[str] | Location | None = None) -> dict[str, Any]:
    """The kubeconfig to use, merged from every file of its :class:`Location` as kubectl merges them.

    File references (certificates, keys, token files, exec commands) become absolute, relative to the file that
    names them. Raises :class:`InputError` naming the file when one is missing (``--kubeconfig``), malformed, or
    when no file of the list exists.
    """
    location = as_location(path)
    if location.in_cluster:
        raise InputError(
            "no kubeconfig found (--kubeconfig, $KUBECONFIG, ~/.kube/config, ./.berth/cluster/kubeconfig); pass "
            "--kubeconfig, set KUBECONFIG, or start the embedded cluster with `berth cluster up`"
        )
    merged: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [],
        "contexts": [],
        "users": [],
    }
    names: dict[str, set[str]] = {"clusters": set(), "contexts": set(), "users": set()}
    read = 0
    for entry in location.paths:
        p = Path(entry).expanduser()
        if not p.is_file():
            if location.source == FLAG:
                raise InputError("kubeconfig not found; check --kubeconfig", str(p))
            continue
        data = _read_one(p)
        read += 1
        if data is None:
            continue
        for section in ("clusters", "contexts", "users"):
            for item in data.get(section) or []:
                if not isinstance(item, dict) or item.get("name") in names[section]:
                    continue
                names[section].add(str(item.get("name")))
                inner, fields = _FILE_FIELDS.get(section, ("", ()))
                if fields and isinstance(item.get(inner), dict):
                    item = {**item, inner: _absolute(item[inner], fields, p.parent)}
                merged[section].append(item)
        if not merged.get("current-context") and data.get("current-context"):
            merged["current-context"] = data["current-context"]
        for key, value in data.items():
            if key not in merged and key != "current-context":
                merged[key] = value
    if not read:
        raise InputError(
            "none of these kubeconfig files exists; check the paths, or unset KUBECONFIG to use ~/.kube/config",
            location.describe(),
        )
    return merged


def _named(items: Any, name: str, what: str, where: str) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            body = item.get(what)
            return body if isinstance(body, dict) else {}
    raise InputError(f"{what} {name!r} is not defined", where)


def resolve_in(data: dict[str, Any], context: str | None, where: str) -> Context:
    """The context of an already-merged kubeconfig: ``context`` if given, else ``current-context``."""
    name = context or str(data.get("current-context") or "")
    if not name:
        raise InputError("no current-context is set; pass --context", where)
    ctx = _named(data.get("contexts"), name, "context", where)
    cluster = str(ctx.get("cluster") or "")
    server = str(_named(data.get("clusters"), cluster, "cluster", where).get("server") or "")
    return Context(name, cluster, str(ctx.get("user") or ""), server, str(ctx.get("namespace") or "default"))


def resolve(path: str | os.PathLike[str] | Location | None = None, context: str | None = None) -> Context:
    """The context to use: ``context`` if given, else ``current-context``, of the located kubeconfig."""
    location = as_location(path)
    return resolve_in(load(location), context, location.describe())


def current_context(path: str | os.PathLike[str] | Location | None = None, context: str | None = None) -> str:
    """The name of the context that would be used."""
    return resolve(path, context).name
