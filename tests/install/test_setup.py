"""``berth install package`` and ``setup``: layout, messages, remembered answers, and bad input leaving W/out as it was."""

from __future__ import annotations

import io
import shutil
import stat
import tarfile
from pathlib import Path

import pytest

from berth.install import layout
from berth.kube import yamlio

from .conftest import EDGE_CHART, EDGE_SPEC, Run, tree_digest


def spec_of(path: Path) -> dict[str, object]:
    body = yamlio.load_file(path)[0].body
    assert isinstance(body, dict)
    spec = body["spec"]
    assert isinstance(spec, dict)
    return spec


def test_package_layout_lock_and_receipt(edge_package: Path) -> None:
    manifest = spec_of(edge_package / "berth-package.yaml")
    chart = manifest["chart"]
    assert isinstance(chart, dict)
    assert (edge_package / str(chart["archive"])).is_file() and len(str(chart["sha256"])) == 64
    assert [b["name"] for b in manifest["bases"]] == ["default", "ha"]  # type: ignore[attr-defined]
    render = edge_package / "bases" / "default" / "render"
    assert (render / "manifests" / "deployment-edge-app.yaml").is_file()
    assert (render / "lifecycle" / "pre-install" / "job-edge-migrate.yaml").is_file()
    assert (render / "lifecycle" / "pre-upgrade" / "job-edge-migrate.yaml").is_file()
    assert len(yamlio.load_documents((render / "crds.yaml").read_text())) == 2
    receipt = spec_of(render / "receipt.yaml")
    assert receipt["counts"] == {
        "total": 27,
        "ordinary": 8,
        "crds": 2,
        "secrets": 1,
        "hooks": 16,
        "hookJobs": 6,
    }
    assert receipt["images"] == [
        "registry.example.com/edge/app:1.0.0",
        "registry.example.com/edge/hooks:1.0.0",
    ]
    files = receipt["files"]
    assert isinstance(files, list) and all(len(f["sha256"]) == 64 for f in files)
    ha = spec_of(edge_package / "bases" / "ha" / "render" / "receipt.yaml")
    assert ha["valuesSha256"] and receipt["valuesSha256"] is None


def test_setup_output_lines_and_layout(edge_workdir: Path) -> None:
    out = edge_workdir / "out"
    assert sorted(p.name for p in (out / "spec").iterdir()) == [
        "facts.yaml",
        "inputs.yaml",
        "manifest-index.yaml",
        "render-id",
        "secret-inputs.yaml",
        "selection.yaml",
        "values.yaml",
    ]
    assert (out / "spec" / "render-id").read_text() == layout.render_digest(out) + "\n"
    assert len(list((out / "manifests").glob("*.yaml"))) == 10
    assert stat.S_IMODE((out / "secrets").stat().st_mode) == 0o700
    assert stat.S_IMODE((out / "secrets" / "secret-edge-app-token.yaml").stat().st_mode) == 0o600
    assert (
        out / ".gitignore"
    ).read_text() == "secrets/\nrelease/\nupgrade/secrets/\nspec/secret-inputs.yaml\n"
    assert not list((out / "manifests").glob("secret-*"))
    assert (out / "lifecycle" / "plan.yaml").is_file()
    events = sorted(p.name for p in (out / "lifecycle").iterdir() if p.is_dir())
    assert events == sorted(
        [
            "pre-install",
            "post-install",
            "pre-upgrade",
            "post-upgrade",
            "pre-delete",
            "post-delete",
            "pre-rollback",
            "post-rollback",
            "test",
        ]
    )
    inputs = spec_of(out / "spec" / "inputs.yaml")
    assert inputs["values"] == {}  # licenseKey is a secret input: stored apart, owner-only
    assert spec_of(out / "spec" / "secret-inputs.yaml")["values"] == {
        "licenseKey": "k-1,2"
    }  # not split on commas
    assert stat.S_IMODE((out / "spec" / "secret-inputs.yaml").stat().st_mode) == 0o600
    assert inputs["defaults"] == {"greeting": "hello", "replicas": 1}
    facts = spec_of(out / "spec" / "facts.yaml")["values"]
    assert isinstance(facts, dict)
    assert facts["requiredSecrets"] == [{"namespace": "edge", "name": "edge-license"}]
    assert facts["kubeVersion"] == {"assumed": "1.35.0"}


