"""charts/berth-scheduler and the Dockerfile: the chart renders what `berth schedule manifests` emits, with the
real helm binary; the image runs berth as a non-root user."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from berth.kube import canonical, tools, yamlio
from berth.schedule import config as config_mod
from berth.schedule import manifests, rbac
from berth.schedule.plugins.registry import default_registry

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "berth-scheduler"


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tools.find("helm").path, *args], capture_output=True, text=True, timeout=120, check=False
    )


def template(*args: str) -> list[dict[str, Any]]:
    proc = helm("template", "rel", str(CHART), *args)
    assert proc.returncode == 0, proc.stderr
    return [doc.body for doc in yamlio.load_documents(proc.stdout, "helm template")]


def values() -> dict[str, Any]:
    loaded = yamlio.load_file(CHART / "values.yaml")[0].body
    assert isinstance(loaded, dict)
    return loaded


def default_image(v: dict[str, Any]) -> str:
    """The values' image as `manifests --image` takes it (an empty tag is the chart's appVersion)."""
    tag = v["image"]["tag"] or yamlio.load_file(CHART / "Chart.yaml")[0].body["appVersion"]
    return f"{v['image']['repository']}:{tag}"


def canonical_set(objects: list[dict[str, Any]]) -> list[str]:
    return sorted(canonical.canonical_json(o) for o in objects)


def berth_render(config_text: str, tmp_path: Path, **options: Any) -> list[dict[str, Any]]:
    path = tmp_path / "config.yaml"
    path.write_text(config_text)
    reg = default_registry()
    cfg = config_mod.load(path, reg)
    opts = manifests.DeployOptions(**options)
    return list(manifests.render(config_text, cfg, reg, opts, source=str(path)).objects)


def test_chart_metadata_and_lint() -> None:
    chart = yamlio.load_file(CHART / "Chart.yaml")[0].body
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "berth-scheduler"
    proc = helm("lint", "--strict", str(CHART))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[ERROR]" not in proc.stdout
    assert "[WARNING]" not in proc.stdout


def test_default_values_render_what_manifests_emits(tmp_path: Path) -> None:
    v = values()
    rendered = template("--namespace", "berth-system")
    assert sorted(o["kind"] for o in rendered) == sorted(
        ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "Deployment"]
    )
    ours = berth_render(
        v["config"], tmp_path, image=default_image(v), namespace="berth-system", name=v["name"]
    )
    assert canonical_set(rendered) == canonical_set(ours)


def test_values_role_is_the_computed_role_for_the_values_config(tmp_path: Path) -> None:
    """values.yaml carries a generated role: regenerate with `berth schedule rbac -o values` when this fails."""
    v = values()
    path = tmp_path / "config.yaml"
    path.write_text(v["config"])
    reg = default_registry()
    expected = manifests.helm_values(rbac.compute(config_mod.load(path, reg), reg))
    assert v["rbac"] == expected["rbac"]


CUSTOM = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: packer
    plugins:
      multiPoint:
        disabled:
          - name: "*"
        enabled:
          - name: PrioritySort
          - name: Concentrate
          - name: DefaultBinder
    pluginConfig:
      - name: Concentrate
        args: {labelKey: team}
"""


def test_custom_config_with_generated_rbac_values_matches(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CUSTOM)
    reg = default_registry()
    role = rbac.compute(config_mod.load(config, reg), reg)
    rbac_values = tmp_path / "rbac-values.yaml"
    rbac_values.write_text(yamlio.dump(dict(manifests.helm_values(role))))
    rendered = template(
        "--namespace",
        "default",
        "--set",
        "namespace=sched",
        "--set",
        "image.repository=registry.example/berth,image.tag=2",
        "--set-file",
        f"config={config}",
        "-f",
        str(rbac_values),
    )
    ours = berth_render(CUSTOM, tmp_path, image="registry.example/berth:2", namespace="sched")
    assert canonical_set(rendered) == canonical_set(ours)
    (deploy,) = [o for o in rendered if o["kind"] == "Deployment"]
    assert deploy["spec"]["strategy"] == {"type": "Recreate"}  # no leader election
    assert deploy["metadata"]["annotations"] == {"berth.dev/scheduler-names": "packer"}


