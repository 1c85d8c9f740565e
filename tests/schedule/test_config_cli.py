"""``berth schedule config``: prints the defaulted or expanded configuration, or every problem with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from berth.kube import yamlio
from berth.kube.errors import MultiInputError
from berth.schedule import config_cli

GOOD = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: academy-default
- schedulerName: academy-concentrate
  plugins:
    multiPoint:
      enabled: [{name: Concentrate, weight: 10}]
  pluginConfig:
  - {name: Concentrate, args: {labelKey: app}}
"""

BAD = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 0
profiles:
- schedulerName: a
- schedulerName: a
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sched.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("args", "check"),
    [
        pytest.param([], "yaml", id="yaml"),
        pytest.param(["-o", "json"], "json", id="json"),
        pytest.param(["--expanded", "-o", "json"], "expanded", id="expanded"),
    ],
)
def test_prints_the_configuration(tmp_path: Path, args: list[str], check: str) -> None:
    result = CliRunner().invoke(config_cli.config_command, ["--config", write(tmp_path, GOOD), *args])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout) if check != "yaml" else yamlio.load_one(result.stdout)
    assert [p["schedulerName"] for p in doc["profiles"]] == ["academy-default", "academy-concentrate"]
    if check == "expanded":
        score = doc["profiles"][1]["plugins"]["score"]["enabled"]
        assert score[-1] == {"name": "Concentrate", "weight": 10}
    else:
        assert doc["profiles"][1]["plugins"]["multiPoint"]["enabled"][-1] == {
            "name": "Concentrate",
            "weight": 10,
        }


def test_the_default_profile_has_no_inactive_plugin_to_note(tmp_path: Path) -> None:
    """DynamicResources runs (pods without claims, as upstream): the default profile draws no note any more."""
    result = CliRunner().invoke(config_cli.config_command, ["--config", write(tmp_path, GOOD)])
    assert result.exit_code == 0
    assert "not active yet" not in result.stderr


def test_bad_configuration_is_every_problem_and_exit_code_2(tmp_path: Path) -> None:
    path = write(tmp_path, BAD)
    with pytest.raises(MultiInputError) as err:
        config_cli.config_command.main(["--config", path], standalone_mode=False)
    assert err.value.exit_code == 2
    assert err.value.problems == [
        f"{path}: parallelism: Invalid value: 0: should be an integer value greater than zero",
        f'{path}: profiles[1].schedulerName: Duplicate value: "a"',
    ]


def test_through_the_berth_entry_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from berth.cli import main

    path = write(tmp_path, BAD)
    assert main(["schedule", "config", "--config", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: invalid KubeSchedulerConfiguration {path} (2 problem(s)):")
    assert f'  - {path}: profiles[1].schedulerName: Duplicate value: "a"' in err
    assert main(["schedule", "config", "--config", write(tmp_path, GOOD), "--expanded"]) == 0
    assert "academy-concentrate" in capsys.readouterr().out


def test_simulate_refuses_a_bad_configuration_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from berth.cli import main

    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n"
    )
    workload = tmp_path / "work.yaml"
    workload.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: x}]}\n"
    )
    code = main(
        [
            "schedule",
            "simulate",
            "--config",
            write(tmp_path, BAD),
            "--cluster",
            str(nodes),
            "--workload",
            str(workload),
        ]
    )
    assert code == 2
    assert "parallelism: Invalid value: 0" in capsys.readouterr().err
