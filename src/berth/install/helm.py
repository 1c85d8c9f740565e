"""Run the real Helm 4 binary to render a chart: berth never re-implements Go templates.

Every render pins ``--kube-version`` (Helm's compiled-in default would make output depend on the Helm build),
passes ``--include-crds`` (without it the ``crds/`` folder is silently absent). A chart that calls a random or
clock function (``randAlphaNum``, ``now``, ``uuidv4``...: :data:`_RANDOM`, in its files or the values) is run
twice: when the two outputs differ, the fields that differ are named (:mod:`berth.install.randomness`); objects
that differ in identity are refused. Helm's template errors are turned into one :class:`InputError` that names the
template file and line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import locale
import os
import re
import shutil
import subprocess
import sys
import tarfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from berth.install import background, layout
from berth.kube import tools, yamlio
from berth.kube.errors import InputError, ToolError

if TYPE_CHECKING:
    from berth.install import randomness

KUBE_VERSION = "1.35.0"
"""The Kubernetes version every render assumes (``.Capabilities.KubeVersion``); recorded in facts and receipts."""

HELM_TIMEOUT_SECONDS = 120

_LOCATION = re.compile(
    r"(?P<file>[\w./@+-]+\.(?:ya?ml|tpl|txt|json|gotmpl))(?::| line )(?P<line>\d+)(?::(?P<col>\d+))?"
)
_YAML_ON = re.compile(r"YAML parse error on (?P<file>\S+):")
_UNKNOWN_HOOK = re.compile(r'skipping unknown hooks?"?\s+hookTypes=(?P<types>\S+)')


SERVED_KINDS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    # (group/version, first minor serving it by default, kinds): stock Kubernetes' GA built-in resources.
    ("v1", 0, ("Binding", "ComponentStatus", "ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace", "Node",
               "PersistentVolume", "PersistentVolumeClaim", "Pod", "PodTemplate", "ReplicationController",
               "ResourceQuota", "Secret", "Service", "ServiceAccount")),
    ("admissionregistration.k8s.io/v1", 16, ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")),
    ("admissionregistration.k8s.io/v1", 30, ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")),
    ("apiextensions.k8s.io/v1", 16, ("CustomResourceDefinition",)),
    ("apiregistration.k8s.io/v1", 10, ("APIService",)),
    ("apps/v1", 9, ("ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet")),
    ("authentication.k8s.io/v1", 6, ("TokenReview",)),
    ("authentication.k8s.io/v1", 28, ("SelfSubjectReview",)),
    ("authorization.k8s.io/v1", 6, ("LocalSubjectAccessReview", "SelfSubjectAccessReview",
                                    "SelfSubjectRulesReview", "SubjectAccessReview")),
    ("autoscaling/v1", 2, ("HorizontalPodAutoscaler",)),
    ("autoscaling/v2", 23, ("HorizontalPodAutoscaler",)),
    ("batch/v1", 21, ("CronJob", "Job")),
    ("certificates.k8s.io/v1", 19, ("CertificateSigningRequest",)),
    ("coordination.k8s.io/v1", 14, ("Lease",)),
    ("discovery.k8s.io/v1", 21, ("EndpointSlice",)),
    ("events.k8s.io/v1", 19, ("Event",)),
    ("flowcontrol.apiserver.k8s.io/v1", 29, ("FlowSchema", "PriorityLevelConfiguration")),
    ("networking.k8s.io/v1", 19, ("Ingress", "IngressClass", "NetworkPolicy")),
    ("networking.k8s.io/v1", 33, ("IPAddress", "ServiceCIDR")),
    ("node.k8s.io/v1", 20, ("RuntimeClass",)),
    ("policy/v1", 21, ("PodDisruptionBudget",)),
    ("rbac.authorization.k8s.io/v1", 8, ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")),
    ("resource.k8s.io/v1", 34, ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")),
    ("scheduling.k8s.io/v1", 14, ("PriorityClass",)),
    ("storage.k8s.io/v1", 6, ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment")),
    ("storage.k8s.io/v1", 24, ("CSIStorageCapacity",)),
    ("storage.k8s.io/v1", 34, ("VolumeAttributesClass",)),
)  # fmt: skip
"""What a stock API server of each version serves (GA, on by default), as ``helm install`` sees it through
discovery. ``helm template`` alone knows only client-go's group versions and no kind, so
``.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget"`` is false offline and true on every cluster: a
chart's PDB (or anything guarded that way) would be missing from berth's render but installed by Helm."""


def served_api_versions(kube_version: str) -> tuple[str, ...]:
    """``group/version`` and ``group/version/Kind`` of every built-in resource :data:`SERVED_KINDS` lists for
    ``kube_version`` (1.x); passed as ``--api-versions`` so offline ``Capabilities`` equal a stock cluster's."""
    m = re.match(r"v?1\.(\d+)", kube_version)
    minor = int(m.group(1)) if m else 0
    out: dict[str, None] = {}
    for gv, since, kinds in SERVED_KINDS:
        if minor >= since:
            out[gv] = None
            out.update((f"{gv}/{kind}", None) for kind in kinds)
    return tuple(out)


