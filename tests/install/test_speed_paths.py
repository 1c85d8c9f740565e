"""What makes setup fast, checked as behaviour (the figures are ``berth bench install``'s): Helm runs once per
distinct render (twice only for charts that use randomness, the ``--is-upgrade`` variant only when the chart tells
install from upgrade), each render is parsed once, files are Helm's own text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from berth.install import helm, layout, split
from berth.kube import yamlio

from .conftest import Run

PLAIN = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  namespace: {{ .Release.Namespace }}
data: {a: "1"}   # a comment the file keeps
"""


def chart(tmp: Path, name: str, *templates: str) -> Path:
    root = tmp / name
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n")
    for n, text in enumerate(templates):
        (root / "templates" / f"t{n}.yaml").write_text(text)
    return root


class HelmRuns:
    """Counts the ``helm template`` processes started (``commands``) and every helm process (``processes``),
    and lets them run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.commands: list[list[str]] = []
        self.processes: list[list[str]] = []
        real = subprocess.Popen

        def popen(cmd: list[str], *args: Any, **kwargs: Any) -> Any:
            if len(cmd) > 1 and cmd[1] == "template":
                self.commands.append(cmd)
            if len(cmd) > 1 and Path(cmd[0]).name == "helm":
                self.processes.append(cmd)
            return real(cmd, *args, **kwargs)

        monkeypatch.setattr(helm.subprocess, "Popen", popen)

    @property
    def upgrades(self) -> int:
        return sum("--is-upgrade" in c for c in self.commands)


def setup(run: Run, ref: Path, work: Path) -> None:
    r = run("install", "setup", "--pull", ref, "--work-dir", work, "--non-interactive")
    assert r.code == 0, r.err


def test_a_plain_chart_is_rendered_once(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = HelmRuns(monkeypatch)
    setup(run, chart(tmp_path, "plain", PLAIN), tmp_path / "w")
    # Neither randomness nor IsInstall: the package's implicit base has no review render, the install and
    # --is-upgrade variants render the same, and there is nothing to compare a second render with; and the
    # render is rebuilt from the release the release record needs anyway. One Helm process in all.
    renders = [c[1:3] for c in runs.processes if c[1] != "version"]  # (helm version: once per helm build)
    assert runs.commands == [] and renders == [["install", "plain"]]


def test_a_chart_that_tells_install_from_upgrade_renders_both_once(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = HelmRuns(monkeypatch)
    flagged = PLAIN.replace('data: {a: "1"}', "data: {install: {{ .Release.IsInstall | quote }}}")
    setup(run, chart(tmp_path, "flagged", flagged), tmp_path / "w")
    assert len(runs.commands) == 1 and runs.upgrades == 1  # the install variant: from the release
    assert len([c for c in runs.processes if c[1] != "version"]) == 2


@pytest.mark.parametrize(
    "where",
    ["template", "values"],
)
def test_randomness_in_a_template_or_a_values_tpl_renders_twice(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    random = "{{ randAlphaNum 0 }}"  # random in kind, constant in value: the two renders still agree
    if where == "template":
        root = chart(tmp_path, "rnd", PLAIN.replace('a: "1"', f'a: "{random}"'))
    else:
        root = chart(tmp_path, "rnd", PLAIN.replace('a: "1"', "a: {{ tpl .Values.a . | quote }}"))
        (root / "values.yaml").write_text(f'a: "{random}"\n')
    runs = HelmRuns(monkeypatch)
    setup(run, root, tmp_path / "w")
    assert len(runs.commands) == 2 and runs.upgrades == 0


def test_chart_text_flags() -> None:
    assert helm._RANDOM.search("{{ uuidv4 }}") and helm._RANDOM.search('{{ genCA "x" 3 }}')
    assert not helm._RANDOM.search("{{ .Values.random }}")
    assert helm._RELEASE_FLAGS.search("{{ .Release.IsUpgrade }}") and helm._RELEASE_FLAGS.search(
        "{{ toYaml .Release }}"
    )
    assert not helm._RELEASE_FLAGS.search("{{ .Release.Name }}-{{ $.Release.Namespace }}")


def test_files_are_helms_text_and_the_render_id_counts_the_upgrade_variant(run: Run, tmp_path: Path) -> None:
    flagged = PLAIN.replace("name: plain", "name: flagged").replace(
        'data: {a: "1"}', "data: {i: {{ .Release.IsInstall | quote }}}"
    )
    work = tmp_path / "w"
    setup(run, chart(tmp_path, "two", PLAIN, flagged), work)
    out = work / "out"
    text = (out / "manifests" / "configmap-default-plain.yaml").read_text()
    assert text.startswith("# Source: two/templates/t0.yaml\n") and "# a comment the file keeps" in text
    same = out / "upgrade" / "manifests" / "configmap-default-plain.yaml"
    assert same.read_text() == text
    changed = out / "upgrade" / "manifests" / "configmap-default-flagged.yaml"
    assert yamlio.load_file(changed)[0].body["data"] == {"i": "false"}
    assert (out / "spec" / "render-id").read_text().strip() == layout.render_digest(out)
    # the unchanged file is the install variant's own (a hard link: no second file created), the changed one not
    assert same.samefile(out / "manifests" / "configmap-default-plain.yaml")
    assert not changed.samefile(out / "manifests" / "configmap-default-flagged.yaml")


def test_identical_files_are_links_and_a_link_is_never_written_through(tmp_path: Path) -> None:
    hook = PLAIN.replace("name: plain", "name: hooked").replace(
        "metadata:\n", "metadata:\n  annotations: {helm.sh/hook: 'pre-install,pre-upgrade'}\n"
    )
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\nstringData: {a: b}\n"
    render = "".join(f"---\n# Source: c/templates/{n}.yaml\n{t}" for n, t in enumerate([PLAIN, hook, secret]))
    result = split.from_render(render.replace("{{ .Release.Namespace }}", "ns"))
    twins: layout.Twins = {}
    layout.write_split(result, tmp_path / "a", "c", twins=twins)
    layout.write_split(result, tmp_path / "b", "c", twins=twins)
    a, b = tmp_path / "a", tmp_path / "b"
    pre, up = a / "lifecycle" / "pre-install", a / "lifecycle" / "pre-upgrade"
    (hook_file,) = [p.name for p in pre.iterdir()]
    assert (pre / hook_file).samefile(up / hook_file)  # one hook in two events: one file
    for rel in ["manifests/configmap-ns-plain.yaml", "secrets/secret-ns-s.yaml"]:
        assert (a / rel).samefile(b / rel)
    assert (b / "secrets" / "secret-ns-s.yaml").stat().st_mode & 0o777 == 0o600
    # the same split written again over one of the links replaces the link, leaving its twin as it was
    twin_text = (a / "manifests" / "configmap-ns-plain.yaml").read_text()
    changed = split.from_render(render.replace("{{ .Release.Namespace }}", "ns").replace('a: "1"', 'a: "2"'))
    layout.write_split(changed, b, "c")
    assert (a / "manifests" / "configmap-ns-plain.yaml").read_text() == twin_text
    assert 'a: "2"' in (b / "manifests" / "configmap-ns-plain.yaml").read_text()


def test_each_document_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = yamlio.load_documents

    def counting(text: str, source: str = "<input>", strict: bool = False) -> Any:
        parsed.append(source)
        return real(text, source, strict)

    monkeypatch.setattr(split.yamlio, "load_documents", counting)
    one = "---\n# Source: c/templates/a.yaml\n" + PLAIN.replace("{{ .Release.Namespace }}", "ns")
    two = one + "---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
    split.from_render(one)
    split.from_render(two)  # a second render sharing a document
    split.from_render(two)  # the same render again
    assert parsed == ["c/templates/a.yaml", "c/templates/b.yaml"]


def test_bench_prints_setup_next_to_helm_template(run: Run, tmp_path: Path) -> None:
    root = chart(tmp_path, "tiny", PLAIN)
    r = run("bench", "install", str(root), "--repeat", "1", "-o", "json")
    assert r.code == 0, r.err
    figures = json.loads(r.out)
    (result,) = figures["results"]
    assert result["helmSeconds"] > 0 and result["berthSeconds"] > 0 and result["targetRatio"] == 4.0
    assert len(figures["load"]) == 3
    # CPU counts berth's own Helm runs (a child's children it waited for): more than one helm template's
    assert result["berthCpuSeconds"] > result["helmCpuSeconds"] > 0
    # the ratio is of the unrounded medians: the printed seconds are rounded to the millisecond
    assert result["ratio"] == pytest.approx(result["berthSeconds"] / result["helmSeconds"], rel=0.05)


@pytest.mark.parametrize("flagged", [False, True], ids=["plain-notes", "notes-tell-upgrade"])
def test_notes_of_both_variants_come_from_one_chart_copy(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flagged: bool
) -> None:
    root = chart(tmp_path, "noted", PLAIN)
    says = "{{ if .Release.IsUpgrade }}upgraded{{ else }}installed{{ end }}" if flagged else "hello"
    (root / "templates" / "NOTES.txt").write_text(f"{says} {{{{ .Release.Name }}}}\n")
    runs = HelmRuns(monkeypatch)
    work = tmp_path / "w"
    setup(run, root, work)
    spec = work / "out" / "spec"
    assert (spec / "NOTES.txt").read_text().strip() == ("installed noted" if flagged else "hello noted")
    assert (spec / "NOTES-upgrade.txt").read_text().strip() == (
        "upgraded noted" if flagged else "hello noted"
    )
    notes_runs = [c for c in runs.commands if "--show-only" in c]
    assert len(notes_runs) == (2 if flagged else 1)  # the same copy, --is-upgrade only when the notes ask
    assert len({c[c.index("template") + 2] for c in notes_runs}) == 1
