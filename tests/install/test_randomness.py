"""Charts that use randomness: setup goes on, names each object and field that differs, verify masks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.install import randomness, verify, workdir

from .conftest import Run

RANDOM_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: rnd\nversion: 1.0.0\n",
    "values.yaml": "adminPassword: ''\n",
    "templates/secret.yaml": """\
{{- $old := lookup "v1" "Secret" .Release.Namespace "rnd-admin" }}
apiVersion: v1
kind: Secret
metadata:
  name: rnd-admin
stringData:
  {{- if .Values.adminPassword }}
  password: {{ .Values.adminPassword | quote }}
  {{- else if $old }}
  password: {{ index $old.data "password" | b64dec | quote }}
  {{- else }}
  password: {{ randAlphaNum 24 | quote }}
  {{- end }}
""",
    "templates/config.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: rnd-config
  annotations:
    checksum/seed: {{ uuidv4 | quote }}
data:
  fixed: "yes"
  list: {{ list "a" (randAlphaNum 8) | toJson | quote }}
""",
}


def write_chart(root: Path, files: dict[str, str]) -> Path:
    chart = root / "rnd"
    for rel, text in files.items():
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        (chart / rel).write_text(text, encoding="utf-8")
    return chart


def test_setup_names_the_random_fields_records_them_and_verify_masks_them(run: Run, tmp_path: Path) -> None:
    chart = write_chart(tmp_path, RANDOM_CHART)
    work = tmp_path / "w"
    res = run("install", "setup", "--pull", chart, "-n", "mon", "--work-dir", work, "--non-interactive")
    assert res.code == 0, res.err
    assert (
        "Secret rnd-admin: stringData.password differs between renders (the chart uses randomness); berth applies "
        "the render it recorded, as Helm applies the one it made; to make the render reproducible, give the value "
        "yourself (--set or -f); its template calls lookup, so an apply keeps the live value, as helm upgrade would"
    ) in res.out
    assert (
        'ConfigMap rnd-config: data.list, metadata.annotations["checksum/seed"] differ between renders'
        in res.out
    )
    # Random values never reach the upgrade variant's "renders differently" check.
    assert "renders differently on upgrade" not in res.out
    recorded = randomness.read(work / "out" / "spec")
    assert recorded["Secret||rnd-admin"].paths == (("stringData", "password"),)
    assert recorded["Secret||rnd-admin"].keep_live
    assert not recorded["ConfigMap||rnd-config"].keep_live
    assert ("data", "list") in recorded["ConfigMap||rnd-config"].paths
    report = verify.run(work)
    assert report.ok, report.lines()
    assert "masked: Secret rnd-admin: stringData.password (random in the chart's render)" in report.lines()
    res = run("install", "verify", "--work-dir", work)
    assert res.code == 0 and "masked: ConfigMap rnd-config" in res.out


def test_a_pinned_value_makes_the_render_reproducible(run: Run, tmp_path: Path) -> None:
    chart = write_chart(tmp_path, {**RANDOM_CHART, "templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\n"
                                   "metadata: {name: c}\ndata: {a: b}\n"})  # fmt: skip
    work = tmp_path / "w"
    res = run("install", "setup", "--pull", chart, "--work-dir", work, "--non-interactive",
              "--set", "adminPassword=pinned")  # fmt: skip
    assert res.code == 0, res.err
    assert "differs between renders" not in res.out
    assert randomness.read(work / "out" / "spec") == {}
    secret = {o.name: o for o in workdir.load_workdir(work).split.secrets}["rnd-admin"]
    assert secret.body["stringData"] == {"password": "pinned"}


def test_a_random_name_is_refused_naming_the_objects(run: Run, tmp_path: Path) -> None:
    files = {"Chart.yaml": RANDOM_CHART["Chart.yaml"],
             "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 'job-{{ randAlphaNum 5 | lower }}'}\n"}  # fmt: skip
    work = tmp_path / "w"
    res = run(
        "install", "setup", "--pull", write_chart(tmp_path, files), "--work-dir", work, "--non-interactive"
    )
    assert res.code == 2
    assert "two renders of the same chart and values render different objects" in res.err
    assert "ConfigMap /job-" in res.err and not work.exists()


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        (("data", "admin-password"), "data.admin-password"),
        (("spec", "containers", 0, "env", 1, "value"), "spec.containers[0].env[1].value"),
        (("metadata", "annotations", "checksum/secret"), 'metadata.annotations["checksum/secret"]'),
    ],
)
def test_fields_are_shown_as_a_reader_types_them(path: randomness.Path_, shown: str) -> None:
    assert randomness.show(path) == shown


def test_keep_live_reads_a_secrets_string_data_back_from_its_data() -> None:
    body = {"kind": "Secret", "stringData": {"password": "new"}, "data": {}}
    live = {"kind": "Secret", "data": {"password": "b2xk"}}  # "old"
    assert randomness.keep_live(body, live, (("stringData", "password"),))["stringData"] == {
        "password": "old"
    }
    gone = {"kind": "Secret", "data": {}}
    assert randomness.keep_live(body, gone, (("stringData", "password"),))["stringData"] == {
        "password": "new"
    }


def test_templates_that_look_up_through_their_helpers_are_found_unpacked_and_packed(tmp_path: Path) -> None:
    import tarfile

    from berth.install import setup

    parent = tmp_path / "parent"
    (parent / "templates").mkdir(parents=True)
    (parent / "templates" / "cm.yaml").write_text("kind: ConfigMap\n")
    helpers = (
        '{{- define "pw" -}}{{- $s := lookup "v1" "Secret" .Release.Namespace "x" -}}{{ if $s }}{{ end }}{{- end -}}\n'
        '{{- define "data" -}}password: {{ include "pw" . }}{{- end -}}\n'
        '{{- define "other" -}}a: b{{- end -}}\n'
    )
    unpacked = parent / "charts" / "graf" / "templates"
    unpacked.mkdir(parents=True)
    (unpacked / "_helpers.tpl").write_text(helpers)
    (unpacked / "secret.yaml").write_text('kind: Secret\ndata: {{ include "data" . }}\n')
    (unpacked / "deployment.yaml").write_text('kind: Deployment\nx: {{ include "data" . | sha256sum }}\n')
    (unpacked / "cm.yaml").write_text('kind: ConfigMap\ny: {{ include "other" . }}\n')
    packed = tmp_path / "src" / "packed" / "templates"
    packed.mkdir(parents=True)
    (packed / "s.yaml").write_text(
        'kind: Secret\nz: {{ include "pw" . }}\n'
    )  # helpers are global across charts
    with tarfile.open(parent / "charts" / "packed-1.0.0.tgz", "w:gz") as tar:
        tar.add(tmp_path / "src" / "packed", arcname="packed")
    assert setup.templates_keeping_live(parent, "parent") == {
        "parent/charts/graf/templates/_helpers.tpl",
        "parent/charts/graf/templates/secret.yaml",
        "parent/charts/graf/templates/deployment.yaml",
        "parent/charts/packed-1.0.0.tgz/packed/templates/s.yaml"[:0]
        + "parent/charts/packed/templates/s.yaml",
    }
