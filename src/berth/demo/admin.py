"""The demo's hands on the embedded cluster: admin requests, ServiceAccount identities, audit counts, bounded waits.

Why a module of its own: every step of the demo creates objects as the cluster admin, runs a scheduler as some
ServiceAccount and then asks "what did the API server see from that identity?". Keeping those three things here
keeps :mod:`berth.demo.main` a readable list of steps, and puts every wait behind a deadline in one place (the demo
must finish, never hang).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from berth.cluster import Cluster
from berth.kube import client as kube_client
from berth.kube import kubeconfig
from berth.kube.errors import BerthError
from berth.schedule import api_call

T = TypeVar("T")

RBAC = "rbac.authorization.k8s.io/v1"
SA_USER_PREFIX = "system:serviceaccount:"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


class DemoError(BerthError):
    """A demo step did not reach its expected state in time (the message names the step and what was awaited)."""


def wait_for(check: Callable[[], T], timeout: float, what: str, interval: float = 0.1) -> T:
    """Poll ``check`` until it returns a truthy value; :class:`DemoError` naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise DemoError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def utc_now() -> str:
    """The audit log's time format, for comparing with its ``time`` field."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Identity:
    """A ServiceAccount bound to a ClusterRole, with a kubeconfig that authenticates as it."""

    name: str
    namespace: str
    kubeconfig: Path
    rules: int

    @property
    def user(self) -> str:
        return f"{SA_USER_PREFIX}{self.namespace}:{self.name}"


@dataclass(frozen=True)
class Traffic:
    """What the API server saw from one identity: long-lived watches, lists, and every request."""

    watches: int
    lists: int
    requests: int


class Admin:
    """Admin requests to one embedded cluster through the official client (the kubeconfig's bearer token)."""

    def __init__(self, cluster: Cluster, kubeconfig_dir: Path) -> None:
        self.cluster = cluster
        self.kubeconfig_dir = kubeconfig_dir
        self.client: Any = kube_client.api_client(cluster.kubeconfig)
        self.audit_path = cluster.kubeconfig.parent / "audit.jsonl"

    def close(self) -> None:
        self.client.close()

    def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return api_call(self.client, method, path, (), body)

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        return self.call("POST", path, obj)

    def ensure_namespace(self, name: str) -> None:
        try:
            self.create(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            )
        except kube_client.StatusError as exc:
            if exc.status != 409:
                raise

    def identity(self, name: str, namespace: str, rules: list[dict[str, Any]]) -> Identity:
        """A ServiceAccount ``namespace/name`` bound to a new ClusterRole ``name`` with ``rules``, and a kubeconfig
        holding a TokenRequest token for it (what a pod of that ServiceAccount would mount)."""
        self.create(
            f"/api/v1/namespaces/{namespace}/serviceaccounts",
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": namespace},
            },
        )
        self.create(
            f"/apis/{RBAC}/clusterroles",
            {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules},
        )
        self.create(
            f"/apis/{RBAC}/clusterrolebindings",
            {
                "apiVersion": RBAC,
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
            },
        )
        answer = self.create(
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 3600},
            },
        )
        token = str((answer.get("status") or {}).get("token") or "")
        if not token:
            raise DemoError(f"the cluster issued no token for ServiceAccount {namespace}/{name}")
        pki = self.cluster.pki
        path = kubeconfig.write(
            self.kubeconfig_dir / f"{name}.kubeconfig",
            self.cluster.url,
            token,
            name=name,
            ca_pem=pki.ca_pem() if pki is not None else None,
        )
        return Identity(name, namespace, path, len(rules))

    # --- pods ------------------------------------------------------------------------------------------------

    def create_pod(self, namespace: str, name: str, scheduler: str, app: str) -> None:
        self.create(
            f"/api/v1/namespaces/{namespace}/pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
                "spec": {
                    "schedulerName": scheduler,
                    "containers": [
                        {"name": "pause", "image": PAUSE_IMAGE, "resources": {"requests": {"cpu": "100m"}}}
                    ],
                },
            },
        )

    def delete_pod(self, namespace: str, name: str) -> None:
        try:
            self.call("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}")
        except kube_client.StatusError as exc:
            if exc.status != 404:
                raise

    def pods(self, namespace: str) -> list[dict[str, Any]]:
        return list(self.call("GET", f"/api/v1/namespaces/{namespace}/pods").get("items") or [])

    def node_of(self, namespace: str, name: str) -> str:
        """The node a pod is bound to ('' while Pending)."""
        pod = self.call("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
        return str((pod.get("spec") or {}).get("nodeName") or "")

    def serves(self, group: str, version: str, plural: str) -> bool:
        """Whether the API server serves a resource (a list of at most one object answers)."""
        path = f"/api/{version}/{plural}" if not group else f"/apis/{group}/{version}/{plural}"
        try:
            api_call(self.client, "GET", path, [("limit", 1)])
        except kube_client.StatusError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def node_names(self) -> list[str]:
        items = self.call("GET", "/api/v1/nodes").get("items") or []
        return sorted(str((n.get("metadata") or {}).get("name") or "") for n in items)

    # --- audit -----------------------------------------------------------------------------------------------

    def audit(self, user: str) -> list[dict[str, Any]]:
        """Every audit line of ``user`` so far (the server writes a line when a request ends)."""
        return [rec for rec in self.audit_records() if rec.get("user") == user]

    def bindings_by(self, user: str) -> int:
        """Successful ``create pods/binding`` requests of ``user``."""
        return sum(
            1
            for rec in self.audit(user)
            if rec.get("verb") == "create"
            and rec.get("subresource") == "binding"
            and 200 <= int(rec.get("code") or 0) < 300
        )

    def traffic(self, users: list[str], until: str) -> Traffic:
        return count_traffic(self.audit_records(), users, until)

    def audit_records(self) -> list[dict[str, Any]]:
        if not self.audit_path.is_file():
            return []
        lines = self.audit_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


def count_traffic(records: list[dict[str, Any]], users: list[str], until: str) -> Traffic:
    """Requests of ``users`` in audit ``records``: watches (each logged when it closes, so all of them count), and
    lists and other requests that ended by ``until`` (a :func:`utc_now` stamp taken at the end of the measured
    window)."""
    wanted = set(users)
    watches = lists = others = 0
    for rec in records:
        if rec.get("user") not in wanted:
            continue
        verb = rec.get("verb")
        if verb == "watch":
            watches += 1
        elif str(rec.get("time") or "") <= until:
            if verb == "list":
                lists += 1
            else:
                others += 1
    return Traffic(watches, lists, watches + lists + others)
