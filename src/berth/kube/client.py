"""The one client wrapper: an official ``kubernetes`` ApiClient (:func:`connect`), or a :class:`Session` over the
official client's HTTP layer (:func:`session`, cheaper to import), from a kubeconfig path and optional context.

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

import atexit
import base64
import contextlib
import importlib.util
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from berth.kube import kubeconfig
from berth.kube.client_errors import (  # the one client error tree, re-exported here with the client
    ClientError as ClientError,
)
from berth.kube.client_errors import (
    Conflict as Conflict,
)
from berth.kube.client_errors import (
    Forbidden as Forbidden,
)
from berth.kube.client_errors import (
    Invalid as Invalid,
)
from berth.kube.client_errors import (
    NotFound as NotFound,
)
from berth.kube.client_errors import (
    ServerError as ServerError,
)
from berth.kube.client_errors import (
    StatusError as StatusError,
)
from berth.kube.client_errors import (
    Unauthorized as Unauthorized,
)
from berth.kube.client_errors import (
    Unreachable as Unreachable,
)
from berth.kube.client_errors import (
    status_error as status_error,
)
from berth.kube.errors import InputError


def _defer_package_init() -> None:
    """Register the ``kubernetes`` package without running its ``__init__`` yet (when nothing imported it).

    Importing any ``kubernetes.x`` first runs the package's ``__init__``, which imports every part of the client
    (the kubeconfig loader with OAuth and pydantic, watch, stream, informers): ~130 ms of CPU in a berth process.
    The install commands need the HTTP layer only (:class:`Session`), ~35 ms. The package is registered as it is,
    with its ``__init__`` run the first time anyone reads a name it would have set (``kubernetes.config``,
    ``kubernetes.__version__``...): to every other user it is the same package, imported on first use.
    """
    if "kubernetes" in sys.modules:
        return
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or spec.loader is None:
        return  # not installed: the imports below say so
    package = importlib.util.module_from_spec(spec)
    lock = threading.RLock()

    def run_init(name: str) -> Any:
        with lock:
            if "__getattr__" in package.__dict__:
                del package.__dict__["__getattr__"]
                spec.loader.exec_module(package)  # type: ignore[union-attr]
        try:
            return package.__dict__[name]
        except KeyError:
            raise AttributeError(f"module 'kubernetes' has no attribute {name!r}") from None

    package.__getattr__ = run_init  # type: ignore[method-assign]
    sys.modules["kubernetes"] = package


_defer_package_init()

from kubernetes.client import __version__ as _client_version  # noqa: E402
from kubernetes.client import configuration as k8s_configuration  # noqa: E402
from kubernetes.client import rest as k8s_rest  # noqa: E402

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
        return _target_line(self.context, self.server, self.location)


def _target_line(context: str, server: str, location: kubeconfig.Location) -> str:
    return f"Kube context: {context} ({server}), from {location.describe()}"


USER_AGENT = f"OpenAPI-Generator/{_client_version}/python"
"""The official ApiClient's User-Agent, which a :class:`Session` sends too."""


@dataclass(frozen=True)
class Session:
    """Plain REST requests through the official client's HTTP layer (``kubernetes.client.rest``: urllib3 with
    the Configuration's TLS, client certificates, proxy and keep-alive) without its ``ApiClient``, whose model and
    pydantic imports cost ~60 ms of a short command's start-up. The requests are the ones ``ApiClient`` sends
    for a JSON body: same URL encoding, headers and auth (:meth:`request`). The install executors use it."""

    configuration: Any  # kubernetes.client.Configuration
    rest: Any  # kubernetes.client.rest.RESTClientObject
    context: str
    server: str
    namespace: str
    location: kubeconfig.Location = _IN_CLUSTER

    def target_line(self) -> str:
        """As :meth:`Connection.target_line`."""
        return _target_line(self.context, self.server, self.location)

    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: Any,
        timeout: float,
    ) -> Any:
        """Send one request; returns the official client's response (``status``, ``data`` read). As
        ``ApiClient.param_serialize`` + ``call_api`` with ``auth_settings=["BearerToken"]``: the refresh hook runs
        (the loader's token refresh) and the ``authorization`` header is set when there is a token."""
        config = self.configuration
        sent = {**headers, "User-Agent": USER_AGENT}
        auth = config.auth_settings().get("BearerToken")
        if auth:
            sent[auth["key"]] = auth["value"]
        url = config.host + path
        if query:
            url += "?" + "&".join(f"{k}={quote(str(v))}" for k, v in query)
        resp = self.rest.request(method, url, headers=sent, body=body, _request_timeout=timeout)
        resp.read()
        return resp

    def close(self) -> None:
        self.rest.close()


SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def connect(
    path: str | os.PathLike[str] | kubeconfig.Location | None = None, context: str | None = None
) -> Connection:
    """Build an ApiClient for ``context`` (default: current-context) of the kubeconfig :func:`kubeconfig.locate`
    finds (``path`` is ``--kubeconfig``), or of the pod's ServiceAccount when there is none. Raises
    :class:`InputError` naming the file on problems."""
    from kubernetes import client as k8s_client  # the whole client: ApiClient and its models

    location = kubeconfig.as_location(path)
    configuration, name, server, namespace = _configure(location, context, plain=False)
    return Connection(k8s_client.ApiClient(configuration), name, server, namespace, location)


