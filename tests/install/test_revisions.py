"""The work dir's release history: what setup records, how much it keeps, what a revision reads back as."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from berth.install import package, revisions, verify
from berth.kube.errors import InputError

from .conftest import Run, tree_digest


def test_setup_records_the_render_it_replaces(edge_history_workdir: Path) -> None:
    out = edge_history_workdir / "out"
    assert revisions.numbers(out) == [1]
    rev = out / "revisions" / "1"
    assert sorted(p.name for p in rev.iterdir()) == [
        ".gitignore", "lifecycle", "manifests", "package", "release", "revision.yaml", "secrets", "spec",
        "upgrade",
    ]  # fmt: skip
    assert not (rev / "lifecycle" / "plan.yaml").exists() and not (rev / "runs").exists()
    assert (rev / "manifests" / "service-edge-app.yaml").is_file() or (
        rev / "manifests" / "service-app.yaml"
    ).is_file()
    assert stat.S_IMODE((rev / "secrets").stat().st_mode) == 0o700  # Secrets stay private in the history
    assert (rev / ".gitignore").read_text().startswith("secrets/\n")
    loaded = revisions.load(out, 1)
    assert loaded.label == "revision 1 (edge-hooks 0.3.0)"
    assert "Service" in {o.kind for o in loaded.split.ordinary}
    # The package the render came from (0.3.0, as W/package held it then), its chart archive as pulled.
    assert loaded.package == rev / "package"
    kept = package.load(loaded.package)
    assert (kept.name, kept.version) == ("edge-hooks", "0.3.0")
    assert kept.chart.sha256 == loaded.meta["chart"]["sha256"]
    assert package.load(edge_history_workdir / "package").version == "0.4.0"
    assert verify.run(edge_history_workdir).ok  # the history is not a stale render


def test_a_revision_keeps_its_package_without_the_base_review_renders(
    tmp_path: Path, edge_workdir: Path
) -> None:
    new = tmp_path / "new"
    new.mkdir()
    assert revisions.record(edge_workdir / "out", edge_workdir / "package", new, "t") == 1
    kept = new / "revisions" / "1" / "package"
    files = sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file())
    source = edge_workdir / "package"
    assert files == sorted(
        p.relative_to(source).as_posix()
        for p in source.rglob("*")
        if p.is_file() and "render" not in p.relative_to(source).parts
    )
    assert "bases/ha/values.yaml" in files and any(f.startswith("components/") for f in files)
    assert [f for f in files if f.endswith(".tgz")] == [
        "chart/edge-hooks-0.3.0.tgz"
    ]  # the archive, not unpacked
    assert package.load(kept).to_dict() == package.load(source).to_dict()
    assert tree_digest(kept) == {k: v for k, v in tree_digest(source).items() if "/render/" not in k}


def test_a_package_that_is_not_the_renders_is_not_kept(tmp_path: Path, edge_history_workdir: Path) -> None:
    """A work dir rolled back to a revision recorded without its package keeps the newer W/package; the render in
    W/out is then recorded with the label its own spec gives, and without that package."""
    old = tmp_path / "old"
    shutil.copytree(edge_history_workdir / "out" / "revisions" / "1", old)  # 0.3.0's render
    new = tmp_path / "new"
    new.mkdir()
    assert revisions.record(old, edge_history_workdir / "package", new, "t") == 1  # W/package: 0.4.0
    rev = revisions.load(new, 1)
    assert rev.package is None and not (new / "revisions" / "1" / "package").exists()
    assert rev.label == "revision 1 (edge-hooks 0.3.0)"
    assert rev.meta["package"] == {"name": "edge-hooks", "version": "0.3.0"} and "chart" not in rev.meta


def test_a_revision_recorded_before_packages_were_kept_still_loads(
    tmp_path: Path, edge_history_workdir: Path
) -> None:
    work = tmp_path / "w"
    shutil.copytree(edge_history_workdir, work)
    shutil.rmtree(work / "out" / "revisions" / "1" / "package")
    rev = revisions.load(work / "out", 1)
    assert rev.package is None and rev.label == "revision 1 (edge-hooks 0.3.0)"


def test_setup_prints_the_recorded_revision(run: Run, tmp_path: Path, edge_history_workdir: Path) -> None:
    work = tmp_path / "w"
    shutil.copytree(edge_history_workdir, work)
    r = run("install", "setup", "--pull", edge_history_workdir / "package", "--namespace", "edge",
            "--work-dir", work, "--non-interactive")  # fmt: skip
    assert r.code == 0, r.err
    assert f"Recorded the render this replaced as revision 2 in {work.resolve()}/out/revisions" in r.out
    assert revisions.numbers(work / "out") == [1, 2]


def test_history_keeps_the_newest_ten(tmp_path: Path, edge_workdir: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(edge_workdir / "out", old)
    for n in range(1, 13):
        new.mkdir()
        assert revisions.record(old, edge_workdir / "package", new, "t") == n
        shutil.rmtree(old / "revisions", ignore_errors=True)
        shutil.copytree(new / "revisions", old / "revisions")
        shutil.rmtree(new)
    assert revisions.numbers(old) == list(range(3, 13))
    assert revisions.latest(old) is not None and revisions.latest(old).number == 12  # type: ignore[union-attr]


def test_nothing_to_record_on_a_first_setup(tmp_path: Path) -> None:
    (tmp_path / "new").mkdir()
    assert revisions.record(tmp_path / "none", tmp_path / "pkg", tmp_path / "new", "t") is None
    assert revisions.latest(tmp_path / "new") is None


def test_loading_a_missing_revision_names_the_recorded_ones(edge_history_workdir: Path) -> None:
    with pytest.raises(InputError, match=r"no revision 7 recorded \(recorded: 1\)"):
        revisions.load(edge_history_workdir / "out", 7)


def test_a_damaged_revision_is_named(run: Run, tmp_path: Path, edge_history_workdir: Path) -> None:
    work = tmp_path / "w"
    shutil.copytree(edge_history_workdir, work)
    victim = next((work / "out" / "revisions" / "1" / "manifests").glob("service-*.yaml"))
    victim.unlink()
    r = run("install", "plan", "--work-dir", work, "--action", "upgrade")
    assert r.code == 2
    assert str(victim) in r.err and "missing" in r.err


def test_a_failed_setup_leaves_the_history_as_it_was(
    run: Run, tmp_path: Path, edge_history_workdir: Path
) -> None:
    work = tmp_path / "w"
    shutil.copytree(edge_history_workdir, work)
    before = tree_digest(work / "out")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "Chart.yaml").write_text("apiVersion: v2\nname: bad\nversion: 0.1.0\n")
    (bad / "templates").mkdir()
    (bad / "templates" / "x.yaml").write_text('{{ fail "no" }}\n')
    r = run("install", "setup", "--pull", bad, "--namespace", "edge", "--work-dir", work, "--non-interactive")
    assert r.code == 2, r.out + r.err
    assert tree_digest(work / "out") == before


def test_a_revision_is_read_once_per_command_until_a_file_of_it_changes(
    tmp_path: Path, edge_history_workdir: Path
) -> None:
    work = tmp_path / "w"
    shutil.copytree(edge_history_workdir, work)
    out = work / "out"
    first = revisions.load(out, 1)
    assert revisions.load(out, 1) is first  # the diff, the plan and the ownership check share one read
    rev = out / "revisions" / "1" / "manifests"
    victim = next(rev.glob("service-*.yaml"))
    text = victim.read_text()
    victim.write_text(text.replace("port: 80", "port: 8081"))  # another size: any timestamp resolution
    changed = revisions.load(out, 1)
    assert changed is not first
    (service,) = [o for o in changed.split.ordinary if o.kind == "Service"]
    assert "port: 8081" in service.text
    victim.unlink()
    with pytest.raises(InputError, match="missing"):
        revisions.load(out, 1)


def test_recording_links_the_history_instead_of_copying_it(run: Run, tmp_path: Path) -> None:
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {v: {{ .Values.v | quote }}}\n"
    )
    work = tmp_path / "w"
    for v in ("1", "2"):
        r = run(
            "install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive", "--set", f"v={v}"
        )
        assert r.code == 0, r.err
    kept = work / "out" / "revisions" / "1" / "manifests" / "configmap-cm.yaml"
    before = kept.stat().st_ino
    r = run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive", "--set", "v=3")
    assert r.code == 0, r.err
    assert kept.stat().st_ino == before  # carried into the new out/ as a link, not a new file
    assert 'v: "1"' in kept.read_text()
    assert 'v: "2"' in (work / "out" / "revisions" / "2" / "manifests" / "configmap-cm.yaml").read_text()
    assert 'v: "3"' in (work / "out" / "manifests" / "configmap-cm.yaml").read_text()
    assert revisions.numbers(work / "out") == [1, 2]
