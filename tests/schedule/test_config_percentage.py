"""The adaptive ``percentageOfNodesToScore`` (spec 2.6): how many feasible nodes Filter looks for."""

from __future__ import annotations

import pytest

from berth.schedule.percentage import adaptive_percentage, num_feasible_nodes_to_find

# Spec 2.6 table: N -> (adaptive percentage, k).
TABLE = [
    (100, 50, 100),
    (500, 46, 230),
    (1000, 42, 420),
    (2000, 34, 680),
    (3000, 26, 780),
    (4000, 18, 720),
    (5000, 10, 500),
    (6000, 5, 300),
    (15000, 5, 750),
]


@pytest.mark.parametrize(("n", "percentage", "k"), [pytest.param(*row, id=f"N={row[0]}") for row in TABLE])
def test_spec_table(n: int, percentage: int, k: int) -> None:
    assert adaptive_percentage(n) == percentage
    assert num_feasible_nodes_to_find(n, 0, None, True) == k


@pytest.mark.parametrize(
    ("n", "global_p", "profile_p", "scores", "extenders", "k"),
    [
        pytest.param(50, 0, None, True, False, 50, id="below-100-all"),
        pytest.param(99, 10, None, True, False, 99, id="99-all-whatever-the-percentage"),
        pytest.param(1000, 30, None, True, False, 300, id="global-percentage"),
        pytest.param(1000, 30, 60, True, False, 600, id="profile-beats-global"),
        pytest.param(1000, 30, 0, True, False, 420, id="profile-zero-is-adaptive"),
        pytest.param(1000, 5, None, True, False, 100, id="at-least-100"),
        pytest.param(5000, 100, None, True, False, 5000, id="hundred-percent"),
        pytest.param(5000, 0, None, False, False, 1, id="no-score-plugins-first-feasible"),
        pytest.param(50, 0, 100, False, False, 1, id="no-score-small-cluster"),
        pytest.param(5000, 0, None, False, True, 500, id="extenders-keep-searching"),
        pytest.param(0, 0, None, True, False, 0, id="no-nodes"),
        pytest.param(2001, 0, None, True, False, 680, id="integer-division"),
    ],
)
def test_cases(n: int, global_p: int, profile_p: int | None, scores: bool, extenders: bool, k: int) -> None:
    assert num_feasible_nodes_to_find(n, global_p, profile_p, scores, has_extenders=extenders) == k
