"""The CLI's one error boundary, through the real entry point: one ``error:`` line, an exit code, no traceback.

Covers what the standard library raises for the user's environment (a path under a regular file, a read-only or
full disk), a plugin that is not valid Python, Ctrl-C, YAML alias bombs in every kind of file a command reads,
and ``-v``/``BERTH_DEBUG=1`` bringing the traceback back.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "two-profiles"
SIMULATE = [
    "schedule", "simulate", "--config", str(EXAMPLE / "config.yaml"), "--cluster", str(EXAMPLE / "nodes.yaml"),
    "--workload", str(EXAMPLE / "workload.yaml"), "-o", "json",
]  # fmt: skip
BERTH = [sys.executable, "-m", "berth.cli"]


def berth(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "BERTH_DEBUG"} | (env or {})
    return subprocess.run(
        [*BERTH, *args], capture_output=True, text=True, timeout=300, env=full_env, check=False
    )


def assert_one_error(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    for needle in needles:
        assert needle in errors[0]
    return errors[0]


@pytest.fixture
def regular_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory\n")
    return path


def test_report_path_under_a_regular_file(regular_file: Path) -> None:
    line = assert_one_error(berth(*SIMULATE, "--report", str(regular_file / "r.html")), 2, str(regular_file))
    assert "choose another path" in line


def test_cluster_data_dir_under_a_regular_file(regular_file: Path) -> None:
    proc = berth("cluster", "up", "--data", str(regular_file / "data"))
    assert_one_error(proc, 2, str(regular_file / "data"), "not a directory")


def test_install_work_dir_under_a_regular_file(regular_file: Path) -> None:
    chart = ROOT / "examples" / "charts" / "edge-hooks"
    proc = berth(
        "install", "setup", "--pull", str(chart), "--namespace", "edge", "--work-dir", str(regular_file / "w"),
        "--non-interactive",
    )  # fmt: skip
    assert_one_error(proc, 2, str(regular_file / "w"))


needs_mounts = pytest.mark.skipif(
    shutil.which("unshare") is None or os.geteuid() != 0,
    reason="a private tmpfs needs unshare and root (CI runs as root)",
)


def in_private_mount(
    tmp_path: Path, options: str, command: list[str], fill: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with a tmpfs (mount ``options``) at tmp_path/m, in a mount namespace of its own; ``fill``
    fills it up first."""
    target = tmp_path / "m"
    target.mkdir()
    filler = f"(dd if=/dev/zero of={target}/fill bs=4k 2>/dev/null; true) && " if fill else ""
    script = f'mount -t tmpfs -o {options} tmpfs {target} && {filler}exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", *command],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@needs_mounts
def test_report_on_a_read_only_file_system(tmp_path: Path) -> None:
    proc = in_private_mount(tmp_path, "ro", [*BERTH, *SIMULATE, "--report", str(tmp_path / "m" / "r.html")])
    assert_one_error(proc, 1, str(tmp_path / "m" / "r.html"), "Read-only file system")


@needs_mounts
def test_report_on_a_full_disk_names_the_file_and_leaves_nothing_half_written(tmp_path: Path) -> None:
    report = tmp_path / "m" / "r.html"
    listing = tmp_path / "listing"
    then_list = ["sh", "-c", f'"$@"; rc=$?; ls -A {tmp_path / "m"} > {listing}; exit $rc', "sh"]
    proc = in_private_mount(
        tmp_path, "size=64k", [*then_list, *BERTH, *SIMULATE, "--report", str(report)], True
    )
    assert_one_error(proc, 1, str(report), "No space left on device")
    assert listing.read_text().split() == ["fill"]  # no temporary file, no partial report


@pytest.fixture
def bad_plugin(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "broken_plugin.py").write_text("class Broken(\n    pass\n")
    return folder


def test_plugin_with_a_syntax_error_names_its_file_and_line(bad_plugin: Path) -> None:
    proc = berth(*SIMULATE, "--plugin", "broken_plugin:Broken", env={"PYTHONPATH": str(bad_plugin)})
    line = assert_one_error(proc, 2, str(bad_plugin / "broken_plugin.py"))
    assert re.search(r"broken_plugin\.py(:|, line )1\b", line), (
        line
    )  # the plugin loader's or the boundary's form


def test_verbose_and_berth_debug_show_the_traceback(bad_plugin: Path) -> None:
    for args, env in (
        (["-v", *SIMULATE], {"PYTHONPATH": str(bad_plugin)}),
        (SIMULATE, {"PYTHONPATH": str(bad_plugin), "BERTH_DEBUG": "1"}),
    ):
        proc = berth(*args, "--plugin", "broken_plugin:Broken", env=env)
        assert proc.returncode == 2
        assert "Traceback" in proc.stderr and "SyntaxError" in proc.stderr
        assert proc.stderr.rstrip().splitlines()[-1].startswith("error: ")


def test_a_missing_plugin_module_is_named() -> None:
    assert_one_error(berth(*SIMULATE, "--plugin", "no_such_plugin_module:X"), 2, "no_such_plugin_module")


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used (utime + stime from /proc), to wait for progress rather than for the clock."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_ends_with_one_line_and_exit_130() -> None:
    # about a minute of work; interrupted once it has spent two CPU seconds, i.e. well into it on any machine
    # PYTHONFAULTHANDLER: should it ever fail to end, SIGABRT makes it print every thread's stack for the message.
    proc = subprocess.Popen(
        [*BERTH, "bench", "schedule", "--nodes", "5000", "--pods", "200000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONFAULTHANDLER": "1"},
    )  # fmt: skip
    try:
        while cpu_seconds(proc.pid) < 2.0:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, stacks = proc.communicate(timeout=30)
            pytest.fail(f"still running 120 s after Ctrl-C; its threads:\n{stacks}")
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == ["aborted (interrupted)"]


def alias_bomb() -> str:
    lines = ['  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("which", ["--config", "--cluster", "--workload"])
def test_an_alias_bomb_in_any_input_file_is_refused_naming_it(tmp_path: Path, which: str) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n" + alias_bomb())
    args = list(SIMULATE)
    args[args.index(which) + 1] = str(bomb)
    assert_one_error(berth(*args), 2, str(bomb), "excessive aliasing")
