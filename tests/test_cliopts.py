"""Flags as helm and kubectl users type them, through the real entry point (``berth.cli.main``).

Checked over the whole command tree (so a command added later is held to the same rules) and by running commands:
``-n``, ``--kube-context``, one ``-o`` family with the old ``text`` still accepted, files and directories on
``--out`` (and what the old ``-o PATH`` does now), Go durations with one error line for a bad one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from berth import cli, cliopts
from berth.cli import berth

ROOT = Path(__file__).resolve().parents[1]
EDGE_CHART = ROOT / "examples" / "charts" / "edge-hooks"
TWO = ROOT / "examples" / "two-profiles"
SIMULATE = [
    "schedule", "simulate", "--config", str(TWO / "config.yaml"), "--cluster", str(TWO / "nodes.yaml"),
    "--workload", str(TWO / "workload.yaml"),
]  # fmt: skip


def walk(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, cmd
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from walk(cmd.commands[name], (*path, name))


COMMANDS = list(walk(berth))


def options_of(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option)]


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


Run = Callable[..., Result]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """``berth ARGS...`` in-process through the real entry point."""

    def _run(*args: str | Path) -> Result:
        capsys.readouterr()
        code = cli.main([str(a) for a in args])
        got = capsys.readouterr()
        return Result(code, got.out, got.err)

    return _run


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A work dir set up from the edge-hooks chart (read-only for the tests here)."""
    path = tmp_path_factory.mktemp("flags") / "work"
    argv = [
        "install",
        "setup",
        "--pull",
        str(EDGE_CHART),
        "-n",
        "edge",
        "--work-dir",
        str(path),
        "--non-interactive",
    ]
    assert cli.main(argv) == 0
    return path


def one_error(res: Result, *needles: str) -> str:
    """The run failed with exit 2 and exactly one stderr line, an ``error:`` naming ``needles``."""
    assert res.code == 2, res
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.err
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


# ---- the rules over the whole tree -----------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[" ".join(p) or "berth" for p, _ in COMMANDS])
def test_every_option_spells_namespace_context_and_output_as_kubectl(
    path: tuple[str, ...], cmd: click.Command
) -> None:
    for opt in options_of(cmd):
        if opt.name == "namespace":
            assert "-n" in opt.opts, f"{path}: --namespace without -n"
        if opt.name == "context":
            assert {"--context", "--kube-context"} <= set(opt.opts), f"{path}: {opt.opts}"
        if "-o" in opt.opts and not opt.hidden:
            assert isinstance(opt.type, cliopts.OutputFormat), f"{path}: -o is not a format"
            assert set(opt.type.choices) <= set(cliopts.FORMATS), f"{path}: {opt.type.choices}"
        if opt.name in ("timeout", "seconds") or "duration" in (opt.metavar or "").lower():
            assert isinstance(opt.type, cliopts.Duration), f"{path}: {opt.name} is not a duration"
        assert "-o" not in opt.opts or not isinstance(opt.type, click.Path), f"{path}: -o is a path"


def test_the_tree_uses_each_rule_somewhere() -> None:
    """The rules above must not pass by finding nothing to check."""
    names = [(p, o) for p, c in COMMANDS for o in options_of(c)]
    assert sum(o.name == "namespace" for _, o in names) >= 3
    assert sum(o.name == "context" for _, o in names) >= 9
    assert sum(isinstance(o.type, cliopts.OutputFormat) for _, o in names) >= 12
    assert sum(isinstance(o.type, cliopts.Duration) for _, o in names) >= 9


# ---- -o: one family, text still accepted -----------------------------------------------------------------------


def test_output_text_is_table_with_one_warning(run: Run, work: Path) -> None:
    table = run("install", "plan", "--work-dir", work, "-o", "table")
    text = run("install", "plan", "--work-dir", work, "-o", "text")
    assert table.code == text.code == 0
    assert text.out == table.out and "Plan: install release" in text.out
    assert text.err == "warning: -o text is deprecated and will be removed; use -o table\n"
    assert table.err == ""


def test_text_is_not_offered_where_there_is_no_table(run: Run) -> None:
    res = run("schedule", "config", "--config", TWO / "config.yaml", "-o", "text")
    assert res.code == 2 and "'text' is not one of 'yaml', 'json'" in res.err


def test_help_lists_the_family_without_the_old_spelling(run: Run) -> None:
    res = run("install", "plan", "--help")
    assert "-o, --output [table|json|yaml]" in res.out
    assert "text" not in res.out.split("-o, --output")[1].splitlines()[0]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_every_document_format_prints_the_same_document(run: Run, work: Path, fmt: str) -> None:
    from berth.kube import yamlio

    res = run("install", "plan", "--work-dir", work, "--action", "uninstall", "-o", fmt)
    assert res.code == 0, res.err
    doc = json.loads(res.out) if fmt == "json" else yamlio.load_one(res.out)
    assert doc["action"] == "uninstall" and doc["steps"]


def test_manifests_name_output_is_kubectl_get_o_name(run: Run) -> None:
    res = run("schedule", "manifests", "--config", TWO / "config.yaml", "--image", "berth:dev", "-o", "name")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert "serviceaccount/berth-scheduler" in lines
    assert "clusterrole.rbac.authorization.k8s.io/berth-scheduler" in lines
    assert any(re.fullmatch(r"deployment\.apps/[a-z0-9-]+", line) for line in lines)
    assert all("/" in line and " " not in line for line in lines)


