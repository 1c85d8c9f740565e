"""Invariants of plugin-set merging and multiPoint expansion over random (valid) profiles."""

from __future__ import annotations

from typing import Any

import test_config_fakes as fakes
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.schedule import config
from berth.schedule.framework.interface import POINT_NAMES

# Plugins a random profile may touch: everything but the queue sort and the binder (so every profile stays valid).
CANDIDATES = sorted(n for n in fakes.POINTS if n not in ("PrioritySort", "DefaultBinder", "QSort"))
IMPLEMENTS = {n: frozenset(p) for n, p in fakes.POINTS.items()}


def entries(names: list[str], weights: list[int | None]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, weight in zip(names, weights, strict=False):
        out.append({"name": name} if weight is None else {"name": name, "weight": weight})
    return out


@st.composite
def plugin_sets(draw: st.DrawFn) -> dict[str, Any]:
    plugins: dict[str, Any] = {}
    weights = st.lists(
        st.one_of(st.none(), st.integers(0, 9)), min_size=len(CANDIDATES), max_size=len(CANDIDATES)
    )
    multi_on = draw(st.lists(st.sampled_from(CANDIDATES), unique=True, max_size=4))
    multi_off = draw(st.lists(st.sampled_from(CANDIDATES), unique=True, max_size=4))
    plugins["multiPoint"] = {
        "enabled": entries(multi_on, draw(weights)),
        "disabled": entries(multi_off, [None] * 4),
    }
    for point in ("preFilter", "filter", "preScore", "score"):
        able = [n for n in CANDIDATES if point in IMPLEMENTS[n]]
        on = draw(st.lists(st.sampled_from(able), unique=True, max_size=3))
        off = draw(st.lists(st.sampled_from([*able, "*"]), unique=True, max_size=3))
        plugins[point] = {"enabled": entries(on, draw(weights)), "disabled": entries(off, [None] * 3)}
    return plugins


def resolve(plugins: dict[str, Any]) -> config.Profile:
    doc = {
        "apiVersion": config.API_VERSION,
        "kind": config.KIND,
        "profiles": [
            {
                "schedulerName": "p",
                "plugins": plugins,
                "pluginConfig": [{"name": "Concentrate", "args": {"labelKey": "app"}}],
            }
        ],
    }
    return config.parse(doc, "prop.yaml", fakes.fake_registry()).profiles[0]


@settings(max_examples=60, deadline=None)
@given(plugin_sets())
def test_expansion_invariants(plugins: dict[str, Any]) -> None:
    profile = resolve(plugins)
    multi_on = [e["name"] for e in plugins["multiPoint"]["enabled"]]
    multi_off = {e["name"] for e in plugins["multiPoint"]["disabled"]}
    for point in POINT_NAMES:
        names = profile.names(point)
        assert len(names) == len(set(names)), f"duplicate at {point}"
        assert all(point in IMPLEMENTS[n] for n in names), (
            f"plugin placed where it does not implement {point}"
        )
        spec = plugins.get(point, {"enabled": [], "disabled": []})
        on = [e["name"] for e in spec["enabled"]]
        off = {e["name"] for e in spec["disabled"]}
        # everything enabled at the point itself runs there
        assert set(on) <= set(names)
        if "*" in off:
            assert list(names) == on
            continue
        # something disabled at the point runs there only if the point itself enables it
        assert not ((off - set(on)) & set(names))
        # multiPoint plugins (defaults not disabled there, plus the user's) reach every point they implement
        defaults = [
            p.name for p in config.default_plugin_sets()["multiPoint"].enabled if p.name not in multi_off
        ]
        for name in [*defaults, *multi_on]:
            if point in IMPLEMENTS[name] and name not in off:
                assert name in names
        # order: overridden ones first, then the rest of multiPoint, then the point's own additions
        # (a point's own entry overrides a multiPoint one only if that point does not also disable it)
        merged_multi = {*defaults, *multi_on}
        additions = [n for n in on if n not in merged_multi or n in off]
        assert list(names[len(names) - len(additions) :]) == additions
    for ref in profile.plugins["score"]:
        assert ref.weight >= 1
        explicit = {e["name"]: e.get("weight") for e in plugins["score"]["enabled"]}
        if ref.name in explicit:
            assert ref.weight == (explicit[ref.name] or 1)
