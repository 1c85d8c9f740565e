"""Cluster operations the live executors need, over the one client wrapper (:mod:`berth.kube.client`).

Why a module of its own: ``apply``, ``uninstall``, ``upgrade`` and ``status`` all speak to the API server the same
way -- server-side apply with field manager ``helm`` (Helm 4's), deletions with a propagation policy, waits that read the
same conditions Helm 4's status readers read -- and every failure must come back as a :class:`BerthError` that
names the object and the fix. Requests are plain REST calls through the official client's HTTP layer
(:class:`berth.kube.client.Session`: auth, TLS and kubeconfig handling are the client's); resource names come
from discovery, fetched per group-version on first use and refreshed once when a kind is missing (a CRD
established a moment ago).

Waits poll (every 20 ms for a second, then growing to 500 ms) rather than watch: a poll survives an API server
restart without any watch bookkeeping, and every wait reads both outcomes so a ``Failed`` Job or Pod ends the wait
at once; about once a second it also reads the events and states that say the wait cannot succeed
(:mod:`berth.install.diagnose`: a missing ServiceAccount, a refused CRD name, an image that cannot be pulled),
shows the Warning events as they arrive and fails with the cause once it outlasts its grace::

    Job          Complete=True -> ready        Failed=True -> failed (pod logs attached)
    Pod          phase Succeeded -> ready      phase Failed -> failed (logs attached)
    CRD          Established=True -> ready     NamesAccepted=False -> failed (with the condition's message)
    Deployment   observedGeneration current, updated == available == spec.replicas
    StatefulSet  observedGeneration current, ready == updated == spec.replicas
    DaemonSet    observedGeneration current, ready == updated == desiredNumberScheduled
"""

from __future__ import annotations

import builtins
import importlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from berth.install import diagnose
from berth.kube import client_errors, objects
from berth.kube.errors import BerthError

if TYPE_CHECKING:
    from berth.kube import client as kube_client

FIELD_MANAGER = "helm"
"""Helm 4's field manager (the name of its binary): berth and ``helm`` applying the same release are one manager,
so neither locks the other out of the fields it owns (``helm upgrade`` after ``berth install upgrade`` and the
other way round)."""
LEGACY_MANAGERS = frozenset({"berth", "helm"})
"""Managers whose fields berth takes over without ``--force-conflicts``: its own before it applied as ``helm``,
and ``helm`` under another operation (a client-side apply's ``Update``), as ``helm upgrade`` migrates them."""
_CONFLICT_WITH = re.compile(r'conflict with "([^"]+)"')
JSON = "application/json"
APPLY_PATCH = "application/apply-patch+yaml"
REQUEST_TIMEOUT = 30.0
FAST_POLL_SECONDS = 1.0
"""A wait polls every 20 ms this long, then less often (growing to 500 ms): most rollouts and hooks finish within
it, and Helm's watch sees them at once."""

Obj = dict[str, Any]


# ---- errors --------------------------------------------------------------------------------------------------


ApiFailure = client_errors.StatusError
"""The API server refused a request (the one client error tree's :class:`~berth.kube.client.StatusError`)."""
Forbidden = client_errors.Forbidden
Unreachable = client_errors.Unreachable


def api_failure(what: str, status: int, body: Any) -> client_errors.StatusError:
    """The client error for an answered failure; a body that is not a ``Status`` becomes the message."""
    d = body if isinstance(body, dict) else {}
    return client_errors.status_error(
        status, str(d.get("reason") or ""), str(d.get("message") or body or ""), d, what
    )


class ApplyConflict(client_errors.Conflict):
    """Server-side apply met fields another field manager owns (409 ``Conflict``)."""

    def __init__(self, what: str, status: int, body: Any) -> None:
        d = body if isinstance(body, dict) else {}
        super().__init__(status, str(d.get("reason") or ""), str(d.get("message") or body or ""), d, what)
        causes = (self.body.get("details") or {}).get("causes") or []
        self.fields = [(str(c.get("field") or ""), str(c.get("message") or "")) for c in causes]
        lines = [f"{what}: server-side apply conflicts with other field managers:"]
        lines += [f"  {f}: {m}" for f, m in self.fields] or [f"  {self.api_message}"]
        lines.append(
            "  re-run with --force-conflicts to take ownership of these fields "
            "(as `kubectl apply --server-side --force-conflicts` would)"
        )
        BerthError.__init__(self, "\n".join(lines))


