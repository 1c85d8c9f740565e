"""The generated script and a hook Job that is gone before the script looks (``ttlSecondsAfterFinished: 0``, as
ingress-nginx's certgen Jobs): its last state comes from the watch history after the resourceVersion it was applied
with, so a completed Job passes, a failed one fails and one deleted half-way fails at once (a stand-in kubectl)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import Run

SHIM = r"""#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$*" in
  *"config current-context"*) echo kind-test ;;
  *"apply "*"jsonpath={.metadata.resourceVersion}"*) printf '4711' ;;
  *"get job migrate "*) echo 'Error from server (NotFound): jobs.batch "migrate" not found' >&2; exit 1 ;;
  *"get job "*) printf 'Complete=True\n' ;;
  *"get --raw "*)
    printf '{"type":"MODIFIED","object":{"kind":"Job","metadata":{"name":"migrate"}}}\n'
    case "$FAKE_FINAL" in
      Complete|Failed) printf '{"type":"DELETED","object":{"kind":"Job","status":{"conditions":[{"type":"%s","status":"True"}]}}}\n' "$FAKE_FINAL" ;;
      running) printf '{"type":"DELETED","object":{"kind":"Job","status":{"active":1}}}\n' ;;
    esac ;;
  *"create --dry-run=client -f -"*)
    obj="$(cat)"
    echo "stdin: $obj" >> "$FAKE_LOG"
    case "$obj" in
      '') echo 'error: no objects passed to create' >&2; exit 1 ;;
      '{"type"'*) echo 'error: unable to decode a watch event' >&2; exit 1 ;;
      *'"type":"Complete"'*) printf 'deleted\nSuccessCriteriaMet=True\nComplete=True\n' ;;
      *'"type":"Failed"'*) printf 'deleted\nFailed=True\n' ;;
      *) printf 'deleted\n' ;;
    esac ;;
  *"get pod"*) echo Succeeded ;;
  *"get --ignore-not-found"*) printf '|' ;;
  *"get namespace"*) exit 1 ;;
esac
exit 0
"""


def run_install(
    run: Run, work: Path, tmp: Path, final: str, *flags: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "kubectl").write_text(SHIM)
    (bindir / "kubectl").chmod(0o755)
    script = tmp / "install.sh"
    assert run("install", "script", "--work-dir", work, "--timeout", "3", "--out", script, *flags).code == 0
    log = tmp / f"calls-{final}.log"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "FAKE_LOG": str(log), "FAKE_FINAL": final}
    proc = subprocess.run(
        ["bash", str(script), "--context", "kind-test"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    return proc, log.read_text()


def test_a_job_gone_after_completing_passes_from_its_last_state(
    run: Run, edge_workdir: Path, tmp_path: Path
) -> None:
    proc, calls = run_install(run, edge_workdir, tmp_path, "Complete")
    assert proc.returncode == 0, proc.stderr
    assert "Job edge/migrate complete (deleted right after: ttlSecondsAfterFinished?)" in proc.stdout
    assert "Job edge/migrate applied (resourceVersion 4711)" in proc.stdout
    # the replay starts at the applied resourceVersion and is narrowed to the Job by name
    assert (
        "get --raw /apis/batch/v1/namespaces/edge/jobs?watch=true&fieldSelector=metadata.name%3Dmigrate"
        "&resourceVersion=4711&timeoutSeconds=1" in calls
    )
    assert 'stdin: {"kind":"Job","status":{"conditions":[{"type":"Complete","status":"True"}]}}' in calls


@pytest.mark.parametrize(
    ("final", "message"),
    [
        ("Failed", "Job edge/migrate failed (and was deleted)"),
        ("running", "Job edge/migrate was deleted before it finished"),
    ],
    ids=["failed-then-deleted", "deleted-half-way"],
)
def test_a_job_gone_without_completing_fails_at_once(
    run: Run, edge_workdir: Path, tmp_path: Path, final: str, message: str
) -> None:
    proc, _ = run_install(run, edge_workdir, tmp_path, final)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert "pre-install hook Job edge/migrate failed; Helm stops the event here" in proc.stderr
    assert "did not complete within" not in proc.stderr  # judged, not timed out


def test_the_readiness_step_judges_a_release_job_gone_from_the_version_its_apply_gave(
    run: Run, tmp_path: Path
) -> None:
    """A release Job (not a hook) the readiness step (``--wait``) waits on: applied with its resourceVersion kept,
    judged from the watch history when it is gone, as the live executor does."""
    chart = tmp_path / "seeder"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: seeder\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec:\n  ttlSecondsAfterFinished: 0\n"
        "  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: r.example.com/m:1}]\n"
    )
    work = tmp_path / "work"
    r = run(
        "install", "setup", "--pull", chart, "--namespace", "edge", "--work-dir", work, "--non-interactive"
    )
    assert r.code == 0, r.err
    proc, calls = run_install(run, work, tmp_path, "Complete", "--wait")
    assert proc.returncode == 0, proc.stderr
    assert "Job edge/migrate applied (resourceVersion 4711)" in proc.stdout
    assert "Job edge/migrate complete (deleted right after: ttlSecondsAfterFinished?)" in proc.stdout
    assert "&resourceVersion=4711&timeoutSeconds=1" in calls
