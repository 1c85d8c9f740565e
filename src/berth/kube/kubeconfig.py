"""Kubeconfig files: writing the embedded cluster's, reading any, naming the current context.

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


@dataclass(frozen=True)
class Context:
    """A resolved context: its name, the cluster's server URL and namespace (``default`` when unset)."""

    name: str
    cluster: str
    user: str
    server: str
    namespace: str = "default"


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


def default_path() -> str:
    """``$KUBECONFIG`` (first entry) or ``~/.kube/config``."""
    env = os.environ.get("KUBECONFIG")
    if env:
        return env.split(os.pathsep)[0]
    return str(Path.home() / ".kube" / "config")


def load(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The parsed kubeconfig; :class:`InputError` naming the file when it is missing or malformed."""
    p = Path(path) if path is not None else Path(default_path())
    if not p.is_file():
        raise InputError("kubeconfig not found; pass --kubeconfig or set KUBECONFIG", str(p))
    docs = yamlio.load_file(p)
    if len(docs) != 1 or not isinstance(docs[0].body, dict):
        raise InputError("a kubeconfig must be one YAML mapping", str(p))
    data: dict[str, Any] = docs[0].body
    return data


def _named(items: Any, name: str, what: str, where: str) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            body = item.get(what)
            return body if isinstance(body, dict) else {}
    raise InputError(f"{what} {name!r} is not defined", where)


def resolve(path: str | os.PathLike[str] | None = None, context: str | None = None) -> Context:
    """The context to use: ``context`` if given, else ``current-context``."""
    where = str(path if path is not None else default_path())
    data = load(path)
    name = context or str(data.get("current-context") or "")
    if not name:
        raise InputError("no current-context is set; pass --context", where)
    ctx = _named(data.get("contexts"), name, "context", where)
    cluster = str(ctx.get("cluster") or "")
    server = str(_named(data.get("clusters"), cluster, "cluster", where).get("server") or "")
    return Context(name, cluster, str(ctx.get("user") or ""), server, str(ctx.get("namespace") or "default"))


def current_context(path: str | os.PathLike[str] | None = None, context: str | None = None) -> str:
    """The name of the context that would be used."""
    return resolve(path, context).name
