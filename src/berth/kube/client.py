"""The one client wrapper: an official ``kubernetes`` ApiClient from a kubeconfig path and optional context.

Every part that talks to a cluster (install's apply executor, the scheduler's informers and binder, the tests of
the embedded cluster) builds its client here, so the embedded cluster and a real one take the same path and the
same kubeconfig rules (:func:`berth.kube.kubeconfig.locate`: ``--kubeconfig``, ``$KUBECONFIG`` merged, then
``~/.kube/config``, as kubectl) apply everywhere.

It also holds the one client error tree: what a request to an API server can end in (:class:`Unreachable`, or a
:class:`StatusError` per answered failure: :class:`Unauthorized`, :class:`Forbidden`, :class:`NotFound`,
:class:`Conflict`, :class:`Invalid`, :class:`ServerError`). The parts' clients raise these (install's kubeops, the
live scheduler's api module, and the demo through it), so a caller tells "no answer" from "answered no" the same
way everywhere. Not on it: the embedded cluster's in-process controllers (they call the Api directly, no request is
made, and get the server's own :class:`berth.cluster.errors.ApiError`), and ``install/collector.py``'s live lookups,
which read the official client's ``ApiException`` status as they are.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.config.config_exception import ConfigException

from berth.kube import kubeconfig
from berth.kube.errors import BerthError, InputError

_IN_CLUSTER = kubeconfig.Location((), kubeconfig.IN_CLUSTER)


@dataclass(frozen=True)
class Connection:
    """An ApiClient plus where it points and where that came from (which kubeconfig files, or in-cluster)."""

    api_client: Any  # kubernetes.client.ApiClient
    context: str
    server: str
    namespace: str
    location: kubeconfig.Location = _IN_CLUSTER

    def target_line(self) -> str:
        """What every command that changes a cluster prints before its first write: which cluster, which context,
        and which kubeconfig chose them (so a surprising ``~/.kube/config`` is seen before it is changed)."""
        return f"Kube context: {self.context} ({self.server}), from {self.location.describe()}"


SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def connect(
    path: str | os.PathLike[str] | kubeconfig.Location | None = None, context: str | None = None
) -> Connection:
    """Build an ApiClient for ``context`` (default: current-context) of the kubeconfig :func:`kubeconfig.locate`
    finds (``path`` is ``--kubeconfig``), or of the pod's ServiceAccount when there is none. Raises
    :class:`InputError` naming the file on problems."""
    location = kubeconfig.as_location(path)
    configuration = k8s_client.Configuration()
    if location.in_cluster:
        if context:
            raise InputError(
                "--context needs a kubeconfig (none found: pass --kubeconfig or set KUBECONFIG)", "--context"
            )
        try:
            k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except ConfigException as exc:
            raise InputError(
                "no kubeconfig found (--kubeconfig, $KUBECONFIG, ~/.kube/config, ./.berth/cluster/kubeconfig) "
                f"and not running in a cluster ({exc}); pass --kubeconfig, set KUBECONFIG, or start the "
                "embedded cluster with `berth cluster up`",
                "--kubeconfig",
            ) from exc
        throttle_token_refresh(configuration)
        namespace = "default"
        with contextlib.suppress(OSError):
            namespace = SERVICE_ACCOUNT_NAMESPACE.read_text(encoding="utf-8").strip() or namespace
        return Connection(
            k8s_client.ApiClient(configuration), "in-cluster", configuration.host, namespace, location
        )
    data = kubeconfig.load(location)
    resolved = kubeconfig.resolve_in(data, context, location.describe())
    try:
        k8s_config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            data, context=resolved.name, client_configuration=configuration, persist_config=False
        )
    except (ConfigException, OSError, ValueError) as exc:
        raise InputError(f"cannot use context {resolved.name!r}: {exc}", location.describe()) from exc
    throttle_token_refresh(configuration)
    return Connection(
        k8s_client.ApiClient(configuration), resolved.name, resolved.server, resolved.namespace, location
    )


def api_client(
    path: str | os.PathLike[str] | kubeconfig.Location | None = None, context: str | None = None
) -> Any:
    """Shortcut for ``connect(path, context).api_client``."""
    return connect(path, context).api_client


def current_context(
    path: str | os.PathLike[str] | kubeconfig.Location | None = None, context: str | None = None
) -> str:
    """The context name a client built with the same arguments would use."""
    return kubeconfig.current_context(path, context)


TOKEN_REFRESH_SECONDS = 10.0


def throttle_token_refresh(configuration: Any, interval: float = TOKEN_REFRESH_SECONDS) -> None:
    """Run ``configuration``'s token refresh hook at most once per ``interval`` seconds.

    The kubeconfig loader installs a hook that runs before *every* request and re-assigns the host, which re-reads
    the whole proxy environment: about a fifth of a small request's client CPU. Tokens live for minutes to hours,
    so a throttled hook still re-reads an expired one in time. Idempotent.
    """
    hook = getattr(configuration, "refresh_api_key_hook", None)
    if hook is not None and not isinstance(hook, _Throttled):
        configuration.refresh_api_key_hook = _Throttled(hook, interval)


class _Throttled:
    """A refresh hook that calls ``fn(cfg)`` at most once per ``interval`` seconds (the first call always runs),
    and stays installed: the kubeconfig loader's hook re-installs itself on ``cfg`` each time it runs."""

    def __init__(self, fn: Callable[[Any], Any], interval: float) -> None:
        self._fn = fn
        self._interval = interval
        self._next = 0.0
        self._lock = threading.Lock()

    def __call__(self, arg: Any) -> None:
        now = time.monotonic()
        with self._lock:
            if now < self._next:
                return
            self._next = now + self._interval
        try:
            self._fn(arg)
        finally:
            arg.refresh_api_key_hook = self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Throttled:
        # a copied Configuration gets its own throttle (a lock cannot be deep-copied)
        return _Throttled(self._fn, self._interval)


