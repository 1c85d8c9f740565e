"""The pieces every printer is made of: columns, printers, ages and durations as kubectl shows them, and the small
cell helpers (labels, selectors, template containers, conditions)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

Obj = dict[str, Any]
Cells = list[Any]


# -- time -----------------------------------------------------------------------------------------------------------


def parse_time(value: Any) -> dt.datetime | None:
    """RFC 3339 / Python ``isoformat`` text to an aware datetime (None when absent or unparseable)."""
    if not isinstance(value, str) or not value:
        return None
    return _parse_time_text(value)


@lru_cache(maxsize=8192)
def _parse_time_text(value: str) -> dt.datetime | None:
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def human_duration(delta: dt.timedelta) -> str:
    """Upstream ``duration.HumanDuration``."""
    seconds = int(delta.total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def age(value: Any, now: dt.datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for a missing timestamp."""
    when = parse_time(value)
    return "<unknown>" if when is None else human_duration(now - when)


def rfc3339(value: Any) -> str:
    when = parse_time(value)
    if when is None:
        return "0001-01-01T00:00:00Z"
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- columns ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


NAME = Column("Name", "string", "Name must be unique within a namespace.", format="name")
AGE = Column(
    "Age",
    "string",
    "CreationTimestamp is a timestamp representing the server time when this object was created.",
)
CREATED_AT = Column("Created At", "date", AGE.description)


def wide(name: str, description: str = "", type_: str = "string") -> Column:
    return Column(name, type_, description, priority=1)


CONTAINERS = wide("Containers", "Names of each container in the template.")
IMAGES = wide("Images", "Images referenced by each container in the template.")
SELECTOR = wide("Selector", "Label selector for pods.")


def dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def or_none(value: Any) -> str:
    return str(value) if value not in (None, "", [], {}) else "<none>"


def format_labels(labels: Mapping[str, Any] | None) -> str:
    """``labels.FormatLabels``: ``a=1,b=2`` (sorted), ``<none>`` when empty."""
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """``metav1.LabelSelectorAsSelector(...).String()``: ``app=web,tier in (a,b)``; ``<none>`` when empty."""
    if not isinstance(selector, Mapping):
        return "<none>"
    parts: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        parts.append((str(key), f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        key = str(expr.get("key", ""))
        op = expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        if op == "In":
            parts.append((key, f"{key} in ({values})"))
        elif op == "NotIn":
            parts.append((key, f"{key} notin ({values})"))
        elif op == "Exists":
            parts.append((key, key))
        elif op == "DoesNotExist":
            parts.append((key, f"!{key}"))
    if not parts:
        return "<none>"
    return ",".join(text for _, text in sorted(parts))


def template_containers(obj: Any, *path: str) -> tuple[str, str]:
    containers = dig(obj, *path, "containers") or []
    names = ",".join(str(c.get("name", "")) for c in containers if isinstance(c, Mapping))
    images = ",".join(str(c.get("image", "")) for c in containers if isinstance(c, Mapping))
    return names, images


def has_condition(obj: Any, cond_type: str) -> bool:
    return any(
        isinstance(c, Mapping) and c.get("type") == cond_type and c.get("status") == "True"
        for c in dig(obj, "status", "conditions") or []
    )


# -- printers -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Printer:
    """Columns of one kind and the function computing a row's cells."""

    columns: tuple[Column, ...]
    cells: Callable[[Obj, dt.datetime], Cells]
