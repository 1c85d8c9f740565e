"""The data directory: private to its owner, refused rather than replaced when its store is broken, tidied after a
failed start, and the same address after a restart (issue 19: private by construction, restart in place)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.cluster import Cluster, ClusterError, ClusterOptions, datadir

UP = [sys.executable, "-c", "import sys; from berth.cli import main; sys.exit(main(sys.argv[1:]))"]


@pytest.fixture
def open_parent() -> Iterator[Path]:
    """A directory other users may enter (pytest's own tmp_path is 0700, which would hide a loose data dir)."""
    parent = Path(tempfile.mkdtemp(prefix="berth-datadir-"))
    os.chmod(parent, 0o755)
    try:
        yield parent
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _modes(data: Path) -> dict[str, int]:
    return {str(p.relative_to(data)): stat.S_IMODE(p.lstat().st_mode) for p in [data, *data.rglob("*")]}


def test_every_file_of_a_running_cluster_is_private(open_parent: Path) -> None:
    data = open_parent / "cluster"
    with Cluster(ClusterOptions(data_dir=data, run_controllers=False)) as c:
        assert c.api is not None
        c.api.create("secrets", {"metadata": {"name": "s"}, "stringData": {"password": "x"}}, "default")
        modes = _modes(data)
        for expected in ("store.db", "store.db-wal", "store.db-shm", "audit.jsonl", "kubeconfig", "lock"):
            assert expected in modes, sorted(modes)
        assert "pki/apiserver.key" in modes and "pki/ca.crt" in modes and "server.json" in modes
        assert modes["."] == 0o700 and modes["pki"] == 0o700
        loose = {name: f"{mode:04o}" for name, mode in modes.items() if mode & 0o077}
        assert loose == {}


def test_loose_modes_are_tightened_on_start_with_a_warning(
    open_parent: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = open_parent / "cluster"
    with Cluster(ClusterOptions(data_dir=data, run_controllers=False)):
        pass
    os.chmod(data, 0o755)
    os.chmod(data / "store.db", 0o644)
    os.chmod(data / "audit.jsonl", 0o640)
    with (
        caplog.at_level(logging.WARNING, logger="berth.cluster.datadir"),
        Cluster(ClusterOptions(data_dir=data, run_controllers=False)),
    ):
        assert all(not mode & 0o077 for mode in _modes(data).values())
    assert "readable by other users; tightened" in caplog.text
    assert f"{data / 'store.db'} 0644" in caplog.text and f"{data} 0755" in caplog.text


@pytest.mark.skipif(os.name != "posix" or not hasattr(os, "geteuid"), reason="POSIX users")
def test_a_second_local_user_can_read_nothing(open_parent: Path) -> None:
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("needs root and useradd to create a throwaway second user")
    user = f"berthtest{secrets.token_hex(3)}"
    made = subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", user], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.decode(errors='replace').strip()}")
    data = open_parent / "cluster"
    try:
        with Cluster(ClusterOptions(data_dir=data, run_controllers=False)) as c:
            assert c.api is not None
            c.api.create("secrets", {"metadata": {"name": "s"}, "stringData": {"password": "x"}}, "default")

            def as_other(*argv: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(list(argv), user=user, capture_output=True, text=True, timeout=30)

            listing = as_other("ls", str(data))
            assert listing.returncode != 0 and "Permission denied" in listing.stderr
            files = [p for p in data.rglob("*") if p.is_file()]
            assert len(files) >= 10
            for path in files:
                read = as_other("cat", str(path))
                assert read.returncode != 0 and "Permission denied" in read.stderr, path
            # Even with the directory opened up by mistake, the files themselves stay unreadable.
            os.chmod(data, 0o711)
            os.chmod(data / "pki", 0o711)
            for path in files:
                read = as_other("cat", str(path))
                assert read.returncode != 0 and "Permission denied" in read.stderr, path
            # ... and the token in the kubeconfig, the one thing that would make them cluster-admin, stays hidden.
            assert c.token not in as_other("sh", "-c", f"cat {data}/* {data}/pki/* 2>/dev/null").stdout
    finally:
        subprocess.run(["userdel", user], capture_output=True)


# ---- stores that are refused, untouched ---------------------------------------------------------------------------


def _refused(data: Path, match: str) -> None:
    with pytest.raises(ClusterError, match=match):
        Cluster(ClusterOptions(data_dir=data, run_controllers=False)).start()


def test_an_empty_store_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "store.db").write_bytes(b"")
    _refused(data, r"store.db is not a usable berth store: it is empty \(0 bytes\)")
    assert (data / "store.db").read_bytes() == b""
    assert sorted(p.name for p in data.iterdir()) == ["store.db"]  # no kubeconfig, keys or WAL made


def test_a_truncated_store_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    data = tmp_path / "d"
    with Cluster(ClusterOptions(data_dir=data, run_controllers=False)):
        pass
    cut = (data / "store.db").read_bytes()[:60]
    (data / "store.db").write_bytes(cut)
    _refused(data, "is not an SQLite database")
    assert (data / "store.db").read_bytes() == cut


def test_another_programs_database_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    con = sqlite3.connect(data / "store.db")
    con.execute("CREATE TABLE notes (x TEXT)")
    con.commit()
    con.close()
    before = (data / "store.db").read_bytes()
    _refused(data, r"not a usable berth store \(it holds tables \['notes'\] but not berth's")
    assert (data / "store.db").read_bytes() == before


def test_credentials_without_a_store_are_refused(tmp_path: Path) -> None:
    data = tmp_path / "d"
    with Cluster(ClusterOptions(data_dir=data, run_controllers=False)):
        pass
    for name in ("store.db", "store.db-wal", "store.db-shm"):
        with contextlib.suppress(FileNotFoundError):
            (data / name).unlink()
    _refused(data, "holds a former cluster's pki and kubeconfig but no store.db")
    assert not (data / "store.db").exists()


# ---- failed starts ------------------------------------------------------------------------------------------------


def test_a_failed_start_leaves_no_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "new" / "cluster"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(ClusterError, match="cannot listen"):
            Cluster(ClusterOptions(data_dir=data, port=s.getsockname()[1], run_controllers=False)).start()
    assert not data.exists()


def test_a_failed_start_in_an_existing_directory_removes_only_what_it_made(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "notes.txt").write_text("mine")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(ClusterError, match="cannot listen"):
            Cluster(ClusterOptions(data_dir=data, port=s.getsockname()[1], run_controllers=False)).start()
    assert [p.name for p in data.iterdir()] == ["notes.txt"]


def test_cli_failed_start_on_a_taken_port_leaves_no_data_directory(tmp_path: Path) -> None:
    data = tmp_path / "fresh"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        for extra in ([], ["--detach"]):
            up = subprocess.run(
                [
                    *UP,
                    "cluster",
                    "up",
                    "--data",
                    str(data),
                    "--nodes",
                    "0",
                    "--port",
                    str(s.getsockname()[1]),
                    *extra,
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert up.returncode == 1 and "cannot listen on 127.0.0.1" in up.stderr, (extra, up.stderr)
            assert not data.exists(), extra


# ---- running is the lock, not a pid -------------------------------------------------------------------------------


def test_running_is_asked_of_the_lock(tmp_path: Path) -> None:
    data = tmp_path / "d"
    with Cluster(ClusterOptions(data_dir=data, run_controllers=False)):
        assert datadir.is_running(data)
    assert not datadir.is_running(data)
    # A server.json left by a killed server, naming a pid that is alive (here: this test), is not a running cluster.
    (data / "server.json").write_text(
        json.dumps({"url": "https://127.0.0.1:1", "port": 1, "pid": os.getpid()})
    )
    status = subprocess.run(
        [*UP, "cluster", "status", "--data", str(data), "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(status.stdout)["running"] is False
    down = subprocess.run(
        [*UP, "cluster", "down", "--data", str(data)], capture_output=True, text=True, timeout=60
    )
    assert "no cluster is running" in down.stdout  # and this process was not signalled


# ---- restart in place ---------------------------------------------------------------------------------------------


def _up(data: Path, *extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [*UP, "cluster", "up", "--data", str(data), "--nodes", "0", "--no-controllers", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "ready at https://127.0.0.1:" in line, line + proc.stdout.read()
    return proc


def _url(data: Path) -> str:
    return str(json.loads((data / "server.json").read_text())["url"])


def _connect(url: str) -> socket.socket:
    """A client connection left open across the restart (a kept-alive or watching client)."""
    port = int(url.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port))


def test_restart_after_kill_9_and_after_down_takes_the_same_address(tmp_path: Path) -> None:
    data = tmp_path / "d"
    first = _up(data)
    url = _url(data)
    conn = _connect(url)
    try:
        first.send_signal(signal.SIGKILL)
        first.wait()
        # at once: the dead server's lock is gone, so this is not "already running", and its port is taken again
        second = _up(data)
        assert _url(data) == url
        kubeconfig = (data / "kubeconfig").read_text()
        assert url in kubeconfig
        conn2 = _connect(url)
        try:
            stop = subprocess.run(
                [*UP, "cluster", "down", "--data", str(data)], capture_output=True, text=True
            )
            assert stop.returncode == 0, stop.stderr
            second.wait(timeout=30)
        finally:
            conn2.close()
        third = _up(data)
        try:
            assert _url(data) == url and (data / "kubeconfig").read_text() == kubeconfig
        finally:
            third.send_signal(signal.SIGTERM)
            third.wait(timeout=30)
    finally:
        conn.close()


def test_a_remembered_port_taken_by_another_program_is_named(tmp_path: Path) -> None:
    data = tmp_path / "d"
    first = _up(data)
    port = int(_url(data).rsplit(":", 1)[1])
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=30)
    deadline = time.monotonic() + 10
    with socket.socket() as s:
        while True:
            try:
                s.bind(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.skip("the port stayed busy")
                time.sleep(0.1)
        s.listen()
        up = subprocess.run(
            [*UP, "cluster", "up", "--data", str(data), "--nodes", "0"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert up.returncode == 1
    assert f"Port {port} is this cluster's address" in up.stderr and "pass --port to move" in up.stderr
    assert (data / "store.db").exists()  # the existing cluster is kept
