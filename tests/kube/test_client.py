"""The one client wrapper: kubeconfig errors name the file; the loader's per-request token hook is throttled."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.kube import client, kubeconfig
from berth.kube.errors import InputError


def test_token_refresh_hook_runs_once_per_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = kubeconfig.write(tmp_path / "kubeconfig", "https://127.0.0.1:6443", "secret-token")
    now = [500.0]
    monkeypatch.setattr("berth.kube.client.time.monotonic", lambda: now[0])
    conn = client.connect(path)
    cfg = conn.api_client.configuration
    hook = cfg.refresh_api_key_hook
    calls: list[int] = []
    inner = hook._fn
    hook._fn = lambda c: (calls.append(1), inner(c))
    for _ in range(5):
        assert cfg.auth_settings()["BearerToken"]["value"] == "Bearer secret-token"
    assert len(calls) == 1
    assert cfg.refresh_api_key_hook is hook  # the loader's hook re-installs itself; the throttle stays
    now[0] += client.TOKEN_REFRESH_SECONDS
    cfg.auth_settings()
    assert len(calls) == 2
    conn.api_client.close()


def test_throttling_is_idempotent_and_survives_copies(tmp_path: Path) -> None:
    import copy

    path = kubeconfig.write(tmp_path / "kubeconfig", "https://127.0.0.1:6443", "t")
    conn = client.connect(path)
    cfg = conn.api_client.configuration
    hook = cfg.refresh_api_key_hook
    client.throttle_token_refresh(cfg)
    assert cfg.refresh_api_key_hook is hook
    mine = copy.deepcopy(cfg)
    assert mine.refresh_api_key_hook is not hook
    assert mine.auth_settings()["BearerToken"]["value"] == "Bearer t"
    conn.api_client.close()


def test_unknown_context_names_the_file(tmp_path: Path) -> None:
    path = kubeconfig.write(tmp_path / "kubeconfig", "https://127.0.0.1:6443", "t")
    with pytest.raises(InputError) as err:
        client.connect(path, context="nope")
    assert str(path) in str(err.value)
    assert "nope" in str(err.value)
