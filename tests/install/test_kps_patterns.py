"""What stopped kube-prometheus-stack, reproduced small: a crds/ CRD whose enum holds the YAML 1.1 value scalar
``=``, and a subchart (grafana's pattern) that keeps a random admin password through a helper calling ``lookup``."""

from __future__ import annotations

from pathlib import Path

from berth.install import randomness, verify, workdir

from .conftest import Run

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: probes.monitoring.example.com
spec:
  group: monitoring.example.com
  names: {kind: Probe, plural: probes, singular: probe, listKind: ProbeList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            action:
              type: string
              enum:
                - replace
                - =
                - '!='
"""
HELPERS = """\
{{- define "graf.password" -}}
{{- $secret := (lookup "v1" "Secret" .Release.Namespace "graf-admin") }}
{{- if $secret }}{{ index $secret "data" "admin-password" }}{{ else }}{{ randAlphaNum 40 | b64enc | quote }}{{ end }}
{{- end }}
{{- define "graf.secretsData" -}}
admin-password: {{ include "graf.password" . }}
{{- end }}
"""
FILES = {
    "Chart.yaml": "apiVersion: v2\nname: stack\nversion: 1.0.0\ndependencies: [{name: graf, version: 1.0.0}]\n",
    "crds/probes.yaml": CRD,
    "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stack}\ndata: {a: b}\n",
    "charts/graf/Chart.yaml": "apiVersion: v2\nname: graf\nversion: 1.0.0\n",
    "charts/graf/templates/_helpers.tpl": HELPERS,
    "charts/graf/templates/secret.yaml": (
        'apiVersion: v1\nkind: Secret\nmetadata: {name: graf-admin}\ndata:\n  {{- include "graf.secretsData" . | nindent 2 }}\n'
    ),
    "charts/graf/templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: graf}
spec:
  selector: {matchLabels: {app: graf}}
  template:
    metadata:
      labels: {app: graf}
      annotations:
        checksum/secret: {{ include "graf.secretsData" . | sha256sum }}
    spec:
      containers: [{name: g, image: grafana/grafana:12}]
""",
}


def test_the_value_scalar_and_a_helper_kept_password_set_up_and_verify(run: Run, tmp_path: Path) -> None:
    chart = tmp_path / "stack"
    for rel, text in FILES.items():
        (chart / rel).parent.mkdir(parents=True, exist_ok=True)
        (chart / rel).write_text(text, encoding="utf-8")
    work = tmp_path / "w"
    res = run(
        "install", "setup", "--pull", chart, "-n", "monitoring", "--work-dir", work, "--non-interactive"
    )
    assert res.code == 0, res.err
    wd = workdir.load_workdir(work)
    [crd] = wd.split.crds
    enum = crd.body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["action"]["enum"]
    assert enum == ["replace", "=", "!="]  # the plain scalar = is the string "=", as kubectl reads it
    assert "Secret graf-admin: data.admin-password differs between renders" in res.out
    assert 'Deployment graf: spec.template.metadata.annotations["checksum/secret"] differs' in res.out
    random = randomness.read(work / "out" / "spec")
    assert random["Secret||graf-admin"].keep_live and random["Deployment||graf"].keep_live
    report = verify.run(work)
    assert report.ok, report.lines()
