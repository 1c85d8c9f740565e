"""Plugin sets: upstream's ``mergePluginSet`` of a profile's sets onto the defaults and the ``multiPoint``
expansion into per-point plugin lists with score weights (pure functions, tested directly).

Why a module of its own: this is the part of KubeSchedulerConfiguration handling with upstream's subtlest rules
(positions kept, ``"*"``, specific points overriding multiPoint); :mod:`berth.schedule.config` calls it while
building profiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from berth.schedule import defaults
from berth.schedule.framework.interface import POINT_NAMES

MULTI_POINT = "multiPoint"
# ``MaxTotalScore`` (math.MaxInt64) and ``MaxNodeScore``: the guard against weighted-sum overflow.
MAX_TOTAL_SCORE = 2**63 - 1
_MAX_NODE_SCORE = 100


@dataclass(frozen=True)
class Entry:
    """A plugin named in a plugin set: ``weight`` None when unset; ``path`` is where the user wrote it ('' for a
    default)."""

    name: str
    weight: int | None = None
    path: str = ""


@dataclass(frozen=True)
class PluginSet:
    enabled: tuple[Entry, ...] = ()
    disabled: tuple[Entry, ...] = ()

    def disabled_names(self) -> frozenset[str]:
        return frozenset(e.name for e in self.disabled)


def default_plugin_sets() -> dict[str, PluginSet]:
    """The default ``Plugins``: everything in ``multiPoint`` (defaults.DEFAULT_PLUGINS), other points empty."""
    sets = {point: PluginSet() for point in POINT_NAMES}
    sets[MULTI_POINT] = PluginSet(tuple(Entry(p.name, p.weight) for p in defaults.DEFAULT_PLUGINS))
    return sets


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Upstream ``mergePluginSet``: the user's set applied on top of the default one for one point.

    ``"*"`` in ``disabled`` drops every default; other disabled defaults are dropped; a default the user also
    enables is replaced in place (position kept, user's weight); the user's other enabled entries follow in their
    order. Duplicates are kept here (the build step reports them), as upstream does.
    """
    disabled = custom.disabled + default.disabled
    disabled_names = {e.name for e in disabled}
    custom_by_name: dict[str, tuple[int, Entry]] = {}
    for index, entry in enumerate(custom.enabled):
        custom_by_name[entry.name] = (index, entry)
    replaced: set[int] = set()
    enabled: list[Entry] = []
    if "*" not in disabled_names:
        for entry in default.enabled:
            if entry.name in disabled_names:
                continue
            if entry.name in custom_by_name:
                index, entry = custom_by_name[entry.name]
                replaced.add(index)
            enabled.append(entry)
    enabled.extend(e for i, e in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), disabled)


def merge_plugins(custom: Mapping[str, PluginSet] | None) -> dict[str, PluginSet]:
    """Upstream ``mergePlugins``: every point (and ``multiPoint``) merged onto :func:`default_plugin_sets`."""
    base = default_plugin_sets()
    if custom is None:
        return base
    return {point: merge_plugin_set(base[point], custom.get(point, PluginSet())) for point in base}


@dataclass(frozen=True)
class BuildProblem:
    """A plugin entry the framework cannot place: ``kind`` is "not-extend" or "duplicate"."""

    entry: Entry
    kind: str
    message: str


@dataclass
class _Expansion:
    """One point's pipeline plus what went wrong building it."""

    names: list[str]
    problems: list[BuildProblem]


def expand_point(
    point: str,
    specific: PluginSet,
    multi_point: PluginSet,
    implements: Mapping[str, frozenset[str]],
) -> _Expansion:
    """Upstream ``updatePluginList`` + ``expandMultiPointPlugins`` for one extension point.

    ``implements`` maps each known plugin name to the points it serves; unknown names are skipped (reported
    elsewhere). Order: specific-point entries that override a multiPoint plugin -> multiPoint plugins (defaults,
    then user) -> the other specific-point entries. Expansion is skipped where the point disables ``"*"``; a
    multiPoint plugin is added only where it implements the point and is not disabled there.
    """
    type_name = point[0].upper() + point[1:] + "Plugin"
    problems: list[BuildProblem] = []
    enabled: list[str] = []
    for entry in specific.enabled:
        points = implements.get(entry.name)
        if points is None:
            continue
        if point not in points:
            problems.append(
                BuildProblem(entry, "not-extend", f'plugin "{entry.name}" does not extend {type_name} plugin')
            )
            continue
        if entry.name in enabled:
            problems.append(
                BuildProblem(entry, "duplicate", f'plugin "{entry.name}" already registered as "{type_name}"')
            )
            continue
        enabled.append(entry.name)
    disabled = specific.disabled_names()
    if not multi_point.enabled or "*" in disabled:
        return _Expansion(enabled, problems)
    overrides: set[str] = set()
    from_multi: list[str] = []
    for entry in multi_point.enabled:
        points = implements.get(entry.name)
        if points is None or point not in points or entry.name in disabled:
            continue
        if entry.name in enabled:
            overrides.add(entry.name)
            continue
        if entry.name in from_multi:
            problems.append(
                BuildProblem(entry, "duplicate", f'plugin "{entry.name}" already registered as "{type_name}"')
            )
            continue
        from_multi.append(entry.name)
    ordered = [n for n in enabled if n in overrides] + from_multi + [n for n in enabled if n not in overrides]
    return _Expansion(ordered, problems)


def score_weights(
    score: PluginSet, multi_point: PluginSet, implements: Mapping[str, frozenset[str]]
) -> tuple[dict[str, int], bool]:
    """Upstream ``getScoreWeights``: weight per Score plugin, ``score.enabled`` first (it wins), then multiPoint.

    Unset or 0 -> 1. Returns the weights and whether the weighted sum could overflow ``MaxTotalScore``.
    """
    weights: dict[str, int] = {}
    total = 0
    overflow = False
    for entry in score.enabled + multi_point.enabled:
        points = implements.get(entry.name)
        if points is None or "score" not in points or entry.name in weights:
            continue
        weight = entry.weight or 1
        weights[entry.name] = weight
        if weight * _MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            overflow = True
        total += weight * _MAX_NODE_SCORE
    return weights, overflow
