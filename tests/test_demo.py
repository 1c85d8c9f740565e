"""``berth demo`` end to end (its fast variant: shorter measurement windows) on an embedded cluster of its own."""

from __future__ import annotations

import fcntl
import io
import re
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from rich.console import Console

from berth.demo import run
from berth.demo.admin import Traffic, count_traffic
from berth.demo.main import EXAMPLE
from berth.demo.result import TOO_SMALL_RULES
from berth.demo.shapes import Comparison, Down, ShapeFigures, ThirdCost, Written
from berth.kube.errors import InputError
from berth.schedule import config as config_mod
from berth.schedule import rbac
from berth.schedule.plugins import registry as registry_mod

DEMO_DOC = Path(__file__).resolve().parents[1] / "docs" / "demo.md"


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

    assert result.install_error == "", text
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

    # the separate shape places the same workload the same way (step 5)
    separate = result.separate_placement
    assert sorted(separate[n].get("academy-concentrate", 0) for n in result.nodes) == [0, 0, 0, 6]
    assert sum(separate[n].get("academy-default", 0) for n in result.nodes) == 6
    assert text.count("12/12 pods placed") == 2

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
    assert c.profiles.down.resumed > 0 and c.separate.down.resumed > 0  # placement resumed after the restart
    assert (c.profiles.third.objects, c.profiles.third.processes) == (0, 0)
    assert (c.separate.third.objects, c.separate.third.processes) == (5, 1)
    assert c.separate.third.informers > c.profiles.third.informers
    assert [row[0] for row in c.rows()] == [
        "what you write",
        "what the API server sees",
        "when it is down",
        "a third behaviour costs",
    ]

    # docs/demo.md quotes this run's counts: they must still be what the demo finds
    doc = DEMO_DOC.read_text(encoding="utf-8")
    assert f"one line per missing permission ({len(result.forbidden)} on this cluster)" in doc
    assert f"computes ({result.rules_minimal} rules, each with the plugins that need it)" in doc
    for shape in (c.profiles, c.separate):
        assert f"| {shape.written.objects} objects; {shape.written.lines} lines of YAML |" in doc
        assert f"+{shape.third.config_lines} config lines, +{shape.third.objects} objects" in doc
        assert (
            f"{shape.processes} process{'es' if shape.processes > 1 else ''}, {shape.traffic.watches} watch"
            in doc
        )

    # the report, and the cluster stopped (its port closed)
    assert result.report == report.resolve()
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "academy-concentrate" in page and "what the API server sees" in page
    # the placement report: each node's cpu as the live scheduler's cache held it (4-cpu nodes; the 6
    # concentrated pods request 100m each, so their node holds at least 600m of 4 cores)
    assert "of 4 cores" in page
    cpu = [float(m) for m in re.findall(r"([\d.]+) of 4 cores", page)]
    assert len(cpu) == 4 and max(cpu) >= 0.6
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


def _rec(user: str, verb: str, time: str) -> dict[str, str]:
    return {"user": user, "verb": verb, "time": time}


A = "system:serviceaccount:berth-system:a"
B = "system:serviceaccount:berth-system:b"
EARLY, UNTIL, LATE = (
    "2026-11-29T21:00:01.000000Z",
    "2026-11-29T21:00:05.000000Z",
    "2026-11-29T21:00:09.000000Z",
)


@pytest.mark.parametrize(
    ("records", "users", "expected"),
    [
        pytest.param([], [A], Traffic(0, 0, 0), id="nothing"),
        pytest.param(
            [_rec(A, "list", EARLY), _rec(A, "watch", LATE), _rec(A, "get", EARLY)], [A], Traffic(1, 1, 3),
            id="watches-logged-at-close-count",
        ),
        pytest.param(
            [_rec(A, "list", EARLY), _rec(A, "list", LATE), _rec(A, "create", LATE)], [A], Traffic(0, 1, 1),
            id="after-the-window-does-not-count",
        ),
        pytest.param(
            [_rec(A, "list", EARLY), _rec(B, "list", EARLY), _rec("admin", "list", EARLY)], [A, B],
            Traffic(0, 2, 2), id="only-the-shape-users",
        ),
    ],
)  # fmt: skip
def test_traffic_counts_from_the_audit_log(
    records: list[dict[str, str]], users: list[str], expected: Traffic
) -> None:
    assert count_traffic(list(records), users, UNTIL) == expected


def _figures(
    processes: int, pending: dict[str, str], third_processes: int, resumed: float = 0.0
) -> ShapeFigures:
    return ShapeFigures(
        "x", processes, (25,), Written(5, 399, {"ServiceAccount": 1, "Deployment": 1}), Traffic(15, 15, 33),
        (18,), Down(("the scheduler",), pending, resumed), ThirdCost(6, 0, third_processes, 0),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("figures", "row", "expected"),
    [
        pytest.param(_figures(1, {}, 0), 0, "5 objects (1 ServiceAccount, 1 Deployment); 399 lines of YAML", id="write"),
        pytest.param(
            _figures(1, {}, 0), 1, "1 process, 15 watch connections, 15 lists, 33 requests in 4s", id="seen-singular"
        ),
        pytest.param(_figures(2, {}, 0), 1, "2 processes, 15 watch connections, 15 lists, 33 requests in 4s",
                     id="seen-plural"),
        pytest.param(
            _figures(1, {"p": "", "q": ""}, 0), 2, "stop the scheduler: 2 of 2 new pods Pending (p, q)", id="all-down"
        ),
        pytest.param(
            _figures(1, {"p": "node-1", "q": ""}, 0), 2,
            "stop the scheduler: 1 of 2 new pods Pending (q); p still placed", id="half-down",
        ),
        pytest.param(
            _figures(1, {"p": ""}, 0, 2.345), 2,
            "stop the scheduler: 1 of 1 new pods Pending (p); bound 2.3s after the restart", id="resumed",
        ),
        pytest.param(
            _figures(1, {}, 1), 3, "+6 config lines, +0 objects, +1 process, +0 informer connections", id="third"
        ),
    ],
)  # fmt: skip
def test_comparison_rows_say_what_was_measured(figures: ShapeFigures, row: int, expected: str) -> None:
    comparison = Comparison(figures, figures, window=4.0)
    assert comparison.rows()[row][1] == expected