def test_setup_prints_the_issue_lines(run: Run, tmp_path: Path, edge_package: Path) -> None:
    work = tmp_path / "w"
    r = run("install", "setup", "--pull", edge_package, "--namespace", "edge", "--work-dir", work,
            "--non-interactive", "--input", "licenseKey=x", "--select", "ha-extra")  # fmt: skip
    assert r.code == 0, r.err
    out = work.resolve() / "out"
    lines = r.out.splitlines()
    assert lines[0] == f"Wizard wrote {out}/spec/selection.yaml and inputs.yaml"
    assert lines[1].startswith("Collector produced ") and lines[1].endswith(
        f"fact(s) in {out}/spec/facts.yaml"
    )
    assert (
        lines[2] == "Base: default; components: [metrics, ha-extra]"
    )  # requires closed over, declaration order
    assert lines[3] == "Namespace: edge"
    assert lines[4] == "Release: edge"
    assert lines[5] == f"Rendered 11 manifest(s) to {out}/manifests"  # + ServiceMonitor from metrics
    assert "requirement: CRD for ServiceMonitor" in r.out


def test_setup_from_a_chart_makes_a_default_base(run: Run, tmp_path: Path) -> None:
    r = run(
        "install",
        "setup",
        "--pull",
        EDGE_CHART,
        "--namespace",
        "team-a",
        "--work-dir",
        tmp_path / "w",
        "--non-interactive",
    )
    assert r.code == 0, r.err
    assert "Base: default; components: []" in r.out and "Namespace: team-a" in r.out
    assert (tmp_path / "w" / "package" / "berth-package.yaml").is_file()
    assert (tmp_path / "w" / "out" / "manifests" / "deployment-team-a-app.yaml").is_file()


def test_rerun_reuses_answers_but_takes_new_defaults(run: Run, workdir_copy: Path, tmp_path: Path) -> None:
    spec = EDGE_SPEC.read_text().replace("default: hello", "default: bonjour")
    spec_dir = tmp_path / "spec2"
    shutil.copytree(EDGE_SPEC.parent, spec_dir)
    (spec_dir / "spec.yaml").write_text(spec)
    pkg2 = tmp_path / "pkg2"
    assert run("install", "package", EDGE_CHART, "--spec", spec_dir / "spec.yaml", "--out", pkg2).code == 0
    r = run("install", "setup", "--pull", pkg2, "--work-dir", workdir_copy, "--non-interactive")
    assert r.code == 0, r.err
    inputs = spec_of(workdir_copy / "out" / "spec" / "inputs.yaml")
    assert spec_of(workdir_copy / "out" / "spec" / "secret-inputs.yaml")["values"] == {"licenseKey": "k-1,2"}
    assert inputs["defaults"] == {"greeting": "bonjour", "replicas": 1}
    settings = yamlio.load_file(workdir_copy / "out" / "manifests" / "configmap-edge-app-settings.yaml")[
        0
    ].body
    assert settings["data"]["greeting"] == "bonjour"
    assert "Namespace: edge" in r.out  # the package's namespace


def test_rerun_keeps_run_receipts_and_the_recorded_context(run: Run, workdir_copy: Path) -> None:
    runs = workdir_copy / "out" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "target.yaml").write_text("context: berth\n")
    r = run(
        "install",
        "setup",
        "--pull",
        workdir_copy / "package",
        "--work-dir",
        workdir_copy,
        "--non-interactive",
    )
    assert r.code == 0, r.err
    assert (runs / "target.yaml").read_text() == "context: berth\n"


