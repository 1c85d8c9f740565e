"""The install report: ``install apply --report`` and ``install report`` draw real receipts -- a run that succeeds,
one whose hook fails, a dry run -- as a timeline of steps and objects, with weights, durations and the failure."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from berth.cluster import Cluster
from berth.install import receipt
from berth.install.live_cli import apply_command, uninstall_command
from berth.install.report import report_command, seconds_text, timeline

from .conftest import run_live
from .test_apply import fail_job, install_plan


def rows_of(page: str) -> list[str]:
    """The labels of the timeline's rows, in order (steps as ``N · phase``)."""
    return [
        re.sub(r"<[^>]+>", "", m).strip()
        for m in re.findall(r'<div class="tl-label">(.*?)<span class="', page)
    ]


def test_apply_report_draws_every_step_and_hook_with_its_weight(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    page_path = tmp_path / "report" / "install.html"
    res = run_live(
        capsys,
        apply_command,
        "--work-dir",
        edge_work,
        "--kubeconfig",
        cluster.kubeconfig,
        "--report",
        page_path,
    )
    assert res.code == 0, res.err
    assert f"Report: {page_path}" in res.err
    page = page_path.read_text(encoding="utf-8")
    plan = install_plan(edge_work)
    labels = rows_of(page)
    # every step of the plan, in order, each followed by its objects
    steps = [label for label in labels if " · " in label]
    assert [s.split(" · ")[1] for s in steps] == [s.phase for s in plan.steps]
    hooks = next(s for s in plan.steps if s.phase == "pre-install")
    for obj in hooks.objects:
        assert obj.weight is not None
        assert re.search(
            rf"{re.escape(obj.label)}<span.*?</span></div><div class=\"tl-weight\">weight {obj.weight}<", page
        )
    # the receipt records each hook's weight, which is where the page read it
    spec = receipt.receipts(edge_work)[-1][1]["spec"]
    pre = next(s for s in spec["steps"] if s["phase"] == "pre-install")
    assert {o["weight"] for o in pre["objects"]} == {o.weight for o in hooks.objects}
    # durations: each step's own, from the receipt's timestamps
    t = timeline(receipt.receipts(edge_work)[-1][1])
    for step in t.steps:
        assert step.seconds is not None
        assert f"<b>{seconds_text(step.seconds)}</b>" in page
    assert "✓ install result" in page and ">succeeded<" in page
    assert "Failed at" not in page


def test_the_timeline_is_consistent_with_the_run(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path
) -> None:
    res = run_live(capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig)
    assert res.code == 0, res.err
    t = timeline(receipt.receipts(edge_work)[-1][1])
    previous_end = 0.0
    for step in t.steps:
        assert step.start is not None and step.end is not None
        assert (
            previous_end <= step.start + 1e-6 <= step.end + 1e-6 <= t.total + 2e-6
        )  # steps in order, in the run
        spans = sorted((s for r in step.rows for s in r.spans), key=lambda s: s.start)
        for a, b in itertools.pairwise(spans):
            assert a.end <= b.start + 1e-6  # one thing at a time within a step
        assert all(step.start - 1e-6 <= s.start <= s.end <= step.end + 1e-6 for s in spans)
        previous_end = step.end
    kinds = {s.kind for step in t.steps for r in step.rows for s in r.spans}
    assert {"write", "wait", "delete"} <= kinds
    migrate = next(
        r for s in t.steps if s.phase == "pre-install" for r in s.rows if r.label == "Job edge/migrate"
    )
    assert [s.kind for s in migrate.spans] == ["delete", "write", "wait", "delete"]


def test_a_failed_hook_is_the_step_that_failed(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    fail_job(edge_work, "lifecycle/pre-install/job-edge-migrate.yaml", True)
    page_path = tmp_path / "failed.html"
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--timeout", "120s"]
    res = run_live(capsys, apply_command, *args, "--report", page_path)
    assert res.code == 1
    page = page_path.read_text(encoding="utf-8")  # written although the run failed
    assert "<b>Failed at step 3 (pre-install).</b>" in page
    assert "pre-install hook Job edge/migrate failed" in page
    assert '<div class="tl-row failed"><div class="tl-label">✗ Job edge/migrate' in page
    assert 'class="span failed"' in page
    not_run = re.findall(r"<b>(\d) · [a-z-]+</b> <span class=\"status\">not run</span>", page)
    assert not_run == ["4", "5", "6", "7", "8"]
    assert "✗ install result" in page


def test_report_command_reads_any_receipt(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    res = run_live(
        capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig, "--dry-run"
    )
    assert res.code == 0, res.err
    path = receipt.receipts(edge_work)[-1][0]
    out = tmp_path / "dry.html"
    res = run_live(capsys, report_command, "--receipt", path, "--out", out)
    assert res.code == 0, res.err
    assert res.out.strip() == f"Report of {path.name}: {out}"
    page = out.read_text(encoding="utf-8")
    assert "(a dry run: nothing was changed)" in page and "would create" in page
    newest = tmp_path / "newest.html"
    assert run_live(capsys, report_command, "--work-dir", edge_work, "--out", newest).code == 0
    assert newest.read_text(encoding="utf-8") == page  # the same receipt: the newest of the work dir


def test_an_uninstall_is_drawn_with_its_deletions(
    capsys: pytest.CaptureFixture[str], cluster: Cluster, edge_work: Path, tmp_path: Path
) -> None:
    args = ["--work-dir", edge_work, "--kubeconfig", cluster.kubeconfig]
    assert run_live(capsys, apply_command, *args).code == 0
    res = run_live(capsys, uninstall_command, *args)
    assert res.code == 0, res.err
    out = tmp_path / "uninstall.html"
    assert run_live(capsys, report_command, "--work-dir", edge_work, "--out", out).code == 0
    page = out.read_text(encoding="utf-8")
    assert "berth install: uninstall of edge-hooks" in page
    t = timeline(receipt.receipts(edge_work)[-1][1])
    deleted = [r.label for s in t.steps if s.phase == "delete" for r in s.rows]
    assert "Deployment edge/app" in deleted
    assert all(
        any(span.kind == "delete" for span in r.spans) for s in t.steps if s.phase == "delete" for r in s.rows
    )
    assert "pre-delete" in [s.phase for s in t.steps] and "✓ uninstall result" in page


def test_no_report_when_the_run_wrote_no_receipt(
    capsys: pytest.CaptureFixture[str], edge_work: Path, tmp_path: Path
) -> None:
    page = tmp_path / "never.html"
    missing = tmp_path / "no-such-kubeconfig"
    res = run_live(capsys, apply_command, "--work-dir", edge_work, "--kubeconfig", missing, "--report", page)
    assert res.code != 0  # the connection error, as without --report
    assert "no report: the run stopped before it wrote a receipt" in res.err
    assert not page.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param([], "give either --receipt or --work-dir", id="neither"),
        pytest.param(["--receipt", "{receipt}", "--work-dir", "{work}"], "give either --receipt or --work-dir", id="both"),
        pytest.param(["--receipt", "{missing}"], "receipt not found", id="missing"),
        pytest.param(["--receipt", "{not_receipt}"], "not a berth run receipt", id="not-a-receipt"),
        pytest.param(["--work-dir", "{work}"], "no run receipt in", id="no-run-yet"),
    ],
)  # fmt: skip
def test_report_command_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    not_receipt = tmp_path / "other.yaml"
    not_receipt.write_text("kind: ConfigMap\n", encoding="utf-8")
    values: dict[str, Any] = {
        "receipt": not_receipt, "work": work, "missing": tmp_path / "nope.yaml", "not_receipt": not_receipt,
    }  # fmt: skip
    out = tmp_path / "out.html"
    res = run_live(capsys, report_command, *[a.format(**values) for a in args], "--out", out)
    assert res.code == 2
    assert message in res.err
    assert not out.exists()
