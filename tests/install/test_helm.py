"""Rendering with the real Helm: pinned kube version, CRDs included, twice-identical output, errors with places."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.install import helm
from berth.kube.errors import InputError

from .conftest import EDGE_CHART


def make_chart(root: Path, templates: dict[str, str], values: str = "") -> Path:
    chart = root / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(values)
    for name, text in templates.items():
        (chart / "templates" / name).write_text(text)
    return chart


def test_render_pins_kube_version_and_includes_crds() -> None:
    req = helm.RenderRequest(EDGE_CHART, "edge", "edge")
    args = req.args()
    assert args[args.index("--kube-version") + 1] == helm.KUBE_VERSION == "1.35.0"
    assert "--include-crds" in args
    r = helm.render(req)
    assert "# Source: edge-hooks/crds/things.yaml" in r.text
    assert r.helm_version.startswith("v4.")
    assert r.dropped_hook_events == ("pre-install,crd-install",)


def test_values_files_and_set_layer_in_order(tmp_path: Path) -> None:
    chart = make_chart(
        tmp_path,
        {
            "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {v: {{ .Values.v | quote }}, w: {{ .Values.w | quote }}}\n"
        },
        "v: a\nw: a\n",
    )
    vf = tmp_path / "v.yaml"
    vf.write_text("v: b\nw: b\n")
    r = helm.render(helm.RenderRequest(chart, "r", "ns", (vf,), ("--set", "w=c")))
    assert 'v: "b"' in r.text and 'w: "c"' in r.text


def test_kube_version_and_is_upgrade_reach_templates(tmp_path: Path) -> None:
    chart = make_chart(
        tmp_path,
        {
            "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {kv: {{ .Capabilities.KubeVersion.Version | quote }}, up: {{ .Release.IsUpgrade | quote }}}\n"
        },
    )
    r = helm.render(helm.RenderRequest(chart, "r", "ns", is_upgrade=True))
    assert 'kv: "v1.35.0"' in r.text and 'up: "true"' in r.text


def test_a_nondeterministic_render_names_what_differs_and_keeps_the_first(tmp_path: Path) -> None:
    chart = make_chart(
        tmp_path,
        {
            "s.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {p: {{ randAlphaNum 16 | quote }}, q: b}\n"
        },
    )
    r = helm.render(helm.RenderRequest(chart, "r", "ns"))
    assert [(f.label, f.paths) for f in r.random] == [("ConfigMap x", (("data", "p"),))]
    assert "q: b" in r.text


@pytest.mark.parametrize(
    ("template", "where", "message"),
    [
        ("a: {{ .Values.x.y.z }}\n", "c/templates/bad.yaml:1", "nil pointer"),
        ("a: {{ if }}\n", "c/templates/bad.yaml:1", "missing value for if"),
        ('a: {{ fail "boom" }}\n', "c/templates/bad.yaml:1", "boom"),
        ("a: [\n", "c/templates/bad.yaml", "YAML parse error"),
    ],
    ids=["nil-pointer", "parse-error", "fail", "bad-yaml"],
)
def test_template_errors_name_file_and_line(tmp_path: Path, template: str, where: str, message: str) -> None:
    chart = make_chart(tmp_path, {"bad.yaml": template})
    with pytest.raises(InputError, match=message) as info:
        helm.render(helm.RenderRequest(chart, "r", "ns"))
    assert info.value.where == where
    assert info.value.exit_code == 2
    assert "Use --debug" not in str(info.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("x: [\n", "malformed YAML"),
        ("- a\n- b\n", "must be a YAML mapping"),
        ("a: 1\n---\nb: 2\n", "one YAML document"),
    ],
    ids=["malformed", "list", "two-documents"],
)
def test_bad_values_file_is_named(tmp_path: Path, content: str, message: str) -> None:
    vf = tmp_path / "values-bad.yaml"
    vf.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        helm.render(helm.RenderRequest(EDGE_CHART, "r", "ns", (vf,)))
    assert "values-bad.yaml" in str(info.value)


def test_missing_values_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        helm.render(helm.RenderRequest(EDGE_CHART, "r", "ns", (tmp_path / "nope.yaml",)))


def test_a_renders_helm_collects_less_often_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOGC", raising=False)
    monkeypatch.delenv("GOMEMLIMIT", raising=False)
    env = helm.render_env()
    assert (env["GOGC"], env["GOMEMLIMIT"]) == ("off", "256MiB")
    monkeypatch.setenv("GOGC", "50")  # the user's choice wins, and no limit is added beside it
    env = helm.render_env()
    assert env["GOGC"] == "50" and "GOMEMLIMIT" not in env
    monkeypatch.delenv("GOGC")
    monkeypatch.setenv("GOMEMLIMIT", "1GiB")
    env = helm.render_env()
    assert env["GOMEMLIMIT"] == "1GiB" and "GOGC" not in env
