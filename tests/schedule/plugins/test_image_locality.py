"""ImageLocality: image_locality_test.go vectors (2 nodes: 0 / 5 / 7), clamps, init containers, and the fallback
that derives image spread from the snapshot when the cache left ``image_states`` empty."""

from __future__ import annotations

import pytest

from berth.schedule.framework.types import NodeInfo, PodInfo
from berth.schedule.plugins import image_locality as il

from .support import FakeHandle, container, fill_image_states, node, pod, run_score

MB = 1024 * 1024


def image_pod(*images: str, init: tuple[str, ...] = ()) -> PodInfo:
    return pod(
        containers=[container(name=f"c{i}", image=img) for i, img in enumerate(images)],
        init_containers=[container(name=f"i{i}", image=img) for i, img in enumerate(init)],
    )


def cluster() -> list[NodeInfo]:
    """upstream: node 1 holds gcr.io/40 (40 MB) and gcr.io/300 (300 MB); node 2 gcr.io/250 and gcr.io/10:v1."""
    return [
        node(
            "machine1",
            images=[
                (["gcr.io/40:latest", "gcr.io/40:v1"], 40 * MB),
                (["gcr.io/300:latest"], 300 * MB),
                (["gcr.io/2000:latest"], 2000 * MB),
            ],
        ),
        node("machine2", images=[(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:v1"], 10 * MB)]),
    ]


@pytest.mark.parametrize(
    ("incoming", "want"),
    [
        # 40 MB on 1 of 2 nodes -> 20 MB < 23 MB -> 0; 250 MB -> 125 MB -> 100*(125-23)/(2000-23) = 5
        (image_pod("gcr.io/40", "gcr.io/250"), [0, 5]),
        # 40 + 300 MB on node 1 -> 20 + 150 = 170 MB -> 100*147/1977 = 7
        (image_pod("gcr.io/40", "gcr.io/300"), [7, 0]),
        # a 2000 MB image on half the nodes -> 1000 MB == the one-container ceiling -> 100
        (image_pod("gcr.io/2000"), [100, 0]),
        # untagged and ':latest' are the same image; tags differ otherwise
        (image_pod("gcr.io/300:latest"), [il.calculate_priority(150 * MB, 1), 0]),
        (image_pod("gcr.io/10"), [0, 0]),
        # init containers count, and count as containers for the ceiling
        (image_pod("gcr.io/250", init=("gcr.io/300",)), [il.calculate_priority(150 * MB, 2), 5]),
        (image_pod("nothing/here"), [0, 0]),
    ],
    ids=[
        "upstream-0-5",
        "upstream-7",
        "ceiling",
        "latest-normalised",
        "tag-mismatch",
        "init-containers",
        "absent",
    ],
)
@pytest.mark.parametrize("cache_filled", [True, False], ids=["cache-filled", "snapshot-fallback"])
def test_score(incoming: PodInfo, want: list[int], cache_filled: bool) -> None:
    nodes = cluster()
    if cache_filled:
        fill_image_states(nodes)
    assert run_score(il.ImageLocality(None, FakeHandle(nodes)), incoming, nodes) == want


def test_spread_damps_common_images() -> None:
    nodes = [node(f"n{i}", images=[(["big:1"], 500 * MB)]) for i in range(4)] + [node("bare")]
    fill_image_states(nodes)
    # 500 MB on 4 of 5 nodes -> 400 MB -> 100*(400-23)/(1000-23) = 38
    assert run_score(il.ImageLocality(None, FakeHandle(nodes)), image_pod("big:1"), nodes) == [
        38,
        38,
        38,
        38,
        0,
    ]


@pytest.mark.parametrize(
    ("total", "containers", "want"),
    [(0, 1, 0), (23 * MB, 1, 0), (5000 * MB, 1, 100), (1000 * MB, 2, 49), (0, 0, 0)],
    ids=["below-min", "at-min", "above-max", "two-containers", "no-containers"],
)
def test_calculate_priority(total: int, containers: int, want: int) -> None:
    assert il.calculate_priority(total, containers) == want