_CRD_SUFFIXES = (".yaml", ".yml", ".json")


def _crds_folder_texts(chart_dir: Path) -> list[tuple[str, str]]:
    """(where, text) of every file in the ``crds/`` folders of the chart and its subcharts, unpacked
    (``charts/<name>/crds/``) or packed (``charts/<name>.tgz``, as ``helm dependency build`` leaves them)."""
    out: list[tuple[str, str]] = []
    for folder in [chart_dir / "crds", *sorted(chart_dir.glob("charts/*/crds"))]:
        for f in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if f.suffix in _CRD_SUFFIXES and f.is_file():
                out.append((str(f), f.read_text(encoding="utf-8", errors="replace")))
    for archive in sorted(chart_dir.glob("charts/*.tgz")):
        try:
            with tarfile.open(archive, "r:gz") as tar:
                for m in sorted(tar.getmembers(), key=lambda m: m.name):
                    parts = m.name.split("/")
                    if (
                        m.isfile()
                        and len(parts) >= 3
                        and parts[1] == "crds"
                        and m.name.endswith(_CRD_SUFFIXES)
                    ):
                        data = tar.extractfile(m)
                        if data is not None:
                            out.append((f"{archive}:{m.name}", data.read().decode("utf-8", "replace")))
        except (OSError, tarfile.TarError):
            continue  # Helm reports an unreadable subchart when it renders
    return out


_CRD_API_VERSIONS: dict[str, tuple[str, ...]] = {}


def chart_crd_api_versions(chart_dir: Path, text: ChartText | None = None) -> tuple[str, ...]:
    """:func:`_chart_crd_api_versions`, once per chart content in a process (its ``crds/`` files can be large);
    ``text``: the chart's :func:`chart_text`, when the caller has read it."""
    digest = (text or chart_text(chart_dir)).digest
    if digest not in _CRD_API_VERSIONS:
        _CRD_API_VERSIONS[digest] = _chart_crd_api_versions(chart_dir)
    return _CRD_API_VERSIONS[digest]


def _chart_crd_api_versions(chart_dir: Path) -> tuple[str, ...]:
    """``group/version`` and ``group/version/Kind`` served by the CRDs in the ``crds/`` folders of the chart and
    its subcharts. ``helm install`` creates those before it renders, and ``helm upgrade`` finds them installed, so
    ``.Capabilities.APIVersions.Has "<group>/<version>/<Kind>"`` is true for them in both: a chart guarding its
    default custom resources that way renders them under Helm and must under berth too."""
    out: dict[str, None] = {}
    for where, text in _crds_folder_texts(chart_dir):
        try:
            docs = yamlio.load_documents(text, where)
        except InputError:
            continue  # Helm reports the broken file when it renders with --include-crds
        for d in docs:
            body: dict[str, Any] = d.body if isinstance(d.body, dict) else {}
            spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
            names: dict[str, Any] = spec["names"] if isinstance(spec.get("names"), dict) else {}
            kind = names.get("kind")
            if body.get("kind") != "CustomResourceDefinition" or not spec.get("group") or not kind:
                continue
            for v in spec.get("versions") or []:
                if isinstance(v, dict) and v.get("name") and v.get("served", True):
                    gv = f"{spec['group']}/{v['name']}"
                    out[gv] = None
                    out[f"{gv}/{kind}"] = None
    return tuple(out)


