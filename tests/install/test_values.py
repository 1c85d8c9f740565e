"""Helm's values flags on ``install setup``: what berth renders is what ``helm template`` renders with the same
flags, the flags are recorded and reused, the release namespace defaults as Helm's, bad input changes nothing."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from berth.install import helm, split, values, verify, workdir
from berth.kube import canonical, tools

from .conftest import Run

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: flags\nversion: 1.0.0\n",
    "values.yaml": (
        "replicaCount: 1\nimage: {repository: nginx, tag: '1.0'}\nlabels: {team: a}\nlist: [x]\n"
        "big: 1\nflag: false\nnote: none\nextra: {}\n"
    ),
    "templates/all.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-values
  namespace: {{ .Release.Namespace }}
  labels: {{ toJson .Values.labels }}
data:
  replicas: {{ .Values.replicaCount | quote }}
  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
  list: {{ toJson .Values.list | quote }}
  big: "{{ .Values.big }}"
  flag: {{ .Values.flag | quote }}
  note: {{ .Values.note | quote }}
  extra: {{ toJson .Values.extra | quote }}
  kind-of-big: {{ kindOf .Values.big | quote }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-hook
  annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: "{{ .Values.replicaCount }}"}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: "{{ .Values.image.repository }}"}]
""",
}


def make_chart(root: Path) -> Path:
    chart = root / "flags"
    for rel, text in CHART.items():
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        (chart / rel).write_text(text, encoding="utf-8")
    return chart


@pytest.fixture(scope="module")
def chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_chart(tmp_path_factory.mktemp("chart"))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("values")
    (root / "a.yaml").write_text("replicaCount: 2\nimage: {tag: '2.0'}\nlabels: {tier: web}\n")
    (root / "b.yaml").write_text("replicaCount: 3\nlabels: {team: b}\nbig: 12345678901\n")
    (root / "note.txt").write_text("line one\nline, two = 2\n")
    return root


def helm_objects(chart: Path, release: str, namespace: str, flags: list[str]) -> dict[str, Any]:
    """What ``helm template RELEASE CHART -n NS FLAGS`` renders, by identity, canonically."""
    cmd = [tools.find("helm").path, "template", release, str(chart), "-n", namespace, "--kube-version",
           helm.KUBE_VERSION, *flags]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return {o.ref.key: canonical.canonicalize(o.body) for o in split.parse_render(proc.stdout)}


def berth_objects(work: Path) -> dict[str, Any]:
    wd = workdir.load_workdir(work)
    return {o.ref.key: canonical.canonicalize(o.body) for o in wd.split.all_objects()}


FLAG_SETS = [
    ["-f", "{a}", "-f", "{b}", "--set", "replicaCount=5"],
    ["--set", "replicaCount=5", "-f", "{a}"],  # helm applies -f first whatever the order typed
    ["--values", "{b}", "--values", "{a}"],
    ["--set", "big=1000000,flag=true", "--set", "list[0]=y,list[1]=z"],
    ["--set-string", "big=1000000", "--set", "note=1e3"],
    ["--set-json", 'extra={"k":[1,2,{"x":null}]}', "--set-json", 'labels.team="json"'],
    ["--set-file", "note={note}", "--set-literal", "image.tag=a,b=c{{x}}"],
    ["-f", "{b}", "--set", "labels.team=null", "--set", "image.repository=registry.example.com/app"],
    ["--set", "image.tag=null", "--set-string", "image.repository=007"],
]


@pytest.mark.parametrize("flags", FLAG_SETS, ids=[" ".join(f) for f in FLAG_SETS])
def test_setup_renders_what_helm_template_renders_with_the_same_flags(
    run: Run, chart: Path, files: Path, tmp_path: Path, flags: list[str]
) -> None:
    names = {"{a}": files / "a.yaml", "{b}": files / "b.yaml", "{note}": files / "note.txt"}
    args = [
        f.replace("{note}", str(names["{note}"])) if "{note}" in f else str(names.get(f, f)) for f in flags
    ]
    work = tmp_path / "w"
    res = run("install", "setup", "--pull", chart, "--release", "rel", "-n", "ns1", "--work-dir", work,
              "--non-interactive", *args)  # fmt: skip
    assert res.code == 0, res.err
    assert "Namespace: ns1" in res.out and "Release: rel" in res.out
    assert berth_objects(work) == helm_objects(chart, "rel", "ns1", args)
    assert verify.run(work).ok  # verify re-renders with the recorded flags


