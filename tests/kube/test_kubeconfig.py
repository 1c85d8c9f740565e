"""Finding and merging kubeconfigs as kubectl does (the pinned kubectl is the oracle for the merge)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from berth.kube import client, kubeconfig, tools
from berth.kube.errors import InputError

FILE_A = """\
apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://a.example:6443", certificate-authority: ca.crt}
- name: shared
  cluster: {server: "https://from-a:6443"}
users:
- name: u1
  user: {token: ta, client-certificate: sub/cert.pem}
contexts:
- name: ctx-a
  context: {cluster: c1, user: u1, namespace: team-a}
- name: shared
  context: {cluster: shared, user: u1}
"""
FILE_B = """\
apiVersion: v1
kind: Config
current-context: shared
clusters:
- name: shared
  cluster: {server: "https://from-b:6443"}
- name: c2
  cluster: {server: "https://b.example:6443"}
users:
- name: u1
  user: {token: tb}
- name: u2
  user: {token: tb2, tokenFile: tok}
contexts:
- name: shared
  context: {cluster: c2, user: u2}
- name: ctx-b
  context: {cluster: c2, user: u2, namespace: team-b}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize(
    ("flag", "env", "home_config", "embedded", "expected"),
    [
        ("given.yaml", "env.yaml", True, True, (("given.yaml",), kubeconfig.FLAG)),
        (None, "a.yaml:b.yaml", True, True, (("a.yaml", "b.yaml"), kubeconfig.ENV)),
        (None, "", True, True, (("HOME",), kubeconfig.HOME)),  # an empty KUBECONFIG is no KUBECONFIG
        (None, None, True, True, (("HOME",), kubeconfig.HOME)),
        (None, None, False, True, (("EMBEDDED",), kubeconfig.EMBEDDED_SOURCE)),
        (None, None, False, False, ((), kubeconfig.IN_CLUSTER)),
    ],
    ids=[
        "flag",
        "KUBECONFIG-list",
        "empty-KUBECONFIG",
        "home",
        "embedded-only-when-nothing-else",
        "in-cluster",
    ],
)
def test_locate_follows_kubectl_then_the_embedded_cluster(
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flag: str | None,
    env: str | None,
    home_config: bool,
    embedded: bool,
    expected: tuple[tuple[str, ...], str],
) -> None:
    if env is not None:
        monkeypatch.setenv("KUBECONFIG", env)
    if home_config:
        (home / ".kube" / "config").write_text("{}")
    if embedded:
        (tmp_path / ".berth" / "cluster").mkdir(parents=True)
        (tmp_path / ".berth" / "cluster" / "kubeconfig").write_text("{}")
    names = {"HOME": str(home / ".kube" / "config"), "EMBEDDED": str(tmp_path / kubeconfig.EMBEDDED)}
    paths, source = expected
    assert kubeconfig.locate(flag) == kubeconfig.Location(tuple(names.get(p, p) for p in paths), source)


def kubectl_view(env_value: str) -> dict[str, Any]:
    proc = subprocess.run(
        [tools.find("kubectl").path, "config", "view", "--raw", "-o", "json"],
        capture_output=True, text=True, check=True, timeout=60,
        env={"KUBECONFIG": env_value, "HOME": "/nonexistent", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    view: dict[str, Any] = json.loads(proc.stdout)
    return view


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in items}


def test_a_kubeconfig_list_merges_as_kubectl_merges_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.yaml").write_text(FILE_A)
    (tmp_path / "sub" / "b.yaml").write_text(FILE_B)
    listed = os.pathsep.join(
        [str(tmp_path / "a.yaml"), str(tmp_path / "missing.yaml"), str(tmp_path / "sub" / "b.yaml")]
    )
    monkeypatch.setenv("KUBECONFIG", listed)
    ours = kubeconfig.load()
    theirs = kubectl_view(listed)
    assert ours["current-context"] == theirs["current-context"] == "shared"
    # kubectl shows file references as written; berth makes them absolute against the file that names them
    origin = {
        "certificate-authority": tmp_path,
        "client-certificate": tmp_path,
        "tokenFile": tmp_path / "sub",
    }
    for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
        mine, other = by_name(ours[section]), by_name(theirs[section])
        assert mine.keys() == other.keys()
        for name, item in other.items():
            want = {k: str(origin[k] / v) if k in origin else v for k, v in item[inner].items()}
            assert mine[name][inner] == want, (section, name)
    ctx = kubeconfig.resolve()
    assert (ctx.name, ctx.server, ctx.namespace) == ("shared", "https://from-a:6443", "default")
    assert kubeconfig.resolve(context="ctx-b").namespace == "team-b"


def test_missing_and_malformed_kubeconfigs_are_named(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InputError, match=r"nope.yaml: kubeconfig not found; check --kubeconfig"):
        kubeconfig.load(tmp_path / "nope.yaml")
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'x.yaml'}{os.pathsep}{tmp_path / 'y.yaml'}")
    with pytest.raises(
        InputError, match=r"KUBECONFIG=.*x.yaml.*y.yaml: none of these kubeconfig files exists"
    ):
        kubeconfig.load()
    (tmp_path / "x.yaml").write_text("- a list\n")
    with pytest.raises(InputError, match=r"x.yaml: a kubeconfig must be one YAML mapping"):
        kubeconfig.load()


def test_no_kubeconfig_outside_a_cluster_says_what_to_do(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(
        InputError, match=r"no kubeconfig found .* start the embedded cluster with `berth cluster up`"
    ):
        client.connect()
    with pytest.raises(InputError, match="--context needs a kubeconfig"):
        client.connect(None, "prod")


def test_the_connection_says_where_it_points_and_why(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.yaml").write_text(FILE_A)
    (tmp_path / "sub").mkdir()
    for name in ("ca.crt", "sub/cert.pem"):  # the client checks that the files it names exist
        (tmp_path / name).write_text("")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "a.yaml"))
    conn = client.connect(None, "ctx-a")
    assert conn.api_client.configuration.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert conn.api_client.configuration.host == "https://a.example:6443"
    assert (
        conn.target_line()
        == f"Kube context: ctx-a (https://a.example:6443), from KUBECONFIG={tmp_path / 'a.yaml'}"
    )