def test_interactive_asks_only_inputs_without_default(
    run: Run, tmp_path: Path, edge_package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("typed-key\n"))
    r = run("install", "setup", "--pull", edge_package, "--work-dir", tmp_path / "w")
    assert r.code == 0, r.err
    assert (r.out + r.err).count("License key") == 1 and "Greeting" not in r.out + r.err
    assert "typed-key" not in r.out + r.err  # read without echo, never printed
    spec = tmp_path / "w" / "out" / "spec"
    assert spec_of(spec / "secret-inputs.yaml")["values"] == {"licenseKey": "typed-key"}
    assert "typed-key" not in (spec / "inputs.yaml").read_text()


def _chart(root: Path, template: str) -> Path:
    chart = root / "badchart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: badchart\nversion: 0.1.0\n")
    (chart / "templates" / "t.yaml").write_text(template)
    return chart


def _evil_tgz(root: Path) -> Path:
    path = root / "evil.tgz"
    with tarfile.open(path, "w:gz") as tar:
        data = b"apiVersion: v2\nname: t\nversion: 1.0.0\n"
        info = tarfile.TarInfo("t/Chart.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("t/templates/x.yaml")
        link.type = tarfile.SYMTYPE
        link.linkname = "../../../etc/passwd"
        tar.addfile(link)
    return path


def _bad_values_chart(root: Path) -> Path:
    chart = _chart(root, CM)
    (chart / "values.yaml").write_text("x: [\n")
    return chart


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"

BAD_SETUPS = [
    ("unknown-base", lambda t, p: ["--pull", p, "--base", "nope"], "unknown base 'nope'"),
    ("unknown-component", lambda t, p: ["--pull", p, "--select", "nope"], "unknown component 'nope'"),
    (
        "conflicting",
        lambda t, p: ["--pull", p, "--select", "single", "--select", "ha-extra"],
        "conflicts with",
    ),
    ("unknown-input", lambda t, p: ["--pull", p, "--input", "nope=1"], "unknown input 'nope'"),
    ("bad-int-input", lambda t, p: ["--pull", p, "--input", "replicas=many"], "must be an integer"),
    ("chart-not-found", lambda t, p: ["--pull", t / "missing-chart"], "chart not found"),
    ("bad-tgz", lambda t, p: ["--pull", _evil_tgz(t)], "links are not allowed"),
    (
        "template-error",
        lambda t, p: ["--pull", _chart(t, "a: {{ .Values.x.y }}\n")],
        "badchart/templates/t.yaml:1",
    ),
    ("duplicate-identity", lambda t, p: ["--pull", _chart(t, CM + "---\n" + CM)], "rendered twice"),
    ("not-an-object", lambda t, p: ["--pull", _chart(t, "foo: bar\n")], "no kind or apiVersion"),
    (
        "release-namespace-twin",
        lambda t, p: [
            "--pull",
            _chart(
                t, CM + "---\n" + CM.replace("{name: a}", "{name: a, namespace: {{ .Release.Namespace }}}")
            ),
        ],
        "ConfigMap edge/a is rendered twice",
    ),
    (
        "invalid-chart-values",
        lambda t, p: ["--pull", _bad_values_chart(t)],
        "chart badchart: values.yaml, document 1",
    ),
]


@pytest.mark.parametrize(("case", "args", "message"), BAD_SETUPS, ids=[c[0] for c in BAD_SETUPS])
def test_bad_input_exits_2_and_leaves_out_untouched(
    run: Run, workdir_copy: Path, tmp_path: Path, edge_package: Path, case: str, args: object, message: str
) -> None:
    before = tree_digest(workdir_copy)
    extra = args(tmp_path, edge_package)  # type: ignore[operator]
    r = run(
        "install", "setup", "--work-dir", workdir_copy, "--namespace", "edge", "--non-interactive", *extra
    )
    assert r.code == 2, (r.out, r.err)
    assert r.err.startswith("error: ") and message in r.err
    assert "Traceback" not in r.err
    assert tree_digest(workdir_copy) == before


def test_missing_required_input(run: Run, tmp_path: Path, edge_package: Path) -> None:
    work = tmp_path / "w"
    r = run("install", "setup", "--pull", edge_package, "--work-dir", work, "--non-interactive")
    assert r.code == 2
    assert "missing required input licenseKey: pass --input licenseKey=VALUE" in r.err
    assert not work.exists()  # a first setup that fails leaves no (empty) work dir behind
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    r = run("install", "setup", "--pull", edge_package, "--work-dir", work, "--non-interactive")
    assert r.code == 2 and sorted(p.name for p in work.iterdir()) == ["notes.txt"]  # an existing one stays


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "x=BAD"], "values file"),
        (["--spec", "MISSING"], "spec file not found"),
    ],
    ids=["bad-values", "missing-spec"],
)
def test_package_bad_input(run: Run, tmp_path: Path, args: list[str], message: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("x: [\n")
    argv = [a.replace("BAD", str(bad)).replace("MISSING", str(tmp_path / "none.yaml")) for a in args]
    r = run("install", "package", EDGE_CHART, *argv, "--out", tmp_path / "p")
    assert r.code == 2 and message in r.err
    assert not (tmp_path / "p").exists()


def test_package_manifest_is_decoded_strictly(run: Run, tmp_path: Path, edge_package: Path) -> None:
    pkg = tmp_path / "pkg"
    shutil.copytree(edge_package, pkg)
    text = (
        (pkg / "berth-package.yaml")
        .read_text()
        .replace("  release: edge\n", "  release: edge\n  surprise: 1\n")
    )
    (pkg / "berth-package.yaml").write_text(text)
    r = run("install", "setup", "--pull", pkg, "--work-dir", tmp_path / "w", "--non-interactive")
    assert r.code == 2 and "spec.surprise: unknown field" in r.err


def test_tampered_chart_archive_fails_the_lock(run: Run, tmp_path: Path, edge_package: Path) -> None:
    pkg = tmp_path / "pkg"
    shutil.copytree(edge_package, pkg)
    archive = next((pkg / "chart").glob("*.tgz"))
    archive.write_bytes(archive.read_bytes() + b"\0")
    r = run(
        "install",
        "setup",
        "--pull",
        pkg,
        "--work-dir",
        tmp_path / "w",
        "--non-interactive",
        "--input",
        "licenseKey=x",
    )
    assert r.code == 2 and "the lock says" in r.err


def test_cluster_actions_refuse_a_work_dir_without_setup(run: Run) -> None:
    for name in ("apply", "uninstall", "status"):
        r = run("install", name, "--work-dir", "x")
        assert r.code == 2 and "no berth setup here" in r.err and "berth install setup" in r.err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("  - name: ha\n", "  - name: ../ha\n"), "spec.bases[1].name: '../ha' is not a valid name"),
        (("  - name: ha\n", "  - name: default\n"), "spec.bases: 'default' is declared twice"),
        (("values: bases/ha/values.yaml", "values: ../../etc/passwd"), "must be a path inside the package"),
        (("archive: chart/", "archive: /tmp/../chart/"), "spec.chart.archive: '/tmp/../chart/"),
        (("  - name: replicas\n", "  - name: greeting\n"), "spec.inputs: 'greeting' is declared twice"),
        (("  - name: single\n", "  - name: Single Comp\n"), "is not a valid name"),
    ],
    ids=[
        "base-path-escape",
        "duplicate-base",
        "values-outside",
        "archive-outside",
        "duplicate-input",
        "bad-component-name",
    ],
)
def test_manifest_names_and_paths_are_checked(
    run: Run, tmp_path: Path, edge_package: Path, edit: tuple[str, str], message: str
) -> None:
    pkg = tmp_path / "pkg"
    shutil.copytree(edge_package, pkg)
    text = (pkg / "berth-package.yaml").read_text()
    assert edit[0] in text
    (pkg / "berth-package.yaml").write_text(text.replace(edit[0], edit[1], 1))
    r = run("install", "setup", "--pull", pkg, "--work-dir", tmp_path / "w", "--non-interactive")
    assert r.code == 2 and message in r.err, r.err


def test_package_refuses_unsafe_base_name(run: Run, tmp_path: Path) -> None:
    r = run("install", "package", EDGE_CHART, "--base", "../x", "--out", tmp_path / "p")
    assert r.code == 2 and "not a valid name" in r.err