@dataclass(frozen=True)
class RenderRequest:
    """Everything that determines one ``helm template`` output."""

    chart: Path
    release: str
    namespace: str
    values_files: tuple[Path, ...] = ()
    value_args: tuple[str, ...] = ()
    """The user's values flags (``--set ...``, more ``--values``), after ``values_files``, as Helm takes them."""
    kube_version: str = KUBE_VERSION
    is_upgrade: bool = False
    api_versions: tuple[str, ...] = ()
    """Extra ``--api-versions`` beyond the built-in ones a stock cluster of ``kube_version`` serves."""
    label: str = ""
    """Which values this is (``base ha, components metrics``): errors name it, since a package renders several."""
    show_only: str = ""
    """Render only this template (``--show-only``): how :func:`notes_request` gets the chart's NOTES.txt."""

    def args(self) -> list[str]:
        """The ``helm template`` arguments (without the binary), in a stable order."""
        out = [
            "template",
            self.release,
            str(self.chart),
            "--namespace",
            self.namespace,
            "--kube-version",
            self.kube_version,
            "--include-crds",
        ]
        if self.is_upgrade:
            out.append("--is-upgrade")
        served = (*served_api_versions(self.kube_version), *self.api_versions)
        out += ["--api-versions", ",".join(served)]
        for vf in self.values_files:
            out += ["--values", str(vf)]
        out += self.value_args
        if self.show_only:
            out += ["--show-only", self.show_only]
        return out


@dataclass(frozen=True)
class Render:
    """One verified render: the text, Helm's own notices and the exact command."""

    text: str
    command: tuple[str, ...]
    helm_version: str
    dropped_hook_events: tuple[str, ...] = field(default=())
    """``helm.sh/hook`` values of documents Helm dropped because an event is unknown (from Helm's log)."""
    random: tuple[randomness.RandomFields, ...] = ()
    """The fields that differed between the two renders (the chart uses randomness); ``text`` is the first."""


NOTES_FILE = "templates/NOTES.txt"
_NOTES_DEFINE = "berth.notes.NOTES.txt"
_NOTES_CARRIER = "templates/berth-notes-carrier.yaml"


def notes_request(request: RenderRequest, scratch: Path) -> RenderRequest | None:
    """A render of the chart's ``templates/NOTES.txt`` with the same values, or None when it has none.

    ``helm install`` prints NOTES.txt after it installs; ``helm template`` never renders it. So a copy of the chart
    gets the notes as a named template plus one YAML carrier ``notes: <the rendered text as JSON>``, rendered with
    ``--show-only``: the release's own render stays untouched and the text comes back exactly."""
    notes = request.chart / NOTES_FILE
    if not notes.is_file():
        return None
    copy = scratch / "notes-chart"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(request.chart, copy, symlinks=False, copy_function=layout.link_or_copy)
    text = (copy / NOTES_FILE).read_text(encoding="utf-8")
    (copy / NOTES_FILE).unlink()
    (copy / "templates" / "_berth-notes.tpl").write_text(
        f'{{{{ define "{_NOTES_DEFINE}" }}}}{text}{{{{ end }}}}', encoding="utf-8"
    )
    (copy / _NOTES_CARRIER).write_text(
        f'notes: {{{{ include "{_NOTES_DEFINE}" . | toJson }}}}\n', encoding="utf-8"
    )
    return dataclasses.replace(request, chart=copy, show_only=_NOTES_CARRIER)


def notes_text(render: Render) -> str:
    """The rendered NOTES.txt out of a :func:`notes_request` render, trimmed as Helm prints it."""
    for doc in yamlio.load_documents(render.text, "NOTES.txt"):
        if isinstance(doc.body, dict) and isinstance(doc.body.get("notes"), str):
            return str(doc.body["notes"]).strip()
    return ""


