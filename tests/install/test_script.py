"""The generated bash script: syntax, bash 3.2 rules, and the exact kubectl calls against a recording shim."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import Run, setup_twice

SHIM = r"""#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$*" in
  *"config current-context"*) echo fake-current ;;
  *"get job"*)
    case "$* " in
      *"get job ${FAKE_FAIL_JOB:-none} "*) printf 'Complete=False\nFailed=True\n' ;;
      *"get job ${FAKE_PENDING_JOB:-none} "*) printf '' ;;
      *) printf 'Complete=True\n' ;;
    esac ;;
  *"get pod"*) echo Succeeded ;;
  *"get --ignore-not-found"*)
    # prune's live read: absent (FAKE_ABSENT), a live copy saying keep (FAKE_KEEP), else an ordinary object
    case "$*" in
      *"${FAKE_ABSENT:-none}"*) ;;
      *"${FAKE_KEEP:-none}"*) printf 'keep|' ;;
      *) printf '|' ;;
    esac ;;
  *"get crd "*)
    # a CRD is absent at its first lookup (unless FAKE_CRDS_EXIST), present afterwards
    marker="$FAKE_LOG.crd.$(echo "$*" | sed 's/.*get crd //; s/ .*//')"
    if [ -z "${FAKE_CRDS_EXIST:-}" ] && [ ! -e "$marker" ]; then touch "$marker"; exit 1; fi ;;
  *"get namespace"*) exit 1 ;;
  *"logs"*) echo "pod log line: migration exploded" ;;
