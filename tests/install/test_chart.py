"""Chart sources: folder, .tgz (safe extraction), Helm repo index (file:// and local HTTP), locks."""

from __future__ import annotations

import hashlib
import http.server
import io
import subprocess
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


# Helm's own table (pkg/ignore/rules_test.go TestIgnore): pattern, path, is the path a folder, ignored?
HELM_IGNORE_CASES = [
    ("helm.txt", "helm.txt", False, True),
    ("helm.*", "helm.txt", False, True),
    ("helm.*", "rudder.txt", False, False),
    ("*.txt", "tiller.txt", False, True),
    ("*.txt", "cargo/a.txt", False, True),
    ("cargo/*.txt", "cargo/a.txt", False, True),
    ("cargo/*.*", "cargo/a.txt", False, True),
    ("cargo/*.txt", "mast/a.txt", False, False),
    ("ru[c-e]?er.txt", "rudder.txt", False, True),
    ("templates/.?*", "templates/.dotfile", False, True),
    (".*", ".", True, False),
    (".*", ".joonix", False, True),
    (".*", "helm.txt", False, False),
    ("cargo/", "cargo", True, True),
    ("cargo/", "mast", True, False),
    ("helm.txt/", "helm.txt", False, False),
    ("!helm.txt", "helm.txt", False, False),
    ("!helm.txt", "tiller.txt", False, True),
    ("!*.txt", "cargo", True, True),
    ("!cargo/", "mast", True, True),
    ("/a.txt", "a.txt", False, True),
    ("/a.txt", "cargo/a.txt", False, False),
    ("/cargo/a.txt", "cargo/a.txt", False, True),
    # Go's filepath.Match: * and ? stop at /; classes negate with ^.
    ("cargo/*", "cargo/deep/a.txt", False, False),
    ("a?c", "a/c", False, False),
    ("[^a]*.txt", "b.txt", False, True),
    ("[^a]*.txt", "a.txt", False, False),
    ("\\*.txt", "*.txt", False, True),
    ("\\*.txt", "a.txt", False, False),
    # A negation is not git's: it decides "ignored" for every path it does not match, and a match only lets the
    # next rules decide -- so it cannot bring back what an earlier rule ignored.
    ("!*.yaml\n*.txt", "notes.md", False, True),
    ("!*.yaml\nvalues-*.yaml", "values-dev.yaml", False, True),
    ("!*.yaml\nvalues-*.yaml", "chart.yaml", False, False),
    ("*.txt\n!keep.txt", "keep.txt", False, True),
    ("!templates/", "templates/cm.yaml", False, True),
]


@pytest.mark.parametrize(
    ("patterns", "path", "is_dir", "expected"),
    HELM_IGNORE_CASES,
    ids=[f"{p!r}-{n}" for p, n, _, _ in HELM_IGNORE_CASES],
)
def test_helmignore_rules_are_helms(patterns: str, path: str, is_dir: bool, expected: bool) -> None:
    rules = chart.parse_helmignore(patterns)[: -len(chart.HELMIGNORE_DEFAULTS)]
    assert chart.ignored(path, is_dir, rules) is expected


def test_helmignore_default_rule_drops_dotfiles_in_templates_only() -> None:
    rules = chart.parse_helmignore("")
    assert [r.raw for r in rules] == ["templates/.?*"]
    assert chart.ignored("templates/.swp", False, rules)
    assert not chart.ignored("templates/a/.swp", False, rules)
    assert not chart.ignored(".helmignore", False, rules)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("foo/**/bar", r"double-star \(\*\*\) syntax is not supported"),
        ("[z-", "malformed glob pattern"),
        ("[]a]", "malformed glob pattern"),
        ("!x[", "malformed glob pattern"),
        ("trailing\\", "malformed glob pattern"),
    ],
)
def test_helmignore_bad_lines_are_refused_with_their_place(tmp_path: Path, line: str, message: str) -> None:
    src = tmp_path / "src"
    (src / "templates").mkdir(parents=True)
    (src / "Chart.yaml").write_bytes(CHART_YAML)
    (src / ".helmignore").write_text(f"# ok\n*.orig\n{line}\n")
    with pytest.raises(InputError, match=message) as info:
        chart.resolve(str(src), tmp_path / "w")
    assert f"{src / '.helmignore'} line 3" in str(info.value)


def test_folder_packing_honours_helmignore_negation(tmp_path: Path) -> None:
    """``!`` keeps only what it matches (Helm's rule): everything but Chart.yaml, values and templates goes."""
    src = tmp_path / "src"
    (src / "templates").mkdir(parents=True)
    (src / "Chart.yaml").write_bytes(CHART_YAML)
    (src / ".helmignore").write_text("!Chart.yaml\n")
    (src / "templates" / "cm.yaml").write_text("x")
    (src / "README.md").write_text("x")
    rules = chart.helmignore(src)
    assert chart.ignored("README.md", False, rules) and chart.ignored("templates", True, rules)
    assert not chart.ignored("Chart.yaml", False, rules)
    locked = chart.resolve(str(src), tmp_path / "w")
    with tarfile.open(locked.archive) as tar:
        assert sorted(tar.getnames()) == ["t/Chart.yaml"]
    helm = subprocess.run(
        [tools.find("helm").path, "package", str(src), "-d", str(tmp_path / "helm")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert helm.returncode == 0, helm.stderr
    with tarfile.open(next((tmp_path / "helm").glob("*.tgz"))) as tar:
        assert sorted(tar.getnames()) == ["t/Chart.yaml"]  # Helm packs the same single file


@pytest.mark.parametrize(
    "rules",
    [
        "",
        "*.md\ndocs/\n",
        "!*.yaml\n",
        "!templates/\n",
        "/README.md\nci/values-*.yaml\n",
        "*.txt\n!keep.txt\n",
        "ci/\n!docs/\n",
    ],
    ids=["defaults-only", "names-and-dirs", "negated-glob", "negated-dir", "rooted-and-paths", "no-git-unignore",
         "dir-then-negation"],
)  # fmt: skip
def test_folder_packing_keeps_what_helm_package_keeps(tmp_path: Path, rules: str) -> None:
    src = tmp_path / "t"
    for rel in ["templates/cm.yaml", "templates/.hidden", "templates/sub/x.yaml", "README.md", "docs/a.txt",
                "docs/keep.txt", "ci/values-dev.yaml", "values.yaml"]:  # fmt: skip
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text("a: 1\n")
    (src / "Chart.yaml").write_bytes(CHART_YAML)
    (src / ".helmignore").write_text(rules)
    helm = subprocess.run(
        [tools.find("helm").path, "package", str(src), "-d", str(tmp_path / "helm")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if helm.returncode != 0:  # Helm refuses a chart whose Chart.yaml its rules leave out: so does berth
        assert "Chart.yaml" in helm.stderr
        with pytest.raises(InputError, match=r"\.helmignore: its rules leave out Chart\.yaml"):
            chart.resolve(str(src), tmp_path / "w")
        return
    with tarfile.open(chart.resolve(str(src), tmp_path / "w").archive) as tar:
        mine = sorted(tar.getnames())
    with tarfile.open(next((tmp_path / "helm").glob("*.tgz"))) as tar:
        assert mine == sorted(tar.getnames())
