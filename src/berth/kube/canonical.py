"""Canonical form of objects for comparison: what ``install verify`` and drift checks compare.

Two renders are "the same object" when they are equal after dropping nulls, empty maps/lists and empty
labels/annotations and sorting keys -- the differences YAML round-trips and templating introduce.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonicalize(value: Any) -> Any:
    """Recursively drop ``None``, ``{}`` and ``[]`` values from mappings; keep list order."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k in sorted(value, key=str):
            v = canonicalize(value[k])
            if v is None or v == {} or v == []:
                continue
            out[str(k)] = v
        return out
    if isinstance(value, list):
        return [canonicalize(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Sorted-key, compact JSON of the canonical form."""
    return json.dumps(
        canonicalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )


def sha256_text(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()
