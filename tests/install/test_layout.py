"""Writing a split to disk and reading it back gives the same split (same order, same files)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from berth.install import layout, split
from berth.kube.hooks import HookEvent

from .helpers import doc, hook


def test_round_trip_keeps_render_order_for_full_ties_and_marks(tmp_path: Path) -> None:
    # two hooks equal in weight, name and kind (different namespaces): render order decides
    text = (
        doc("ConfigMap", "plain")
        + hook("ConfigMap", "same", "pre-install").replace("namespace: ns", "namespace: zz")
        + hook("ConfigMap", "same", "pre-install").replace("namespace: ns", "namespace: aa")
        + hook("Secret", "hook-secret", "pre-install,post-install")
    )
    result = split.from_render(text)
    only = frozenset(o.ref for o in result.ordinary)
    written = layout.write_split(result, tmp_path, "t", only)
    back, install_only = layout.read_split(tmp_path)
    assert install_only == only
    fresh = [(h.obj.namespace, h.obj.name) for h in result.hooks_for(HookEvent.PRE_INSTALL)]
    assert fresh == [("ns", "hook-secret"), ("zz", "same"), ("aa", "same")]
    assert [(h.obj.namespace, h.obj.name) for h in back.hooks_for(HookEvent.PRE_INSTALL)] == fresh
    assert back.file_names == result.file_names
    secret_files = sorted(w.path for w in written if w.ref.kind == "Secret")
    assert secret_files == [
        "lifecycle/post-install/secret-ns-hook-secret.yaml",
        "lifecycle/pre-install/secret-ns-hook-secret.yaml",
    ]
    for rel in secret_files:
        assert stat.S_IMODE((tmp_path / rel).stat().st_mode) == 0o600
    assert (
        (tmp_path / "manifests/configmap-ns-plain.yaml")
        .read_text()
        .startswith("# Source: c/templates/x.yaml\n")
    )


def test_background_writes_run_in_order_and_the_first_error_is_raised_by_wait(tmp_path: Path) -> None:
    done: list[str] = []
    files = layout.Background()
    files.put(lambda: done.append("first"))
    files.put(lambda: (tmp_path / "missing" / "x.yaml").write_text("x"))  # its folder does not exist
    files.put(lambda: done.append("after the failure"))
    with pytest.raises(FileNotFoundError):
        files.wait()
    assert done == ["first"]  # the rest was skipped, as a raise would have skipped it
    with pytest.raises(FileNotFoundError):
        files.wait()  # waiting again raises it again
