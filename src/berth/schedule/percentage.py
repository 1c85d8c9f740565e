"""How many feasible nodes a scheduling cycle looks for before it stops filtering (``percentageOfNodesToScore``).

Why it exists: on large clusters kube-scheduler does not filter every node; it stops once it has found enough
feasible ones, and that number adapts to the cluster size. The arithmetic is Go ``int32`` (non-negative here, so
``//`` equals Go's truncating division). Upstream: ``schedule_one.go`` ``numFeasibleNodesToFind`` and the
``numNodesToFind = 1`` short cut in ``findNodesThatPassFilters``.
"""

from __future__ import annotations

# Below this many nodes every node is considered; never look for fewer than this many (upstream constants).
MIN_FEASIBLE_NODES_TO_FIND = 100
# The adaptive percentage never drops below this.
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# The adaptive percentage starts here and loses one point per 125 nodes.
BASE_PERCENTAGE = 50


def adaptive_percentage(num_all_nodes: int) -> int:
    """The percentage used when none is configured (0): ``max(50 - N/125, 5)``."""
    return max(BASE_PERCENTAGE - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)


def num_feasible_nodes_to_find(
    num_all_nodes: int,
    percentage_global: int,
    percentage_profile: int | None,
    has_score_plugins: bool,
    *,
    has_extenders: bool = False,
) -> int:
    """The number of feasible nodes after which Filter stops, for one pod of one profile.

    Args:
        num_all_nodes: nodes handed to Filter (the snapshot, or the subset a PreFilterResult allows).
        percentage_global: top-level ``percentageOfNodesToScore`` (0 = adaptive).
        percentage_profile: the profile's ``percentageOfNodesToScore``; ``None`` means "use the global one".
        has_score_plugins: the profile has at least one Score plugin.
        has_extenders: an extender filters or prioritizes (keeps the search going like a Score plugin does).

    Returns:
        1 when nothing would rank the nodes (no Score plugins, no extenders): the first feasible node wins.
        Otherwise all nodes below 100; else ``N * p / 100`` but at least 100. 0 for an empty node list.
    """
    if num_all_nodes <= 0:
        return 0
    if not has_score_plugins and not has_extenders:
        return 1
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = percentage_profile if percentage_profile is not None else percentage_global
    if percentage == 0:
        percentage = adaptive_percentage(num_all_nodes)
    num_nodes = num_all_nodes * percentage // 100
    return max(num_nodes, MIN_FEASIBLE_NODES_TO_FIND)