def check_values_file(path: Path) -> None:
    """Fail early, naming the file, when a values file is missing or not a YAML mapping (Helm's message is vaguer)."""
    try:
        docs = yamlio.load_file(path)
    except InputError as exc:
        raise InputError(f"invalid values file: {exc}") from exc
    if len(docs) > 1:
        raise InputError("a values file must hold one YAML document", str(path))
    if docs and not isinstance(docs[0].body, dict):
        raise InputError(
            f"a values file must be a YAML mapping, got {type(docs[0].body).__name__}", str(path)
        )


def template_error(stderr: str, chart: Path, label: str = "") -> InputError:
    """Turn Helm's error text into one InputError naming the template file and line when Helm gave them, and
    which values (``label``) were rendered: a values.schema.json refusal is about the values, not a template."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip() and not ln.startswith("Use --debug")]
    lines = [ln for ln in lines if not ln.startswith("level=")]
    message = "\n".join(lines).removeprefix("Error: ").strip() or "helm template failed"
    values = f", {label}" if label else ""
    m = _LOCATION.search(message)
    if m:
        where = f"{m.group('file')}:{m.group('line')}"
        return InputError(f"helm template failed: {message}", where + values)
    y = _YAML_ON.search(message)
    if y:
        return InputError(f"helm template failed: {message}", y.group("file") + values)
    return InputError(f"helm template failed: {message}", f"chart {chart.name}{values}")


def render(request: RenderRequest, twice: bool = True) -> Render:
    """Render with the real Helm; with ``twice`` both runs go in parallel and must agree byte for byte."""
    return render_all([request], twice)[0]


_RANDOM = re.compile(
    r"\b(?:rand[A-Z]\w*|randInt|uuidv4|gen(?:CA|PrivateKey|SelfSignedCert|SignedCert)\w*|now|htpasswd|bcrypt"
    r"|encryptAES|shuffle|getHostByName|ago)\b"
)
"""The template functions whose result differs between two renders (Sprig's random, key and clock functions,
``htpasswd``/``bcrypt`` salts, DNS): where none appears in the chart or its values, one render is enough."""
_RELEASE_FLAGS = re.compile(r"IsInstall|IsUpgrade|\.Release\b(?!\.)")
"""What tells ``--is-upgrade`` apart (``.Release.IsInstall``/``IsUpgrade``, or ``.Release`` used whole)."""
_API_VERSIONS = re.compile(r"APIVersions")
_CAPABILITY_WORDS = ("Capabilities", "APIVersions", "KubeVersion", "HelmVersion")
_CAPABILITIES = re.compile("|".join(_CAPABILITY_WORDS))
"""What reads (or, in a render, shows) ``.Capabilities``: the one input ``helm install --dry-run=client`` cannot
be given the way ``helm template`` is (``--kube-version``, ``--api-versions``)."""


@dataclass(frozen=True)
class ChartText:
    """What berth reads from a chart's files before rendering it: their digest and which Helm features they use."""

    digest: str
    random: bool
    release_flags: bool
    api_versions: bool
    capabilities: bool = True
    """A file asks ``.Capabilities`` (any of it: the kube version, API versions, Helm's version)."""
    subcharts: bool = True
    """The chart has files under ``charts/`` (subcharts, packed or not)."""


