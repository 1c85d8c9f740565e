"""Charts that use randomness (``randAlphaNum``, ``genCA``, ``genSelfSignedCert``, ``uuidv4``, ``now``).

Every render runs twice; when the outputs differ, the two are compared object by object and the fields that differ
are named (``Secret monitoring/x-grafana: data.admin-password``). The objects themselves must be the same two
times (a random *name* cannot be reviewed or planned: that is refused, naming the objects). Setup then goes on with
the first render -- the one it records and that ``apply`` applies, as Helm applies the render it made -- and writes
the fields to ``W/out/spec/random.yaml``:

* ``verify`` compares with those fields masked in both renders, and says which;
* ``status`` does not count them as drift;
* an object whose template calls ``lookup`` (the chart reads its own live Secret and keeps it, as grafana does for
  its admin password) keeps the live value of those fields when it is applied again: ``helm upgrade`` runs that
  ``lookup`` against the cluster, berth renders offline, so the apply carries the live value over instead.
"""

from __future__ import annotations

import base64
import binascii
import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.install import layout
from berth.install import split as split_mod
from berth.kube import yamlio
from berth.kube.errors import InputError

RANDOM_FILE = "random.yaml"
"""``W/out/spec/random.yaml``."""
MASK = "(random in the chart's render)"

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class RandomFields:
    """The fields of one object that differ between two renders of the same input."""

    key: str
    """``Kind|namespace|name`` (the namespace as the render writes it, possibly empty)."""
    label: str
    paths: tuple[Path_, ...]
    keep_live: bool = False
    """Its template calls ``lookup``: an apply keeps the live values of these fields."""


def show(path: Path_) -> str:
    """``data.admin-password``, ``spec.containers[0].env[1].value``, ``metadata.annotations["checksum/x"]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("-", "").replace("_", "").isalnum():
            out += f".{part}" if out else part
        else:
            out += f'["{part}"]'
    return out


def differing(a: Any, b: Any, path: Path_ = ()) -> list[Path_]:
    """Every leaf path where ``a`` and ``b`` differ (a list of another length, or a type change, is one path)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[Path_] = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append((*path, str(k)))
            else:
                out += differing(a[k], b[k], (*path, str(k)))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for n, (x, y) in enumerate(zip(a, b, strict=True)) for p in differing(x, y, (*path, n))]
    return [] if a == b else [path]


def key_of(o: split_mod.RenderedObject) -> str:
    """``Kind|namespace|name``: the key ``W/out/spec/random.yaml`` is written with. A file format, so it keeps this
    shape rather than the one identity's (:class:`berth.kube.objects.Ref`, which puts the group first)."""
    return f"{o.kind}|{o.namespace}|{o.name}"


def compare(first: str, second: str, where: str) -> tuple[RandomFields, ...]:
    """The fields that differ between two renders of the same chart and values; refuses renders whose objects
    differ in identity (random names), naming them."""
    one = {key_of(o): o for o in split_mod.parse_render(first)}
    two = {key_of(o): o for o in split_mod.parse_render(second)}
    if set(one) != set(two):
        odd = sorted(set(one) ^ set(two))
        raise InputError(
            "two renders of the same chart and values render different objects (a name uses randomness or the "
            f"clock): {', '.join(k.replace('|', ' ', 1).replace('|', '/') for k in odd[:5])}; give that value "
            "yourself (--set or -f) so the render is reproducible",
            where,
        )
    out = []
    for key, o in one.items():
        paths = differing(o.body, two[key].body)
        if paths:
            label = f"{o.kind} {o.namespace}/{o.name}" if o.namespace else f"{o.kind} {o.name}"
            out.append(RandomFields(key, label, tuple(paths)))
    return tuple(out)


