"""Chart archives are checked before anything is unpacked: Helm's per-file and total size limits, the file count,
the compression ratio, subchart archives inside -- a decompression bomb is refused after reading a few kilobytes,
nothing is written, and the message names the archive the user gave."""

from __future__ import annotations

import gzip
import io
import re
import struct
import tarfile
import zlib
from pathlib import Path

import pytest

from berth.install import chart
from berth.kube import yamlio
from berth.kube.errors import InputError

from .conftest import Run
from .test_chart import CHART_YAML, file_member, tgz

MiB = 1024 * 1024
CHUNK = MiB


def _gf2_times(matrix: list[int], vec: int) -> int:
    out, i = 0, 0
    while vec:
        if vec & 1:
            out ^= matrix[i]
        vec >>= 1
        i += 1
    return out


def _gf2_square(matrix: list[int]) -> list[int]:
    return [_gf2_times(matrix, matrix[n]) for n in range(32)]


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """CRC-32 of A+B from crc(A), crc(B) and len(B) (zlib's crc32_combine: zeros appended as GF(2) matrix powers)."""
    odd = [0xEDB88320] + [1 << n for n in range(31)]  # the operator for one zero bit
    even = _gf2_square(odd)  # two zero bits
    odd = _gf2_square(even)  # four zero bits
    while True:
        even = _gf2_square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = _gf2_square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def crc32_of_zeros(n: int) -> int:
    """The register starts at all ones and ends inverted: n zero bytes move it by the zero operator alone."""
    return crc32_combine(0xFFFFFFFF, 0xFFFFFFFF, n) if n else 0


def zeros_bomb(path: Path, size: int, name: str = "bomb/templates/zeros.yaml") -> Path:
    """A valid ``.tgz`` of a chart whose one file holds ``size`` zero bytes, written in milliseconds: after a full
    flush deflate compresses each megabyte of zeros to the same bytes, so they are computed once and repeated
    (CRC-32 and length in the trailer are right, as ``gzip -t`` would check)."""
    info = tarfile.TarInfo(name)
    info.size = size
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    tail = (-size) % 512 + 2 * 512  # data padding and the two end blocks
    tail += (-(len(header) + size + tail)) % tarfile.RECORDSIZE
    total = len(header) + size + tail
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    parts = [body.compress(header + bytes(CHUNK)) + body.flush(zlib.Z_FULL_FLUSH)]
    same = body.compress(bytes(CHUNK)) + body.flush(zlib.Z_FULL_FLUSH)
    left = size - CHUNK
    crc = zlib.crc32(header + bytes(CHUNK))
    with path.open("wb") as fh:
        fh.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + parts[0])
        while left >= CHUNK:
            fh.write(same)
            left -= CHUNK
        fh.write(body.compress(bytes(left + tail)) + body.flush(zlib.Z_FINISH))
        crc = crc32_combine(crc, crc32_of_zeros(total - len(header) - CHUNK), total - len(header) - CHUNK)
        fh.write(struct.pack("<II", crc & 0xFFFFFFFF, total & 0xFFFFFFFF))
    return path


@pytest.mark.parametrize("n", [1, 1000, 3 * MiB + 5])
def test_crc32_of_zeros_is_zlibs(n: int) -> None:
    assert crc32_of_zeros(n) == zlib.crc32(bytes(n))


def test_the_bomb_helper_writes_a_valid_archive(tmp_path: Path) -> None:
    small = zeros_bomb(tmp_path / "small.tgz", 3 * MiB + 100)
    raw = gzip.decompress(small.read_bytes())  # checks the trailer's CRC-32 and length
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        (member,) = tar.getmembers()
        data = tar.extractfile(member)
        assert member.size == 3 * MiB + 100 and data is not None and data.read() == bytes(3 * MiB + 100)


class Counting:
    """Records how many compressed bytes the check took from the archive (its whole work is bounded by them)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.taken = 0
        real = chart._Counted.readinto

        def readinto(stream: chart._Counted, buffer: object) -> int:
            n = real(stream, buffer)
            self.taken = max(self.taken, stream.taken)
            return n

        monkeypatch.setattr(chart._Counted, "readinto", readinto)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1.5 GB of zeros in a 1.5 MB chart archive."""
    return zeros_bomb(tmp_path_factory.mktemp("bomb") / "bomb-1.0.0.tgz", 1536 * MiB)