def test_release_namespace_is_the_default(tmp_path: Path) -> None:
    rendered = template("--namespace", "team-a")
    namespaced = [o for o in rendered if o["kind"] in ("ServiceAccount", "ConfigMap", "Deployment")]
    assert {o["metadata"]["namespace"] for o in namespaced} == {"team-a"}
    (binding,) = [o for o in rendered if o["kind"] == "ClusterRoleBinding"]
    assert binding["subjects"][0]["namespace"] == "team-a"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--set", "shape=separate"], "berth schedule manifests --shape separate", id="separate-shape"
        ),
        pytest.param(["--set", "config="], "config is empty", id="empty-config"),
        pytest.param(["--set-string", "config=a: [b"], "config is not valid YAML", id="malformed-config"),
    ],
)
def test_chart_refuses_what_it_cannot_render(args: list[str], message: str) -> None:
    proc = helm("template", "rel", str(CHART), *args)
    assert proc.returncode != 0
    assert message in proc.stderr


def test_chart_needs_no_hooks() -> None:
    for path in sorted((CHART / "templates").glob("*.yaml")):
        assert "helm.sh/hook" not in path.read_text(), path.name


# --- Dockerfile ------------------------------------------------------------------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def final_stage(steps: list[tuple[str, str]]) -> list[tuple[str, str]]:
    starts = [i for i, (word, _) in enumerate(steps) if word == "FROM"]
    return steps[starts[-1] :]


def test_dockerfile_runs_berth_as_non_root() -> None:
    steps = instructions((ROOT / "Dockerfile").read_text())
    stage = final_stage(steps)
    assert stage[0][1].split()[0].split("@")[0] == "python:3.11-slim"  # pinned by digest after the @
    users = [arg for word, arg in stage if word == "USER"]
    assert users, "the final stage must switch to a non-root USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    assert user == str(manifests.RUN_AS)  # numeric, so the pod's runAsNonRoot can be verified by the kubelet
    (entrypoint,) = [arg for word, arg in stage if word == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["berth"]
    runs = " ".join(arg for word, arg in steps if word == "RUN")
    assert "pip install" in runs


def test_dockerfile_copies_only_what_exists_and_is_not_ignored() -> None:
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for word, arg in instructions((ROOT / "Dockerfile").read_text()):
        if word != "COPY" or "--from=" in arg:
            continue
        *sources, _dest = shlex.split(arg)
        for source in sources:
            assert (ROOT / source).exists(), source
            assert source.rstrip("/") not in ignored, f"{source} is excluded by .dockerignore"
    for needed in ("src", "pyproject.toml", "README.md"):
        assert needed not in ignored
    assert ".venv" in ignored and ".git" in ignored


def test_shadow_value_renders_what_manifests_shadow_emits(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CUSTOM)
    reg = default_registry()
    role = rbac.compute(config_mod.load(config, reg), reg).read_only()
    rbac_values = tmp_path / "rbac-values.yaml"
    rbac_values.write_text(yamlio.dump(dict(manifests.helm_values(role))))
    rendered = template(
        "--namespace", "default", "--set", "namespace=sched", "--set", "image.repository=registry.example/berth,image.tag=2",
        "--set", "shadow=true", "--set-file", f"config={config}", "-f", str(rbac_values),
    )  # fmt: skip
    ours = berth_render(CUSTOM, tmp_path, image="registry.example/berth:2", namespace="sched", shadow=True)
    assert canonical_set(rendered) == canonical_set(ours)
    (deploy,) = [o for o in rendered if o["kind"] == "Deployment"]
    assert deploy["spec"]["template"]["spec"]["containers"][0]["args"][:2] == ["schedule", "shadow"]


def test_shadow_of_a_leader_electing_config_takes_no_lease_in_either(tmp_path: Path) -> None:
    v = values()
    reg = default_registry()
    path = tmp_path / "values-config.yaml"
    path.write_text(v["config"])
    cfg = config_mod.load(path, reg)
    assert cfg.leader_election.leader_elect  # the chart's default configuration elects a leader
    rbac_values = tmp_path / "rbac-values.yaml"
    rbac_values.write_text(yamlio.dump(dict(manifests.helm_values(rbac.compute(cfg, reg).read_only()))))
    rendered = template("--namespace", "berth-system", "--set", "shadow=true", "-f", str(rbac_values))
    ours = berth_render(
        v["config"], tmp_path, image=default_image(v), namespace="berth-system", name=v["name"], shadow=True
    )
    assert canonical_set(rendered) == canonical_set(ours)
    (deploy,) = [o for o in rendered if o["kind"] == "Deployment"]
    assert "--leader-elect" not in deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert deploy["spec"]["strategy"] == {"type": "Recreate"}
