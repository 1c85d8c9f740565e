"""Chart sources -> one locked chart archive: folder, ``.tgz``, ``repo/chart`` (Helm repo index) or ``oci://``.

Whatever the source, the result is a ``.tgz`` whose SHA-256 is the lock recorded in the package, plus a safely
extracted copy to render from. Archives are untrusted input: members with absolute paths, ``..``, symlinks,
hard links or device files are refused before anything is written (a chart needs none of them).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import subprocess
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from berth.kube import tools, yamlio
from berth.kube.errors import InputError, ToolError

FETCH_TIMEOUT_SECONDS = 60
HELMIGNORE = ".helmignore"


@dataclass(frozen=True)
class LockedChart:
    """A chart archive on disk, its lock and the folder it was extracted to."""

    name: str
    version: str
    archive: Path
    sha256: str
    directory: Path
    source: str


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def chart_meta(directory: Path) -> dict[str, Any]:
    """``Chart.yaml`` of a chart folder, checked for name and version (and its ``values.yaml`` for a mapping).

    The checks depend on the two files' bytes alone, so a call that finds the bytes the last passing call read
    (setup checks a chart folder, packs it, then renders from its scratch copy) returns that call's result instead
    of parsing them again: a large chart's ``values.yaml`` takes milliseconds to parse."""
    chart_yaml = directory / "Chart.yaml"
    if not chart_yaml.is_file():
        raise InputError("not a Helm chart: no Chart.yaml", str(directory))
    values = directory / "values.yaml"
    try:
        seen = (chart_yaml.read_bytes(), values.read_bytes() if values.is_file() else None)
    except OSError:
        seen = None  # reported below, where the files are read as ever
    if seen in _CHECKED_META:
        return dict(_CHECKED_META[seen])
    docs = yamlio.load_file(chart_yaml)
    meta = docs[0].body if docs else None
    if not isinstance(meta, dict) or not meta.get("name") or not meta.get("version"):
        raise InputError("Chart.yaml must be a mapping with name and version", str(chart_yaml))
    if values.is_file():
        where = f"chart {meta['name']}: values.yaml"
        try:
            docs = yamlio.load_documents(values.read_text(encoding="utf-8"), where)
        except InputError as exc:
            raise InputError(f"invalid values YAML: {exc}") from exc
        if docs and not isinstance(docs[0].body, dict):
            raise InputError("values.yaml must be a YAML mapping", where)
    if seen is not None:
        _CHECKED_META.clear()
        _CHECKED_META[seen] = dict(meta)
    return meta


_CHECKED_META: dict[tuple[bytes, bytes | None], dict[str, Any]] = {}
"""The ``Chart.yaml`` and ``values.yaml`` bytes :func:`chart_meta` last passed, and the meta it returned."""


HELMIGNORE_DEFAULTS = ("templates/.?*",)
"""Helm's ``Rules.AddDefaults``: dotfiles directly under ``templates/``, added after the file's own rules."""