class WaitFailed(BerthError):
    """The object reached a terminal failure (Job ``Failed``, Pod ``Failed``)."""

    def __init__(self, message: str, logs: str = "") -> None:
        self.logs = logs
        super().__init__(message + (f"\n--- pod logs ---\n{logs.rstrip()}" if logs.strip() else ""))


class WaitTimeout(BerthError):
    """The object did not become ready within its timeout."""

    def __init__(self, message: str, logs: str = "") -> None:
        self.logs = logs
        super().__init__(message + (f"\n--- pod logs ---\n{logs.rstrip()}" if logs.strip() else ""))


class UnknownKind(BerthError):
    """Discovery has no resource for an apiVersion/kind (its CRD is missing or not established)."""


# ---- discovery -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def qualified(self) -> str:
        """``deployments.apps`` / ``configmaps``: how RBAC and error messages name the resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def base_path(self) -> str:
        return f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"

    def path(self, namespace: str = "", name: str = "", sub: str = "") -> str:
        p = self.base_path()
        if self.namespaced and namespace:
            p += f"/namespaces/{quote(namespace, safe='')}"
        p += f"/{self.plural}"
        if name:
            p += f"/{quote(name, safe='')}"
        if sub:
            p += f"/{sub}"
        return p


@dataclass(frozen=True)
class Readiness:
    """One judgement of an object's state: ``ready``, ``failed`` or ``pending``, with the reason."""

    state: str
    detail: str = ""
    cause: diagnose.Cause | None = None
    """Why the wait cannot succeed, when the cluster reported it (state ``failed``)."""


def _conditions(obj: Obj) -> dict[str, Obj]:
    return {
        str(c.get("type")): c
        for c in (obj.get("status") or {}).get("conditions") or []
        if isinstance(c, dict)
    }


def judge_job(obj: Obj) -> Readiness:
    conds = _conditions(obj)
    failed = conds.get("Failed")
    if failed and failed.get("status") == "True":
        return Readiness(
            "failed", f"{failed.get('reason') or 'Failed'}: {failed.get('message') or ''}".strip()
        )
    complete = conds.get("Complete")
    if complete and complete.get("status") == "True":
        return Readiness("ready", "Complete")
    st = obj.get("status") or {}
    return Readiness(
        "pending",
        f"active={st.get('active', 0)} succeeded={st.get('succeeded', 0)} failed={st.get('failed', 0)}",
    )


def judge_pod(obj: Obj) -> Readiness:
    phase = str((obj.get("status") or {}).get("phase") or "Pending")
    if phase == "Succeeded":
        return Readiness("ready", phase)
    if phase == "Failed":
        return Readiness("failed", f"phase Failed: {(obj.get('status') or {}).get('message') or ''}".strip())
    return Readiness("pending", f"phase {phase}")


def judge_crd(obj: Obj) -> Readiness:
    conds = _conditions(obj)
    est = conds.get("Established")
    if est and est.get("status") == "True":
        return Readiness("ready", "Established")
    names = conds.get("NamesAccepted")
    if names and names.get("status") == "False":
        return Readiness(
            "pending", f"NamesAccepted=False ({names.get('reason')}): {names.get('message') or ''}"
        )
    return Readiness("pending", "not Established yet")


def judge_rollout(obj: Obj) -> Readiness:
    kind = str(obj.get("kind"))
    spec = obj.get("spec") or {}
    st = obj.get("status") or {}
    gen = int((obj.get("metadata") or {}).get("generation") or 0)
    if int(st.get("observedGeneration") or 0) < gen:
        return Readiness("pending", "waiting for the controller to observe the latest generation")
    if kind == "DaemonSet":
        want = int(st.get("desiredNumberScheduled") or 0)
        ready, updated = int(st.get("numberReady") or 0), int(st.get("updatedNumberScheduled") or 0)
        if ready >= want and updated >= want:
            return Readiness("ready", f"{ready}/{want} ready")
        return Readiness("pending", f"{ready}/{want} ready, {updated} updated")
    want = int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)
    updated = int(st.get("updatedReplicas") or 0)
    if kind == "StatefulSet":
        ready = int(st.get("readyReplicas") or 0)
        if ready >= want and updated >= want:
            return Readiness("ready", f"{ready}/{want} ready")
        return Readiness("pending", f"{ready}/{want} ready, {updated} updated")
    available = int(st.get("availableReplicas") or 0)
    progressing = _conditions(obj).get("Progressing") or {}
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return Readiness("failed", f"ProgressDeadlineExceeded: {progressing.get('message') or ''}")
    if available >= want and updated >= want and int(st.get("replicas") or 0) <= updated:
        return Readiness("ready", f"{available}/{want} available")
    return Readiness("pending", f"{available}/{want} available, {updated} updated")


