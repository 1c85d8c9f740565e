"""The install executors' :class:`berth.kube.client.Session` is configured exactly as the official kubeconfig loader
configures the full client (:func:`berth.kube.client.connect`), whichever way the user authenticates."""

from __future__ import annotations

import base64
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from berth.kube import client, yamlio
from berth.kube.errors import InputError

CA = b"-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n"
CERT = b"-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n"
KEY = b"-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n"
FIELDS = ("host", "ssl_ca_cert", "cert_file", "key_file", "verify_ssl", "tls_server_name", "proxy")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _write(tmp: Path, cluster: dict[str, Any], user: dict[str, Any] | None) -> Path:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "contexts": [
            {"name": "x", "context": {"cluster": "c", **({"user": "u"} if user is not None else {})}}
        ],
        "current-context": "x",
    }
    if user is not None:
        doc["users"] = [{"name": "u", "user": user}]
    path = tmp / "kubeconfig"
    path.write_text(yamlio.dump(doc), encoding="utf-8")
    return path


def _view(cfg: Any) -> dict[str, Any]:
    """What a request uses: the fields, the authorization header, and the certificate files' contents."""
    out: dict[str, Any] = {f: getattr(cfg, f) for f in FIELDS}
    for f in ("ssl_ca_cert", "cert_file", "key_file"):
        if out[f] and Path(out[f]).name.startswith("tmp"):  # written from -data: compare what it holds
            out[f] = Path(out[f]).read_bytes()
    out["authorization"] = (cfg.auth_settings().get("BearerToken") or {}).get("value")
    return out


def _exec_plugin(tmp: Path) -> dict[str, Any]:
    script = tmp / "plugin.py"
    script.write_text(
        "import json\nprint(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', "
        "'kind': 'ExecCredential', 'status': {'token': 'from-exec'}}))\n",
        encoding="utf-8",
    )
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": [str(script)],
            "interactiveMode": "Never",
        }
    }


def _cases(tmp: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any] | None]]:
    (tmp / "token").write_text("file-token", encoding="utf-8")
    for name, data in (("ca.crt", CA), ("client.crt", CERT), ("client.key", KEY)):
        (tmp / name).write_bytes(data)
    https = {"server": "https://127.0.0.1:6443/", "certificate-authority-data": _b64(CA)}
    return {
        "token": (https, {"token": "t0k"}),
        "token file": (https, {"tokenFile": str(tmp / "token")}),
        "empty token falls to basic": (https, {"token": "", "username": "a", "password": "b"}),
        "basic": (https, {"username": "admin", "password": "pw"}),
        "client certificate data": (
            https,
            {"client-certificate-data": _b64(CERT), "client-key-data": _b64(KEY)},
        ),
        "client certificate files": (
            {"server": "https://h:1", "certificate-authority": str(tmp / "ca.crt")},
            {"client-certificate": str(tmp / "client.crt"), "client-key": str(tmp / "client.key")},
        ),
        "insecure, server name, proxy": (
            {
                "server": "https://h:1",
                "insecure-skip-tls-verify": True,
                "tls-server-name": "api",
                "proxy-url": "http://proxy:3128",
            },
            {"token": "t"},
        ),
        "plain http, no user": ({"server": "http://127.0.0.1:8080"}, None),
        "exec plugin (the loader's own path)": (https, _exec_plugin(tmp)),
    }


def test_session_is_configured_as_the_official_loader_configures(tmp_path: Path) -> None:
    for label, (cluster, user) in _cases(tmp_path).items():
        path = _write(tmp_path, cluster, user)
        conn = client.connect(path)
        session = client.session(path)
        try:
            assert _view(session.configuration) == _view(conn.api_client.configuration), label
            assert (session.context, session.server, session.namespace) == (
                conn.context,
                conn.server,
                conn.namespace,
            ), label
            assert session.target_line() == conn.target_line()
            if "exec" in label:
                assert _view(session.configuration)["authorization"] == "Bearer from-exec"
        finally:
            conn.api_client.close()
            session.close()


def test_session_writes_certificate_data_to_private_files(tmp_path: Path) -> None:
    https = {"server": "https://h:1", "certificate-authority-data": _b64(CA)}
    session = client.session(_write(tmp_path, https, {"client-key-data": _b64(KEY)}))
    key = Path(session.configuration.key_file)
    assert key.read_bytes() == KEY
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    session.close()


def test_missing_certificate_file_names_the_file(tmp_path: Path) -> None:
    path = _write(
        tmp_path, {"server": "https://h:1", "certificate-authority": str(tmp_path / "nope.crt")}, None
    )
    for connect in (client.connect, client.session):
        with pytest.raises(InputError) as err:
            connect(path)
        assert "nope.crt" in str(err.value)
        assert "cannot use context 'x'" in str(err.value)


def test_session_sends_what_the_api_client_sends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same method, URL (query encoding included), headers (auth and User-Agent) and body as the official
    ``ApiClient.param_serialize`` + ``call_api`` that kubeops used before."""
    from kubernetes.client import rest

    sent: list[tuple[Any, ...]] = []

    class Answer:
        status, data = 200, b"{}"

        def read(self) -> bytes:
            return self.data

    def request(self: Any, method: str, url: str, headers: Any = None, body: Any = None, **kw: Any) -> Answer:
        sent.append((method, url, dict(headers or {}), body, kw.get("_request_timeout")))
        return Answer()

    monkeypatch.setattr(rest.RESTClientObject, "request", request)
    path = _write(
        tmp_path, {"server": "https://127.0.0.1:6443", "certificate-authority-data": _b64(CA)}, {"token": "t"}
    )
    conn, session = client.connect(path), client.session(path)
    query = [("fieldManager", "helm"), ("labelSelector", "owner=helm,name in (a b)"), ("dryRun", "All")]
    headers = {"Accept": "application/json", "Content-Type": "application/apply-patch+yaml"}
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": "ü"}}
    api = conn.api_client
    method, url, header_params, serialized, _ = api.param_serialize(
        "PATCH", "/api/v1/namespaces/n/configmaps/x", query_params=list(query), header_params=dict(headers),
        body=body, auth_settings=["BearerToken"],
    )  # fmt: skip
    api.call_api(method, url, header_params, serialized, _request_timeout=30.0)
    session.request("PATCH", "/api/v1/namespaces/n/configmaps/x", query, dict(headers), body, 30.0)
    assert sent[0] == sent[1]
    assert sent[1][2]["authorization"] == "Bearer t"
    api.close()
    session.close()