def test_simulate_wide_adds_each_nodes_requests(run: Run) -> None:
    table = run(*SIMULATE)
    wide = run(*SIMULATE, "-o", "wide")
    assert table.code == wide.code == 0
    assert "cpu requested" not in table.out and "cpu requested" in wide.out
    row = next(line for line in wide.out.splitlines() if line.startswith("│ node-4 "))
    # 7 pods of 100m/64Mi each on a 4-cpu, 16Gi node (the example's files)
    assert "0.7/4 18%" in row and "448 MiB/16 GiB 3%" in row


# ---- --out: files and directories ------------------------------------------------------------------------------


def test_script_out_writes_the_file(run: Run, work: Path, tmp_path: Path) -> None:
    res = run("install", "script", "--work-dir", work, "--out", tmp_path / "i.sh")
    assert res.code == 0 and res.err == ""
    assert (tmp_path / "i.sh").read_text().startswith("#!")


@pytest.mark.parametrize("fmt", ["json", "yaml", "table", "text"])
def test_script_o_format_is_refused_and_writes_nothing(
    run: Run, work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.chdir(tmp_path)
    res = run("install", "script", "--work-dir", work, "-o", fmt)
    one_error(res, f"-o {fmt}", f"--out {fmt}")
    assert list(tmp_path.iterdir()) == []


def test_script_o_path_still_works_with_a_warning(run: Run, work: Path, tmp_path: Path) -> None:
    res = run("install", "script", "--work-dir", work, "-o", tmp_path / "i.sh")
    assert res.code == 0
    assert (
        res.err == f"warning: -o PATH is deprecated here and will be removed; use --out {tmp_path / 'i.sh'}\n"
    )
    assert (tmp_path / "i.sh").is_file()


def test_out_and_the_old_o_together_are_refused(run: Run, work: Path, tmp_path: Path) -> None:
    res = run("install", "script", "--work-dir", work, "-o", tmp_path / "a", "--out", tmp_path / "b")
    assert res.code == 2 and "error: -o: give the path once, with --out" in res.err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_package_goes_to_out_and_o_json_is_refused(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    one_error(run("install", "package", EDGE_CHART, "-o", "json"), "--out json")
    assert not (tmp_path / "json").exists()
    res = run("install", "package", EDGE_CHART, "--out", "pkg")
    assert res.code == 0 and res.err == "", res.err
    assert (tmp_path / "pkg" / "berth-package.yaml").is_file()
    assert not re.search(r"-o\b", run("install", "package", "--help").out.split("Examples:")[0])


# ---- -n and --kube-context ---------------------------------------------------------------------------------------


def test_n_is_the_namespace(run: Run, tmp_path: Path) -> None:
    work = tmp_path / "w"
    res = run(
        "install", "setup", "--pull", EDGE_CHART, "-n", "short-n", "--work-dir", work, "--non-interactive"
    )
    assert res.code == 0, res.err
    assert "in namespace short-n" in run("install", "plan", "--work-dir", work).out
    res = run(
        "schedule", "manifests", "--config", TWO / "config.yaml", "--image", "i", "-n", "sched", "-o", "json"
    )
    namespaced = [o for o in json.loads(res.out)["items"] if o["kind"] in ("ServiceAccount", "Deployment")]
    assert namespaced and {o["metadata"]["namespace"] for o in namespaced} == {"sched"}


def test_kube_context_is_the_context(run: Run, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: here\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "contexts: [{name: here, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    for flag in ("--context", "--kube-context"):
        res = run(
            "schedule",
            "snapshot",
            "--kubeconfig",
            kubeconfig,
            flag,
            "elsewhere",
            "--out",
            tmp_path / "c.yaml",
        )
        assert res.code != 0 and "elsewhere" in res.err, res.err


# ---- durations -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5m", 300), ("90s", 90), ("1h30m", 5400), ("250ms", 1), ("300", 300), ("1.5m", 90), ("5m0s", 300)],
)
def test_timeout_takes_go_durations(run: Run, work: Path, text: str, seconds: int) -> None:
    res = run("install", "plan", "--work-dir", work, "--timeout", text)
    assert res.code == 0, res.err
    assert f"timeout {seconds}s each" in res.out


DURATION_FLAGS = [
    (path, max(opt.opts, key=len))
    for path, cmd in COMMANDS
    for opt in options_of(cmd)
    if isinstance(opt.type, cliopts.Duration)
]


@pytest.mark.parametrize(
    ("path", "flag"), DURATION_FLAGS, ids=[f"{' '.join(p)} {f}" for p, f in DURATION_FLAGS]
)
@pytest.mark.parametrize("bad", ["5x", "five", "-3m", "0"])
def test_a_bad_duration_is_one_error_line_and_exit_2(
    run: Run, path: tuple[str, ...], flag: str, bad: str
) -> None:
    """Given first, the flag is parsed before anything else: no cluster, work dir or file is needed to refuse it."""
    line = one_error(run(*path, f"{flag}={bad}"), flag, repr(bad))
    assert ("not a duration" in line) or ("longer than zero" in line)


def test_durations_parse_as_go_and_seconds() -> None:
    assert cliopts.parse_seconds("1h30m") == 5400
    assert cliopts.parse_seconds("250ms") == pytest.approx(0.25)
    assert cliopts.parse_seconds(" 42 ") == 42
    assert cliopts.parse_seconds("5 m") is None
    assert cliopts.Duration(whole=True).convert("1.2s", None, None) == 2
    assert cliopts.Duration().convert("1.2s", None, None) == pytest.approx(1.2)
