"""``berth schedule --help`` lists the same commands and summaries as before, and asking for help -- of the group
or of one command -- loads no numpy, no scheduling framework and no Kubernetes client: each command imports those
when it runs (checked in a fresh interpreter through ``sys.modules``, never by timing)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from berth.cli import berth

# The listing as it was when every command module was imported eagerly (80 columns).
LISTING = """\
Commands:
  compare    Place one workload with each configuration, alone and from the...
  config     Print the defaulted configuration, or every problem in it...
  manifests  Print ServiceAccount, ClusterRole(+Binding), ConfigMap and...
  rbac       Print the minimal ClusterRole the configured profiles need,...
  run        Schedule pods on a cluster with the configuration's profiles...
  shadow     Follow a cluster read-only and judge, for every pod another...
  simulate   Place a workload on a cluster described in files, and show...
  snapshot   Write a cluster's current state as `simulate` input: try a...
"""

# Loaded only when a command runs: numpy and the framework (scheduler, simulate, vector columns), the configuration
# loader and the plugin registry it needs, the deploy manifests, the HTML/table report (rich) and the live mode (the
# official Kubernetes client).
HEAVY = (
    "numpy",
    "berth.schedule.scheduler",
    "berth.schedule.simulate",
    "berth.schedule.config",
    "berth.schedule.plugins.registry",
    "berth.schedule.manifests",
    "rich",
    "kubernetes",
)


def loaded_after(*argv: str) -> dict[str, object]:
    """Run ``berth ARGV`` in a fresh interpreter: its exit code and which HEAVY modules it had imported."""
    code = (
        "import json, sys\n"
        "from berth.cli import main\n"
        "rc = main(sys.argv[2:])\n"
        "print(json.dumps({'rc': rc, **{m: m in sys.modules for m in sys.argv[1].split(',')}}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, ",".join(HEAVY), *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return doc


def test_group_help_lists_the_same_commands_and_summaries() -> None:
    result = CliRunner().invoke(berth, ["schedule", "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    assert LISTING + "\nExamples:\n" in result.output  # the listing, then the group's examples
    assert result.output.startswith("Usage: berth schedule [OPTIONS] COMMAND [ARGS]...\n")


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("schedule", "--help"), id="group"),
        *(
            pytest.param(("schedule", sub, "--help"), id=sub)
            for sub in ("simulate", "compare", "config", "rbac", "manifests", "run", "snapshot", "shadow")
        ),
    ],
)
def test_help_imports_no_numpy_framework_or_client(argv: tuple[str, ...]) -> None:
    assert loaded_after(*argv) == {"rc": 0, **dict.fromkeys(HEAVY, False)}


def test_bench_schedule_still_resolves_and_loads_the_framework() -> None:
    # `berth bench schedule` lives in bench/schedule_cli.py (its --workload names come from bench/schedule.py);
    # `berth bench` still finds it, and the probe above does see numpy when a command does load it.
    result = CliRunner().invoke(berth, ["bench", "schedule", "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    from berth.bench.schedule import WORKLOADS

    assert all(name in result.output for name in WORKLOADS) and "node-inclusion-policy" in WORKLOADS
    loaded = loaded_after("bench", "schedule", "--help")
    assert (loaded["rc"], loaded["numpy"], loaded["berth.schedule.scheduler"]) == (0, True, True)


def test_every_lazy_export_is_listed_and_resolves() -> None:
    """``berth.schedule`` names its exports twice (``__all__`` for type checkers, ``_LAZY`` for the import on
    first use): the two lists must agree, and each name must resolve to the object it names."""
    import berth.schedule as schedule

    assert set(schedule.__all__) == set(schedule._LAZY) | {"run_live_scheduler"}
    for name, (module, attr) in schedule._LAZY.items():
        assert getattr(schedule, name) is getattr(__import__(module, fromlist=[attr]), attr)
