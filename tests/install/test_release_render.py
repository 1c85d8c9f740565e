"""The install render rebuilt from the release ``helm install --dry-run=client`` gives (setup asks Helm for that
release anyway, for the release record's chart and values): byte for byte what ``helm template`` prints, else
``helm template`` renders it. One Helm process fewer per setup."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest

from berth.install import helm

from .conftest import REPO, Run
from .test_speed_paths import HelmRuns

HOOK_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "-1"}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
"""
CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""


def make_chart(root: Path, files: dict[str, str], chart_yaml: str = "") -> Path:
    root.mkdir(parents=True)
    (root / "Chart.yaml").write_text(f"apiVersion: v2\nname: {root.name}\nversion: 1.0.0\n{chart_yaml}")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8"))
    return root


CHARTS: dict[str, dict[str, str]] = {
    "plain": {
        "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n\n\n"
    },
    "hooks-and-crds": {
        "templates/job.yaml": HOOK_JOB,
        "templates/all.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n"
        "---\n# a comment only\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
        "crds/b-widgets.yaml": CRD,
        "crds/a.json": '{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",'
        ' "metadata": {"name": "gadgets.example.com"}}',
        "crds/README.md": "not a manifest: Helm skips it\n",
        "templates/NOTES.txt": "installed {{ .Release.Name }}\n",
    },
    "only-crds": {"crds/w.yaml": CRD + "\n\n"},
    "empty": {"templates/nothing.yaml": "{{/* renders nothing */}}\n"},
    "unknown-hook-and-crlf": {
        "templates/x.yaml": "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: x\r\n"
        '  annotations: {"helm.sh/hook": "pre-install,bogus"}\r\n---\r\napiVersion: v1\r\nkind: ConfigMap\r\n'
        "metadata: {name: y}\r\n",
        "crds/w.yaml": CRD.replace("\n", "\r\n"),
    },
    "values-and-release": {
        "values.yaml": "replicas: 2\nname: from-values\n",
        "templates/d.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n"
        "  namespace: {{ .Release.Namespace }}\ndata:\n  release: {{ .Release.Name }}\n"
        "  install: {{ .Release.IsInstall | quote }}\n  replicas: {{ .Values.replicas | quote }}\n",
    },
}


def _request(chart: Path, tmp: Path, value_args: tuple[str, ...] = ()) -> helm.RenderRequest:
    values = tmp / "preset.yaml"
    values.write_text("replicas: 3\n")
    return helm.RenderRequest(chart, "rel", "ns", (values,), value_args)


def _dry_run(req: helm.RenderRequest) -> helm.DryRun:
    args = [a for f in req.values_files for a in ("--values", str(f))] + list(req.value_args)
    return helm.install_dry_run(req.chart, req.release, req.namespace, args)


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_the_release_gives_helm_templates_own_text(tmp_path: Path, name: str) -> None:
    chart = make_chart(tmp_path / name, CHARTS[name])
    req = _request(chart, tmp_path, ("--set", "name=from-set"))
    assert helm.releasable(req, helm.chart_text(chart), helm.tool())
    rebuilt = helm.from_release(req, _dry_run(req), helm.tool().version)
    template = helm.render_all([req], twice=False)[0]
    assert rebuilt is not None
    assert rebuilt.text == template.text
    assert rebuilt.dropped_hook_events == template.dropped_hook_events


@pytest.mark.parametrize(
    "chart", ["edge-hooks", "hook-order-probe", "operator-crds", "admission-webhook"], ids=str
)
def test_the_example_charts_rebuild_exactly_or_are_rendered_by_helm(tmp_path: Path, chart: str) -> None:
    req = _request(REPO / "examples" / "charts" / chart, tmp_path)
    template = helm.render_all([req], twice=False)[0]
    served = helm.render_all([req], twice=False, release=(req, lambda: _dry_run(req)))[0]
    assert served.text == template.text
    if helm.releasable(req, helm.chart_text(req.chart), helm.tool()):
        assert served.command[1] == "install"


def test_a_kubeversion_constraint_is_trusted_only_with_the_pinned_helm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chart = make_chart(tmp_path / "kv", CHARTS["plain"], "kubeVersion: '>=1.30.0-0'\n")
    req = _request(chart, tmp_path)
    assert helm.releasable(req, helm.chart_text(chart), helm.tool()) == (helm.tool().version == "v4.1.4")
    other = helm.tools.Tool("helm", helm.tool().path, "v4.0.0", "PATH")
    assert not helm.releasable(req, helm.chart_text(chart), other)