esac
exit 0
"""


@pytest.fixture
def shim(tmp_path: Path) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "kubectl").write_text(SHIM)
    (bindir / "kubectl").chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "FAKE_LOG": str(tmp_path / "calls.log")}


def make_script(run: Run, work: Path, tmp_path: Path, *args: str) -> Path:
    target = tmp_path / "plan.sh"
    r = run("install", "script", "--work-dir", work, "--out", target, *args)
    assert r.code == 0, r.err
    return target


def run_script(
    script: Path, env: dict[str, str], *args: str, **extra_env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    log = Path(env["FAKE_LOG"])
    for stale in log.parent.glob(log.name + "*"):
        stale.unlink()
    proc = subprocess.run(
        ["bash", str(script), *args],
        env={**env, **extra_env},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    calls = log.read_text().splitlines() if log.exists() else []
    return proc, calls


def summary(calls: list[str]) -> list[str]:
    """``apply|delete <file>``, ``wait-job <name>``, ``ns``: the order that matters."""
    out = []
    for c in calls:
        m = re.search(r" (apply|delete) .*-f \S+/out/(\S+)$", c)
        owned = re.search(r" label --local -f \S+/out/(\S+) ", c)
        if m:
            out.append(f"{m.group(1)} {m.group(2)}")
        elif owned:  # a release object: labelled and annotated locally, then applied from stdin
            out.append(f"apply {owned.group(1)}")
        elif " get job " in c:
            out.append(f"wait-job {c.split(' get job ')[1].split()[0]}")
        elif " create namespace " in c:
            out.append(f"create-ns {c.split()[-1]}")
        elif " logs " in c and "job-name=" in c:
            out.append(f"logs {c.split('job-name=')[1].split()[0]}")
        elif " wait --for=condition=Established" in c:
            out.append(f"established {c.split('crd/')[1]}")
    return out


def test_script_is_valid_bash_and_keeps_to_bash_3_2(
    run: Run, edge_history_workdir: Path, tmp_path: Path
) -> None:
    for action in ("install", "upgrade", "uninstall", "rollback", "test"):
        script = make_script(run, edge_history_workdir, tmp_path, "--action", action)
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
        text = script.read_text()
        assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
        for forbidden in (
            "declare -A",
            "declare -n",
            "mapfile",
            "readarray",
            ",,}",
            "^^}",
            "|&",
            "&>>",
            "[[",
            "coproc",
            "wait -n",
            "sed -i",
            "readlink -f",
            "%(",
            "sort -V",
        ):
            assert forbidden not in text, (action, forbidden)
        # no GNU `timeout`, and no tool but kubectl (through `kc`)
        assert not re.search(r"^\s*(timeout|helm|berth)\s", text, re.MULTILINE), action


def test_install_runs_the_plan_in_order(
    run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]
) -> None:
    proc, calls = run_script(make_script(run, edge_workdir, tmp_path), shim, "--context", "kind-test")
    assert proc.returncode == 0, proc.stderr
    assert all(c.startswith("--context kind-test ") for c in calls[1:])
    assert summary(calls) == [
        "create-ns edge",
        "apply manifests/customresourcedefinition-things-edge-example-com.yaml",
        "established things.edge.example.com",
        "apply manifests/customresourcedefinition-widgets-edge-example-com.yaml",
        "established widgets.edge.example.com",
        # pre-install: weight, then name, then kind; before-hook-creation deletes first; CRD hook never deleted
        "apply lifecycle/pre-install/customresourcedefinition-gadgets-edge-example-com.yaml",
        "delete lifecycle/pre-install/serviceaccount-edge-shared-hook-sa.yaml",
        "apply lifecycle/pre-install/serviceaccount-edge-shared-hook-sa.yaml",
        "delete lifecycle/pre-install/configmap-edge-migrate.yaml",
        "apply lifecycle/pre-install/configmap-edge-migrate.yaml",
        "delete lifecycle/pre-install/job-edge-migrate.yaml",
        "apply lifecycle/pre-install/job-edge-migrate.yaml",
        "wait-job migrate",
        "delete lifecycle/pre-install/serviceaccount-edge-runner.yaml",
        "apply lifecycle/pre-install/serviceaccount-edge-runner.yaml",
        "delete lifecycle/pre-install/role-edge-runner.yaml",
        "apply lifecycle/pre-install/role-edge-runner.yaml",
        "apply lifecycle/pre-install/configmap-edge-typo-policy.yaml",
        # success: hook-succeeded ones in reverse
        "delete lifecycle/pre-install/role-edge-runner.yaml",
        "delete lifecycle/pre-install/serviceaccount-edge-runner.yaml",
        "delete lifecycle/pre-install/job-edge-migrate.yaml",
        "delete lifecycle/pre-install/configmap-edge-migrate.yaml",
        "delete lifecycle/pre-install/serviceaccount-edge-shared-hook-sa.yaml",
        "apply manifests/namespace-edge-reservation.yaml",
        "apply manifests/serviceaccount-edge-app.yaml",
        "apply secrets/secret-edge-app-token.yaml",
        "apply manifests/configmap-edge-app-settings.yaml",
        "apply manifests/service-edge-app.yaml",
        "apply manifests/deployment-edge-app.yaml",
        "apply manifests/validatingwebhookconfiguration-edge-validator.yaml",
        "apply manifests/thing-edge-default-thing.yaml",
        "apply manifests/widget-edge-default-widget.yaml",
        "delete lifecycle/post-install/serviceaccount-edge-shared-hook-sa.yaml",
        "apply lifecycle/post-install/serviceaccount-edge-shared-hook-sa.yaml",
        "delete lifecycle/post-install/configmap-edge-operator-config.yaml",
        "apply lifecycle/post-install/configmap-edge-operator-config.yaml",
        "delete lifecycle/post-install/job-edge-config-deployer.yaml",
        "apply lifecycle/post-install/job-edge-config-deployer.yaml",
        "wait-job config-deployer",
        "logs config-deployer",  # helm.sh/hook-output-log-policy: hook-succeeded
        "delete lifecycle/post-install/job-edge-config-deployer.yaml",
        "delete lifecycle/post-install/serviceaccount-edge-shared-hook-sa.yaml",
    ]
    assert ">> Kube context: kind-test" in proc.stdout.splitlines()[1]
    assert "8 of 8 step(s) ran" in proc.stdout  # the readiness step is in by default, as apply waits
    assert (
        "Not run by this script: the post-delete step of this plan; run it with: berth install script"
        in proc.stdout
    )
    applies = [c for c in calls if " apply " in c]
    assert all("--server-side --field-manager=helm" in c for c in applies)
    # release objects are labelled and annotated locally (their file named there), hooks are applied as they are
    labelled = [c for c in calls if " label --local " in c]
    annotated = [c for c in calls if " annotate --local " in c]
    assert len(labelled) == len(annotated) and labelled
    assert all("meta.helm.sh/release-name=edge meta.helm.sh/release-namespace=edge" in c for c in annotated)
    assert not any("/lifecycle/" in c for c in labelled)
    # objects without a namespace get the release namespace; ones that name theirs do not
    assert any("namespace-edge-reservation" in c and "-n edge" in c for c in labelled)
    assert not any("-n edge" in c and "deployment-edge-app" in c for c in labelled)


def test_failed_job_stops_the_event_prints_logs_and_cleans_per_policy(
    run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]
) -> None:
    proc, calls = run_script(
        make_script(run, edge_workdir, tmp_path), shim, "--context", "c", FAKE_FAIL_JOB="migrate"
    )
    assert proc.returncode == 1
    assert "Job edge/migrate failed" in proc.stderr and "pod log line: migration exploded" in proc.stderr
    assert "resume with: --from-step 3" in proc.stderr
    tail = summary(calls)[-4:]
    # Job migrate has no hook-failed: it stays; earlier hook-succeeded ones are deleted in forward order
    assert tail == [
        "wait-job migrate",
        "logs migrate",
        "delete lifecycle/pre-install/serviceaccount-edge-shared-hook-sa.yaml",
        "delete lifecycle/pre-install/configmap-edge-migrate.yaml",
    ]
    assert not any("manifests/deployment" in c for c in calls)


def test_job_that_never_finishes_times_out(
    run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]
) -> None:
    script = make_script(run, edge_workdir, tmp_path, "--timeout", "1")
    proc, _calls = run_script(script, shim, "--context", "c", FAKE_PENDING_JOB="migrate")
    assert proc.returncode == 1
    assert "Job edge/migrate did not complete within 1 seconds" in proc.stderr


def test_context_guard(run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]) -> None:
    script = make_script(run, edge_workdir, tmp_path)
    proc, calls = run_script(script, shim)
    assert proc.returncode == 1
    assert "pass --context fake-current (or --yes)" in proc.stderr
    assert not any(" apply " in c for c in calls)
    ok, calls = run_script(script, shim, "--yes")
    assert ok.returncode == 0 and "Kube context: fake-current" in ok.stdout
    bad, _ = run_script(script, shim, "--bogus")
    assert bad.returncode == 2 and "unknown option: --bogus" in bad.stderr


def test_resume_from_step(run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]) -> None:
    proc, calls = run_script(
        make_script(run, edge_workdir, tmp_path), shim, "--context", "c", "--from-step", "5"
    )
    assert proc.returncode == 0
    assert summary(calls)[0] == "apply secrets/secret-edge-app-token.yaml"
    assert "Skipping step 4/8" in proc.stdout and "4 of 8 step(s) ran" in proc.stdout


def test_uninstall_order(run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]) -> None:
    proc, calls = run_script(
        make_script(run, edge_workdir, tmp_path, "--action", "uninstall"), shim, "--context", "c"
    )
    assert proc.returncode == 0, proc.stderr
    s = summary(calls)
    assert s[:2] == ["apply lifecycle/pre-delete/job-edge-drain.yaml", "wait-job drain"]
    assert s[2] == "delete manifests/validatingwebhookconfiguration-edge-validator.yaml"
    assert "delete manifests/thing-edge-default-thing.yaml" not in s  # keep
    assert "delete manifests/customresourcedefinition-things-edge-example-com.yaml" not in s  # crds/ folder
    assert s[-3:] == [
        "apply lifecycle/post-delete/job-edge-cleanup.yaml",
        "wait-job cleanup",
        "delete lifecycle/post-delete/job-edge-cleanup.yaml",
    ]
    assert not any("create namespace" in c or "delete namespace" in c for c in calls)
    assert "Left in place: Thing edge/default-thing (helm.sh/resource-policy: keep)" in proc.stdout


def test_upgrade_script_applies_the_upgrade_variant(
    run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]
) -> None:
    proc, calls = run_script(
        make_script(run, edge_workdir, tmp_path, "--action", "upgrade"), shim, "--context", "c"
    )
    assert proc.returncode == 0, proc.stderr
    s = summary(calls)
    assert "apply upgrade/manifests/configmap-edge-app-settings.yaml" in s
    assert not any("thing-edge-default-thing" in c for c in s)  # install-only: neither applied nor pruned
    assert s.index("wait-job upgrade-check") < s.index(
        "apply upgrade/manifests/namespace-edge-reservation.yaml"
    )
    assert s.index("apply upgrade/manifests/serviceaccount-edge-app.yaml") < s.index(
        "apply upgrade/secrets/secret-edge-app-token.yaml"
    )
    assert "warning: post-upgrade: ConfigMap edge/operator-config stays after success" in proc.stderr


def test_crds_folder_crd_is_created_only_when_absent(
    run: Run, edge_workdir: Path, tmp_path: Path, shim: dict[str, str]
) -> None:
    proc, calls = run_script(
        make_script(run, edge_workdir, tmp_path), shim, "--context", "c", FAKE_CRDS_EXIST="1"
    )
    assert proc.returncode == 0, proc.stderr
    s = summary(calls)
    assert (
        "apply manifests/customresourcedefinition-things-edge-example-com.yaml" not in s
    )  # crds/: left alone
    assert (
        s[:3]
        == [
            "create-ns edge",
            "established things.edge.example.com",
            "apply manifests/customresourcedefinition-widgets-edge-example-com.yaml",  # templated: a release resource
        ]
    )
    assert (
        "CRD things.edge.example.com exists; Helm leaves crds/ CRDs under their current owner" in proc.stdout
    )


def test_upgrade_script_prunes_after_apply_and_before_post_upgrade(
    run: Run, edge_history_workdir: Path, tmp_path: Path, shim: dict[str, str]
) -> None:
    script = make_script(run, edge_history_workdir, tmp_path, "--action", "upgrade")
    assert "prune_file revisions/1/manifests/" in script.read_text()
    proc, calls = run_script(script, shim, "--context", "c")
    assert proc.returncode == 0, proc.stderr
    s = summary(calls)
    pruned = [c for c in s if c.startswith("delete revisions/1/")]
    assert len(pruned) == 1 and "service" in pruned[0]
    last_apply = max(i for i, c in enumerate(s) if c.startswith("apply upgrade/manifests/"))
    assert last_apply < s.index(pruned[0]) < s.index("wait-job config-deployer")  # then post-upgrade
    delete_call = next(c for c in calls if " delete " in c and "revisions/1/" in c)
    assert "--ignore-not-found --wait=false" in delete_call


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({"FAKE_KEEP": "revisions/1/"}, "kept (its live copy has helm.sh/resource-policy: keep)",
                     id="live-keep"),
        pytest.param({"FAKE_ABSENT": "revisions/1/"}, "not on the cluster (or not readable)", id="already-gone"),
    ],
)  # fmt: skip
def test_upgrade_script_reads_the_live_copy_before_pruning(
    run: Run,
    edge_history_workdir: Path,
    tmp_path: Path,
    shim: dict[str, str],
    env: dict[str, str],
    expected: str,
) -> None:
    script = make_script(run, edge_history_workdir, tmp_path, "--action", "upgrade")
    proc, calls = run_script(script, shim, "--context", "c", **env)
    assert proc.returncode == 0, proc.stderr
    assert expected in proc.stdout
    assert not [c for c in calls if " delete " in c and "revisions/1/" in c]


def test_rollback_script_runs_the_target_revision(
    run: Run, edge_history_workdir: Path, tmp_path: Path, shim: dict[str, str]
) -> None:
    proc, calls = run_script(
        make_script(run, edge_history_workdir, tmp_path, "--action", "rollback"), shim, "--context", "c"
    )
    assert proc.returncode == 0, proc.stderr
    s = summary(calls)
    assert s[0].startswith("delete revisions/1/lifecycle/pre-rollback/")  # before-hook-creation
    assert s[1].startswith("apply revisions/1/lifecycle/pre-rollback/")
    assert any(c.startswith("apply revisions/1/manifests/service") for c in s)
    assert "delete manifests/configmap-added.yaml" in s  # added by the current render: pruned
    assert all(c.startswith(("apply revisions/1/", "delete revisions/1/", "delete manifests/", "wait-job"))
               for c in s)  # fmt: skip


def test_script_of_a_work_dir_set_up_twice_from_the_same_chart_prunes_nothing(
    run: Run, tmp_path: Path, shim: dict[str, str]
) -> None:
    from .conftest import EDGE_CHART

    work = setup_twice(tmp_path / "w", EDGE_CHART, EDGE_CHART)
    text = make_script(run, work, tmp_path, "--action", "upgrade").read_text()
    assert "prune_file " not in text.split("# prune_file FILE NAMESPACE")[1].split("ensure_namespace()")[1]