def test_a_zeros_bomb_is_refused_by_setup_after_its_first_header(
    run: Run, bomb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert bomb.stat().st_size < 2 * MiB
    counting = Counting(monkeypatch)
    work = tmp_path / "w"
    r = run("install", "setup", "--pull", bomb, "--work-dir", work, "--non-interactive")
    assert r.code == 2
    assert f"error: {bomb}: " in r.err  # the path the user gave, not a temporary copy
    assert "'bomb/templates/zeros.yaml' unpacks to 1536 MiB" in r.err and "5 MiB (5242880 bytes)" in r.err
    assert counting.taken < 64 * 1024  # refused on the first header: nothing but it was decompressed
    assert not work.exists()  # nothing written


def test_package_refuses_the_bomb_naming_it(run: Run, bomb: Path, tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    r = run("install", "package", bomb, "--out", out)
    assert r.code == 2 and f"error: {bomb}: " in r.err and "Helm allows one file" in r.err
    assert not out.exists() and not list(tmp_path.glob(".pkg*"))


def many_files(path: Path, n: int, size: int, top: str = "t") -> Path:
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for info, data in [file_member(f"{top}/Chart.yaml", CHART_YAML)] + [
            file_member(f"{top}/files/z{i}", bytes(size)) for i in range(n)
        ]:
            tar.addfile(info, io.BytesIO(data))
    return path


def test_many_small_zero_files_are_stopped_by_the_compression_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = many_files(
        tmp_path / "many.tgz", 40, 4 * MiB
    )  # 160 MiB of zeros, each file within Helm's limit
    counting = Counting(monkeypatch)
    with pytest.raises(InputError, match=r"more than 200 times its compressed size") as exc:
        chart.safe_extract(archive, tmp_path / "out", "given/many.tgz")
    assert str(exc.value).startswith("given/many.tgz: ")
    assert counting.taken < archive.stat().st_size / 2  # stopped after ~8 MiB unpacked, well before 32 MiB
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        (chart.ArchiveLimits(total_bytes=10_000), r"unpacks to more than the 0.0095\d* MiB \(10000 bytes\)"),
        (chart.ArchiveLimits(file_bytes=3_000), r"'t/files/z0' unpacks to .* \(4000 bytes\), more than"),
        (chart.ArchiveLimits(files=3), r"holds more than 3 files"),
        (chart.ArchiveLimits(ratio=2, ratio_after=1_000), r"more than 2 times its compressed size"),
    ],
    ids=["total", "per-file", "count", "ratio"],
)
def test_each_limit_refuses_naming_itself(tmp_path: Path, limits: chart.ArchiveLimits, message: str) -> None:
    data = many_files(tmp_path / "t.tgz", 4, 4_000).read_bytes()
    with pytest.raises(InputError, match=message):
        chart.check_archive(data, "t.tgz", limits)
    assert chart.check_archive(data, "t.tgz") == "t"  # within the default limits


def test_a_bomb_inside_a_subchart_archive_is_refused_naming_both(tmp_path: Path) -> None:
    inner = zeros_bomb(tmp_path / "sub.tgz", 6 * MiB, "sub/templates/zeros.yaml").read_bytes()
    outer = tgz(tmp_path / "outer.tgz", [file_member("t/Chart.yaml", CHART_YAML),
                                          file_member("t/charts/sub-0.1.0.tgz", inner)])  # fmt: skip
    with pytest.raises(InputError, match=r"'sub/templates/zeros.yaml' unpacks to 6 MiB") as exc:
        chart.safe_extract(outer, tmp_path / "out", "my/outer.tgz")
    assert str(exc.value).startswith("my/outer.tgz (charts/sub-0.1.0.tgz): ")
    assert not (tmp_path / "out").exists()


def test_an_archive_file_larger_than_any_chart_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.tgz"
    with huge.open("wb") as fh:
        fh.truncate(chart.LIMITS.compressed_bytes + 1)  # sparse: nothing is read
    with pytest.raises(InputError, match=r"huge.tgz: the chart archive is 100 MiB"):
        chart.resolve(str(huge), tmp_path / "w")


def test_a_normal_chart_passes(tmp_path: Path) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        for info, body in [file_member("t/Chart.yaml", CHART_YAML), file_member("t/values.yaml", b"a: 1\n")]:
            tar.addfile(info, io.BytesIO(body))
    assert chart.check_archive(data.getvalue(), "t.tgz") == "t"


def test_setup_names_the_bomb_inside_the_package_the_user_gave(run: Run, bomb: Path, tmp_path: Path) -> None:
    tiny = tmp_path / "t"
    (tiny / "templates").mkdir(parents=True)
    (tiny / "Chart.yaml").write_bytes(CHART_YAML)
    pkg = tmp_path / "pkg"
    assert run("install", "package", tiny, "--out", pkg).code == 0
    manifest = pkg / "berth-package.yaml"
    body = yamlio.load_file(manifest)[0].body
    (pkg / body["spec"]["chart"]["archive"]).write_bytes(bomb.read_bytes())  # a package someone tampered with
    body["spec"]["chart"]["sha256"] = chart.sha256_file(bomb)
    manifest.write_text(yamlio.dump(body))
    work = tmp_path / "w"
    r = run("install", "setup", "--pull", pkg, "--work-dir", work, "--non-interactive")
    assert r.code == 2 and f"error: {pkg / body['spec']['chart']['archive']}: " in r.err, r.err
    assert "Helm allows one file" in r.err and not work.exists()


