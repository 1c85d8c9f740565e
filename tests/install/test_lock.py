"""One writer per work dir: concurrent setups never lose or duplicate a revision, a held work dir is refused (exit 2,
naming the holder) or waited for, a crashed holder frees it, and Ctrl-C after the commit says the render is in
place."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.install import lock, revisions, setup
from berth.install import swap as swap_mod
from berth.kube import yamlio

from .conftest import Run

CHART = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: marker
  namespace: {{ .Release.Namespace }}
data:
  where: {{ .Release.Namespace | quote }}
"""


@pytest.fixture
def chart(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: tiny\nversion: 1.0.0\n")
    (root / "templates" / "cm.yaml").write_text(CHART)
    return root


def berth(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "berth.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def setup_proc(work: Path, chart: Path, namespace: str, *extra: str) -> subprocess.Popen[str]:
    return berth("install", "setup", "--pull", chart, "--work-dir", work, "--namespace", namespace,
                 "--non-interactive", *extra)  # fmt: skip


def namespace_of(out: Path) -> str:
    return str(yamlio.load_file(out / "spec" / "inputs.yaml")[0].body["spec"]["namespace"])


def history(work: Path) -> list[str]:
    """The namespace each recorded revision was set up for (oldest first), then the current render's."""
    out = work / "out"
    recorded = [namespace_of(out / revisions.REVISIONS_DIR / str(n)) for n in revisions.numbers(out)]
    return [*recorded, namespace_of(out)]


def test_concurrent_setups_record_every_render_exactly_once(tmp_path: Path, chart: Path) -> None:
    work = tmp_path / "w"
    succeeded: list[str] = []
    rounds, per_round = 5, 2  # 1 + 10 setups: every one of them stays within the 10 kept revisions
    first = setup_proc(work, chart, "r0", "--wait-lock")
    assert first.wait(timeout=120) == 0, first.communicate()
    succeeded.append("r0")
    for r in range(1, rounds + 1):
        names = [f"r{r}-{k}" for k in range(per_round)]
        procs = [setup_proc(work, chart, n, "--wait-lock") for n in names]
        for n, p in zip(names, procs, strict=True):
            _out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            succeeded.append(n)
    have = history(work)
    assert sorted(have) == sorted(succeeded)  # each render exactly once: none lost, none twice
    assert revisions.numbers(work / "out") == list(range(1, len(succeeded)))  # numbered uniquely, no gap


def test_a_second_setup_without_wait_lock_is_refused_naming_the_holder(tmp_path: Path, chart: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    with lock.hold(work):
        p = setup_proc(work, chart, "later")
        _out, err = p.communicate(timeout=120)
    assert p.returncode == 2, err
    assert f"pid {os.getpid()}" in err and "--wait-lock" in err and str(work) in err
    assert not (work / "out").exists()  # nothing written


def test_wait_lock_waits_for_the_holder_and_then_runs(tmp_path: Path, chart: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    with lock.hold(work):
        p = setup_proc(work, chart, "waited", "--wait-lock")
        assert p.stderr is not None
        line = p.stderr.readline()  # it says whom it waits for, then waits
        assert "Waiting for" in line and f"pid {os.getpid()}" in line, line
        time.sleep(0.5)
        assert p.poll() is None  # still waiting while the lock is held
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert namespace_of(work / "out") == "waited"


@contextlib.contextmanager
def held_elsewhere(work: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the work dir's lock until the block ends (or it is killed)."""
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from berth.install import lock
        with lock.hold(Path({str(work)!r})):
            print("held", flush=True)
            time.sleep(600)
    """)
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)


def test_a_killed_holder_frees_the_work_dir(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    with held_elsewhere(work) as holder:
        with pytest.raises(lock.LockHeld, match=f"pid {holder.pid}"), lock.hold(work):
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        with lock.hold(work):  # the kernel dropped the dead holder's lock
            assert lock.holder(work)["pid"] == os.getpid()


def test_the_lock_is_reentrant_within_a_process(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    with lock.hold(work), lock.hold(work):
        assert lock.holder(work)["pid"] == os.getpid()
    with lock.hold(work):  # released after the outer one ended
        pass


def test_live_commands_refuse_a_held_work_dir(run: Run, tmp_path: Path, chart: Path) -> None:
    work = tmp_path / "w"
    assert run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive").code == 0
    with held_elsewhere(work) as holder:
        for command in ("apply", "uninstall", "upgrade", "rollback", "test"):
            r = run("install", command, "--work-dir", work)
            assert r.code == 2 and f"in use by pid {holder.pid}" in r.err and "--wait-lock" in r.err, (
                command,
                r.err,
            )


def test_ctrl_c_after_the_commit_says_the_new_render_is_in_place(
    run: Run, tmp_path: Path, chart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "w"
    assert run("install", "setup", "--pull", chart, "--work-dir", work, "--namespace", "old",
               "--non-interactive").code == 0  # fmt: skip
    real = swap_mod.swap

    def swap_then_ctrl_c(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # as a Ctrl-C landing right after the renames

    monkeypatch.setattr(swap_mod, "swap", swap_then_ctrl_c)
    r = run(
        "install", "setup", "--pull", chart, "--work-dir", work, "--namespace", "new", "--non-interactive"
    )
    assert r.code == 130 and "aborted" not in r.err
    assert "new render in place" in r.err and "recorded as revision 1" in r.err, r.err
    assert history(work) == ["old", "new"]


def test_ctrl_c_before_the_commit_leaves_the_work_dir_as_it_was(
    run: Run, tmp_path: Path, chart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "w"
    assert run("install", "setup", "--pull", chart, "--work-dir", work, "--namespace", "old",
               "--non-interactive").code == 0  # fmt: skip

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(setup.layout, "write_split", interrupted)
    r = run(
        "install", "setup", "--pull", chart, "--work-dir", work, "--namespace", "new", "--non-interactive"
    )
    assert r.code == 130 and "aborted" in r.err
    assert history(work) == ["old"]


def test_a_failed_first_setup_leaves_no_work_dir(run: Run, tmp_path: Path) -> None:
    work = tmp_path / "fresh"
    r = run("install", "setup", "--pull", tmp_path / "missing-chart", "--work-dir", work, "--non-interactive")
    assert r.code == 2
    assert not work.exists()
