"""The one client wrapper: kubeconfig errors name the file; the loader's per-request token hook is throttled."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.kube import client, kubeconfig
from berth.kube.errors import BerthError, InputError


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


# ---- the client error tree ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (401, client.Unauthorized),
        (403, client.Forbidden),
        (404, client.NotFound),
        (409, client.Conflict),
        (422, client.Invalid),
        (500, client.ServerError),
        (503, client.ServerError),
        (429, client.StatusError),
    ],
)
def test_status_error_picks_the_class_of_the_code(status: int, cls: type[client.StatusError]) -> None:
    exc = client.status_error(status, "Reason", "what went wrong", {"kind": "Status", "code": status})
    assert type(exc) is cls
    assert isinstance(exc, client.ClientError) and isinstance(exc, BerthError) and exc.exit_code == 1
    assert (exc.status, exc.reason, exc.message, exc.api_message) == (
        status,
        "Reason",
        "what went wrong",
        exc.message,
    )
    assert exc.body == {"kind": "Status", "code": status}


def test_status_error_message_names_the_request_when_given() -> None:
    exc = client.status_error(404, "NotFound", 'configmaps "x" not found', what="GET configmaps/x")
    assert str(exc) == 'GET configmaps/x: 404 NotFound: configmaps "x" not found'
    assert str(client.status_error(500, "InternalError", "boom")) == "500 InternalError: boom"


def test_unreachable_is_not_an_answered_failure() -> None:
    exc = client.Unreachable("connection refused")
    assert isinstance(exc, client.ClientError) and not isinstance(exc, client.StatusError)


def test_the_parts_clients_raise_the_one_tree() -> None:
    from berth.install import kubeops
    from berth.schedule.live import api

    assert api.ApiError is kubeops.ApiFailure is client.StatusError
    assert api.Unreachable is kubeops.Unreachable is client.Unreachable
    assert kubeops.Forbidden is client.Forbidden
    failure = kubeops.api_failure("apply ConfigMap x", 403, {"reason": "Forbidden", "message": "no"})
    assert isinstance(failure, client.Forbidden) and str(failure) == "apply ConfigMap x: 403 Forbidden: no"
    text = kubeops.api_failure("get x", 502, "<html>bad gateway</html>")
    assert (
        isinstance(text, client.ServerError)
        and text.message == "<html>bad gateway</html>"
        and text.body == {}
    )
    conflict = kubeops.ApplyConflict(
        "apply x", 409, {"details": {"causes": [{"field": ".data.a", "message": "m"}]}}
    )
    assert isinstance(conflict, client.Conflict) and conflict.fields == [(".data.a", "m")]
