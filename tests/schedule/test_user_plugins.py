"""User plugins in Python: the worked example in examples/plugins loaded by --plugin and by entry point."""

from __future__ import annotations

import importlib.metadata
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from berth.cli import main
from berth.kube.errors import InputError
from berth.schedule.plugins import registry as registry_mod

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins"
PLUGINS = ["--plugin", "berth_example_plugins:RequireLabel", "--plugin", "berth_example_plugins:FewestPods"]


@pytest.fixture(autouse=True)
def example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))


def simulate(capsys: pytest.CaptureFixture[str], config: Path, *extra: str) -> tuple[int, Any, str]:
    code = main(
        [
            "schedule",
            "simulate",
            "--config",
            str(config),
            "--cluster",
            str(EXAMPLE / "nodes.yaml"),
            "--workload",
            str(EXAMPLE / "workload.yaml"),
            "-o",
            "json",
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def test_example_plugins_filter_and_score(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = simulate(capsys, EXAMPLE / "config.yaml", *PLUGINS)
    assert code == 0
    assert Counter(p["node"] for p in doc["placements"]) == {"node-a": 2, "node-b": 2}


def test_the_plugins_reason_reaches_the_failed_scheduling_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        (EXAMPLE / "config.yaml").read_text().replace("value: batch", "value: gpu"), encoding="utf-8"
    )
    code, doc, _ = simulate(capsys, config, *PLUGINS)
    assert code == 0
    assert {u["message"] for u in doc["unschedulable"]} == {
        # The plugin rejects with UnschedulableAndUnresolvable: no node is a preemption candidate.
        "0/3 nodes are available: 3 node(s) didn't have label pool=gpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    }


def test_plugin_args_are_validated_with_their_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        (EXAMPLE / "config.yaml").read_text().replace("key: pool", "colour: red"), encoding="utf-8"
    )
    code, _, err = simulate(capsys, config, *PLUGINS)
    assert code == 2
    assert "profiles[0].pluginConfig[0].args.key: Required value" in err
    assert 'unknown field "colour"' in err


def test_a_profile_naming_an_unregistered_plugin_fails(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = simulate(capsys, EXAMPLE / "config.yaml")
    assert code == 2
    assert "RequireLabel" in err


def test_entry_points_register_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    eps = [
        importlib.metadata.EntryPoint(
            "FewestPods", "berth_example_plugins:FewestPods", registry_mod.ENTRY_POINT_GROUP
        )
    ]

    def fake(**kw: str) -> list[importlib.metadata.EntryPoint]:
        return eps if kw.get("group") == registry_mod.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(registry_mod.importlib.metadata, "entry_points", fake)
    reg = registry_mod.default_registry()
    spec = reg.get("FewestPods")
    assert spec is not None and spec.points == frozenset({"preScore", "score"})


def test_registering_a_plugin_name_twice_is_refused() -> None:
    reg = registry_mod.default_registry()
    spec = registry_mod.load_user_plugin("berth_example_plugins:FewestPods")
    reg.register(spec)
    with pytest.raises(InputError, match="already exists"):
        reg.register(spec)


@pytest.mark.parametrize(
    ("source", "line", "words"),
    [
        ("import os\n\ndef broken(:\n    pass\n", 3, "syntax error in plugin module 'broken_plugin'"),
        ("import os\nimport no_such_package_for_berth\n", 2, "cannot import module 'broken_plugin'"),
        ("X = 1\nY = X / 0\n", 2, "raised ZeroDivisionError: division by zero"),
    ],
    ids=["syntax-error", "missing-import", "raises-on-load"],
)
def test_a_broken_plugin_module_is_refused_naming_its_path_and_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str,
    line: int,
    words: str,
) -> None:
    (tmp_path / "broken_plugin.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "broken_plugin", raising=False)
    with pytest.raises(InputError) as info:
        registry_mod.load_user_plugin("broken_plugin:Plugin")
    message = str(info.value)
    assert f"{tmp_path / 'broken_plugin.py'}:{line}" in message
    assert words in message
    assert info.value.exit_code == 2
    # Through the CLI: one message, exit code 2, no traceback.
    code, _, err = simulate(capsys, EXAMPLE / "config.yaml", "--plugin", "broken_plugin:Plugin")
    assert code == 2
    assert "broken_plugin.py" in err and "Traceback" not in err
