"""berth.kube.kubeconfig and berth.kube.client: the one way every part builds a cluster client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from berth.cluster import Cluster, ClusterOptions
from berth.kube import client as kube_client
from berth.kube import kubeconfig
from berth.kube.errors import InputError


def test_written_kubeconfig_resolves_and_connects(tmp_path: Path) -> None:
    with Cluster(ClusterOptions(run_controllers=False)) as c:
        path = c.write_kubeconfig(tmp_path / "kc")
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        ctx = kubeconfig.resolve(path)
        assert (ctx.name, ctx.server, ctx.namespace) == ("berth", c.url, "default")
        conn = kube_client.connect(path)
        assert conn.context == "berth" and conn.server == c.url
        core: Any = client.CoreV1Api(conn.api_client)
        assert "default" in [n.metadata.name for n in core.list_namespace().items]
        assert kube_client.current_context(path) == "berth"


def test_kubeconfig_env_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = kubeconfig.write(tmp_path / "kc", "https://127.0.0.1:1", "tok", name="other")
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert kubeconfig.current_context() == "other"


@pytest.mark.parametrize(
    ("text", "context", "message"),
    [
        (None, None, "kubeconfig not found"),
        ("- just\n- a list\n", None, "one YAML mapping"),
        ("apiVersion: v1\nkind: Config\ncontexts: []\n", None, "no current-context"),
        (
            "apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts: []\n",
            None,
            "context 'x' is not defined",
        ),
        (
            "apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n",
            None,
            "cluster 'c' is not defined",
        ),
    ],
    ids=["missing-file", "not-a-mapping", "no-current-context", "unknown-context", "unknown-cluster"],
)
def test_bad_kubeconfigs_name_the_file_and_the_fix(
    tmp_path: Path, text: str | None, context: str | None, message: str
) -> None:
    path = tmp_path / "kc"
    if text is not None:
        path.write_text(text)
    with pytest.raises(InputError) as info:
        kube_client.connect(path, context)
    assert message in str(info.value) and str(path) in str(info.value)
