"""What berth draws on a terminal and what it writes to a pipe: tables follow the terminal's width, piped output is
never cut or wrapped, progress is shown on a terminal's stderr only, NO_COLOR is respected.

A terminal is a real pseudo-terminal of a set size (the child berth, ``berth.cli.main`` in a fresh interpreter,
sees a tty as a user's shell would give it); piped output is a pipe.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from berth.kube import yamlio

ROOT = Path(__file__).resolve().parents[1]
TWO = ROOT / "examples" / "two-profiles"
SIMULATE = [
    "schedule", "simulate", "--config", str(TWO / "config.yaml"), "--cluster", str(TWO / "nodes.yaml"),
    "--workload", str(TWO / "workload.yaml"), "--explain", "packed-*",
]  # fmt: skip
MAIN = "import sys; from berth.cli import main; sys.exit(main(sys.argv[1:]))"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[25];[0-9;]+)m")


def environment(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM")
    }
    return {**env, "TERM": "xterm-256color", **extra}


def on_terminal(argv: list[str], *, columns: int, tty: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Run berth with ``tty`` ("stdout" or "stderr") on a pseudo-terminal ``columns`` wide and the other stream on
    a pipe: (exit code, what the terminal showed, what the pipe got)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, tty: slave}
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, *argv],
        stdin=subprocess.DEVNULL,
        env=env,
        **streams,  # type: ignore[arg-type]
    )
    os.close(slave)
    piped = proc.stderr if tty == "stdout" else proc.stdout
    assert piped is not None
    shown, got = bytearray(), bytearray()
    open_fds = {master, piped.fileno()}
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [], 120)
        assert ready, "berth did not finish"
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the terminal's other side closed (EIO)
                chunk = b""
            if not chunk:
                open_fds.discard(fd)
            else:
                (shown if fd == master else got).extend(chunk)
    os.close(master)
    return proc.wait(timeout=60), shown.decode(errors="replace"), got.decode(errors="replace")


def piped(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, *argv],
        capture_output=True,
        text=True,
        env=env or environment(),
        timeout=300,
    )


def test_tables_fit_an_80_column_terminal() -> None:
    code, shown, _ = on_terminal(SIMULATE, columns=80, tty="stdout", env=environment())
    assert code == 0
    lines = ANSI.sub("", shown).splitlines()
    assert any("Placement" in line for line in lines) and any("plugin (weight)" in line for line in lines)
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)


def test_tables_use_a_wide_terminal() -> None:
    code, shown, _ = on_terminal(SIMULATE, columns=200, tty="stdout", env=environment())
    assert code == 0
    assert max(len(line) for line in ANSI.sub("", shown).splitlines()) > 80


def test_piped_tables_are_as_wide_as_their_content_and_break_no_word(tmp_path: Path) -> None:
    """Node names longer than any terminal: every one is printed whole, each table row on one line."""
    names = [f"node-{i}-" + "x" * 90 for i in range(6)]
    nodes = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for n in names
    ]  # fmt: skip
    (tmp_path / "nodes.yaml").write_text(yamlio.dump_all(nodes))
    argv = [*SIMULATE[:4], "--cluster", str(tmp_path / "nodes.yaml"), *SIMULATE[6:]]
    done = piped(argv)
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout
    for name in names:
        rows = [line for line in done.stdout.splitlines() if name in line]
        assert rows, f"{name} was cut or wrapped"
    placement = [line for line in done.stdout.splitlines() if line.startswith("│ node-")]
    assert len(placement) == len(names)  # one line per node: nothing wrapped onto a second line
    assert max(len(line) for line in done.stdout.splitlines()) > 6 * 90  # the explain table, side by side
    assert all(len(line) < 2000 for line in done.stdout.splitlines())  # not padded to some huge width


BENCH = ["bench", "schedule", "--nodes", "20", "--pods", "30", "--init-pods", "10"]


def test_progress_shows_on_a_terminals_stderr() -> None:
    code, shown, out = on_terminal(BENCH, columns=100, tty="stderr", env=environment())
    assert code == 0
    assert "SchedulingBasic: 10 init pods, then 30 pods on 20 nodes" in ANSI.sub("", shown)
    assert COLOUR.search(shown), "colours expected without NO_COLOR"
    assert "pods scheduled" in out and "\x1b[" not in out  # the figures, on stdout, untouched


def test_progress_respects_no_color() -> None:
    code, shown, _ = on_terminal(BENCH, columns=100, tty="stderr", env=environment(NO_COLOR="1"))
    assert code == 0
    assert "SchedulingBasic" in ANSI.sub("", shown)
    assert not COLOUR.search(shown), repr(shown[:400])


def test_no_progress_when_stderr_is_not_a_terminal() -> None:
    done = piped(BENCH, environment(FORCE_COLOR="1"))
    assert done.returncode == 0
    assert done.stderr == ""
    assert "pods scheduled" in done.stdout


def test_verify_shows_progress(tmp_path: Path) -> None:
    work = tmp_path / "w"
    setup = ["install", "setup", "--pull", str(ROOT / "examples/charts/edge-hooks"), "--work-dir", str(work),
             "--non-interactive"]  # fmt: skip
    assert piped(setup).returncode == 0
    code, shown, out = on_terminal(
        ["install", "verify", "--work-dir", str(work)], columns=250, tty="stderr", env=environment()
    )
    assert code == 0 and "objects match" in out
    assert f"Rendering {work} again with helm template" in ANSI.sub("", shown)


def test_setup_takes_its_progress_away_while_the_wizard_asks(tmp_path: Path) -> None:
    """The spinner would redraw over the question and what the user types: it is gone until the answer is in."""
    examples = ROOT / "examples" / "charts"
    package = ["install", "package", str(examples / "edge-hooks"), "--spec",
               str(examples / "edge-hooks-package" / "spec.yaml"), "--out", str(tmp_path / "pkg")]  # fmt: skip
    assert piped(package).returncode == 0
    pid, fd = pty.fork()
    if pid == 0:  # the child: berth on the terminal, as a user runs it
        os.execve(sys.executable, [sys.executable, "-c", MAIN, "install", "setup", "--pull", str(tmp_path / "pkg"),
                                   "--work-dir", str(tmp_path / "w")], environment())  # fmt: skip
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    shown, answered = bytearray(), False
    while True:
        ready, _, _ = select.select([fd], [], [], 120)
        assert ready, "berth did not finish"
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown.extend(chunk)
        if not answered and b"License key" in shown:
            time.sleep(0.5)  # several spinner frames' time: a spinner still running would redraw meanwhile
            os.write(fd, b"abc\n")
            answered = True
    _, status = os.waitpid(pid, 0)
    text = shown.decode(errors="replace")
    assert answered and os.waitstatus_to_exitcode(status) == 0, text[-2000:]
    before, _, after = text.partition("License key")
    assert "Setting up" in before  # the progress was shown while it worked...
    assert "Setting up" not in after.split("\n", 1)[0]  # ...and not over the question
    assert "Setting up" in after.split("\n", 1)[1] and "Rendered" in after  # then back until the end
