"""Charts shaped like popular ones (umbrella charts with subcharts, a library chart, values.schema.json,
required/tpl, Capabilities checks): berth renders what ``helm install`` would install, and bad values stop with one
message that says which values were rendered."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from berth import cli
from berth.install import chart, helm
from berth.kube import yamlio

from .conftest import REPO, Run

SHOP = REPO / "examples" / "charts" / "umbrella-shop"


@pytest.fixture(scope="module")
def shop_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """umbrella-shop packaged with its default base and a base that swaps the cart subchart for the finder one."""
    tmp = tmp_path_factory.mktemp("shop")
    swap = tmp / "swap.yaml"
    swap.write_text("tags: {extras: true}\nfinder: {enabled: true}\ncart: {enabled: false}\n")
    out = tmp / "pkg"
    code = cli.main(
        ["install", "package", str(SHOP), "--base", "default", "--base", f"swap={swap}", "--out", str(out)]
    )
    assert code == 0
    return out


def rendered(package: Path, base: str) -> dict[str, dict[str, object]]:
    """``Kind name`` -> body of every object of a base's review render (manifests and hooks)."""
    root = package / "bases" / base / "render"
    out: dict[str, dict[str, object]] = {}
    for f in sorted(root.rglob("*.yaml")):
        if "spec" in f.parts or f.name in ("receipt.yaml", "crds.yaml"):
            continue
        for d in yamlio.load_file(f):
            body = d.body
            if isinstance(body, dict) and "kind" in body:
                out[f"{body['kind']} {body['metadata']['name']}"] = body
    return out


def test_capabilities_kind_checks_are_true_as_on_a_cluster(shop_package: Path) -> None:
    """``.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget"`` is true for ``helm install`` on every
    cluster (discovery lists kinds) but false for a bare ``helm template``: the PDB must be in the render."""
    objs = rendered(shop_package, "default")
    assert "PodDisruptionBudget umbrella-shop-corner-shop" in objs
    assert "Probe umbrella-shop-corner-shop" not in objs  # a CRD group no stock cluster serves stays absent


def test_served_kinds_follow_the_kube_version(tmp_path: Path) -> None:
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caps}\ndata:\n"
        '  pdb: {{ .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" | quote }}\n'
        '  dra: {{ .Capabilities.APIVersions.Has "resource.k8s.io/v1/ResourceClaim" | quote }}\n'
        '  agg: {{ .Capabilities.APIVersions.Has "apiregistration.k8s.io/v1" | quote }}\n'
    )
    new = helm.render(helm.RenderRequest(chart, "r", "ns"), twice=False).text
    assert 'pdb: "true"' in new and 'dra: "true"' in new and 'agg: "true"' in new
    old = helm.render(helm.RenderRequest(chart, "r", "ns", kube_version="1.30.0"), twice=False).text
    assert 'pdb: "true"' in old and 'dra: "false"' in old  # resource.k8s.io/v1 is served from 1.34


def test_subchart_conditions_tags_globals_and_import_values(shop_package: Path) -> None:
    default = rendered(shop_package, "default")
    # the enabled subchart renders, with the parent's global overriding its own, and its hook is a hook
    assert "Deployment umbrella-shop-cart" in default and "Job umbrella-shop-cart-migrate" in default
    assert "ConfigMap umbrella-shop-finder" not in default  # condition finder.enabled: false
    config = default["ConfigMap umbrella-shop-corner-shop"]
    assert config["data"] == {
        "greeting": "Welcome to corner-shop (staging)",  # tpl over values
        "admin": "ops@example.com",
        "registry": "registry.example.com",
        "cartPort": "8081",  # import-values from the cart subchart
        "kubeMinor": "35",
    }
    labels = default["Deployment umbrella-shop-cart"]["metadata"]["labels"]  # type: ignore[index]
    assert labels["shop.example.com/environment"] == "staging"  # library chart helper + parent global
    assert labels["helm.sh/chart"] == "cart-0.2.0"
    swapped = rendered(shop_package, "swap")
    assert "ConfigMap umbrella-shop-finder" in swapped  # aliased subchart switched on
    assert not [k for k in swapped if "cart" in k]  # cart and its hook Job gone
    assert swapped["ConfigMap umbrella-shop-corner-shop"]["data"]["cartPort"] == ""  # type: ignore[index]


def test_schema_violations_name_the_base_and_every_problem(run: Run, tmp_path: Path) -> None:
    bad = tmp_path / "big.yaml"
    bad.write_text("shop:\n  replicas: 9\n  adminEmail: null\n")
    out = tmp_path / "pkg"
    r = run("install", "package", SHOP, "--base", "default", "--base", f"big={bad}", "--out", out)
    assert r.code == 2
    assert r.err.startswith(
        "error: chart umbrella-shop, base big (bases/big/values.yaml): helm template failed:"
    )
    assert "- at '/shop': missing property 'adminEmail'" in r.err
    assert "- at '/shop/replicas': maximum: got 9, want 5" in r.err
    assert "Traceback" not in r.err and not out.exists()


