"""Object-metadata primitives every cluster module stamps or reads: times, uids, JSON copies, object keys.

They sit below the API, admission, authentication and CRD modules (none of which import each other through
here), so any of them can stamp a ``creationTimestamp`` or copy an object without importing :mod:`berth.cluster.api`.
"""

from __future__ import annotations

import copy
import os
import time
from datetime import UTC, datetime
from typing import Any

from berth.cluster import jsonfast
from berth.kube.objects import Obj
from berth.kube.objects import ns_name_key as ns_name_key  # the one object key (re-exported for cluster code)
from berth.kube.objects import object_key as object_key
from berth.kube.objects import split_key as split_key


def utcnow() -> datetime:
    return datetime.now(UTC)


# One (second, text) pair, replaced whole, so two threads never combine one second with another's text.
_TIME_CACHE: list[tuple[int, str]] = [(-1, "")]


def format_time(t: datetime) -> str:
    """Kubernetes ``Time``: second precision, ``Z`` suffix (cached per second: every write stamps one)."""
    if t.tzinfo is UTC:
        sec = int(t.timestamp())
        cached_sec, text = _TIME_CACHE[0]
        if cached_sec != sec:
            text = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            _TIME_CACHE[0] = (sec, text)
        return text
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cached_now_text() -> str | None:
    """The real clock's time as ``Time`` text when format_time's per-second cache holds this second (no datetime
    object per write), else None."""
    cached_sec, text = _TIME_CACHE[0]
    return text if cached_sec == int(time.time()) else None


def format_micro_time(t: datetime) -> str:
    """Kubernetes ``MicroTime``: six fraction digits."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


UID_BYTES = 4096
# The variant digit of a version 4 UUID (RFC 9562: bits 10xx): a random digit's low two bits under 8.
_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}
_UIDS: list[str] = []
"""Uids made ahead, 128 from each 4 KiB of ``os.urandom`` (the randomness ``uuid.uuid4`` uses): one ``getrandom``
system call per 128 uids instead of one per uid. ``list.pop`` and ``list.extend`` are atomic, so threads need no
lock: two that find it empty at once both add a batch of fresh uids."""
os.register_at_fork(after_in_child=_UIDS.clear)  # a forked child must not hand out its parent's uids


def _make_uids() -> None:
    """Format a batch: as in ``uuid4``, of 32 random hex digits the 13th becomes the version (4) and the 17th keeps
    two random bits under the variant bits, so 122 bits are random."""
    t = os.urandom(UID_BYTES).hex()
    _UIDS.extend(
        [
            f"{t[p : p + 8]}-{t[p + 8 : p + 12]}-4{t[p + 13 : p + 16]}-"
            f"{_VARIANT[t[p + 16]]}{t[p + 17 : p + 20]}-{t[p + 20 : p + 32]}"
            for p in range(0, len(t), 32)
        ]
    )


def new_uid() -> str:
    """A random (version 4) UUID as text, like ``str(uuid.uuid4())`` without building a UUID object."""
    while True:
        try:
            return _UIDS.pop()
        except IndexError:
            _make_uids()


def loads(text: str) -> Obj:
    """A stored object's JSON text, decoded."""
    out: Obj = jsonfast.loads(text)
    return out


def copy_obj(obj: Obj) -> Obj:
    """A deep copy of a JSON object (a JSON round trip is several times faster than ``copy.deepcopy``)."""
    try:
        out: Obj = jsonfast.loads(jsonfast.dumps_bytes(obj))
    except (TypeError, ValueError):
        return copy.deepcopy(obj)
    return out


def meta_of(obj: Obj) -> dict[str, Any]:
    """``obj.metadata``, created (and put in place) when missing or not an object."""
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m