# ---- the client error tree ------------------------------------------------------------------------------------


class ClientError(BerthError):
    """A request to an API server failed (exit code 1: the cluster said no, or did not answer)."""


class Unreachable(ClientError):
    """No answer from the API server: connection refused or reset, timed out, a truncated or malformed answer.
    ``url``: the server the request was sent to ("" when not known)."""

    def __init__(self, message: str = "", url: str = "") -> None:
        super().__init__(message)
        self.url = url


class StatusError(ClientError):
    """The API server answered with an error ``Status``; ``status`` is its HTTP code, ``reason`` and ``message``
    the Status fields, ``body`` the whole Status (empty when the answer was not JSON), ``what`` the request as the
    caller names it (put in front of the message)."""

    code: ClassVar[int | None] = None
    """The HTTP status a subclass stands for (None: any other)."""

    def __init__(
        self,
        status: int,
        reason: str = "",
        message: str = "",
        body: Mapping[str, Any] | None = None,
        what: str = "",
    ) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.body: dict[str, Any] = dict(body or {})
        self.what = what
        head = f"{what}: " if what else ""
        super().__init__(f"{head}{status} {reason}: {message}".replace(":  ", ": "))

    @property
    def api_message(self) -> str:
        """The Status ``message`` (install's name for it)."""
        return self.message


class Unauthorized(StatusError):
    """401: the credentials of the kube context were not accepted."""

    code = 401


class Forbidden(StatusError):
    """403: the identity of the kube context may not do this."""

    code = 403


class NotFound(StatusError):
    """404: no such object (or resource)."""

    code = 404


class Conflict(StatusError):
    """409: the object exists already, changed since it was read, or (server-side apply) has fields another
    manager owns; ``reason`` tells which (``AlreadyExists``, ``Conflict``)."""

    code = 409


class Invalid(StatusError):
    """422: the object failed validation; ``body.details.causes`` name the fields."""

    code = 422


class ServerError(StatusError):
    """5xx: the API server failed (or is going away)."""


_STATUS_CLASSES: dict[int, type[StatusError]] = {
    cls.code: cls for cls in (Unauthorized, Forbidden, NotFound, Conflict, Invalid) if cls.code is not None
}


def status_error(
    status: int, reason: str = "", message: str = "", body: Mapping[str, Any] | None = None, what: str = ""
) -> StatusError:
    """The :class:`StatusError` subclass for an answered failure (a plain one for codes without their own)."""
    cls = _STATUS_CLASSES.get(status) or (ServerError if status >= 500 else StatusError)
    return cls(status, reason, message, body, what)