def chart_text(chart: Path) -> ChartText:
    """The digest of every file of a chart folder (subcharts and packed subcharts included) and whether any of them
    calls a random or clock function, tells install from upgrade, or asks ``.Capabilities.APIVersions``. Read each
    time (a chart folder may be edited between two renders of one process); a few milliseconds for a large chart."""
    h = hashlib.sha256()
    found = {"random": False, "release": False, "api": False, "capabilities": False, "subcharts": False}
    for path in sorted(chart.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        rel = path.relative_to(chart).as_posix()
        found["subcharts"] = found["subcharts"] or rel.startswith("charts/")
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        if path.suffix == ".tgz" and path.parent.name == "charts":
            texts = _archive_texts(data)
        elif "crds" in rel.split("/") or path.suffix == ".md":
            texts = []  # copied as they are, never evaluated
        else:
            texts = [data]  # templates, values, and any file a template may pass to tpl (.Files.Get)
        for blob in texts:
            text = blob.decode("utf-8", "replace")
            found["random"] = found["random"] or bool(_RANDOM.search(text))
            found["release"] = found["release"] or bool(_RELEASE_FLAGS.search(text))
            found["api"] = found["api"] or bool(_API_VERSIONS.search(text))
            found["capabilities"] = found["capabilities"] or bool(_CAPABILITIES.search(text))
    return ChartText(
        h.hexdigest(),
        found["random"],
        found["release"],
        found["api"],
        found["capabilities"],
        found["subcharts"],
    )


def _archive_texts(data: bytes) -> list[bytes]:
    """Every file of a packed subchart (already checked by :func:`berth.install.chart.check_archive`)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            return [
                f.read() for m in tar.getmembers() if m.isfile() and (f := tar.extractfile(m)) is not None
            ]
    except (OSError, tarfile.TarError):
        return [data]  # Helm reports an unreadable subchart when it renders


def capability_api_versions(chart: Path, text: ChartText | None = None) -> tuple[str, ...]:
    """:func:`chart_crd_api_versions` when a template of the chart asks ``.Capabilities.APIVersions`` (else they
    cannot change the render, and the ``crds/`` folders are not parsed for them); ``text``: the chart's
    :func:`chart_text`, when the caller has read it."""
    text = text or chart_text(chart)
    return chart_crd_api_versions(chart, text) if text.api_versions else ()


def render_key(request: RenderRequest, text: ChartText | None = None) -> tuple[str, ...]:
    """What determines a render's output: the chart's content, the values files' contents, every other argument
    (``--is-upgrade`` only when the chart tells install from upgrade)."""
    text = text or chart_text(request.chart)
    args = request.args()
    values = {str(vf): hashlib.sha256(vf.read_bytes()).hexdigest() for vf in request.values_files}
    key = [text.digest if a == str(request.chart) else values.get(a, a) for a in args]
    if not text.release_flags:
        key = [a for a in key if a != "--is-upgrade"]
    return tuple(key)


RENDER_GO_ENV = {"GOGC": "off", "GOMEMLIMIT": "256MiB"}
"""Go's collector settings for a render's Helm process when the user set neither: no collection until the heap
nears 256 MiB (Go's own advice for a short process whose memory is known). A render is a short process with a small
heap (~67 MB peak on a chart with 1 MB of CRDs, against ~61 MB collecting at Go's default pace), which the default
collects several times over for nothing; two renders run side by side and their collector threads compete with
berth for the two cores of a small machine: ~11 ms of a kai-scheduler-sized setup. A chart that needs more than
256 MiB is collected as before once it gets there."""


def render_env() -> dict[str, str]:
    """The environment of a render's Helm process: the user's, with :data:`RENDER_GO_ENV` added unless they set
    ``GOGC`` or ``GOMEMLIMIT`` themselves (then theirs is left as it is). Helm's output does not depend on it
    (templates cannot read the environment)."""
    env = dict(os.environ)
    if "GOGC" not in env and "GOMEMLIMIT" not in env:
        env.update(RENDER_GO_ENV)
    return env


_FIND_LOCK = threading.Lock()


def tool() -> tools.Tool:
    """The helm binary (:func:`berth.kube.tools.find`, which asks it its version): one lookup at a time, so
    setup's concurrent first callers start one ``helm version``, not several."""
    with _FIND_LOCK:
        return tools.find("helm")


def prefetch_tool() -> None:
    """Find helm in the background (its ``helm version`` then overlaps the pull, the packing and the extraction
    that come before the first render)."""
    threading.Thread(target=_quiet_tool, daemon=True).start()


def _quiet_tool() -> None:
    with contextlib.suppress(ToolError):  # the render's own lookup reports it
        tool()


ReleaseSource = tuple[RenderRequest, Callable[[], "DryRun | None"]]
"""A request :func:`render_all` may take from a ``helm install --dry-run=client`` release run with the same chart
and values (:func:`install_dry_run`), and how to get that release (None: it failed)."""


def render_all(
    requests: list[RenderRequest],
    twice: bool = True,
    release: ReleaseSource | None = None,
    meanwhile: Callable[[], None] | None = None,
    ready: Callable[[RenderRequest, Render], None] | None = None,
    texts: dict[Path, ChartText] | None = None,
) -> list[Render]:
    """Several renders at once (e.g. the install and ``--is-upgrade`` variants): every Helm process starts
    together, since a render is mostly start-up latency, not CPU. Two requests that must render the same
    (:func:`render_key`: e.g. the install and ``--is-upgrade`` variants of a chart that does not tell them apart)
    run Helm once; ``twice`` renders a second time, to compare, only charts that call a random or clock function
    (:data:`_RANDOM`) in their files or values. With ``release``, its request is rebuilt from the release that
    setup asks Helm for anyway (:func:`from_release`) where that provably gives ``helm template``'s own text, and
    rendered by Helm only where not. ``texts``: the :func:`chart_text` of chart folders the caller has read since
    they last changed.

    While Helm runs the caller's own work can go on (a render is mostly Helm's time, and the machine has another
    core): ``meanwhile`` is called once every Helm process has started; with ``release``, ``ready`` gets each
    request and render as soon as it is known, so the caller can work on the first while the other is still
    rendered (the release's, or ``helm template``'s: which ends first varies). ``ready`` may be called from another
    thread, and neither may raise."""
    for request in requests:
        for vf in request.values_files:
            check_values_file(vf)
    helm = tool()
    texts = dict(texts or {})  # each chart folder read once per call (its renders all start together)
    for r in requests:
        if r.chart not in texts:
            texts[r.chart] = chart_text(r.chart)
    texts_of = {id(r): texts[r.chart] for r in requests}
    keys = [render_key(r, texts_of[id(r)]) for r in requests]
    first = {k: r for k, r in reversed(list(zip(keys, requests, strict=True)))}
    unique = list(dict.fromkeys(keys))
    counts = {k: 2 if twice and _random(first[k], texts_of[id(first[k])]) else 1 for k in unique}
    deferred = None
    if release is not None:
        key = render_key(release[0], texts_of.get(id(release[0])))
        if key in counts and counts[key] == 1 and releasable(release[0], texts_of[id(first[key])], helm):
            deferred = key
    running = _start_renders(helm, [(k, first[k], counts[k]) for k in unique if k != deferred])
    finish = running.finish
    try:
        if meanwhile is not None:
            meanwhile()
        made = None
        if deferred is not None and release is not None:
            if ready is not None and running.procs:
                finish = running.finish_in_thread(ready)
            dry = release[1]()
            made = from_release(first[deferred], dry, helm.version) if dry is not None else None
            if made is not None and ready is not None and running.procs:
                ready(first[deferred], made)
    except BaseException:
        running.kill()
        with contextlib.suppress(BaseException):
            finish()  # the thread, if any, ends with the killed processes
        raise
    renders = finish()
    if deferred is not None:
        renders.update(
            _start_renders(helm, [(deferred, first[deferred], 1)]).finish()
            if made is None
            else {deferred: made}
        )
    return [renders[k] for k in keys]


class _Running:
    """``helm template`` processes started together (:func:`_start_renders`), each (key, request, runs). A plain
    class: a dataclass costs every berth process ~0.4 ms to create at import."""

    def __init__(
        self, helm: tools.Tool, todo: list[tuple[tuple[str, ...], RenderRequest, int]], cmds: list[list[str]]
    ) -> None:
        self.helm = helm
        self.todo = todo
        self.cmds = cmds
        self.procs: list[subprocess.Popen[str]] = []

    def kill(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait()

    def finish_in_thread(
        self, ready: Callable[[RenderRequest, Render], None]
    ) -> Callable[[], dict[tuple[str, ...], Render]]:
        """:meth:`finish` in a thread of its own, each render then handed to ``ready`` there; the call returned
        waits for it and returns the renders, or raises what :meth:`finish` raised."""

        def run() -> dict[tuple[str, ...], Render]:
            renders = self.finish()
            for key, request, _ in self.todo:
                ready(request, renders[key])
            return renders

        return background.Call(run, "berth-helm-renders").result

    def finish(self) -> dict[tuple[str, ...], Render]:
        """Every render's output; runs=2 compares two renders."""
        from berth.install import randomness  # after Helm ran: setup imports it while Helm runs

        helm, todo, cmds, procs = self.helm, self.todo, self.cmds, self.procs
        try:
            results = [p.communicate(timeout=HELM_TIMEOUT_SECONDS) for p in procs]
        except subprocess.TimeoutExpired as exc:
            self.kill()
            raise ToolError(f"helm template did not finish within {HELM_TIMEOUT_SECONDS}s") from exc
        except BaseException:
            self.kill()
            raise
        start = 0
        renders: dict[tuple[str, ...], Render] = {}
        for (key, request, runs), cmd in zip(todo, cmds, strict=True):
            mine = list(zip(procs[start : start + runs], results[start : start + runs], strict=True))
            start += runs
            for proc, (_out, err) in mine:
                if proc.returncode != 0:
                    raise template_error(err, request.chart, request.label)
            texts = [text for _, (text, _err) in mine]
            random: tuple[randomness.RandomFields, ...] = ()
            for other in texts[1:]:
                if other != texts[0]:
                    random += randomness.compare(texts[0], other, f"chart {request.chart.name}")
            dropped = _dropped_hook_events(mine[0][1][1])
            renders[key] = Render(texts[0], tuple(cmd), helm.version, dropped, randomness.merge(random))
        return renders


def _start_renders(helm: tools.Tool, todo: list[tuple[tuple[str, ...], RenderRequest, int]]) -> _Running:
    """Start ``helm template`` for each (key, request, runs), every process at once."""
    cmds = [[helm.path, *request.args()] for _, request, _ in todo]
    running = _Running(helm, todo, cmds)
    try:
        for cmd, (_, _, runs) in zip(cmds, todo, strict=True):
            for _ in range(runs):
                running.procs.append(
                    subprocess.Popen(
                        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=render_env()
                    )
                )
    except OSError as exc:
        running.kill()
        raise ToolError(f"cannot run {helm.path}: {exc}") from exc
    except BaseException:
        running.kill()
        raise
    return running


def _dropped_hook_events(stderr: str) -> tuple[str, ...]:
    return tuple(m.group("types") for m in _UNKNOWN_HOOK.finditer(stderr))


@dataclass(frozen=True)
class DryRun:
    """``helm install --dry-run=client -o json``: the release Helm would record, and what it logged."""

    release: dict[str, Any]
    stderr: str
    command: tuple[str, ...]


def install_dry_run(chart_dir: Path, release: str, namespace: str, value_args: list[str]) -> DryRun:
    """The release ``helm install`` would record for the chart with these values arguments (offline; Helm
    serialises the chart and merges the values itself): what the release record's ``chart`` and ``config`` come
    from, and (:func:`from_release`) often the install render too."""
    helm = tool()
    cmd = [helm.path, "install", release, str(chart_dir), "--namespace", namespace, "--dry-run=client",
           "-o", "json", *value_args]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=HELM_TIMEOUT_SECONDS, env=render_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"cannot run {helm.path} install --dry-run=client: {exc}") from exc
    encoding = _pipe_encoding()
    stderr = proc.stderr.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")  # as a text-mode pipe
    if proc.returncode != 0:
        message = stderr.strip().removeprefix("Error: ")
        raise InputError(f"helm install --dry-run=client failed: {message}", f"chart {chart_dir.name}")
    try:
        # Decoded as a text-mode pipe decodes, but without its newline translation: a megabyte for a large chart,
        # and the objects are the same (a CR or LF in JSON is whitespace between tokens; in strings Go escapes it).
        rel = json.loads(proc.stdout.decode(encoding))
    except ValueError as exc:
        raise ToolError(f"helm install --dry-run=client -o json printed no JSON: {exc}") from exc
    if not isinstance(rel, dict):
        raise ToolError("helm install --dry-run=client -o json printed no release")
    return DryRun(rel, stderr, tuple(cmd))


def _pipe_encoding() -> str:
    """The encoding a text-mode pipe of :mod:`subprocess` decodes with (what the renders' output is read with)."""
    return "utf-8" if sys.flags.utf8_mode else locale.getencoding()


def releasable(request: RenderRequest, text: ChartText, helm: tools.Tool) -> bool:
    """Whether ``helm template`` of ``request`` prints what :func:`from_release` rebuilds from the install release
    of the same chart and values. ``helm template`` is ``helm install --dry-run=client`` plus its own flags, so
    they agree unless one of those flags matters: not ``--is-upgrade`` or ``--show-only``; ``--kube-version`` and
    ``--api-versions`` only through ``.Capabilities``, which no chart file or value may mention, and through a
    ``kubeVersion`` constraint, checked against Helm's default kube version (only the pinned Helm's is known to be
    :data:`KUBE_VERSION`); ``--include-crds`` adds the ``crds/`` files, rebuilt here only for a chart without
    subcharts (whose enabled ones only Helm knows) or a ``.helmignore`` (which may leave some out)."""
    if request.is_upgrade or request.show_only or text.capabilities or text.subcharts:
        return False
    if _mentions(request, _CAPABILITIES) or (request.chart / ".helmignore").exists():
        return False
    try:
        meta = yamlio.load_one((request.chart / "Chart.yaml").read_text(encoding="utf-8"), "Chart.yaml")
    except (OSError, UnicodeDecodeError, InputError):
        return False
    if isinstance(meta, dict) and meta.get("kubeVersion") is not None:
        return helm.version == tools.PINNED_VERSIONS["helm"] and request.kube_version == KUBE_VERSION
    return True


_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
"""What Go's ``strings.TrimSpace`` trims (``unicode.IsSpace``)."""


def from_release(request: RenderRequest, dry: DryRun, helm_version: str) -> Render | None:
    """``helm template``'s output for ``request``, rebuilt from the install release of the same chart and values
    (only where :func:`releasable`): Helm's template command prints the release's manifest -- after the
    ``crds/`` files, with ``--include-crds`` -- trimmed, then each hook as ``---\n# Source: <path>\n<manifest>``.
    None when the release does not have that shape or its render shows ``.Capabilities`` anyway (a template
    printing the whole context): then Helm renders it."""
    rel = dry.release
    manifest, hooks = rel.get("manifest", ""), rel.get("hooks") or []
    meta = (rel.get("chart") or {}).get("metadata") or {}
    if not isinstance(manifest, str) or not isinstance(hooks, list) or not isinstance(meta.get("name"), str):
        return None
    crds = ""
    folder = request.chart / "crds"
    for f in sorted(folder.iterdir(), key=lambda p: p.name.encode()) if folder.is_dir() else []:
        if f.is_dir():
            return None  # Helm walks nested folders in its own order
        if f.suffix in _CRD_SUFFIXES:
            try:
                crds += f"---\n# Source: {meta['name']}/crds/{f.name}\n{f.read_bytes().decode('utf-8')}\n"
            except (OSError, UnicodeDecodeError):
                return None
    parts = [(crds + manifest).strip(_GO_SPACE), "\n"]
    for hook in hooks:
        if not isinstance(hook, dict) or not isinstance(hook.get("manifest"), str):
            return None
        parts.append(f"---\n# Source: {hook.get('path')}\n{hook['manifest']}\n")
    text = "".join(parts)
    if "\r" in text:  # as a text-mode pipe reads Helm's output
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if any(word in text for word in _CAPABILITY_WORDS):  # as _CAPABILITIES, faster on a large render
        return None
    return Render(text, dry.command, helm_version, _dropped_hook_events(dry.stderr))


def _random(request: RenderRequest, text: ChartText) -> bool:
    """Whether the chart, a values file or a values flag of the request calls a random or clock function (a
    chart may ``tpl`` a value)."""
    return text.random or _mentions(request, _RANDOM)


def _mentions(request: RenderRequest, pattern: re.Pattern[str]) -> bool:
    """Whether a values file or a values flag of the request (or a file a flag names) matches ``pattern``."""
    flagged = [a for a in request.value_args if not a.startswith("-")]
    files = [
        Path(p) for a in flagged for p in {a, a.split("=", 1)[-1]} if Path(p).is_file()
    ]  # -f, --set-file
    return any(
        pattern.search(vf.read_text(encoding="utf-8", errors="replace"))
        for vf in (*request.values_files, *files)
    ) or any(pattern.search(a) for a in flagged)