JUDGES: dict[str, Callable[[Obj], Readiness]] = {
    "job-complete": judge_job,
    "pod-succeeded": judge_pod,
    "established": judge_crd,
    "rollout": judge_rollout,
}


# ---- the operations ------------------------------------------------------------------------------------------


@dataclass
class KubeOps:
    """The cluster, as the executors use it. Build with :func:`connect`."""

    connection: kube_client.Session
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    _gv: dict[str, dict[str, Resource]] = field(default_factory=dict)

    @property
    def context(self) -> str:
        return self.connection.context

    @property
    def server(self) -> str:
        return self.connection.server

    def close(self) -> None:
        self.connection.close()

    # -- raw requests --

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = JSON,
        timeout: float = REQUEST_TIMEOUT,
    ) -> tuple[int, Any]:
        """One request; returns (status, parsed JSON or text). Raises :class:`Unreachable` without an answer."""
        headers = {"Accept": JSON, "Content-Type": content_type}
        try:
            resp = self.connection.request(method, path, query or [], headers, body, timeout)
        except Exception as exc:  # urllib3 MaxRetryError / ProtocolError / timeouts
            if isinstance(exc, BerthError):
                raise
            raise Unreachable(
                f"no answer from the API server {self.server} (context {self.context}): "
                f"{type(exc).__name__}: {str(exc)[:300]}"
            ) from exc
        raw = resp.data or b""
        try:
            data: Any = json.loads(raw) if raw else None
        except ValueError:
            data = raw.decode("utf-8", "replace")
        return int(resp.status), data

    def check(self, what: str, status: int, body: Any) -> Any:
        if 200 <= status < 300:
            return body
        if status == 409 and isinstance(body, dict) and (body.get("details") or {}).get("causes"):
            raise ApplyConflict(what, status, body)
        raise api_failure(what, status, body)

    # -- discovery --

    def _load_gv(self, group: str, version: str) -> dict[str, Resource]:
        path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        status, body = self.request("GET", path)
        found: dict[str, Resource] = {}
        if status == 200 and isinstance(body, dict):
            for r in body.get("resources") or []:
                name = str(r.get("name") or "")
                if "/" in name:
                    continue
                found[str(r.get("kind"))] = Resource(
                    group, version, name, str(r.get("kind")), bool(r.get("namespaced"))
                )
        elif status not in (404, 503):
            self.check(f"discovery of {path}", status, body)
        self._gv[f"{group}/{version}"] = found
        return found

    def resource(self, api_version: str, kind: str) -> Resource:
        """The REST resource of ``kind`` in ``api_version`` (discovery, refreshed once on a miss)."""
        group, version = objects.split_api_version(api_version)
        key = f"{group}/{version}"
        known = self._gv.get(key)
        if known is None or kind not in known:
            known = self._load_gv(group, version)
        if kind not in known:
            raise UnknownKind(
                f"the cluster serves no {kind} in {api_version} (context {self.context}); "
                "install the CRD that defines it first"
            )
        return known[kind]

    def try_resource(self, api_version: str, kind: str) -> Resource | None:
        try:
            return self.resource(api_version, kind)
        except UnknownKind:
            return None

    # -- reads and writes --

    def get(self, res: Resource, name: str, namespace: str = "") -> Obj | None:
        status, body = self.request("GET", res.path(namespace, name))
        if status == 404:
            return None
        out: Obj = self.check(f"get {res.kind} {namespace}/{name}".replace(" /", " "), status, body)
        return out

    def list(self, res: Resource, namespace: str = "", label_selector: str = "") -> list[Obj]:
        query = [("labelSelector", label_selector)] if label_selector else []
        status, body = self.request("GET", res.path(namespace), query)
        if status == 404:
            return []
        data = self.check(f"list {res.qualified}", status, body)
        return list((data or {}).get("items") or [])

    def apply(self, obj: Obj, res: Resource, force: bool = False, dry_run: bool = False) -> tuple[bool, Obj]:
        """Server-side apply ``obj`` with field manager ``helm``; returns (created, live object). A conflict only
        with :data:`LEGACY_MANAGERS` is taken over (applied again with force), one with anyone else reported."""
        try:
            return self._apply(obj, res, force, dry_run)
        except ApplyConflict as exc:
            managers = {m for _, msg in exc.fields for m in _CONFLICT_WITH.findall(msg)}
            if force or not managers or not managers <= LEGACY_MANAGERS:
                raise
            return self._apply(obj, res, True, dry_run)

    def _apply(self, obj: Obj, res: Resource, force: bool, dry_run: bool) -> tuple[bool, Obj]:
        meta = objects.meta(obj)
        ns = str(meta.get("namespace") or "") if res.namespaced else ""
        if not res.namespaced:
            meta.pop("namespace", None)
        query = [("fieldManager", FIELD_MANAGER), ("force", "true" if force else "false")]
        if dry_run:
            query.append(("dryRun", "All"))
        what = f"apply {res.kind} {ns + '/' if ns else ''}{meta.get('name')}"
        status, body = self.request("PATCH", res.path(ns, str(meta.get("name"))), query, obj, APPLY_PATCH)
        live = self.check(what, status, body)
        return status == 201, live if isinstance(live, dict) else {}

    def create(self, obj: Obj, res: Resource) -> Obj:
        ns = objects.namespace(obj) if res.namespaced else ""
        status, body = self.request("POST", res.path(ns), [("fieldManager", FIELD_MANAGER)], obj)
        if status == 409:
            return {}
        out: Obj = self.check(f"create {res.kind} {objects.name(obj)}", status, body)
        return out

    def delete(
        self, res: Resource, name: str, namespace: str = "", propagation: str = "Background"
    ) -> Obj | None:
        """Delete; returns the object as the server answered (None when it was already gone)."""
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        status, data = self.request("DELETE", res.path(namespace, name), body=body)
        if status == 404:
            return None
        out: Obj = self.check(f"delete {res.kind} {namespace + '/' if namespace else ''}{name}", status, data)
        return out if isinstance(out, dict) else {}

    # -- waits --

    def list_objects(
        self, api_version: str, kind: str, namespace: str, label_selector: str = ""
    ) -> builtins.list[Obj]:
        """Every ``kind`` in ``namespace`` (matching ``label_selector``): what :class:`diagnose.Watch` reads."""
        return self.list(self.resource(api_version, kind), namespace, label_selector)

    def poll(
        self,
        fetch: Callable[[], Obj | None],
        judge: Callable[[Obj | None], Readiness],
        timeout: float,
        watch: diagnose.Watch | None = None,
    ) -> Readiness:
        """Call ``fetch`` until ``judge`` says ready or failed; a :class:`Readiness` ``timeout`` otherwise. With a
        ``watch``, also fail as soon as it finds a cause that cannot heal (:mod:`berth.install.diagnose`)."""
        start = self.clock()
        deadline = start + timeout
        interval = 0.02
        last = Readiness("pending", "not checked yet")
        while True:
            obj = fetch()
            last = judge(obj)
            if last.state == "pending" and watch is not None:
                cause = watch.look(obj)
                if cause is not None:
                    return Readiness("failed", cause.text(), cause)
            if last.state != "pending":
                return last
            if self.clock() >= deadline:
                return Readiness("timeout", last.detail)
            self.sleep(min(interval, max(0.0, deadline - self.clock())))
            if self.clock() >= start + FAST_POLL_SECONDS:
                interval = min(interval * 1.3, 0.5)

    def wait_gone(self, res: Resource, name: str, namespace: str, timeout: float) -> None:
        def judge(obj: Obj | None) -> Readiness:
            return Readiness("ready") if obj is None else Readiness("pending", "still present")

        r = self.poll(lambda: self.get(res, name, namespace), judge, timeout)
        if r.state != "ready":
            label = f"{res.kind} {namespace + '/' if namespace else ''}{name}"
            raise WaitTimeout(
                f"{label} was not deleted within {timeout:g}s (finalizers? check "
                f"`kubectl get {res.qualified} {name}{' -n ' + namespace if namespace else ''} -o yaml`)"
            )

    def final_state(self, res: Resource, name: str, namespace: str, since: str, uid: str) -> Obj | None:
        """The last state of the object ``uid`` if it was deleted after resourceVersion ``since``: the watch
        history replayed from there (its DELETED event carries the final object). None when the history has no
        such deletion (compacted: 410, or never deleted)."""
        query = [
            ("watch", "true"),
            ("fieldSelector", f"metadata.name={name}"),
            ("resourceVersion", since),
            ("timeoutSeconds", "1"),  # the replay comes at once; the server then ends the stream
        ]
        status, body = self.request("GET", res.path(namespace), query)
        if status != 200 or body is None:
            return None
        events: list[Any] = [body] if isinstance(body, dict) else []
        if isinstance(body, str):
            for line in body.splitlines():
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue
        for ev in events:
            obj = ev.get("object") if isinstance(ev, dict) else None
            if (
                ev.get("type") == "DELETED"
                and isinstance(obj, dict)
                and (not uid or (obj.get("metadata") or {}).get("uid") == uid)
            ):
                return obj
        return None

    def wait_ready(
        self,
        res: Resource,
        name: str,
        namespace: str,
        wait: str,
        timeout: float,
        since: Obj | None = None,
        on_event: Callable[[str], None] | None = None,
    ) -> Readiness:
        """Wait per the plan's wait rule; raises :class:`WaitFailed` / :class:`WaitTimeout` naming the object.

        ``since`` is the object as berth applied it. A hook Job with ``ttlSecondsAfterFinished: 0`` (the
        ingress-nginx certgen pattern) is deleted the moment it completes, so a poll can find it gone: then its
        final state is read from the watch history after ``since`` (Helm 4 watches, so it sees that state too),
        and an object deleted before it finished fails at once instead of running into the timeout."""
        judge_obj = JUDGES[wait]
        label = f"{res.kind} {namespace + '/' if namespace else ''}{name}"
        meta = (since or {}).get("metadata") or {}
        since_rv, since_uid = str(meta.get("resourceVersion") or ""), str(meta.get("uid") or "")

        def judge(obj: Obj | None) -> Readiness:
            if obj is None:
                final = self.final_state(res, name, namespace, since_rv, since_uid) if since_rv else None
                if final is None:
                    return Readiness("pending", "not found")
                r = judge_obj(final)
                if r.state == "pending":
                    return Readiness("failed", f"deleted before it finished ({r.detail})")
                return Readiness(r.state, f"{r.detail}; deleted right after (ttlSecondsAfterFinished?)")
            return judge_obj(obj)

        watch = diagnose.Watch(self, res.kind, namespace, self.clock, on_event or (lambda line: None))
        r = self.poll(lambda: self.get(res, name, namespace), judge, timeout, watch)
        if r.state == "ready":
            return r
        logs = self.logs_for(res.kind, name, namespace) if res.kind in ("Job", "Pod") else ""
        if r.cause is not None:
            raise WaitFailed(f"{label} cannot succeed: {r.cause.text(label)}{watch.report(r.cause)}", logs)
        if r.state == "failed":
            raise WaitFailed(f"{label} failed: {r.detail}{watch.report()}", logs)
        watch.look(self.get(res, name, namespace), force=True)  # what the cluster says at the end
        raise WaitTimeout(f"{label} was not ready within {timeout:g}s: {r.detail}{watch.report()}", logs)

    def logs_for(self, kind: str, name: str, namespace: str, tail: int = 200) -> str:
        """Logs of a Pod, or of the pods of a Job (``job-name`` label), each line prefixed with the pod name."""
        pods_res = self.resource("v1", "Pod")
        try:
            if kind == "Pod":
                names = [name]
            else:
                names = [objects.name(p) for p in self.list(pods_res, namespace, f"job-name={name}")]
            chunks = []
            for pod in names:
                status, body = self.request(
                    "GET", pods_res.path(namespace, pod, "log"), [("tailLines", str(tail))]
                )
                text = body if isinstance(body, str) else json.dumps(body) if body is not None else ""
                if status != 200:
                    text = f"(no logs: {status})"
                chunks += [f"[pod/{pod}] {line}" for line in text.splitlines()] or [f"[pod/{pod}] (empty)"]
            return "\n".join(chunks)
        except BerthError as exc:
            return f"(could not read logs: {exc})"

    # -- permissions --

    def can_i(self, verb: str, res: Resource, namespace: str = "", subresource: str = "") -> bool | None:
        """SelfSubjectAccessReview; None when the cluster does not answer reviews."""
        attrs = {"verb": verb, "group": res.group, "resource": res.plural}
        if namespace and res.namespaced:
            attrs["namespace"] = namespace
        if subresource:
            attrs["subresource"] = subresource
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs},
        }
        status, body = self.request(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review
        )
        if status not in (200, 201) or not isinstance(body, dict):
            return None
        return bool((body.get("status") or {}).get("allowed"))


def connect(kubeconfig: str | None = None, context: str | None = None) -> KubeOps:
    """:class:`KubeOps` for a kubeconfig and context, over :func:`berth.kube.client.session`."""
    from berth.kube import client  # the official client's HTTP layer: only when connecting

    return KubeOps(client.session(kubeconfig, context))


def preload() -> None:
    """Import the official client in the background (``upgrade`` renders first: Helm's run hides the import)."""
    import threading

    threading.Thread(target=importlib.import_module, args=("berth.kube.client",), daemon=True).start()
