"""The strict field reader :mod:`berth.schedule.config` decodes KubeSchedulerConfiguration with: every field
typed (Go pointers: absent or null is None), wrong types and unknown fields reported with their paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.kube import durations
from berth.schedule.plugins import helper

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


class _Fields:
    """Strict reader of one JSON object whose fields are optional (Go pointers): absent or null -> None.

    Every getter records a problem (and returns None) for a wrong type; :meth:`finish` reports unknown fields.
    """

    def __init__(self, raw: Any, path: str, problems: list[str], what: str = "an object") -> None:
        self.path = path
        self.problems = problems
        self.seen: set[str] = set()
        self.ok = True
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            problems.append(self._bad(path, raw, f"must be {what}, not a {_type_name(raw)}"))
            raw = {}
            self.ok = False
        self.raw: Mapping[str, Any] = raw

    @staticmethod
    def _bad(path: str, value: Any, detail: str) -> str:
        if path:
            return helper.invalid(path, value, detail)
        return f"Invalid value: {helper.go_value(value)}: {detail}"

    def at(self, key: str) -> str:
        return _join(self.path, key)

    def take(self, key: str) -> Any:
        self.seen.add(key)
        return self.raw.get(key)

    def present(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def opt_int(self, key: str, bits: int = 32) -> int | None:
        v = self.take(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            self.problems.append(self._bad(self.at(key), v, "must be an integer"))
            return None
        lo, hi = _INT32 if bits == 32 else _INT64
        if not lo <= v <= hi:
            self.problems.append(self._bad(self.at(key), v, f"must fit in a {bits}-bit signed integer"))
            return None
        return v

    def opt_float(self, key: str) -> float | None:
        v = self.take(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            self.problems.append(self._bad(self.at(key), v, "must be a number"))
            return None
        return float(v)

    def opt_str(self, key: str) -> str | None:
        v = self.take(key)
        if v is None:
            return None
        if not isinstance(v, str):
            self.problems.append(self._bad(self.at(key), v, "must be a string"))
            return None
        return v

    def opt_bool(self, key: str) -> bool | None:
        v = self.take(key)
        if v is None:
            return None
        if not isinstance(v, bool):
            self.problems.append(self._bad(self.at(key), v, "must be a boolean (true or false)"))
            return None
        return v

    def opt_duration(self, key: str) -> float | None:
        v = self.take(key)
        if v is None:
            return None
        parsed = durations.parse_duration(v) if isinstance(v, str) else None
        if parsed is None:
            self.problems.append(
                self._bad(self.at(key), v, 'must be a duration string such as "15s" or "1m30s"')
            )
        return parsed

    def opt_list(self, key: str) -> list[Any] | None:
        v = self.take(key)
        if v is None:
            return None
        if not isinstance(v, list):
            self.problems.append(self._bad(self.at(key), v, f"must be a list, not a {_type_name(v)}"))
            return None
        return v

    def finish(self) -> None:
        for key in self.raw:
            if key not in self.seen:
                if self.path:
                    self.problems.append(helper.unknown_field(self.path, str(key)))
                else:
                    self.problems.append(f'unknown field "{key}"')