def _tree(root: Path) -> dict[str, tuple[bytes | None, int, int]]:
    """Every file and folder under ``root``: content (None for a folder), mode and, for files, mtime."""
    out: dict[str, tuple[bytes | None, int, int]] = {}
    for p in sorted(root.rglob("*")):
        st = p.stat()
        out[p.relative_to(root).as_posix()] = (
            (p.read_bytes(), st.st_mode, int(st.st_mtime)) if p.is_file() else (None, st.st_mode, 0)
        )
    return out


def test_the_scratch_copy_of_a_packed_folder_is_the_archives_content(tmp_path: Path) -> None:
    """safe_extract of the archive pack_folder just wrote writes the files it read; the tree is the one the full
    check-and-unpack gives (names, bytes, modes, times: Helm records file times in the release)."""
    src = tmp_path / "t"
    sub = tgz(
        tmp_path / "sub.tgz", [file_member("sub/Chart.yaml", b"apiVersion: v2\nname: sub\nversion: 1.0.0\n")]
    )
    for rel, data in [("Chart.yaml", CHART_YAML), ("values.yaml", b"a: 1\n"), ("templates/cm.yaml", b"x: 1\n"),
                      ("templates/deep/er/x.yaml", b"y\r\n"), ("charts/sub-1.0.0.tgz", sub.read_bytes()),
                      ("README.md", b"ignored\n"), (".helmignore", b"README.md\n")]:  # fmt: skip
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes(data)
    archive = chart.pack_folder(src, tmp_path / "archive")
    assert chart._PACKED and chart._PACKED[0][0] == archive.read_bytes()
    fast = chart.safe_extract(archive, tmp_path / "fast")
    chart._PACKED.clear()
    full = chart.safe_extract(archive, tmp_path / "full")
    assert fast == tmp_path / "fast" / "t" and full == tmp_path / "full" / "t"
    assert _tree(tmp_path / "fast") == _tree(tmp_path / "full")
    assert "templates/deep/er/x.yaml" in _tree(fast) and "README.md" not in _tree(fast)


def test_an_archive_other_than_the_one_packed_is_checked_and_unpacked(tmp_path: Path) -> None:
    src = tmp_path / "t"
    (src / "templates").mkdir(parents=True)
    (src / "Chart.yaml").write_bytes(CHART_YAML)
    archive = chart.pack_folder(src, tmp_path / "archive")
    archive.write_bytes(zeros_bomb(tmp_path / "bomb.tgz", 6 * MiB, "t/templates/zeros.yaml").read_bytes())
    with pytest.raises(InputError, match=r"'t/templates/zeros.yaml' unpacks to 6 MiB"):
        chart.safe_extract(archive, tmp_path / "out", "given")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"templates/big.yaml": 6},
            r"'t/templates/big.yaml' unpacks to 6 MiB \(6291456 bytes\), more than the 5 MiB",
        ),
        (
            {"charts/sub-0.1.0.tgz": 0},
            r"\(charts/sub-0.1.0.tgz\): archive entry 'sub/templates/zeros.yaml' unpacks",
        ),
        ({"files/a": 4, "files/b": 4, "files/c": 4}, r"more than 200 times its compressed size"),
    ],
    ids=["file", "subchart", "ratio"],
)
def test_a_folder_over_helms_limits_is_refused_as_its_archive_would_be(
    run: Run, tmp_path: Path, files: dict[str, int], message: str
) -> None:
    """A folder chart goes through the same limits as an archive (``files``: MiB of zeros each; 0: a subchart
    archive over the per-file limit): setup refuses it naming the folder, and writes nothing."""
    src = tmp_path / "t"
    (src / "templates").mkdir(parents=True)
    (src / "Chart.yaml").write_bytes(CHART_YAML)
    for rel, mib in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        if mib:
            (src / rel).write_bytes(bytes(mib * MiB))
        else:
            zeros_bomb(src / rel, 6 * MiB, "sub/templates/zeros.yaml")
    work = tmp_path / "w"
    r = run("install", "setup", "--pull", src, "--work-dir", work, "--non-interactive")
    assert r.code == 2 and f"error: {src}" in r.err, r.err
    assert re.search(message, r.err), r.err
    assert not work.exists()
