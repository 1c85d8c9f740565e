"""Go ``time.Duration`` text, as configuration files and every ``--timeout``-like flag spell durations."""

from __future__ import annotations

import pytest

from berth.kube import durations


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("10s", 10.0),
        ("1m30s", 90.0),
        ("600s", 600.0),
        ("1h", 3600.0),
        ("-5s", -5.0),
        ("0", 0.0),
        ("250ms", 0.25),
    ],
    ids=["seconds", "compound", "600s", "hour", "negative", "bare-zero", "millis"],
)
def test_parse_duration(text: str, want: float) -> None:
    assert durations.parse_duration(text) == pytest.approx(want)


@pytest.mark.parametrize(
    "text", ["", "10", "s", "10x", "1.2.3s"], ids=["empty", "unitless", "no-number", "bad-unit", "junk"]
)
def test_parse_duration_rejects(text: str) -> None:
    assert durations.parse_duration(text) is None


@pytest.mark.parametrize(
    ("seconds", "want"),
    [
        (10.0, "10s"),
        (600.0, "10m0s"),
        (90.0, "1m30s"),
        (-1.0, "-1s"),
        (0.0, "0s"),
        (0.5, "500ms"),
        (1.5, "1.5s"),
        (3725.0, "1h2m5s"),
    ],
    ids=["10s", "10m", "90s", "negative", "zero", "millis", "fraction", "hours"],
)
def test_format_duration_like_go(seconds: float, want: str) -> None:
    assert durations.format_duration(seconds) == want
