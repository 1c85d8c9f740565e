"""The embedded cluster as one object: store, API, HTTPS server, audit log and controllers, started and stopped together.

Re-exported as ``berth.cluster.Cluster``: starts the server in-process (tests, ``berth cluster up``, the demo) on
127.0.0.1, backed by a data directory (SQLite store, audit log, kubeconfig) or by memory, and starts the simulated
controllers. Everything else in this package is internal.

Data directory layout::

    DIR/store.db      objects + event log (SQLite, WAL)      DIR/audit.jsonl   one line per request
    DIR/kubeconfig    admin credentials for kubectl/clients  DIR/server.json   url and pid while running
    DIR/lock          held (flock) by the running server
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from berth.cluster import auth, datadir, tls
from berth.cluster.api import Api
from berth.cluster.audit import AuditLog
from berth.cluster.server import ApiServer
from berth.cluster.store import Store, StoreError, open_store
from berth.kube import kubeconfig
from berth.kube.errors import BerthError

__all__ = ["Cluster", "ClusterError", "ClusterOptions"]

log = logging.getLogger(__name__)


class ClusterError(BerthError):
    """The cluster cannot start (data directory locked or corrupted, port taken)."""


@dataclass
class ClusterOptions:
    """How to run the embedded cluster. ``controllers`` is passed to ``controllers.start`` (None = defaults)."""

    data_dir: str | os.PathLike[str] | None = None
    port: int = 0
    nodes: int = 0
    node_cpu: str = "8"
    node_memory: str = "32Gi"
    node_pods: str = "110"
    node_labels: dict[str, str] = field(default_factory=dict)
    run_controllers: bool = True
    controller_overrides: dict[str, Any] = field(default_factory=dict)
    retain: int = 10_000
    audit: bool = True
    services: list[Callable[[Api], Any]] = field(default_factory=list)
    """Extra in-process components started after the controllers, each ``factory(api) -> obj with .stop()``."""
    default_scheduler: bool = False
    """Run berth's own scheduler (default profile) as ``default-scheduler``, a client of this cluster's API.
    ``berth cluster up`` turns it on with the controllers; library users (tests) opt in."""


class Cluster:
    """An embedded cluster: ``with Cluster(ClusterOptions(data_dir=d)) as c: ... c.kubeconfig ...``."""

    def __init__(self, options: ClusterOptions | None = None) -> None:
        self.options = options or ClusterOptions()
        self.data_dir = Path(self.options.data_dir) if self.options.data_dir is not None else None
        self.store: Store | None = None
        self.api: Api | None = None
        self.server: ApiServer | None = None
        self.controllers: Any = None
        self._thread: threading.Thread | None = None
        self._lock_fh: IO[str] | None = None
        self._audit: AuditLog | None = None
        self.pki: tls.Pki | None = None
        self._services: list[Any] = []
        self._services_lock = threading.Lock()
        self._stopping = False
        self._scheduler_starter: threading.Thread | None = None

    # ---- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> Cluster:
        before: set[str] | None = None
        if self.data_dir is not None and self.data_dir.exists():
            before = {entry.name for entry in self.data_dir.iterdir()}
        try:
            self._start()
        except BaseException:
            self.stop()
            if self.data_dir is not None:
                datadir.remove_new(self.data_dir, before)  # a failed start leaves no half-made data directory
            raise
        return self

    def _start(self) -> None:
        opts = self.options
        self._stopping = False
        if self.data_dir is not None:
            datadir.create_private(self.data_dir)
            datadir.tighten(self.data_dir)
            fd = datadir.open_private(self.data_dir / "lock", os.O_RDWR | os.O_CREAT)
            self._lock_fh = os.fdopen(fd, "a+", encoding="utf-8")  # held while running
            try:
                fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                self._lock_fh.close()
                self._lock_fh = None
                raise ClusterError(
                    f"{self.data_dir} is locked by another running cluster; stop it with "
                    f"`berth cluster down --data {self.data_dir}` or use another --data directory"
                ) from exc
            try:
                datadir.check_store(self.data_dir)
            except datadir.DataDirError as exc:
                raise ClusterError(str(exc)) from exc
            os.close(datadir.open_private(self.data_dir / datadir.STORE, os.O_RDONLY | os.O_CREAT))
            try:
                self.store = open_store(self.data_dir, retain=opts.retain)
            except StoreError as exc:
                raise ClusterError(str(exc)) from exc
            self._audit = AuditLog(self.data_dir / "audit.jsonl" if opts.audit else None)
        else:
            self.store = Store(retain=opts.retain)
            self._audit = AuditLog(None)
        audit = self._audit
        self.api = Api(self.store, audit=audit.record if opts.audit and self.data_dir is not None else None)
        self.pki = tls.load_or_generate(self.data_dir / "pki" if self.data_dir is not None else None)
        try:
            self.server = ApiServer(self.api, opts.port, audit, self.pki.server_context())
        except OSError as exc:
            raise ClusterError(f"cannot listen on 127.0.0.1:{opts.port}: {exc.strerror or exc}") from exc
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="berth-apiserver",
            daemon=True,
        )
        self._thread.start()
        if self.data_dir is not None:
            kubeconfig.write(self.data_dir / "kubeconfig", self.url, self.token, ca_pem=self.pki.ca_pem())
            info = {"url": self.url, "port": self.port, "pid": os.getpid()}
            _write_private(self.data_dir / "server.json", json.dumps(info) + "\n")
        if opts.run_controllers:
            self.controllers = _start_controllers(
                self.api, opts, self.pki.ca_pem().decode() if self.pki else ""
            )
        for factory in opts.services:
            self._services.append(factory(self.api))
        self.server.ready.set()
        if opts.default_scheduler:
            # After ready, in the background: the scheduler is a client of this API (importing the official client
            # and the scheduler costs seconds of CPU), and its informers list on start, so pods created between
            # ready and the scheduler's first list are still scheduled.
            self._scheduler_starter = threading.Thread(
                target=self._start_default_scheduler, name="berth-default-scheduler-start", daemon=True
            )
            self._scheduler_starter.start()

    def _start_default_scheduler(self) -> None:
        from berth.cluster import default_scheduler

        if self.data_dir is not None:
            scheduler_kubeconfig = self.data_dir / "kubeconfig"
        else:
            scheduler_kubeconfig = self.write_kubeconfig(
                Path(tempfile.mkdtemp(prefix="berth-cluster-")) / "kubeconfig"
            )
        try:
            handle = default_scheduler.start(scheduler_kubeconfig)
        except Exception:
            log.exception("the built-in default-scheduler did not start; pods stay Pending")
            return
        with self._services_lock:
            if self._stopping:
                stop_late = True
            else:
                self._services.append(handle)
                stop_late = False
        if stop_late:
            with contextlib.suppress(Exception):
                handle.stop()

    def stop(self) -> None:
        with self._services_lock:
            self._stopping = True
        starter, self._scheduler_starter = self._scheduler_starter, None
        if starter is not None and starter is not threading.current_thread():
            # Starting takes seconds of imports; a stop meanwhile waits a little, else the starter stops the
            # scheduler itself once it is up (it sees _stopping).
            starter.join(5.0)
        while self._services:
            service = self._services.pop()
            with contextlib.suppress(Exception):
                service.stop()
        if self.controllers is not None:
            with contextlib.suppress(Exception):
                self.controllers.stop()
            self.controllers = None
        if self.server is not None:
            self.server.stopping.set()
            if self._thread is not None:
                self.server.shutdown()
            self.server.close_connections()
            self.server.server_close()
            self.server = None
        if self.store is not None:
            self.store.close()
            self.store = None
        if self._audit is not None:
            self._audit.close()
            self._audit = None
        if self.data_dir is not None:
            with contextlib.suppress(OSError):
                (self.data_dir / "server.json").unlink()
        if self._lock_fh is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- facts ---------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self.server is not None, "cluster not started"
        return self.server.port

    @property
    def url(self) -> str:
        assert self.server is not None, "cluster not started"
        return self.server.url

    @property
    def token(self) -> str:
        assert self.api is not None, "cluster not started"
        return auth.admin_token(self.api)

    @property
    def kubeconfig(self) -> Path:
        """Path of the kubeconfig (written into a data directory; in-memory clusters need :meth:`write_kubeconfig`)."""
        if self.data_dir is None:
            raise ClusterError("an in-memory cluster has no data directory; use write_kubeconfig(path)")
        return self.data_dir / "kubeconfig"

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> Path:
        assert self.pki is not None, "cluster not started"
        return kubeconfig.write(path, self.url, self.token, ca_pem=self.pki.ca_pem())


def _write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``, mode 0600."""
    fd = datadir.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _start_controllers(api: Api, opts: ClusterOptions, root_ca: str = "") -> Any:
    """Start the simulated controllers if that package is present (it is optional while it is being built)."""
    try:
        mod = importlib.import_module("berth.cluster.controllers")
    except ImportError:
        log.warning("berth.cluster.controllers is not available; running without simulated controllers")
        return None
    # Pods that run to completion take a real container's minimum run time (see CONTAINER_RUN_SECONDS).
    overrides = {"job_duration": mod.CONTAINER_RUN_SECONDS, **opts.controller_overrides}
    options = mod.ControllerOptions(
        nodes=opts.nodes,
        node_cpu=opts.node_cpu,
        node_memory=opts.node_memory,
        node_pods=opts.node_pods,
        node_labels=dict(opts.node_labels),
        root_ca=root_ca,
        **overrides,
    )
    return mod.start(api, options)
