"""Go ``time.Duration`` text (``metav1.Duration`` in configuration): parse and format as Go does.

Why on the floor: the scheduler configuration's decoder, the waiting-pods messages and plugin args spell durations,
and so does every duration flag of the command line (``--timeout 5m``, through ``berth.cliopts``): one parser for
all of them, below every part.
"""

from __future__ import annotations

import re

_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_duration(text: str) -> float | None:
    """Seconds of a Go duration string (``1m30s``, ``-5s``, ``0``); None when malformed."""
    s = text.strip()
    sign = 1.0
    if s[:1] in "+-" and s:
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        return None
    total = 0.0
    pos = 0
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s):
        return None
    return sign * total


def format_duration(seconds: float) -> str:
    """Go ``time.Duration.String``: ``10s``, ``1m30s``, ``10m0s``, ``1.5s``, ``500ms``, ``-1s``, ``0s``."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:  # below a second Go switches to ms / µs / ns
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return f"{sign}{_trim(nanos / size)}{unit}"
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    secs = f"{_trim(rest / 1e9)}s"
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}"
    if minutes:
        return f"{sign}{minutes}m{secs}"
    return f"{sign}{secs}"


def _trim(x: float) -> str:
    return f"{x:.9f}".rstrip("0").rstrip(".")
