"""A generated script knows the render it was generated from and refuses another; it waits for readiness unless
told not to; it takes fields over from other field managers only when asked, as ``berth install apply`` does
(an older templated CRD on the cluster is upgraded, a newer one left alone)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from berth.install import apply, layout, script

from .conftest import EDGE_CHART, Run, edge_next_chart
from .test_script import make_script, run_script

CRD_SHIM = r"""#!/usr/bin/env bash
# A release object reaches `apply -f -` through `label --local -f FILE | annotate --local -f -`: the label call
# passes on the file's name, and the apply logs it with its own arguments.
args="$*"
case "$args" in
  *"annotate --local -f -"*) cat ;;
  *"label --local -f "*) f="${args#*-f }"; echo "# from ${f%% *}" ;;
  "apply "*"-f -") args="$args $(head -n 1)" ;;
esac
echo "$args" >> "$FAKE_LOG"
case "$args" in
  *"config current-context"*) echo fake-current ;;
  *"get job"*) printf 'Complete=True\n' ;;
  *"get crd "*"jsonpath={.spec.versions"*) printf '%s' "${FAKE_CRD_VERSIONS:-}" ;;
  *"get namespace"*) exit 1 ;;
esac
exit 0
"""


@pytest.fixture
def crd_shim(tmp_path: Path) -> dict[str, str]:
    bindir = tmp_path / "crd-bin"
    bindir.mkdir()
    (bindir / "kubectl").write_text(CRD_SHIM)
    (bindir / "kubectl").chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bindir}:{os.environ['PATH']}",
        "FAKE_LOG": str(tmp_path / "crd-calls.log"),
    }


@pytest.fixture
def work(run: Run, tmp_path: Path) -> Path:
    w = tmp_path / "w"
    r = run(
        "install", "setup", "--pull", EDGE_CHART, "--namespace", "edge", "--work-dir", w, "--non-interactive"
    )
    assert r.code == 0, r.err
    return w


def test_the_script_refuses_a_work_dir_set_up_again_since(
    run: Run, work: Path, tmp_path: Path, crd_shim: dict[str, str]
) -> None:
    path = make_script(run, work, tmp_path)
    rid = (work / "out" / "spec" / "render-id").read_text().strip()
    assert f"# Work dir render: {rid} " in path.read_text()
    ok, _ = run_script(path, crd_shim, "--yes")
    assert ok.returncode == 0, ok.stderr
    r = run("install", "setup", "--pull", edge_next_chart(tmp_path), "--work-dir", work, "--non-interactive")
    assert r.code == 0, r.err
    proc, calls = run_script(path, crd_shim, "--yes")
    assert proc.returncode == 1
    assert "this script was generated from the install plan of release edge-hooks" in proc.stderr
    assert "the work dir was set up, upgraded or rolled back since" in proc.stderr
    assert (
        f"Generate the script again: berth install script --work-dir {work} --action install" in proc.stderr
    )
    assert calls == []  # refused before kubectl was asked anything


def test_a_work_dir_without_a_render_id_is_run_with_a_warning(
    run: Run, work: Path, tmp_path: Path, crd_shim: dict[str, str]
) -> None:
    (work / "out" / layout.RENDER_ID_FILE).unlink()  # as set up by an older berth
    path = make_script(run, work, tmp_path)
    assert f"# Work dir render: {layout.render_digest(work / 'out')} " in path.read_text()
    proc, _ = run_script(path, crd_shim, "--yes")
    assert proc.returncode == 0 and "has no spec/render-id" in proc.stderr


def test_readiness_is_waited_on_by_default_and_no_wait_skips_it(
    run: Run, work: Path, tmp_path: Path, crd_shim: dict[str, str]
) -> None:
    path = make_script(run, work, tmp_path)
    proc, calls = run_script(path, crd_shim, "--yes")
    assert proc.returncode == 0 and any("rollout status" in c and "deployment-edge-app" in c for c in calls)
    proc, calls = run_script(path, crd_shim, "--yes", "--no-wait")
    assert proc.returncode == 0 and not any("rollout status" in c for c in calls)
    assert "not waited on (--no-wait)" in proc.stdout
    without = make_script(run, work, tmp_path, "--no-wait")
    assert "rollout status" not in without.read_text()  # generated without the readiness step


def test_fields_are_taken_over_only_when_asked(
    run: Run, work: Path, tmp_path: Path, crd_shim: dict[str, str]
) -> None:
    path = make_script(run, work, tmp_path)
    _, calls = run_script(path, crd_shim, "--yes")
    applies = [c for c in calls if c.startswith("apply ")]
    assert applies and not any("--force-conflicts" in c for c in applies)
    _, calls = run_script(path, crd_shim, "--yes", "--force-conflicts")
    applies = [c for c in calls if c.startswith("apply ")]
    assert all("--force-conflicts" in c for c in applies)


@pytest.mark.parametrize(
    ("live", "forced", "applied", "message"),
    [
        ("", False, True, ""),  # absent: created
        ("v1", False, True, ""),  # the same version: applied, no force
        ("v1beta1 v1alpha1", True, True, "upgrading the cluster's older version"),
        ("v1 v2", False, False, "serves a newer version than this package's: left as it is"),
    ],
    ids=["absent", "same", "older", "newer"],
)
def test_a_templated_crd_is_decided_as_apply_decides(
    run: Run,
    work: Path,
    tmp_path: Path,
    crd_shim: dict[str, str],
    live: str,
    forced: bool,
    applied: bool,
    message: str,
) -> None:
    path = make_script(run, work, tmp_path)
    proc, calls = run_script(path, crd_shim, "--yes", FAKE_CRD_VERSIONS=live)
    assert proc.returncode == 0, proc.stderr
    widget = [c for c in calls if c.startswith("apply ") and "customresourcedefinition-widgets" in c]
    assert bool(widget) == applied and all(("--force-conflicts" in c) == forced for c in widget)
    assert message in proc.stdout + proc.stderr


def test_vkey_orders_versions_as_kubernetes_does(tmp_path: Path) -> None:
    fn = re.search(r"^vkey\(\) \{.*?^\}$", script.PRELUDE, re.MULTILINE | re.DOTALL)
    assert fn is not None
    names = ["v1", "v2", "v1beta1", "v1beta2", "v2beta1", "v1alpha1", "v10", "v1alpha10", "foo", "v1gamma1"]
    code = fn.group(0) + "\nfor v in " + " ".join(names) + '; do echo "$v $(vkey "$v")"; done\n'
    out = subprocess.run(["bash", "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    keys = {line.split()[0]: int(line.split()[1]) for line in out if line}
    by_bash = sorted(names, key=lambda n: (keys[n], n))
    by_python = sorted(names, key=lambda n: (apply.version_key(n)[:3], n))
    assert by_bash == by_python