def session(
    path: str | os.PathLike[str] | kubeconfig.Location | None = None, context: str | None = None
) -> Session:
    """A :class:`Session` for what :func:`connect` would connect to, configured the same way (the official
    kubeconfig loader's; for a user with a token, basic auth or client certificates without importing it:
    :func:`_fill_plain`)."""
    location = kubeconfig.as_location(path)
    configuration, name, server, namespace = _configure(location, context, plain=True)
    return Session(configuration, k8s_rest.RESTClientObject(configuration), name, server, namespace, location)


def _configure(location: kubeconfig.Location, context: str | None, plain: bool) -> tuple[Any, str, str, str]:
    """The Configuration for ``context`` of ``location``, and the context's name, server and namespace."""
    configuration = k8s_configuration.Configuration()
    if location.in_cluster:
        from kubernetes.config.config_exception import ConfigException
        from kubernetes.config.incluster_config import load_incluster_config

        if context:
            raise InputError(
                "--context needs a kubeconfig (none found: pass --kubeconfig or set KUBECONFIG)", "--context"
            )
        try:
            load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
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
        return configuration, "in-cluster", str(configuration.host), namespace
    data = kubeconfig.load(location)
    resolved = kubeconfig.resolve_in(data, context, location.describe())
    try:
        if not (plain and _fill_plain(configuration, data, resolved)):
            from kubernetes.config.config_exception import ConfigException
            from kubernetes.config.kube_config import load_kube_config_from_dict

            try:
                load_kube_config_from_dict(  # type: ignore[no-untyped-call]
                    data, context=resolved.name, client_configuration=configuration, persist_config=False
                )
            except ConfigException as exc:
                raise ValueError(str(exc)) from exc
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot use context {resolved.name!r}: {exc}", location.describe()) from exc
    throttle_token_refresh(configuration)
    return configuration, resolved.name, resolved.server, resolved.namespace


def _named(items: Any, name: str) -> dict[str, Any] | None:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            return item
    return None


def _fill_plain(configuration: Any, data: dict[str, Any], resolved: kubeconfig.Context) -> bool:
    """Fill ``configuration`` exactly as the official loader (``KubeConfigLoader.load_and_set``) does when the
    context's user authenticates with a token, a token file, basic auth, client certificates or not at all; False
    (nothing done) for anything else -- an ``exec`` plugin, an ``auth-provider``, an entry the loader would
    refuse -- which the loader itself handles. Its per-request refresh hook is left out: without an ``exec``
    plugin or an auth provider it sets the same values again."""
    cluster_item = _named(data.get("clusters"), resolved.cluster)
    cluster = cluster_item.get("cluster") if cluster_item else None
    user_item = _named(data.get("users"), resolved.user) if resolved.user else None
    user = user_item.get("user") if user_item else None
    if not isinstance(cluster, dict) or not (user is None or isinstance(user, dict)):
        return False
    if user and ("auth-provider" in user or "exec" in user):
        return False
    if not all(
        isinstance(item, dict) and "name" in item for s in ("clusters", "users") for item in data.get(s) or []
    ):
        return False  # the loader's own message for a malformed list
    token = ""
    if user:
        if "token" in user:
            token = user["token"] or ""
        elif "tokenFile" in user:
            with open(os.path.normpath(user["tokenFile"])) as f:
                token = f.read()
        if token:
            configuration.api_key["BearerToken"] = f"Bearer {token}"
        elif "username" in user and "password" in user:
            import urllib3

            basic = urllib3.util.make_headers(basic_auth=f"{user['username']}:{user['password']}")
            configuration.api_key["BearerToken"] = basic.get("authorization")
    if "server" in cluster:
        configuration.host = str(cluster["server"]).rstrip("/")
        if configuration.host.startswith("https"):
            configuration.ssl_ca_cert = _file_or_data(cluster, "certificate-authority")
            configuration.cert_file = _file_or_data(user, "client-certificate")
            configuration.key_file = _file_or_data(user, "client-key")
    if "insecure-skip-tls-verify" in cluster:
        configuration.verify_ssl = not cluster["insecure-skip-tls-verify"]
    if "tls-server-name" in cluster:
        configuration.tls_server_name = cluster["tls-server-name"]
    if "proxy-url" in cluster:
        configuration.proxy = cluster["proxy-url"]
    return True


_temp_files: dict[bytes, str] = {}


def _file_or_data(entry: dict[str, Any] | None, key: str) -> str | None:
    """The file behind ``key``/``key-data`` of a kubeconfig entry, as the loader's ``FileOrData.as_file``: the
    ``-data`` (base64) written to a private temporary file removed at exit, or the named file, which must exist."""
    if not entry:
        return None
    path: str | None = None
    if f"{key}-data" in entry:
        content = base64.standard_b64decode(entry[f"{key}-data"]) if entry[f"{key}-data"] else b""
        if content:
            path = _temp_files.get(content)
            if path is None or not os.path.isfile(path):
                with tempfile.NamedTemporaryFile(delete=False) as f:
                    f.write(content)
                if not _temp_files:
                    atexit.register(_remove_temp_files)
                path = _temp_files[content] = f.name
    elif key in entry:
        path = os.path.normpath(str(entry[key]))
    if path and not os.path.isfile(path):
        raise ValueError(f"File does not exist: {path}")
    return path


def _remove_temp_files() -> None:
    for path in _temp_files.values():
        with contextlib.suppress(OSError):
            os.remove(path)
    _temp_files.clear()


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