@pytest.mark.parametrize(
    "case",
    ["capabilities", "capabilities-in-values-flag", "subchart", "helmignore", "is-upgrade", "nested-crds"],
)
def test_what_the_release_cannot_tell_is_rendered_by_helm(tmp_path: Path, case: str) -> None:
    files = dict(CHARTS["plain"])
    value_args: tuple[str, ...] = ()
    if case == "capabilities":
        files["templates/v.yaml"] = (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\n"
            'data: {pdb: {{ .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" | quote }}}\n'
        )
    elif case == "capabilities-in-values-flag":
        files["templates/v.yaml"] = (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\ndata: {x: {{ tpl .Values.x . | quote }}}\n"
        )
        value_args = ("--set-literal", "x={{ .Capabilities.KubeVersion.Minor }}")
    elif case == "subchart":
        files["charts/sub/Chart.yaml"] = "apiVersion: v2\nname: sub\nversion: 0.1.0\n"
        files["charts/sub/crds/w.yaml"] = CRD
    elif case == "helmignore":
        files[".helmignore"] = "crds/skip.yaml\n"
        files["crds/skip.yaml"] = CRD
    elif case == "nested-crds":
        files["crds/more/w.yaml"] = CRD
    chart = make_chart(tmp_path / "c", files)
    req = _request(chart, tmp_path, value_args)
    if case == "is-upgrade":
        req = helm.RenderRequest(chart, "rel", "ns", req.values_files, is_upgrade=True)
    if case != "nested-crds":
        assert not helm.releasable(req, helm.chart_text(chart), helm.tool())
    template = helm.render_all([req], twice=False)[0]
    served = helm.render_all([req], twice=False, release=(req, lambda: _dry_run(req)))[0]
    assert served.text == template.text and served.command[1] == "template"


def test_a_render_that_prints_the_whole_context_is_rendered_by_helm(tmp_path: Path) -> None:
    files = {
        "templates/all.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ctx}\n"
        "data: {ctx: {{ toJson $ | quote }}}\n"
    }
    chart = make_chart(tmp_path / "ctx", files)
    req = _request(chart, tmp_path)
    assert helm.releasable(req, helm.chart_text(chart), helm.tool())  # nothing in the files says Capabilities
    assert helm.from_release(req, _dry_run(req), helm.tool().version) is None  # ... but the render shows them
    template = helm.render_all([req], twice=False)[0]
    served = helm.render_all([req], twice=False, release=(req, lambda: _dry_run(req)))[0]
    assert served.text == template.text and served.command[1] == "template"


def test_a_failed_release_falls_back_to_helms_own_error(tmp_path: Path, run: Run) -> None:
    chart = make_chart(tmp_path / "bad", {"templates/x.yaml": "{{ .Values.missing.field }}\n"})
    r = run("install", "setup", "--pull", chart, "--work-dir", tmp_path / "w", "--non-interactive")
    assert r.code == 2
    assert "helm template failed" in r.err and "bad/templates/x.yaml:1" in r.err


def _setup(run: Run, chart: Path, work: Path) -> None:
    r = run(
        "install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive", "--set", "name=cm-set"
    )
    assert r.code == 0, r.err


def _same_tree(a: Path, b: Path) -> None:
    cmp = filecmp.dircmp(a, b)
    assert not cmp.left_only and not cmp.right_only and not cmp.funny_files, cmp.report()
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    assert not errors
    assert [m for m in mismatch if m not in {"plan.yaml"}] == []
    for sub in cmp.common_dirs:
        _same_tree(a / sub, b / sub)


@pytest.mark.parametrize("name", ["hooks-and-crds", "values-and-release"])
def test_setup_writes_the_same_work_dir_either_way(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    chart = make_chart(tmp_path / name, CHARTS[name])
    runs = HelmRuns(monkeypatch)
    _setup(run, chart, tmp_path / "fast")
    fast_templates = len(runs.commands)
    monkeypatch.setattr(helm, "releasable", lambda *a: False)
    _setup(run, chart, tmp_path / "slow")
    assert (
        len(runs.commands) - fast_templates == fast_templates + 1
    )  # + the install variant, by helm template
    for w in ("fast", "slow"):
        shutil.rmtree(tmp_path / w / "out" / "revisions", ignore_errors=True)
    _same_tree(tmp_path / "fast" / "out", tmp_path / "slow" / "out")
    _same_tree(tmp_path / "fast" / "package", tmp_path / "slow" / "package")
