"""Chart sources: folder, .tgz (safe extraction), Helm repo index (file:// and local HTTP), locks."""

from __future__ import annotations

import hashlib
import http.server
import io
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.install import chart
from berth.kube import tools
from berth.kube.errors import InputError

from .conftest import EDGE_CHART


def tgz(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


CHART_YAML = b"apiVersion: v2\nname: t\nversion: 1.0.0\n"


def test_folder_is_packed_reproducibly_and_locked(tmp_path: Path) -> None:
    a = chart.resolve(str(EDGE_CHART), tmp_path / "a")
    b = chart.resolve(str(EDGE_CHART), tmp_path / "b")
    assert (a.name, a.version) == ("edge-hooks", "0.3.0")
    assert a.sha256 == b.sha256 == hashlib.sha256(a.archive.read_bytes()).hexdigest()
    assert (a.directory / "crds" / "things.yaml").is_file()


def test_tgz_round_trip(tmp_path: Path) -> None:
    archive = tgz(tmp_path / "t-1.0.0.tgz", [file_member("t/Chart.yaml", CHART_YAML)])
    locked = chart.resolve(str(archive), tmp_path / "w")
    assert locked.name == "t" and locked.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()


def _symlink() -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo("t/templates/link.yaml")
    info.type = tarfile.SYMTYPE
    info.linkname = "/etc/passwd"
    return info, None


def _hardlink() -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo("t/hard")
    info.type = tarfile.LNKTYPE
    info.linkname = "t/Chart.yaml"
    return info, None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (file_member("t/../../evil.yaml", b"x"), "path escapes"),
        (file_member("/abs/evil.yaml", b"x"), "path escapes"),
        (_symlink(), "links are not allowed"),
        (_hardlink(), "links are not allowed"),
        (file_member("other/Chart.yaml", b"x"), "one top folder"),
    ],
    ids=["dot-dot", "absolute", "symlink", "hardlink", "two-tops"],
)
def test_unsafe_archives_are_refused_before_writing(
    tmp_path: Path, extra: tuple[tarfile.TarInfo, bytes | None], message: str
) -> None:
    archive = tgz(tmp_path / "bad.tgz", [file_member("t/Chart.yaml", CHART_YAML), extra])
    dest = tmp_path / "out"
    with pytest.raises(InputError, match=message):
        chart.safe_extract(archive, dest)
    assert not dest.exists()
    assert not (tmp_path / "evil.yaml").exists()


def test_not_an_archive(tmp_path: Path) -> None:
    bad = tmp_path / "x.tgz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(InputError, match=r"not a readable \.tgz"):
        chart.resolve(str(bad), tmp_path / "w")


def test_archive_without_chart_yaml(tmp_path: Path) -> None:
    archive = tgz(tmp_path / "t.tgz", [file_member("t/values.yaml", b"a: 1\n")])
    with pytest.raises(InputError, match=r"no Chart\.yaml"):
        chart.resolve(str(archive), tmp_path / "w")


@pytest.mark.parametrize("ref", ["./does-not-exist", "nope"], ids=["path", "bare-name"])
def test_chart_not_found(tmp_path: Path, ref: str) -> None:
    with pytest.raises(InputError, match="chart not found"):
        chart.resolve(ref, tmp_path / "w")


def _repo(root: Path, digest_ok: bool = True) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for version in ("1.0.0", "1.2.0", "2.0.0-rc.1"):
        data = CHART_YAML.replace(b"1.0.0", version.encode())
        tgz(repo / f"t-{version}.tgz", [file_member("t/Chart.yaml", data)])
    entries = []
    for version in ("1.0.0", "1.2.0", "2.0.0-rc.1"):
        digest = (
            hashlib.sha256((repo / f"t-{version}.tgz").read_bytes()).hexdigest() if digest_ok else "ab" * 32
        )
        entries.append(
            f"  - name: t\n    version: {version}\n    digest: {digest}\n    urls: [t-{version}.tgz]\n"
        )
    (repo / "index.yaml").write_text("apiVersion: v1\nentries:\n  t:\n" + "".join(entries))
    return repo


def test_repo_index_file_url_picks_newest_stable_or_asked_version(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    newest = chart.resolve("t", tmp_path / "a", repo=repo.as_uri())
    assert newest.version == "1.2.0"
    pinned = chart.resolve("t", tmp_path / "b", version="1.0.0", repo=repo.as_uri())
    assert pinned.version == "1.0.0"
    with pytest.raises(InputError, match=r"no version 9\.9\.9"):
        chart.resolve("t", tmp_path / "c", version="9.9.9", repo=repo.as_uri())
    with pytest.raises(InputError, match="not found in the repository index"):
        chart.resolve("other", tmp_path / "d", repo=repo.as_uri())


def test_repo_digest_mismatch_is_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path, digest_ok=False)
    with pytest.raises(InputError, match="does not match the index digest"):
        chart.resolve("t", tmp_path / "a", repo=repo.as_uri())


@pytest.fixture
def http_repo(tmp_path: Path) -> Iterator[str]:
    repo = _repo(tmp_path)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(repo), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_repo_index_over_local_http(tmp_path: Path, http_repo: str) -> None:
    locked = chart.resolve("t", tmp_path / "w", version="1.0.0", repo=http_repo)
    assert locked.version == "1.0.0" and locked.archive.name == "t-1.0.0.tgz"


def test_folder_packing_honours_helmignore(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "templates").mkdir(parents=True)
    (src / "Chart.yaml").write_bytes(CHART_YAML)
    (src / ".helmignore").write_text("# comment\n*.orig\nscratch/\ntemplates/skip.yaml\n")
    (src / "templates" / "cm.yaml").write_text("x")
    (src / "templates" / "cm.yaml.orig").write_text("x")
    (src / "templates" / "skip.yaml").write_text("x")
    (src / "scratch").mkdir()
    (src / "scratch" / "notes.txt").write_text("x")
    locked = chart.resolve(str(src), tmp_path / "w")
    with tarfile.open(locked.archive) as tar:
        names = sorted(tar.getnames())
    assert names == ["t/.helmignore", "t/Chart.yaml", "t/templates/cm.yaml"]


def test_repo_slash_chart_uses_helm_repositories_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    config = tmp_path / "repositories.yaml"
    config.write_text(f"apiVersion: ''\nrepositories:\n  - name: local\n    url: {repo.as_uri()}\n")
    monkeypatch.setenv("HELM_REPOSITORY_CONFIG", str(config))
    assert chart.resolve("local/t", tmp_path / "a").version == "1.2.0"
    with pytest.raises(InputError, match="unknown Helm repository 'other'"):
        chart.resolve("other/t", tmp_path / "b")


def test_oci_references_go_through_helm_pull(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No registry is reachable here: a stand-in ``helm`` records its arguments and drops the chart archive."""
    archive = tgz(tmp_path / "t-1.0.0.tgz", [file_member("t/Chart.yaml", CHART_YAML)])
    log = tmp_path / "helm-args"
    fake = tmp_path / "helm"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" > {log}\n'
        'while [ $# -gt 0 ]; do if [ "$1" = --destination ]; then dest="$2"; fi; shift; done\n'
        f'cp {archive} "$dest/"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr(chart.tools, "find", lambda name: tools.Tool(name, str(fake), "v4.1.4", "env"))
    locked = chart.resolve("oci://registry.example.com/charts/t", tmp_path / "w", version="1.0.0")
    assert (locked.name, locked.version) == ("t", "1.0.0")
    args = log.read_text().split()
    assert args[:2] == ["pull", "oci://registry.example.com/charts/t"]
    assert args[args.index("--version") + 1] == "1.0.0"
