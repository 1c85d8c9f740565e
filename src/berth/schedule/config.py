"""KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``): strict decoding, upstream defaults, plugin-set
merge with ``multiPoint`` expansion, typed plugin args, and validation that reports every problem with its path.

Why it exists: a user must be able to hand berth the very file they give kube-scheduler 1.35 and get the same
profiles, the same plugin order and weights, the same plugin args -- or the same complaints. The pipeline mirrors
upstream's, in four stages, but collects every problem instead of stopping at the first:

1. **decode** (``scheme.go``, strict): every field typed; unknown fields, wrong types -> problems with a field path.
2. **default** (``v1/defaults.go``, ``v1/default_plugins.go``): top-level defaults; no profiles -> one; a lone
   unnamed profile -> ``default-scheduler``; each profile's plugin sets merged onto the default ``multiPoint`` set
   (:func:`merge_plugin_set`); a ``pluginConfig`` entry with default args for every enabled plugin with an args type.
3. **validate** (``validation/validation.go``): ranges, duplicates, common queue sort, extenders, plugin args.
4. **build** (``framework/runtime/framework.go``, ``profile/profile.go``): per extension point, the specific-point
   plugins plus the ``multiPoint`` expansion (:func:`expand_point`), score weights, one queue sort, a bind plugin.

The resolved types below (:class:`SchedulerConfiguration`, :class:`Profile`, :class:`PluginRef`) are what the
framework consumes. ``SchedulerConfiguration.raw`` is the defaulted document as kube-scheduler would print it.

Where berth is stricter than upstream (each one turns a silent mistake into a message; see
docs/scheduler-config.md): unknown plugin names in ``disabled`` lists and in ``pluginConfig``, args given to a
plugin that takes none, and negative score weights are problems.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from berth.kube import durations, yamlio, yamlkeys
from berth.kube.errors import InputError, MultiInputError
from berth.schedule import defaults
from berth.schedule.config_fields import _Fields, _join
from berth.schedule.config_types import (
    ClientConnection,
    Extender,
    LeaderElection,
    ManagedResource,
    PluginRef,
    Profile,
    SchedulerConfiguration,
)
from berth.schedule.framework.interface import POINT_NAMES, PluginSpec
from berth.schedule.plugin_sets import (
    MULTI_POINT,
    BuildProblem,
    Entry,
    PluginSet,
    default_plugin_sets,
    expand_point,
    merge_plugin_set,
    merge_plugins,
    score_weights,
)
from berth.schedule.plugins import helper
from berth.schedule.plugins.registry import Registry, default_registry

# The names other modules use from here (the resolved types and plugin sets live in their own rooms).
__all__ = [
    "API_VERSION",
    "BUILD_ORDER",
    "KIND",
    "MULTI_POINT",
    "BuildProblem",
    "ClientConnection",
    "Entry",
    "Extender",
    "LeaderElection",
    "ManagedResource",
    "PluginRef",
    "PluginSet",
    "Profile",
    "SchedulerConfiguration",
    "default_config",
    "default_plugin_sets",
    "expand_point",
    "load",
    "merge_plugin_set",
    "merge_plugins",
    "parse",
    "score_weights",
    "to_dict",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

# The order in which the framework builds extension points (``getExtensionPoints``); problems follow it.
BUILD_ORDER: tuple[str, ...] = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)


# --- public entry points -------------------------------------------------------------------------------------------


def load(path: str | os.PathLike[str], registry: Registry | None = None) -> SchedulerConfiguration:
    """Read, decode, default, validate and resolve a KubeSchedulerConfiguration file.

    Args:
        path: a YAML (or JSON) file holding exactly one ``KubeSchedulerConfiguration`` document.
        registry: the plugins a profile may name; defaults to the in-tree plugins plus entry points. Callers add
            user plugins (``--plugin module:Class``) to the registry before calling.

    Raises:
        InputError: the file is missing or is not YAML (exit code 2).
        MultiInputError: every problem in the configuration, one per line with file and field path (exit 2).
    """
    docs = yamlio.load_file(path)
    source = str(path)
    if not docs:
        raise InputError(f"the file is empty; expected one {KIND} document", source)
    if len(docs) > 1:
        raise InputError(
            f"expected one {KIND} document, found {len(docs)} (kube-scheduler reads only one)", source
        )
    # Strict decoding refuses repeated keys, which the YAML parser would silently collapse.
    text = Path(path).read_text(encoding="utf-8")
    repeated = [d.message() for d in yamlkeys.duplicate_keys(text)]
    reg = registry if registry is not None else default_registry()
    return _Builder(reg, source).build(docs[0].body, repeated)


def parse(data: Any, source: str = "<input>", registry: Registry | None = None) -> SchedulerConfiguration:
    """Decode an already-parsed document (a mapping) the way :func:`load` does; ``source`` names it in messages."""
    reg = registry if registry is not None else default_registry()
    return _Builder(reg, source).build(data)


def default_config(registry: Registry | None = None) -> SchedulerConfiguration:
    """What kube-scheduler runs with an empty configuration: one ``default-scheduler`` profile, default plugins."""
    return parse({"apiVersion": API_VERSION, "kind": KIND}, "<defaults>", registry)


def to_dict(config: SchedulerConfiguration, expanded: bool = False) -> dict[str, Any]:
    """The defaulted configuration as a plain dict, ready for YAML/JSON output.

    With ``expanded=False`` it is the document kube-scheduler itself would print (plugin sets merged onto the
    default ``multiPoint`` set, a pluginConfig entry per plugin with args). With ``expanded=True`` each profile's
    ``plugins`` is replaced by what the framework actually runs: per extension point, the enabled plugins in run
    order (score entries with their resolved weights), with ``multiPoint`` already expanded.
    """
    out = json.loads(json.dumps(config.raw))
    if not expanded:
        return dict(out)
    for raw_profile, profile in zip(out.get("profiles", []), config.profiles, strict=True):
        plugins: dict[str, Any] = {}
        for point in POINT_NAMES:
            refs = profile.plugins.get(point, ())
            if not refs:
                continue
            plugins[point] = {
                "enabled": [
                    {"name": r.name, "weight": r.weight} if point == "score" else {"name": r.name}
                    for r in refs
                ]
            }
        raw_profile["plugins"] = plugins
    return dict(out)


# --- decoded (versioned) model -------------------------------------------------------------------------------------


@dataclass
class _PluginConfig:
    name: str
    args: Any  # raw, as written
    path: str


@dataclass
class _RawProfile:
    path: str
    scheduler_name: str | None
    percentage: int | None
    plugins: dict[str, PluginSet] | None  # None: no ``plugins`` field
    plugin_config: list[_PluginConfig]


@dataclass
class _Decoded:
    api_version: Any = None
    kind: Any = None
    parallelism: int | None = None
    leader_elect: bool | None = None
    lease_duration: float | None = None
    renew_deadline: float | None = None
    retry_period: float | None = None
    resource_lock: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None
    kubeconfig: str | None = None
    accept_content_types: str | None = None
    content_type: str | None = None
    qps: float | None = None
    burst: int | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage: int | None = None
    initial_backoff: int | None = None
    max_backoff: int | None = None
    profiles: list[_RawProfile] = field(default_factory=list)
    extenders: list[Extender] = field(default_factory=list)
    extender_paths: list[str] = field(default_factory=list)
    delay_cache_until_active: bool | None = None


_EXTENDED_NAME_PREFIX = "requests."


def _extended_resource_problems(name: str, path: str) -> list[str]:
    """Upstream ``validateExtendedResourceName``: a qualified name outside ``kubernetes.io/`` with a prefix."""
    problems = helper.qualified_name_problems(name, path)
    if problems:
        return problems
    native = "/" not in name or "kubernetes.io/" in name
    if (
        native
        or name.startswith(_EXTENDED_NAME_PREFIX)
        or helper.qualified_name_problems(_EXTENDED_NAME_PREFIX + name, path)
    ):
        return [helper.invalid(path, name, "is an invalid extended resource name")]
    return []


# --- the builder: decode -> default -> validate -> build -----------------------------------------------------------


@dataclass
class _Built:
    """A profile after defaulting and building (before the cross-profile checks)."""

    raw: _RawProfile
    name: str
    sets: dict[str, PluginSet]
    config: list[tuple[str, Any, Any, str]]  # (name, decoded args, raw dict for display, path)
    pipelines: dict[str, tuple[PluginRef, ...]]
    queue_sort_flagged: bool = False


class _Builder:
    def __init__(self, registry: Registry, source: str) -> None:
        self.registry = registry
        self.source = source
        self.problems: list[str] = []
        self._points: dict[str, frozenset[str]] | None = None

    # --- top level ---------------------------------------------------------------------------------------------

    def build(self, data: Any, prior: Sequence[str] = ()) -> SchedulerConfiguration:
        """Decode, default, validate and resolve; ``prior`` are problems already found in the text."""
        self.problems.extend(prior)
        decoded = self._decode(data)
        built = self._default_and_build(decoded)
        self._validate(decoded, built)
        if self.problems:
            lines = [f"{self.source}: {p}" for p in self.problems]
            raise MultiInputError(lines, header=f"invalid {KIND} {self.source}")
        return self._resolve(decoded, built)

    def _decode(self, data: Any) -> _Decoded:
        d = _Decoded()
        p = self.problems
        if data is None:
            data = {}
        top = _Fields(data, "", p, what=f"a {KIND} object (a mapping)")
        d.api_version = top.take("apiVersion")
        d.kind = top.take("kind")
        if top.ok:
            self._check_type_meta(d.api_version, d.kind)
        d.parallelism = top.opt_int("parallelism")
        le = _Fields(top.take("leaderElection"), "leaderElection", p)
        d.leader_elect = le.opt_bool("leaderElect")
        d.lease_duration = le.opt_duration("leaseDuration")
        d.renew_deadline = le.opt_duration("renewDeadline")
        d.retry_period = le.opt_duration("retryPeriod")
        d.resource_lock = le.opt_str("resourceLock")
        d.resource_name = le.opt_str("resourceName")
        d.resource_namespace = le.opt_str("resourceNamespace")
        le.finish()
        cc = _Fields(top.take("clientConnection"), "clientConnection", p)
        d.kubeconfig = cc.opt_str("kubeconfig")
        d.accept_content_types = cc.opt_str("acceptContentTypes")
        d.content_type = cc.opt_str("contentType")
        d.qps = cc.opt_float("qps")
        d.burst = cc.opt_int("burst")
        cc.finish()
        d.enable_profiling = top.opt_bool("enableProfiling")
        d.enable_contention_profiling = top.opt_bool("enableContentionProfiling")
        d.percentage = top.opt_int("percentageOfNodesToScore")
        d.initial_backoff = top.opt_int("podInitialBackoffSeconds", bits=64)
        d.max_backoff = top.opt_int("podMaxBackoffSeconds", bits=64)
        for i, raw in enumerate(top.opt_list("profiles") or []):
            d.profiles.append(self._decode_profile(raw, f"profiles[{i}]"))
        for i, raw in enumerate(top.opt_list("extenders") or []):
            ext = self._decode_extender(raw, f"extenders[{i}]")
            if ext is not None:
                d.extenders.append(ext)
                d.extender_paths.append(f"extenders[{i}]")
        d.delay_cache_until_active = top.opt_bool("delayCacheUntilActive")
        top.finish()
        return d

    def _check_type_meta(self, api_version: Any, kind: Any) -> None:
        if api_version is None or api_version == "":
            self.problems.append(helper.required("apiVersion", f'set apiVersion: "{API_VERSION}"'))
        elif api_version != API_VERSION:
            hint = ""
            if isinstance(api_version, str) and api_version.startswith("kubescheduler.config.k8s.io/"):
                hint = " (v1beta2 and v1beta3 were removed in Kubernetes 1.28/1.29; v1 is the only version)"
            self.problems.append(helper.not_supported("apiVersion", api_version, [API_VERSION]) + hint)
        if kind is None or kind == "":
            self.problems.append(helper.required("kind", f'set kind: "{KIND}"'))
        elif kind != KIND:
            self.problems.append(helper.not_supported("kind", kind, [KIND]))

    def _decode_profile(self, raw: Any, path: str) -> _RawProfile:
        f = _Fields(raw, path, self.problems)
        name = f.opt_str("schedulerName")
        percentage = f.opt_int("percentageOfNodesToScore")
        plugins: dict[str, PluginSet] | None = None
        if f.present("plugins"):
            plugins = self._decode_plugins(f.take("plugins"), _join(path, "plugins"))
        else:
            f.take("plugins")
        configs: list[_PluginConfig] = []
        for j, item in enumerate(f.opt_list("pluginConfig") or []):
            cpath = f"{path}.pluginConfig[{j}]"
            c = _Fields(item, cpath, self.problems)
            cname = c.opt_str("name")
            args = c.take("args")
            c.finish()
            if not c.ok:
                continue
            if not cname:
                self.problems.append(helper.required(_join(cpath, "name"), "the plugin these args are for"))
                continue
            configs.append(_PluginConfig(cname, args, cpath))
        f.finish()
        return _RawProfile(path, name, percentage, plugins, configs)

    def _decode_plugins(self, raw: Any, path: str) -> dict[str, PluginSet]:
        f = _Fields(raw, path, self.problems)
        sets: dict[str, PluginSet] = {}
        for point in (MULTI_POINT, *POINT_NAMES):
            sets[point] = self._decode_set(f.take(point), _join(path, point))
        f.finish()
        return sets

    def _decode_set(self, raw: Any, path: str) -> PluginSet:
        f = _Fields(raw, path, self.problems)
        lists: dict[str, list[Entry]] = {"enabled": [], "disabled": []}
        for key, out in lists.items():
            for i, item in enumerate(f.opt_list(key) or []):
                epath = f"{path}.{key}[{i}]"
                e = _Fields(item, epath, self.problems)
                name = e.opt_str("name")
                weight = e.opt_int("weight")
                e.finish()
                if not e.ok:
                    continue
                if not name:
                    self.problems.append(helper.required(_join(epath, "name"), ""))
                    continue
                out.append(Entry(name, weight, epath))
        f.finish()
        return PluginSet(tuple(lists["enabled"]), tuple(lists["disabled"]))

    def _decode_extender(self, raw: Any, path: str) -> Extender | None:
        p = self.problems
        f = _Fields(raw, path, p)
        url_prefix = f.opt_str("urlPrefix") or ""
        filter_verb = f.opt_str("filterVerb") or ""
        preempt_verb = f.opt_str("preemptVerb") or ""
        prioritize_verb = f.opt_str("prioritizeVerb") or ""
        bind_verb = f.opt_str("bindVerb") or ""
        weight = f.opt_int("weight", bits=64) or 0
        enable_https = bool(f.opt_bool("enableHTTPS"))
        tls: dict[str, Any] | None = None
        if f.present("tlsConfig"):
            t = _Fields(f.take("tlsConfig"), _join(path, "tlsConfig"), p)
            tls = {}
            insecure = t.opt_bool("insecure")
            if insecure is not None:
                tls["insecure"] = insecure
            for key in ("serverName", "certFile", "keyFile", "caFile"):
                value = t.opt_str(key)
                if value:
                    tls[key] = value
            for key in ("certData", "keyData", "caData"):
                value = t.opt_str(key)
                if value:
                    try:
                        base64.b64decode(value, validate=True)
                    except (binascii.Error, ValueError):
                        p.append(helper.invalid(t.at(key), "<data>", "must be base64-encoded bytes"))
                    tls[key] = value
            t.finish()
        else:
            f.take("tlsConfig")
        timeout = f.opt_duration("httpTimeout") or 0.0
        node_cache_capable = bool(f.opt_bool("nodeCacheCapable"))
        managed: list[ManagedResource] = []
        for j, item in enumerate(f.opt_list("managedResources") or []):
            m = _Fields(item, f"{path}.managedResources[{j}]", p)
            managed.append(ManagedResource(m.opt_str("name") or "", bool(m.opt_bool("ignoredByScheduler"))))
            m.finish()
        ignorable = bool(f.opt_bool("ignorable"))
        f.finish()
        if not f.ok:
            return None
        return Extender(
            url_prefix=url_prefix,
            filter_verb=filter_verb,
            preempt_verb=preempt_verb,
            prioritize_verb=prioritize_verb,
            bind_verb=bind_verb,
            weight=weight,
            enable_https=enable_https,
            tls_config=tls,
            http_timeout_seconds=timeout,
            node_cache_capable=node_cache_capable,
            managed_resources=tuple(managed),
            ignorable=ignorable,
        )

    # --- defaulting and building per profile -------------------------------------------------------------------

    def _default_and_build(self, d: _Decoded) -> list[_Built]:
        profiles = d.profiles or [_RawProfile("profiles[0]", None, None, None, [])]
        if len(profiles) == 1 and profiles[0].scheduler_name is None:
            profiles[0].scheduler_name = defaults.DEFAULT_SCHEDULER_NAME
        ignored = [r.name for e in d.extenders for r in e.managed_resources if r.ignored_by_scheduler]
        return [self._build_profile(raw, ignored) for raw in profiles]

    def _implements(self) -> dict[str, frozenset[str]]:
        """Plugin name -> the points it implements; computed once (ABC subclass checks are not cheap)."""
        if self._points is None:
            self._points = {n: spec.points for n in self.registry.names() if (spec := self.registry.get(n))}
        return self._points

    def _unknown(self, name: str, path: str) -> str:
        close = difflib.get_close_matches(name, self.registry.names(), n=1)
        hint = f'; did you mean "{close[0]}"?' if close else ""
        return (
            f'{path}: Not found: "{name}": no plugin of that name is registered (in-tree, entry point or '
            f"--plugin MODULE:CLASS){hint}"
        )

    def _build_profile(self, raw: _RawProfile, ignored_resources: Sequence[str]) -> _Built:
        sets = merge_plugins(raw.plugins)
        implements = self._implements()
        removed = set(defaults.REMOVED_IN_V1)
        # Unknown plugin names, each reported once where the user wrote it. Removed plugins get their own message
        # in validation (enabled) or are tolerated (disabled), as upstream does.
        for point in (MULTI_POINT, *POINT_NAMES):
            for entry in sets[point].enabled + sets[point].disabled:
                if not entry.path or entry.name in implements or entry.name in removed:
                    continue
                if entry.name == "*" and entry in sets[point].disabled:
                    continue
                self.problems.append(self._unknown(entry.name, _join(entry.path, "name")))
        # Args: user's pluginConfig decoded (even for plugins not enabled anywhere: upstream validates them too),
        # then default args for every enabled plugin that has an args type and no entry.
        config: list[tuple[str, Any, Any, str]] = []
        seen: set[str] = set()
        for pc in raw.plugin_config:
            if pc.name in seen:
                self.problems.append(helper.duplicate(pc.path, pc.name))
                continue
            seen.add(pc.name)
            if pc.name in removed:
                self.problems.append(self._removed(pc.path, pc.name))
                continue
            spec = self.registry.get(pc.name)
            if spec is None:
                self.problems.append(self._unknown(pc.name, _join(pc.path, "name")))
                continue
            args, shown = self._decode_args(spec, pc.args, _join(pc.path, "args"))
            config.append((pc.name, args, shown, pc.path))
        enabled_names = sorted({e.name for s in sets.values() for e in s.enabled})
        for name in enabled_names:
            spec = self.registry.get(name)
            if name in seen or spec is None or spec.args_type is None:
                continue
            args, shown = self._decode_args(spec, None, f"{raw.path}.pluginConfig[{name}].args")
            config.append((name, args, shown, ""))
        if ignored_resources:
            config = [self._with_ignored_resources(c, ignored_resources) for c in config]
        # Build the pipelines.
        pipelines: dict[str, tuple[PluginRef, ...]] = {}
        multi = sets[MULTI_POINT]
        names_by_point: dict[str, list[str]] = {}
        reported: set[tuple[str, str]] = set()
        for point in BUILD_ORDER:
            expansion = expand_point(point, sets[point], multi, implements)
            names_by_point[point] = expansion.names
            for bp in expansion.problems:
                if (bp.entry.path, bp.kind) in reported:
                    continue
                reported.add((bp.entry.path, bp.kind))
                where = _join(bp.entry.path, "name")
                if bp.kind == "duplicate":
                    self.problems.append(f"{helper.duplicate(where, bp.entry.name)}: {bp.message}")
                else:
                    self.problems.append(helper.invalid(where, bp.entry.name, bp.message))
        weights, overflow = score_weights(sets["score"], multi, implements)
        for point in POINT_NAMES:
            pipelines[point] = tuple(
                PluginRef(n, weights.get(n, 1) if point == "score" else 0) for n in names_by_point[point]
            )
        name = raw.scheduler_name or ""
        if not pipelines["bind"]:
            self.problems.append(
                helper.required(
                    f"{raw.path}.plugins.bind",
                    f'at least one bind plugin is needed for profile with scheduler name "{name}"',
                )
            )
        if overflow:
            self.problems.append(
                helper.invalid(
                    f"{raw.path}.plugins.score",
                    sum(weights.values()),
                    "total score of Score plugins could overflow",
                )
            )
        return _Built(raw, name, sets, config, pipelines)

    @staticmethod
    def _removed(path: str, name: str) -> str:
        return helper.invalid(
            path,
            name,
            f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")',
        )

    def _decode_args(self, spec: PluginSpec, raw: Any, path: str) -> tuple[Any, Any]:
        """Decoded args and the dict to display. A plugin without an args type accepts no args."""
        if spec.args_type is None:
            if raw not in (None, {}):
                self.problems.append(
                    helper.invalid(
                        path, raw, f"plugin {spec.name} takes no args; remove this pluginConfig entry"
                    )
                )
            return None, None
        args, problems = spec.args_type.decode(raw, path)
        self.problems.extend(problems)
        shown = (
            {"apiVersion": API_VERSION, "kind": f"{spec.name}Args", **args.to_dict()} if not problems else raw
        )
        return args, shown

    def _with_ignored_resources(
        self, entry: tuple[str, Any, Any, str], names: Sequence[str]
    ) -> tuple[str, Any, Any, str]:
        """Extenders' ``ignoredByScheduler`` resources replace NodeResourcesFit's ``ignoredResources`` (upstream
        ``scheduler.go`` does this for every profile)."""
        name, args, _shown, path = entry
        spec = self.registry.get(name)
        if name != "NodeResourcesFit" or args is None or spec is None or spec.args_type is None:
            return entry
        as_dict = dict(args.to_dict())
        as_dict["ignoredResources"] = list(names)
        new_args, problems = spec.args_type.decode(as_dict, _join(path or name, "args"))
        if problems:
            self.problems.extend(problems)
            return entry
        return name, new_args, {"apiVersion": API_VERSION, "kind": f"{name}Args", **new_args.to_dict()}, path

    # --- validation (upstream ValidateKubeSchedulerConfiguration + the profile map checks) ---------------------

    def _validate(self, d: _Decoded, built: list[_Built]) -> None:
        p = self.problems
        if d.burst is not None and d.burst < 0:
            p.append(helper.invalid("clientConnection.burst", d.burst, "must be non-negative"))
        leader_elect = d.leader_elect if d.leader_elect is not None else defaults.LEADER_ELECT
        lease = d.lease_duration or defaults.LEASE_DURATION_SECONDS
        renew = d.renew_deadline or defaults.RENEW_DEADLINE_SECONDS
        retry = d.retry_period or defaults.RETRY_PERIOD_SECONDS
        if leader_elect:
            for key, value in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
                if value <= 0:
                    p.append(
                        helper.invalid(
                            f"leaderElection.{key}",
                            durations.format_duration(value),
                            "must be greater than zero",
                        )
                    )
            if lease <= renew:
                p.append(
                    helper.invalid(
                        "leaderElection.leaseDuration",
                        durations.format_duration(renew),
                        "must be greater than `RenewDeadline`",
                    )
                )
            lock = d.resource_lock or defaults.RESOURCE_LOCK
            if lock != "leases":
                p.append(
                    helper.invalid("leaderElection.resourceLock", lock, 'resourceLock value must be "leases"')
                )
        if d.parallelism is not None and d.parallelism <= 0:
            p.append(
                helper.invalid("parallelism", d.parallelism, "should be an integer value greater than zero")
            )
        names: set[str] = set()
        for b in built:
            self._validate_profile(b)
            if b.raw.scheduler_name:
                if b.name in names:
                    p.append(helper.duplicate(f"{b.raw.path}.schedulerName", b.name))
                names.add(b.name)
        self._validate_common_queue_sort(built)
        self._check_queue_sort_pipelines(built)
        if d.percentage is not None:
            self._check_percentage("percentageOfNodesToScore", d.percentage)
        initial = d.initial_backoff if d.initial_backoff is not None else defaults.POD_INITIAL_BACKOFF_SECONDS
        maximum = d.max_backoff if d.max_backoff is not None else defaults.POD_MAX_BACKOFF_SECONDS
        if initial <= 0:
            p.append(helper.invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
        if maximum < initial:
            p.append(
                helper.invalid(
                    "podMaxBackoffSeconds",
                    maximum,
                    "must be greater than or equal to PodInitialBackoffSeconds",
                )
            )
        self._validate_extenders(d)

    def _check_percentage(self, path: str, value: int) -> None:
        if value < 0 or value > 100:
            self.problems.append(helper.invalid(path, value, "not in valid range [0-100]"))

    def _validate_profile(self, b: _Built) -> None:
        raw = b.raw
        if not raw.scheduler_name:
            self.problems.append(helper.required(f"{raw.path}.schedulerName", ""))
        if raw.percentage is not None:
            self._check_percentage(f"{raw.path}.percentageOfNodesToScore", raw.percentage)
        removed = set(defaults.REMOVED_IN_V1)
        for point in (MULTI_POINT, *POINT_NAMES):
            for entry in b.sets[point].enabled:
                if entry.name in removed and entry.path:
                    self.problems.append(self._removed(entry.path, entry.name))
        # berth: a negative weight would invert a plugin's preference; upstream silently accepts it.
        for point in ("score", MULTI_POINT):
            for entry in b.sets[point].enabled:
                if entry.path and entry.weight is not None and entry.weight < 0:
                    self.problems.append(
                        helper.invalid(
                            f"{entry.path}.weight", entry.weight, "must not be negative (unset or 0 means 1)"
                        )
                    )

    def _validate_common_queue_sort(self, built: list[_Built]) -> None:
        """Upstream ``validateCommonQueueSort``: every profile's queueSort set equals the first profile's."""
        first = built[0]
        canon = first.raw.plugins.get("queueSort", PluginSet()) if first.raw.plugins else PluginSet()
        if len(canon.enabled) > 1:
            self.problems.append(
                helper.invalid(
                    f"{first.raw.path}.plugins.queueSort.Enabled",
                    len(canon.enabled),
                    "only one queue sort plugin can be enabled",
                )
            )
            first.queue_sort_flagged = True
        queue_sort_name = canon.enabled[0].name if canon.enabled else ""
        canon_args = next((shown for n, _, shown, _ in first.config if n == queue_sort_name), None)
        for b in built[1:]:
            current = b.raw.plugins.get("queueSort", PluginSet()) if b.raw.plugins else PluginSet()
            if _set_key(current) != _set_key(canon):
                self.problems.append(
                    helper.invalid(
                        f"{b.raw.path}.plugins.queueSort",
                        _set_value(current),
                        "must be the same for all profiles",
                    )
                )
                b.queue_sort_flagged = True
            for n, _, shown, _ in b.config:
                if n == queue_sort_name and shown != canon_args:
                    self.problems.append(
                        helper.invalid(
                            f"{b.raw.path}.pluginConfig.args",
                            shown,
                            "queueSort must be the same for all profiles",
                        )
                    )
                    b.queue_sort_flagged = True

    def _check_queue_sort_pipelines(self, built: list[_Built]) -> None:
        """What the framework and the profile map check: exactly one queue sort, and the same one everywhere."""
        first_name: str | None = None
        first_args: Any = None
        for b in built:
            queue_sorts = b.pipelines["queueSort"]
            if len(queue_sorts) != 1:
                if not b.queue_sort_flagged:
                    self.problems.append(
                        helper.invalid(
                            f"{b.raw.path}.plugins.queueSort",
                            len(queue_sorts),
                            f'only one queue sort plugin required for profile with scheduler name "{b.name}", '
                            f"but got {len(queue_sorts)}",
                        )
                    )
                continue
            name = queue_sorts[0].name
            args = next((shown for n, _, shown, _ in b.config if n == name), None)
            if first_name is None:
                first_name, first_args = name, args
                continue
            if b.queue_sort_flagged:
                continue
            if name != first_name:
                self.problems.append(
                    helper.invalid(
                        f"{b.raw.path}.plugins.queueSort",
                        name,
                        f'different queue sort plugins for profile "{b.name}": "{name}", first: "{first_name}"'
                        " (all profiles share one queue, so they must use the same queue sort)",
                    )
                )
            elif args != first_args:
                self.problems.append(
                    helper.invalid(
                        f"{b.raw.path}.pluginConfig",
                        name,
                        f'different queue sort plugin args for profile "{b.name}"',
                    )
                )

    def _validate_extenders(self, d: _Decoded) -> None:
        p = self.problems
        binders = 0
        managed: set[str] = set()
        for ext, path in zip(d.extenders, d.extender_paths, strict=True):
            if ext.prioritize_verb and ext.weight <= 0:
                p.append(
                    helper.invalid(f"{path}.weight", ext.weight, "must have a positive weight applied to it")
                )
            if ext.bind_verb:
                binders += 1
            for j, res in enumerate(ext.managed_resources):
                rpath = f"{path}.managedResources[{j}].name"
                p.extend(_extended_resource_problems(res.name, rpath))
                if res.name in managed:
                    p.append(helper.invalid(rpath, res.name, "duplicate extender managed resource name"))
                managed.add(res.name)
        if binders > 1:
            p.append(
                helper.invalid(
                    "extenders",
                    f"found {binders} extenders implementing bind",
                    "only one extender can implement bind",
                )
            )

    # --- resolution -------------------------------------------------------------------------------------------

    def _resolve(self, d: _Decoded, built: list[_Built]) -> SchedulerConfiguration:
        profiles = tuple(
            Profile(
                scheduler_name=b.name,
                plugins=dict(b.pipelines),
                plugin_args={n: args for n, args, _, _ in b.config if args is not None},
                percentage_of_nodes_to_score=b.raw.percentage,
            )
            for b in built
        )
        leader = LeaderElection(
            leader_elect=d.leader_elect if d.leader_elect is not None else defaults.LEADER_ELECT,
            lease_duration_seconds=d.lease_duration or defaults.LEASE_DURATION_SECONDS,
            renew_deadline_seconds=d.renew_deadline or defaults.RENEW_DEADLINE_SECONDS,
            retry_period_seconds=d.retry_period or defaults.RETRY_PERIOD_SECONDS,
            resource_lock=d.resource_lock or defaults.RESOURCE_LOCK,
            resource_name=d.resource_name or defaults.RESOURCE_NAME,
            resource_namespace=d.resource_namespace or defaults.RESOURCE_NAMESPACE,
        )
        client = ClientConnection(
            kubeconfig=d.kubeconfig or "",
            accept_content_types=d.accept_content_types or "",
            content_type=d.content_type or defaults.CLIENT_CONTENT_TYPE,
            qps=d.qps or defaults.CLIENT_QPS,
            burst=d.burst or defaults.CLIENT_BURST,
        )
        profiling = d.enable_profiling if d.enable_profiling is not None else defaults.ENABLE_PROFILING
        contention = d.enable_contention_profiling
        if contention is None:
            contention = profiling
        cfg = SchedulerConfiguration(
            profiles=profiles,
            parallelism=d.parallelism if d.parallelism is not None else defaults.PARALLELISM,
            percentage_of_nodes_to_score=d.percentage if d.percentage is not None else 0,
            pod_initial_backoff_seconds=(
                d.initial_backoff if d.initial_backoff is not None else defaults.POD_INITIAL_BACKOFF_SECONDS
            ),
            pod_max_backoff_seconds=d.max_backoff
            if d.max_backoff is not None
            else defaults.POD_MAX_BACKOFF_SECONDS,
            leader_election=leader,
            extenders=tuple(d.extenders),
            client_connection=client,
            enable_profiling=profiling,
            enable_contention_profiling=contention,
            delay_cache_until_active=bool(d.delay_cache_until_active),
            source=self.source,
        )
        raw = _document(cfg, built, show_contention=d.enable_contention_profiling is not None or profiling)
        return replace(cfg, raw=raw)


def _set_key(s: PluginSet) -> tuple[tuple[tuple[str, int | None], ...], tuple[str, ...]]:
    return tuple((e.name, e.weight) for e in s.enabled), tuple(e.name for e in s.disabled)


def _set_value(s: PluginSet) -> dict[str, Any]:
    return _set_dict(s) or {}


def _entry_dict(e: Entry, with_weight: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"name": e.name}
    if with_weight and e.weight is not None:
        out["weight"] = e.weight
    return out


def _set_dict(s: PluginSet) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if s.enabled:
        out["enabled"] = [_entry_dict(e) for e in s.enabled]
    if s.disabled:
        out["disabled"] = [_entry_dict(e, with_weight=False) for e in s.disabled]
    return out


def _extender_dict(e: Extender) -> dict[str, Any]:
    out: dict[str, Any] = {"urlPrefix": e.url_prefix}
    for key, value in (
        ("filterVerb", e.filter_verb),
        ("preemptVerb", e.preempt_verb),
        ("prioritizeVerb", e.prioritize_verb),
        ("bindVerb", e.bind_verb),
        ("weight", e.weight),
        ("enableHTTPS", e.enable_https),
        ("tlsConfig", dict(e.tls_config) if e.tls_config is not None else None),
        (
            "httpTimeout",
            durations.format_duration(e.http_timeout_seconds) if e.http_timeout_seconds else None,
        ),
        ("nodeCacheCapable", e.node_cache_capable),
        (
            "managedResources",
            [{"name": r.name, "ignoredByScheduler": r.ignored_by_scheduler} for r in e.managed_resources],
        ),
        ("ignorable", e.ignorable),
    ):
        if value:
            out[key] = value
    return out


def _document(cfg: SchedulerConfiguration, built: Iterable[_Built], show_contention: bool) -> dict[str, Any]:
    """The defaulted document, keys in kube-scheduler's (alphabetical, JSON-tag) order after apiVersion/kind."""
    le = cfg.leader_election
    cc = cfg.client_connection
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "clientConnection": {
            "acceptContentTypes": cc.accept_content_types,
            "burst": cc.burst,
            "contentType": cc.content_type,
            "kubeconfig": cc.kubeconfig,
            "qps": cc.qps,
        },
        "delayCacheUntilActive": cfg.delay_cache_until_active,
        "enableContentionProfiling": cfg.enable_contention_profiling,
        "enableProfiling": cfg.enable_profiling,
    }
    if not show_contention:
        del doc["enableContentionProfiling"]
    if cfg.extenders:
        doc["extenders"] = [_extender_dict(e) for e in cfg.extenders]
    doc["leaderElection"] = {
        "leaderElect": le.leader_elect,
        "leaseDuration": durations.format_duration(le.lease_duration_seconds),
        "renewDeadline": durations.format_duration(le.renew_deadline_seconds),
        "resourceLock": le.resource_lock,
        "resourceName": le.resource_name,
        "resourceNamespace": le.resource_namespace,
        "retryPeriod": durations.format_duration(le.retry_period_seconds),
    }
    doc["parallelism"] = cfg.parallelism
    doc["percentageOfNodesToScore"] = cfg.percentage_of_nodes_to_score
    doc["podInitialBackoffSeconds"] = cfg.pod_initial_backoff_seconds
    doc["podMaxBackoffSeconds"] = cfg.pod_max_backoff_seconds
    profiles: list[dict[str, Any]] = []
    for b in built:
        prof: dict[str, Any] = {}
        if b.raw.percentage is not None:
            prof["percentageOfNodesToScore"] = b.raw.percentage
        pcs = [
            {"args": shown, "name": n} if shown is not None else {"name": n} for n, _, shown, _ in b.config
        ]
        if pcs:
            prof["pluginConfig"] = pcs
        plugins = {point: _set_dict(b.sets[point]) for point in (*POINT_NAMES, MULTI_POINT)}
        prof["plugins"] = {k: v for k, v in plugins.items() if v}
        prof["schedulerName"] = b.name
        profiles.append(prof)
    doc["profiles"] = profiles
    # Make sure the document is plain JSON data (args' to_dict may hold tuples).
    result: dict[str, Any] = json.loads(json.dumps(doc))
    return result