@dataclass(frozen=True)
class IgnoreRule:
    """One ``.helmignore`` line, parsed as Helm's ``pkg/ignore`` does."""

    raw: str
    regex: re.Pattern[str]
    negate: bool
    must_dir: bool
    whole_path: bool
    """The pattern has a ``/``: matched against the whole relative path, else against the base name only."""


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Go's ``filepath.Match`` syntax as a regex: ``*`` and ``?`` never match ``/``; ``[...]`` classes with ``^``
    negation and ``a-z`` ranges; ``\\`` escapes. Raises ValueError where Go returns ``ErrBadPattern``."""
    out: list[str] = []
    i, n = 0, len(pattern)

    def escaped(at: int) -> tuple[str, int]:
        """One class character at ``at`` (``\\x`` is ``x``); ``-``, ``]`` or nothing there is a bad pattern."""
        if at >= n or pattern[at] in "-]":
            raise ValueError("bad pattern")
        if pattern[at] == "\\":
            at += 1
            if at >= n:
                raise ValueError("bad pattern")
        return pattern[at], at + 1

    while i < n:
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "\\":
            if i + 1 >= n:
                raise ValueError("bad pattern")
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "[":
            i += 1
            negated = i < n and pattern[i] == "^"
            i += 1 if negated else 0
            ranges: list[str] = []
            while True:
                if i < n and pattern[i] == "]" and ranges:
                    i += 1
                    break
                lo, i = escaped(i)
                hi = lo
                if i < n and pattern[i] == "-":
                    hi, i = escaped(i + 1)
                ranges.append(re.escape(lo) + ("-" + re.escape(hi) if hi != lo else ""))
            out.append(("[^" if negated else "[") + "".join(ranges) + "]")
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def parse_helmignore(text: str, where: str = HELMIGNORE) -> list[IgnoreRule]:
    """Rules of a ``.helmignore`` in file order, then Helm's default; a ``**`` or a malformed glob is an error
    (Helm refuses the chart too)."""
    rules: list[IgnoreRule] = []
    for lineno, line in enumerate([*text.splitlines(), *HELMIGNORE_DEFAULTS], 1):
        rule = line.strip()
        if not rule or rule.startswith("#"):
            continue
        place = f"{where} line {lineno}"
        if "**" in rule:
            raise InputError(
                f"{rule!r}: double-star (**) syntax is not supported (Helm refuses it too)", place
            )
        negate = rule.startswith("!")
        body = rule[1:] if negate else rule
        must_dir = body.endswith("/")
        body = body.removesuffix("/") if must_dir else body
        whole_path = "/" in body
        try:
            _glob_regex(rule)  # Helm checks the raw line, `!` included
            regex = _glob_regex(body.removeprefix("/"))
        except ValueError:
            raise InputError(
                f"{rule!r}: malformed glob pattern (check [ ] classes and escapes)", place
            ) from None
        rules.append(IgnoreRule(rule, regex, negate, must_dir, whole_path))
    return rules


def helmignore(directory: Path) -> list[IgnoreRule]:
    """The chart folder's ignore rules: its ``.helmignore`` (if any) followed by Helm's default."""
    path = directory / HELMIGNORE
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return parse_helmignore(text, str(path))


def ignored(rel: str, is_dir: bool, rules: list[IgnoreRule]) -> bool:
    """Whether Helm leaves ``rel`` (posix, relative to the chart) out: the first rule that decides wins. A plain
    rule decides when it matches (a ``dir/`` rule only for folders). A ``!`` rule decides -- *ignored* -- when it
    does **not** match (or wants a folder and ``rel`` is a file), and lets evaluation go on when it matches: so
    ``!x`` alone ignores everything but ``x``, and cannot bring back what an earlier rule ignored (Helm's
    ``Rules.Ignore``, not git's semantics)."""
    if rel in ("", ".", "./"):
        return False
    name = rel.rsplit("/", 1)[-1]
    for rule in rules:
        target = rel if rule.whole_path else name
        if rule.negate:
            if (rule.must_dir and not is_dir) or not rule.regex.fullmatch(target):
                return True
            continue
        if rule.must_dir and not is_dir:
            continue
        if rule.regex.fullmatch(target):
            return True
    return False


def pack_folder(directory: Path, dest_dir: Path) -> Path:
    """A reproducible ``<name>-<version>.tgz`` of a chart folder (sorted entries, zero times and owners).

    ``.helmignore`` is honoured as Helm does when it loads a folder. Symlinks inside the folder are refused for
    the same reason they are refused in archives.

    A folder's archive is remembered (:func:`_remember_pack`), so that :func:`safe_extract` of it (setup renders
    from a scratch copy of the chart) writes the files read here instead of checking and unpacking the archive.
    """
    meta = chart_meta(directory)
    name, version = str(meta["name"]), str(meta["version"])
    out = dest_dir / f"{name}-{version}.tgz"
    buf = io.BytesIO()
    files: list[tuple[str, bytes]] = []
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        patterns = helmignore(directory)
        if ignored("Chart.yaml", False, patterns):
            raise InputError(
                "its rules leave out Chart.yaml, so there is no chart left (Helm refuses it too); note that a "
                "`!pattern` line ignores every path it does not match",
                str(directory / HELMIGNORE),
            )
        for root, dirs, names in os.walk(directory):
            base = Path(root).relative_to(directory)
            dirs[:] = sorted(d for d in dirs if not ignored((base / d).as_posix(), True, patterns))
            for fname in sorted(names):
                path = Path(root) / fname
                rel = path.relative_to(directory).as_posix()
                if ignored(rel, False, patterns):
                    continue
                if path.is_symlink():
                    raise InputError("symlinks are not allowed in a chart", str(path))
                info = tarfile.TarInfo(f"{name}/{rel}")
                data = path.read_bytes()
                info.size = len(data)
                info.mode = 0o644
                info.mtime = 0
                tar.addfile(info, io.BytesIO(data))
                files.append((rel, data))
            for d in dirs:
                if (Path(root) / d).is_symlink():
                    raise InputError("symlinks are not allowed in a chart", str(Path(root) / d))
    dest_dir.mkdir(parents=True, exist_ok=True)
    # Level 6 (Go's and ``helm package``'s default): 9 takes several times longer on a chart with large CRDs
    # for a few per cent of size, and every setup of a folder packs it.
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", compresslevel=6, mtime=0, filename="") as gz:
        gz.write(buf.getbuffer())
    archive = packed.getvalue()
    out.write_bytes(archive)
    _remember_pack(archive, name, files, buf.tell())
    return out


_PACKED: list[tuple[bytes, str, list[tuple[str, bytes]]]] = []
"""The archive :func:`pack_folder` last wrote in this process, as (its bytes, its top folder, (path, content) of
each file), when :func:`check_archive` provably passes on it: :func:`safe_extract` of those same bytes writes the
files from here instead of checking and decompressing the archive it just made (twice: the check, then the
extraction)."""


def _remember_pack(archive: bytes, top: str, files: list[tuple[str, bytes]], unpacked: int) -> None:
    """Keep a packed archive in :data:`_PACKED` when :func:`check_archive` would pass on it (else forget the last):
    one plain top folder (its members' paths are a walk's, without links or special files), within every limit
    -- the compression ratio is checked only past :attr:`ArchiveLimits.ratio_after` unpacked bytes, so an archive
    that unpacks to fewer never reaches it -- and its subchart archives passing themselves."""
    _PACKED.clear()
    sizes = [len(data) for _, data in files]
    if (
        PurePosixPath(top).parts != (top,)
        or top == ".."
        or len(files) > LIMITS.files
        or any(size > LIMITS.file_bytes for size in sizes)
        or sum(sizes) > LIMITS.total_bytes
        or unpacked > LIMITS.ratio_after
        or len(archive) > LIMITS.compressed_bytes
    ):
        return
    for rel, data in files:
        if _subchart_archive(f"{top}/{rel}"):
            try:
                check_archive(data, rel)
            except InputError:
                return  # the whole check reports it, in its order
    _PACKED.append((archive, top, files))


def _subchart_archive(name: str) -> bool:
    """Whether a file of a chart archive (its member name) is a packed subchart, which Helm unpacks too
    (``<top>/charts/<sub>.tgz``, or deeper in an unpacked subchart)."""
    parts = PurePosixPath(name).parts
    return len(parts) >= 3 and parts[-2] == "charts" and name.endswith(".tgz")


@dataclass(frozen=True)
class ArchiveLimits:
    """What a chart archive may unpack to. The sizes are Helm's (``pkg/chart/loader``: ``MaxDecompressedChartSize``
    100 MiB, ``MaxDecompressedFileSize`` 5 MiB), so berth refuses exactly what ``helm`` would refuse loading it; the
    file count and the compression ratio are berth's own guards against an archive built to exhaust the disk
    or the CPU before a size limit is reached."""

    total_bytes: int = 100 * 1024 * 1024
    file_bytes: int = 5 * 1024 * 1024
    files: int = 10_000
    ratio: int = 200
    """Unpacked bytes per compressed byte, checked once more than :attr:`ratio_after` bytes are unpacked: charts
    (YAML, JSON dashboards) compress 5 to 30 times; runs of zeros a thousand times."""
    ratio_after: int = 8 * 1024 * 1024
    compressed_bytes: int = 100 * 1024 * 1024
    """The archive file itself: anything larger cannot unpack to less than Helm's chart limit."""


LIMITS = ArchiveLimits()


class _Counted(io.RawIOBase):
    """A read-only stream that counts the compressed bytes the decompressor has taken."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = self._data[self.taken : self.taken + len(buffer)]
        buffer[: len(chunk)] = chunk
        self.taken += len(chunk)
        return len(chunk)


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB ({n} bytes)"


def _member_problem(m: tarfile.TarInfo) -> str | None:
    """Why a member may not be unpacked: it could write outside the chart folder or is not a plain file/folder."""
    p = PurePosixPath(m.name)
    if m.name.startswith("/") or p.is_absolute() or ".." in p.parts:
        return f"refusing archive entry {m.name!r}: path escapes the chart folder"
    if m.issym() or m.islnk():
        return f"refusing archive entry {m.name!r}: links are not allowed in a chart"
    if not (m.isfile() or m.isdir()):
        return f"refusing archive entry {m.name!r}: not a file or folder"
    return None


def check_archive(data: bytes, shown: str, limits: ArchiveLimits = LIMITS) -> str:
    """Check a chart archive before anything is unpacked; return its one top folder. One streaming pass over the
    headers (the data between them is decompressed and dropped, never written): every member is checked for an
    escaping path, a link or a special file, for Helm's per-file and total size limits and for the file count, the
    compression ratio after every member, and every subchart archive (``charts/*.tgz``) the same way, inside. A
    bomb is refused after its first header (one huge file) or within :attr:`ArchiveLimits.ratio_after` bytes
    (many files). Errors name ``shown``: the path or reference the user gave, never a temporary copy."""
    if len(data) > limits.compressed_bytes:
        raise InputError(
            f"the chart archive is {_mib(len(data))}, more than the {_mib(limits.compressed_bytes)} a chart may "
            "unpack to (Helm's limit)",
            shown,
        )
    stream = _Counted(data)
    tops: set[str] = set()
    total = count = 0
    try:
        with tarfile.open(fileobj=io.BufferedReader(stream), mode="r|*") as tar:
            for m in tar:
                problem = _member_problem(m)
                if problem is not None:
                    raise InputError(problem, shown)
                parts = PurePosixPath(m.name).parts
                if parts:
                    tops.add(parts[0])
                count += 1
                if count > limits.files:
                    raise InputError(f"the chart archive holds more than {limits.files} files", shown)
                if m.isfile():
                    if m.size > limits.file_bytes:
                        raise InputError(
                            f"archive entry {m.name!r} unpacks to {_mib(m.size)}, more than the "
                            f"{_mib(limits.file_bytes)} Helm allows one file of a chart",
                            shown,
                        )
                    total += m.size
                    if total > limits.total_bytes:
                        raise InputError(
                            f"the chart archive unpacks to more than the {_mib(limits.total_bytes)} Helm allows "
                            "a chart",
                            shown,
                        )
                    if _subchart_archive(m.name):
                        member = tar.extractfile(m)
                        if member is not None:  # a subchart archive: Helm unpacks it too, so check it too
                            check_archive(member.read(), f"{shown} ({PurePosixPath(*parts[1:])})", limits)
                unpacked = tar.offset
                if unpacked > limits.ratio_after and unpacked > limits.ratio * max(1, stream.taken):
                    raise InputError(
                        f"the chart archive unpacks to more than {limits.ratio} times its compressed size "
                        f"({_mib(unpacked)} from {_mib(stream.taken)} so far): refusing a decompression bomb",
                        shown,
                    )
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise InputError(f"not a readable .tgz chart archive: {exc}", shown) from exc
    if len(tops) != 1:
        raise InputError(f"a chart archive must hold one top folder, found {sorted(tops) or 'none'}", shown)
    return tops.pop()


def read_archive(archive: Path, shown: str | None = None) -> bytes:
    """The bytes of a chart archive file, refused unread when larger than any chart could be."""
    where = shown or str(archive)
    try:
        size = archive.stat().st_size
        if size > LIMITS.compressed_bytes:
            raise InputError(
                f"the chart archive is {_mib(size)}, more than the {_mib(LIMITS.compressed_bytes)} a chart may "
                "unpack to (Helm's limit)",
                where,
            )
        return archive.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the chart archive: {exc.strerror or exc}", where) from exc


def safe_extract(archive: Path, dest: Path, shown: str | None = None) -> Path:
    """Extract a chart archive after :func:`check_archive` passed on the same bytes; return the chart folder (the
    one top directory). ``shown`` is how errors name the archive (default: its path)."""
    where = shown or str(archive)
    data = read_archive(archive, where)
    packed = next((p for p in _PACKED if p[0] == data), None)
    top = check_archive(data, where) if packed is None else packed[1]
    try:
        if packed is None:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                dest.mkdir(parents=True, exist_ok=True)
                tar.extractall(dest, filter="data")
        else:
            _write_files(dest / top, packed[2])
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InputError(f"not a readable .tgz chart archive: {exc}", where) from exc
    chart_dir = dest / top
    chart_meta(chart_dir)
    return chart_dir


def _write_files(chart_dir: Path, files: list[tuple[str, bytes]]) -> None:
    """Write an archive's files as :func:`safe_extract` unpacks them from :func:`pack_folder`'s members: each with
    the mode (0644) and the times (0) its member holds, parent folders made as needed."""
    made: set[Path] = set()
    for rel, data in files:
        path = chart_dir / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes(data)
        os.chmod(path, 0o644)
        os.utime(path, (0, 0))


def _fetch(url: str) -> bytes:
    import urllib.error  # repositories only: a local chart does not pay for the HTTP stack
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_SECONDS) as resp:
            data: bytes = resp.read()
            return data
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise InputError(f"cannot fetch {url}: {exc}") from exc


def _repo_url(repo_name: str) -> str:
    """A repository name from Helm's ``repositories.yaml`` (``helm repo add``) -> its URL."""
    helm = tools.find("helm")
    proc = subprocess.run(
        [helm.path, "env", "HELM_REPOSITORY_CONFIG"], capture_output=True, text=True, timeout=30
    )
    config = Path(proc.stdout.strip())
    entries: list[Any] = []
    if config.is_file():
        docs = yamlio.load_file(config)
        body = docs[0].body if docs else {}
        entries = (body or {}).get("repositories") or []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("name") == repo_name:
            return str(entry.get("url"))
    raise InputError(
        f"unknown Helm repository {repo_name!r}; add it with `helm repo add {repo_name} URL` "
        "or pass --repo URL with the chart name"
    )


def _version_key(v: str) -> tuple[int, ...]:
    core = v.lstrip("v").split("-", 1)[0].split("+", 1)[0]
    try:
        return tuple(int(x) for x in core.split("."))
    except ValueError:
        return (-1,)


def pull_from_index(repo_url: str, chart: str, version: str | None, dest_dir: Path) -> Path:
    """Resolve ``chart`` (and ``version``, else the newest stable) in ``<repo_url>/index.yaml`` and download it.

    The index entry's ``digest`` (SHA-256 of the archive), when present, must match the download.
    """
    import urllib.parse

    base = repo_url.rstrip("/") + "/"
    index_text = _fetch(urllib.parse.urljoin(base, "index.yaml")).decode("utf-8", "replace")
    index = yamlio.load_one(index_text, f"{base}index.yaml") or {}
    entries = (index.get("entries") or {}).get(chart) if isinstance(index, dict) else None
    if not entries:
        raise InputError(f"chart {chart!r} not found in the repository index", f"{base}index.yaml")
    if version:
        chosen = [e for e in entries if str(e.get("version")).lstrip("v") == version.lstrip("v")]
        if not chosen:
            have = ", ".join(sorted({str(e.get("version")) for e in entries}))
            raise InputError(f"chart {chart} has no version {version} (have: {have})", f"{base}index.yaml")
        entry = chosen[0]
    else:
        stable = [e for e in entries if "-" not in str(e.get("version"))] or entries
        entry = max(stable, key=lambda e: _version_key(str(e.get("version"))))
    urls = entry.get("urls") or []
    if not urls:
        raise InputError(f"index entry {chart} {entry.get('version')} has no urls", f"{base}index.yaml")
    data = _fetch(urllib.parse.urljoin(base, str(urls[0])))
    digest = entry.get("digest")
    if digest and hashlib.sha256(data).hexdigest() != str(digest):
        raise InputError(
            f"downloaded {chart} {entry.get('version')} does not match the index digest {digest}",
            f"{base}index.yaml",
        )
    dest_dir.mkdir(parents=True, exist_ok=True)
    out = dest_dir / f"{chart}-{entry.get('version')}.tgz"
    out.write_bytes(data)
    return out


def pull_oci(ref: str, version: str | None, dest_dir: Path) -> Path:
    """``oci://`` references go through ``helm pull`` (registry auth is Helm's business)."""
    helm = tools.find("helm")
    dest_dir.mkdir(parents=True, exist_ok=True)
    cmd = [helm.path, "pull", ref, "--destination", str(dest_dir)]
    if version:
        cmd += ["--version", version]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise ToolError(f"helm pull {ref} failed: {proc.stderr.strip()}")
    found = sorted(dest_dir.glob("*.tgz"))
    if not found:
        raise ToolError(f"helm pull {ref} produced no archive")
    return found[0]


def resolve(
    ref: str,
    work: Path,
    version: str | None = None,
    repo: str | None = None,
    extract: bool = True,
    archive_dir: Path | None = None,
) -> LockedChart:
    """Any chart reference -> a locked archive in ``archive_dir`` (default ``work/archive``) and its extraction in
    ``work/chart`` (``extract=False``: a folder is only packed, and ``directory`` is the folder itself)."""
    archive_dir = archive_dir or work / "archive"
    path = Path(ref)
    if repo:
        archive = pull_from_index(repo, ref, version, archive_dir)
    elif ref.startswith("oci://"):
        archive = pull_oci(ref, version, archive_dir)
    elif path.is_dir():
        archive = pack_folder(path, archive_dir)
    elif path.is_file():
        data = read_archive(path, ref)
        check_archive(data, ref)  # before a byte of it is copied or unpacked
        archive_dir.mkdir(parents=True, exist_ok=True)
        archive = archive_dir / path.name
        archive.write_bytes(data)
    elif "/" in ref and not ref.startswith((".", "/")) and len(ref.split("/")) == 2:
        repo_name, chart = ref.split("/")
        archive = pull_from_index(_repo_url(repo_name), chart, version, archive_dir)
    else:
        raise InputError("chart not found: not a folder, a .tgz file, repo/chart or oci:// reference", ref)
    directory = path if path.is_dir() and not extract else safe_extract(archive, work / "chart", ref)
    meta = chart_meta(directory)
    if version and str(meta["version"]).lstrip("v") != version.lstrip("v"):
        raise InputError(f"chart version is {meta['version']}, not the requested {version}", ref)
    return LockedChart(str(meta["name"]), str(meta["version"]), archive, sha256_file(archive), directory, ref)
