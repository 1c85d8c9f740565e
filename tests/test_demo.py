"""``berth demo`` end to end (its fast variant: shorter measurement windows) on an embedded cluster of its own."""

from __future__ import annotations

import fcntl
import io
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from rich.console import Console

from berth.demo import run
from berth.demo.main import EXAMPLE, TOO_SMALL_RULES
from berth.kube.errors import InputError
from berth.schedule import config as config_mod
from berth.schedule import rbac
from berth.schedule.plugins import registry as registry_mod


def test_demo_end_to_end(tmp_path: Path) -> None:
    out = io.StringIO()
    report = tmp_path / "report.html"
    result = run(
        seed=1,
        fast=True,
        base_dir=tmp_path / "demo",
        report_path=report,
        console=Console(file=out, width=120),
    )
    text = out.getvalue()

    # every step ran, in order
    positions = [text.index(f"Step {n}/6") for n in range(1, 7)]
    assert positions == sorted(positions)
    assert "Plan: install release berth-scheduler in namespace berth-system" in text
    assert "Deployment berth-system/berth-scheduler ready (1/1 available)" in text

    # the too-small role: one line per missing permission, nothing bound; the computed role: the probe is bound
    assert result.forbidden
    assert len(result.forbidden) == len(set(result.forbidden))
    assert any(
        line.startswith("missing permission: list nodes (core) cluster-wide") for line in result.forbidden
    )
    assert not any(" list pods (core)" in line for line in result.forbidden)  # the small role grants it
    assert result.bound_while_forbidden == 0
    assert result.probe_node.startswith("node-")
    registry = registry_mod.default_registry()
    cfg = config_mod.load(EXAMPLE / "config.yaml", registry)
    assert result.rules_too_small == len(TOO_SMALL_RULES) == 1
    assert result.rules_minimal == len(rbac.compute(cfg, registry).rules)

    # placement: 6 concentrated on one node, 6 spread at most 2 per node
    assert result.nodes == ["node-1", "node-2", "node-3", "node-4"]
    concentrate = result.per_profile("academy-concentrate")
    default = result.per_profile("academy-default")
    assert sorted(concentrate) == [0, 0, 0, 6]
    assert sum(default) == 6 and max(default) <= 2

    # the measured comparison
    c = result.comparison
    assert c is not None
    assert (c.profiles.processes, c.separate.processes) == (1, 2)
    assert (c.profiles.written.objects, c.separate.written.objects) == (5, 10)
    assert c.separate.written.lines > c.profiles.written.lines
    assert 0 < c.profiles.traffic.watches < c.separate.traffic.watches
    assert c.profiles.traffic.lists < c.separate.traffic.lists
    assert c.profiles.down.pending == ["academy-concentrate", "academy-default"]
    assert c.separate.down.pending == ["academy-concentrate"]
    assert c.separate.down.placement["academy-default"].startswith("node-")
    assert (c.profiles.third.objects, c.profiles.third.processes) == (0, 0)
    assert (c.separate.third.objects, c.separate.third.processes) == (5, 1)
    assert c.separate.third.informers > c.profiles.third.informers
    assert [row[0] for row in c.rows()] == [
        "what you write",
        "what the API server sees",
        "when it is down",
        "a third behaviour costs",
    ]

    # the report, and the cluster stopped (its port closed)
    assert result.report == report.resolve()
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "academy-concentrate" in page and "what the API server sees" in page
    assert "missing permission: list nodes" in page
    assert result.cluster_stopped
    url = urlsplit(result.url)
    assert url.port is not None
    with pytest.raises(OSError), socket.create_connection((url.hostname or "127.0.0.1", url.port), timeout=2):
        pass


def test_refuses_a_directory_in_use_by_another_demo(tmp_path: Path) -> None:
    lock = tmp_path / "demo" / "cluster" / "lock"
    lock.parent.mkdir(parents=True)
    (tmp_path / "demo" / "keep").write_text("x", encoding="utf-8")
    with open(lock, "a+", encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(InputError, match="another berth demo is running") as err:
            run(
                base_dir=tmp_path / "demo",
                report_path=tmp_path / "r.html",
                console=Console(file=io.StringIO()),
            )
    assert err.value.where == str((tmp_path / "demo").resolve())
    assert (tmp_path / "demo" / "keep").is_file()  # nothing of the running demo was removed
    assert not (tmp_path / "r.html").exists()