def lines(fields: tuple[RandomFields, ...]) -> list[str]:
    """One line per object for setup's output."""
    out = []
    for f in fields:
        what = ", ".join(show(p) for p in f.paths[:4]) + (
            f" (+{len(f.paths) - 4} more)" if len(f.paths) > 4 else ""
        )
        verb = "differs" if len(f.paths) == 1 else "differ"
        line = (
            f"{f.label}: {what} {verb} between renders (the chart uses randomness); berth applies the render it "
            "recorded, as Helm applies the one it made; to make the render reproducible, give the value yourself "
            "(--set or -f)"
        )
        if f.keep_live:
            line += "; its template calls lookup, so an apply keeps the live value, as helm upgrade would"
        out.append(line)
    return out


def merge(*groups: tuple[RandomFields, ...]) -> tuple[RandomFields, ...]:
    """One entry per object over several renders (the install and ``--is-upgrade`` variants)."""
    found: dict[str, RandomFields] = {}
    for group in groups:
        for f in group:
            have = found.get(f.key)
            paths = tuple(dict.fromkeys([*(have.paths if have else ()), *f.paths]))
            found[f.key] = RandomFields(f.key, f.label, paths, f.keep_live or bool(have and have.keep_live))
    return tuple(found.values())


def write(spec_dir: Path, fields: tuple[RandomFields, ...]) -> None:
    path = spec_dir / RANDOM_FILE
    if not fields:
        return
    doc = {
        "apiVersion": layout.API_VERSION,
        "kind": "RandomFields",
        "metadata": {"name": "random"},
        "spec": {
            "objects": [
                {
                    "object": f.key,
                    "fields": [list(p) for p in f.paths],
                    **({"keepLive": True} if f.keep_live else {}),
                }
                for f in fields
            ]
        },
    }
    path.write_text(yamlio.dump(doc), encoding="utf-8")


def read(spec_dir: Path) -> dict[str, RandomFields]:
    """The recorded random fields of a render, by object key (empty when its renders were reproducible)."""
    path = spec_dir / RANDOM_FILE
    if not path.is_file():
        return {}
    docs = yamlio.load_file(path)
    spec = (docs[0].body or {}).get("spec") if docs and isinstance(docs[0].body, dict) else None
    out = {}
    for item in (spec or {}).get("objects") or []:
        key = str(item.get("object") or "")
        kind, ns, name = [*key.split("|"), "", ""][:3]
        label = f"{kind} {ns}/{name}" if ns else f"{kind} {name}"
        paths = tuple(tuple(p) for p in item.get("fields") or [] if isinstance(p, list))
        out[key] = RandomFields(key, label, paths, bool(item.get("keepLive")))
    return out


def masked(body: dict[str, Any], paths: tuple[Path_, ...]) -> dict[str, Any]:
    """A copy of ``body`` with each path's value replaced by :data:`MASK` (where it exists)."""
    out = copy.deepcopy(body)
    for path in paths:
        node: Any = out
        for part in path[:-1]:
            node = _child(node, part)
            if node is None:
                break
        if node is not None and _child(node, path[-1]) is not None:
            node[path[-1]] = MASK
    return out


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, dict) and isinstance(part, str):
        return node.get(part)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None


def _live_value(live: dict[str, Any], path: Path_) -> Any:
    """The live value at ``path``; a Secret's ``stringData.K`` is read back from ``data.K`` (base64)."""
    if live.get("kind") == "Secret" and len(path) == 2 and path[0] == "stringData":
        raw = (live.get("data") or {}).get(path[1])
        try:
            return base64.b64decode(str(raw)).decode("utf-8") if raw is not None else None
        except (binascii.Error, UnicodeDecodeError):
            return None
    value: Any = live
    for part in path:
        value = _child(value, part)
        if value is None:
            break
    return value


def keep_live(body: dict[str, Any], live: dict[str, Any], paths: tuple[Path_, ...]) -> dict[str, Any]:
    """``body`` with the live object's value at each path (the value a chart's ``lookup`` would have kept)."""
    out = copy.deepcopy(body)
    for path in paths:
        value = _live_value(live, path)
        parent: Any = out
        for part in path[:-1]:
            parent = _child(parent, part)
            if parent is None:
                break
        if value is not None and parent is not None and _child(parent, path[-1]) is not None:
            parent[path[-1]] = value
    return out