def test_flags_are_recorded_kept_by_a_later_setup_and_in_the_release_config(
    run: Run, chart: Path, files: Path, tmp_path: Path
) -> None:
    a = tmp_path / "a.yaml"
    a.write_text((files / "a.yaml").read_text())
    work = tmp_path / "w"
    flags = ["-f", str(a), "--set", "big=1000000", "--set-file", f"note={files / 'note.txt'}"]
    res = run("install", "setup", "--pull", chart, "--release", "rel", "-n", "ns1", "--work-dir", work,
              "--non-interactive", *flags)  # fmt: skip
    assert res.code == 0, res.err
    spec = work / "out" / "spec"
    recorded = values.read(spec)
    assert recorded.release == "rel"
    assert recorded.flags.set == ("big=1000000",) and len(recorded.flags.values) == 1
    assert (spec / values.VALUES_DIR / recorded.flags.values[0]).read_text() == a.read_text()
    # The release record's config is Helm's merge of the flags (int stays int, the file's text is a string).
    base = json.loads(gzip.decompress((work / "out" / values.BASE_FILE).read_bytes()))
    assert base["config"] == {
        "replicaCount": 2, "image": {"tag": "2.0"}, "labels": {"tier": "web"}, "big": 1000000,
        "note": "line one\nline, two = 2\n",
    }  # fmt: skip
    assert base["chart"]["metadata"]["name"] == "flags"
    assert [t["name"] for t in base["chart"]["templates"]] == ["templates/all.yaml"]
    assert ".gitignore" in {p.name for p in (work / "out").iterdir()}
    assert "release/" in (work / "out" / ".gitignore").read_text().splitlines()
    before = berth_objects(work)
    a.unlink()  # the recorded copy is what later renders read
    res = run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive")
    assert res.code == 0, res.err
    assert "Namespace: ns1" in res.out and "Release: rel" in res.out  # remembered too
    assert berth_objects(work) == before
    res = run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive", "--set", "note=x")
    assert res.code == 0, res.err
    assert values.read(spec).flags == values.ValueFlags(set=("note=x",))  # new flags replace the old ones
    assert berth_objects(work) == helm_objects(chart, "rel", "ns1", ["--set", "note=x"])


BAD = [
    (["--set", "a=b,c"], 'failed parsing --set data: key "c" has no value'),
    (["--set-json", "a={"], "failed parsing --set-json data a={"),
    (["-f", "/nonexistent/values.yaml"], "--values: file not found"),
    (["--set-file", "note=/nonexistent/note.txt"], "--set-file: file not found"),
    (["--release", "Bad_Name"], 'release name "Bad_Name": invalid release name'),
]


@pytest.mark.parametrize(("flags", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_values_input_is_one_message_exit_2_and_nothing_written(
    run: Run, chart: Path, tmp_path: Path, flags: list[str], message: str
) -> None:
    work = tmp_path / "w"
    res = run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive", *flags)
    assert res.code == 2
    assert message in res.err and res.err.count("error:") == 1
    assert not work.exists()
    # ... and a set-up work dir stays exactly as it was.
    assert run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive").code == 0

    def files() -> list[tuple[Path, bytes]]:  # the lock file says who held the work dir last: not content
        return sorted((p.relative_to(work), p.read_bytes()) for p in work.rglob("*") if p.is_file()
                      and p.name != ".berth.lock")  # fmt: skip

    before = files()
    res = run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive", *flags)
    assert res.code == 2 and message in res.err
    assert files() == before


def kubeconfig(path: Path, namespace: str | None) -> Path:
    ctx: dict[str, Any] = {"cluster": "c", "user": "u"}
    if namespace:
        ctx["namespace"] = namespace
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": ctx}],
    }
    path.write_text(json.dumps(doc))
    return path


def test_the_namespace_defaults_as_helms(
    run: Run, chart: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)

    def namespace_of(*args: str | Path) -> str:
        work = tmp_path / f"w{len(list(tmp_path.glob('w*')))}"
        res = run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive", *args)
        assert res.code == 0, res.err
        return workdir.load_workdir(work).namespace

    assert namespace_of() == "default"  # no kubeconfig at all
    assert namespace_of("--kubeconfig", kubeconfig(tmp_path / "k1", "team-x")) == "team-x"
    assert namespace_of("--kubeconfig", kubeconfig(tmp_path / "k2", None)) == "default"
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "k3", "from-env")))
    assert namespace_of() == "from-env"
    assert namespace_of("-n", "given") == "given"
    pkg = tmp_path / "pkg"
    assert run("install", "package", chart, "--namespace", "named", "-o", pkg).code == 0
    assert namespace_of("--pull", pkg) == "named"  # the package names one
    plain = tmp_path / "plain-pkg"
    assert run("install", "package", chart, "-o", plain).code == 0
    assert namespace_of("--pull", plain) == "from-env"  # ... this one does not