def test_required_message_names_template_line_and_base(run: Run, tmp_path: Path) -> None:
    chart = tmp_path / "shop"
    shutil.copytree(SHOP, chart)
    (chart / "values.schema.json").unlink()  # let the template's own `required` speak
    values = tmp_path / "no-email.yaml"
    values.write_text("shop:\n  adminEmail: null\n")
    r = run("install", "package", chart, "--base", f"x={values}", "--out", tmp_path / "pkg")
    assert r.code == 2
    assert r.err.startswith("error: umbrella-shop/templates/config.yaml:12, base x (bases/x/values.yaml): ")
    assert "shop.adminEmail is required: set it with --set shop.adminEmail=you@example.com" in r.err


def test_a_secret_a_pre_install_hook_job_creates_is_no_prerequisite(run: Run, tmp_path: Path) -> None:
    """ingress-nginx's pattern: the certgen Job (pre-install) creates the Secret the controller mounts. Telling the
    user to ``kubectl create secret`` it by hand would be wrong; the facts say which hook makes it."""
    work = tmp_path / "w"
    chart = REPO / "examples" / "charts" / "admission-webhook"
    r = run(
        "install", "setup", "--pull", chart, "--namespace", "gate", "--work-dir", work, "--non-interactive"
    )
    assert r.code == 0, r.err
    assert "requirement:" not in r.out + r.err
    facts = yamlio.load_file(work / "out" / "spec" / "facts.yaml")[0].body["spec"]["values"]
    assert facts["requiredSecrets"] == []
    assert facts["hookSecrets"] == [
        {
            "namespace": "gate",
            "name": "admission-webhook-gate-admission",
            "createdBy": "pre-install hook Job gate/admission-webhook-gate-admission-create",
        }
    ]


def test_capabilities_list_the_charts_own_crds_folder(run: Run, tmp_path: Path) -> None:
    """``helm install`` creates ``crds/`` before rendering (and ``helm upgrade`` finds them), so a default custom
    resource guarded by ``.Capabilities.APIVersions.Has "factory.example.com/v1/Widget"`` is installed: berth's
    render has it too. The templated Gadget CRD is not there when Helm renders, and nothing guarded by it is."""
    chart = REPO / "examples" / "charts" / "operator-crds"
    assert helm.chart_crd_api_versions(chart) == ("factory.example.com/v1", "factory.example.com/v1/Widget")
    work = tmp_path / "w"
    r = run(
        "install", "setup", "--pull", chart, "--namespace", "fac", "--work-dir", work, "--non-interactive"
    )
    assert r.code == 0, r.err
    manifests = sorted(p.name for p in (work / "out" / "manifests").iterdir())
    assert "widget-default.yaml" in manifests
    up = work / "out" / "upgrade"
    assert not up.exists()  # helm upgrade renders the Widget as well: no install-only difference


def test_a_template_calling_lookup_is_named_for_review(run: Run, tmp_path: Path) -> None:
    """Offline, ``lookup`` finds nothing: the operator Secret holds the chart's initial password where ``helm
    upgrade`` would keep the live one. setup says which template does that (only it), and that alone does not
    make an upgrade variant."""
    chart = REPO / "examples" / "charts" / "operator-crds"
    work = tmp_path / "w"
    r = run(
        "install", "setup", "--pull", chart, "--namespace", "fac", "--work-dir", work, "--non-interactive"
    )
    assert r.code == 0, r.err
    lines = [ln for ln in (r.out + r.err).splitlines() if "calls lookup" in ln]
    assert lines == [
        "warning: operator-crds/templates/operator.yaml calls lookup, which finds nothing offline: what it renders "
        "from the result is the chart's fallback where helm install/upgrade would read and keep the live value; "
        "before an upgrade (or --force-conflicts) check that no live value is overwritten"
    ]
    assert not (work / "out" / "upgrade").exists()
    assert run("install", "verify", "--work-dir", work).code == 0


def test_capabilities_list_the_crds_of_a_packed_subchart(tmp_path: Path) -> None:
    """After ``helm dependency build`` subcharts are ``charts/<name>-<version>.tgz``; their ``crds/`` are created
    by ``helm install`` like the parent's, so the subchart's guarded default Widget renders."""
    parent = tmp_path / "platform"
    (parent / "charts").mkdir(parents=True)
    (parent / "Chart.yaml").write_text(
        "apiVersion: v2\nname: platform\nversion: 1.0.0\n"
        "dependencies:\n  - {name: operator-crds, version: 0.5.0}\n"
    )
    chart.pack_folder(REPO / "examples" / "charts" / "operator-crds", parent / "charts")
    assert [p.name for p in (parent / "charts").iterdir()] == ["operator-crds-0.5.0.tgz"]
    assert helm.chart_crd_api_versions(parent) == ("factory.example.com/v1", "factory.example.com/v1/Widget")
    text = helm.render(
        helm.RenderRequest(parent, "p", "ns", api_versions=helm.chart_crd_api_versions(parent)), twice=False
    ).text
    assert "kind: Widget\nmetadata:\n  name: default\n" in text
