"""YAML read as Kubernetes reads it, with the pinned kubectl as the oracle.

``kubectl annotate --local -f FILE KEY=VALUE -o json`` decodes FILE exactly as ``kubectl create -f`` does
(apimachinery's YAMLOrJSONDecoder over sigs.k8s.io/yaml, then unstructured JSON) without a cluster. Every file in
``yaml_corpus/accepted``, every YAML file in ``examples/`` and ``charts/`` and every chart's render by the real
helm must decode to the same values in berth; every file in ``yaml_corpus/refused`` must be refused by both.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from berth.kube import tools, yamlio
from berth.kube.errors import InputError

CORPUS = Path(__file__).parent / "yaml_corpus"
ROOT = Path(__file__).resolve().parents[2]
ORACLE_KEY = "berth-oracle"
INT64 = (-(1 << 63), (1 << 63) - 1)
# Files that are YAML but not for Kubernetes' decoder: JSON schemas are read by helm as JSON.
EXAMPLE_FILES = sorted(
    p
    for pattern in ("examples/**/*.yaml", "examples/**/*.yml", "charts/**/*.yaml")
    for p in ROOT.glob(pattern)
    if "templates" not in p.parts
)
CHARTS = sorted(
    p.parent for p in [*ROOT.glob("examples/charts/*/Chart.yaml"), *ROOT.glob("charts/*/Chart.yaml")]
)


def _number(text: str) -> int | float:
    """kubectl prints a float64 that holds an integer beyond int64 as digits; it is still a float."""
    value = int(text)
    return value if INT64[0] <= value <= INT64[1] else float(text)


def _kubectl(*files: Path) -> subprocess.CompletedProcess[str]:
    args = [tools.find("kubectl").path, "annotate", "--local", "-o", "json", f"{ORACLE_KEY}=1"]
    for f in files:
        args += ["-f", str(f)]
    env = {"KUBECONFIG": "/nonexistent", "HOME": "/nonexistent", "PATH": "/usr/bin:/bin"}
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env, check=False)


def _oracle(*files: Path) -> list[dict[str, Any]]:
    """The objects kubectl decodes from ``files``, in order, without the annotation it was asked to add."""
    proc = _kubectl(*files)
    assert proc.returncode == 0, f"kubectl refused {[str(f) for f in files]}:\n{proc.stderr}"
    decoder = json.JSONDecoder(parse_int=_number)
    out, position, text = [], 0, proc.stdout
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            return out
        obj, position = decoder.raw_decode(text, position)
        out.extend(obj["items"] if obj.get("kind") == "List" and "metadata" not in obj else [obj])


def _ours(*files: Path) -> list[dict[str, Any]]:
    return [obj for f in files for _, obj in yamlio.load_objects(f.read_text(encoding="utf-8"), str(f))]


def _without_oracle_key(theirs: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    meta = theirs.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    annotations.pop(ORACLE_KEY, None)
    if not annotations and "annotations" not in (ours.get("metadata") or {}):
        meta.pop("annotations", None)
    return theirs


def _assert_same(files: list[Path]) -> None:
    ours = _ours(*files)
    theirs = _oracle(*files)
    assert len(theirs) == len(ours), f"kubectl read {len(theirs)} objects, berth {len(ours)}"
    for mine, other in zip(ours, theirs, strict=True):
        assert mine == _without_oracle_key(other, mine)


@pytest.mark.parametrize("path", sorted((CORPUS / "accepted").iterdir()), ids=lambda p: p.name)
def test_accepted_corpus_decodes_as_kubectl_decodes_it(path: Path) -> None:
    _assert_same([path])


@pytest.mark.parametrize("path", sorted((CORPUS / "refused").iterdir()), ids=lambda p: p.name)
def test_refused_corpus_is_refused_by_both_naming_the_file(path: Path) -> None:
    assert _kubectl(path).returncode != 0, f"kubectl accepts {path.name}; move it to accepted/"
    with pytest.raises(InputError) as caught:
        yamlio.load_objects(path.read_text(encoding="utf-8"), str(path))
    assert str(path) in str(caught.value)
    assert "line " in str(caught.value)  # every refusal points at a line


def _as_object(text: str, source: str) -> str | None:
    """``text`` with whatever kubectl needs to accept it as an object (apiVersion, kind, a name) appended.

    Both readers see the same appended text, so values files and Chart.yaml are compared as they are read.
    Multi-document files must already be objects; a document that is not a block mapping is skipped (None).
    """
    docs = yamlio.load_documents(text, source)
    if len(docs) != 1:
        return text if all(isinstance(d.body, dict) and d.body.get("kind") for d in docs) else None
    body = docs[0].body
    if not isinstance(body, dict):
        return None
    if text.lstrip().startswith("{"):
        return text if body.get("kind") else None
    extra = [
        line
        for key, line in (
            ("apiVersion", "apiVersion: berth.test/v1"),
            ("kind", "kind: OracleProbe"),
            ("metadata", "metadata: {name: oracle-probe}"),
        )
        if key not in body
    ]
    return text if not extra else text.rstrip("\n") + "\n" + "\n".join(extra) + "\n"


def test_every_yaml_file_in_examples_and_charts_decodes_as_kubectl_decodes_it(tmp_path: Path) -> None:
    assert len(EXAMPLE_FILES) > 20
    prepared = []
    for index, path in enumerate(EXAMPLE_FILES):
        text = path.read_text(encoding="utf-8")
        probe = _as_object(text, str(path))
        if probe is None:
            continue
        target = tmp_path / f"{index:03d}-{path.name}"
        target.write_text(probe, encoding="utf-8")
        prepared.append(target)
    assert len(prepared) > 20
    _assert_same(prepared)


@pytest.mark.parametrize("chart", CHARTS, ids=lambda p: p.name)
def test_every_chart_render_decodes_as_kubectl_decodes_it(chart: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [tools.find("helm").path, "template", "oracle", str(chart), "--include-crds"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    render = tmp_path / "render.yaml"
    render.write_text(proc.stdout, encoding="utf-8")
    _assert_same([render])
