"""The name -> plugin table: in-tree plugins plus user plugins registered by import path or entry point.

One home for the in-tree list (upstream ``framework/plugins/registry.go``). Registering a name twice is refused,
as upstream's runtime registry does.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import traceback
from collections.abc import Iterable

from berth.kube.errors import InputError
from berth.schedule.framework.interface import Plugin, PluginSpec

# Config name -> module under berth.schedule.plugins. Order is irrelevant here; default order lives in config.
IN_TREE_MODULES: dict[str, str] = {
    "SchedulingGates": "scheduling_gates",
    "PrioritySort": "priority_sort",
    "NodeUnschedulable": "node_unschedulable",
    "NodeName": "node_name",
    "TaintToleration": "taint_toleration",
    "NodeAffinity": "node_affinity",
    "NodePorts": "node_ports",
    "NodeResourcesFit": "node_resources_fit",
    "VolumeRestrictions": "volume_restrictions",
    "NodeVolumeLimits": "node_volume_limits",
    "VolumeBinding": "volume_binding",
    "VolumeZone": "volume_zone",
    "PodTopologySpread": "pod_topology_spread",
    "InterPodAffinity": "inter_pod_affinity",
    "DynamicResources": "dynamic_resources",
    "DefaultPreemption": "default_preemption",
    "NodeResourcesBalancedAllocation": "node_resources_balanced_allocation",
    "ImageLocality": "image_locality",
    "DefaultBinder": "default_binder",
    "Concentrate": "concentrate",
}

ENTRY_POINT_GROUP = "berth.scheduler_plugins"


class Registry:
    """Plugin specs by name. Build with :func:`default_registry`, then :meth:`register` user plugins."""

    def __init__(self, specs: Iterable[PluginSpec] = ()) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: PluginSpec) -> None:
        if spec.name in self._specs:
            raise InputError(f"a plugin named {spec.name!r} already exists", "plugin registry")
        self._specs[spec.name] = spec

    def get(self, name: str) -> PluginSpec | None:
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return sorted(self._specs)

    def copy(self) -> Registry:
        return Registry(self._specs.values())


def in_tree_specs() -> list[PluginSpec]:
    """Import every in-tree plugin module and collect its ``SPEC``."""
    specs = []
    for module in IN_TREE_MODULES.values():
        mod = importlib.import_module(f"berth.schedule.plugins.{module}")
        specs.append(mod.SPEC)
    return specs


def default_registry() -> Registry:
    """In-tree plugins plus those installed packages advertise under the ``berth.scheduler_plugins`` entry point."""
    reg = Registry(in_tree_specs())
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        reg.register(spec_from_object(ep.load(), f"entry point {ep.name}"))
    return reg


def spec_from_object(obj: object, where: str) -> PluginSpec:
    """Accept a PluginSpec, or a Plugin subclass (its ``NAME`` and optional ``Args`` attribute)."""
    if isinstance(obj, PluginSpec):
        return obj
    if isinstance(obj, type) and issubclass(obj, Plugin):
        if not getattr(obj, "NAME", ""):
            raise InputError(f"plugin class {obj.__name__} has no NAME", where)
        return PluginSpec(name=obj.NAME, plugin_class=obj, args_type=getattr(obj, "Args", None))
    raise InputError(
        f"{obj!r} is neither a berth PluginSpec nor a subclass of berth.schedule.framework.interface.Plugin",
        where,
    )


def _failing_line(exc: BaseException) -> str:
    """``path:line`` of the innermost frame outside Python's import machinery ("" when there is none): where in
    the user's module the import failed."""
    machinery = os.path.dirname(importlib.__file__)
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<frozen")
        and not f.filename.startswith(machinery)
        and f.filename != __file__
    ]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def load_user_plugin(ref: str) -> PluginSpec:
    """Resolve ``module:Attribute`` (the ``--plugin`` flag) to a plugin spec, with a clear message on failure."""
    where = f"--plugin {ref}"
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise InputError("expected MODULE:CLASS, e.g. my_plugins.spread:Spread", where)
    try:
        module = importlib.import_module(module_name)
    except SyntaxError as exc:
        at = f"{exc.filename}:{exc.lineno}" if exc.filename else module_name
        raise InputError(f"{at}: syntax error in plugin module {module_name!r}: {exc.msg}", where) from exc
    except ImportError as exc:
        at = _failing_line(exc)
        prefix = f"{at}: " if at else ""
        raise InputError(f"{prefix}cannot import module {module_name!r}: {exc}", where) from exc
    except Exception as exc:  # the module's own code failed while loading: the user's bug, shown as such
        at = _failing_line(exc)
        prefix = f"{at}: " if at else ""
        raise InputError(
            f"{prefix}importing plugin module {module_name!r} raised {type(exc).__name__}: {exc}", where
        ) from exc
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"module {module_name!r} has no attribute {attr!r}", where)
        obj = getattr(obj, part)
    return spec_from_object(obj, where)
