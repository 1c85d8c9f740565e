"""The report pages the browser tests open, each written the way a user gets it: through the CLI, from real runs.

Clusters of any size are generated here (nodes of three sizes in three zones, some already running a pod) with a
workload of three profiles whose names are long enough to have been cut by the old legend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from berth.cli import main
from berth.kube import yamlio

REPO = Path(__file__).resolve().parents[2]
PROFILES = ("academy-default", "academy-concentrate", "batch-binpack-most-allocated")
SIZES = (("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi"))


def cluster_docs(nodes: int) -> list[dict[str, Any]]:
    """``nodes`` Nodes in three zones, of three sizes; every seventh node already runs a 1-cpu pod."""
    docs: list[dict[str, Any]] = []
    for i in range(1, nodes + 1):
        cpu, mem = SIZES[i % 3]
        name = f"node-{i:04d}" if nodes > 99 else f"node-{i}"
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "topology.kubernetes.io/zone": f"zone-{i % 3}",
                    },
                },
                "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": "110"}},
            }
        )
        if i % 7 == 0:
            docs.append(_pod(f"db-{i}", "infra", {"cpu": "1", "memory": "2Gi"}, node=name))
    return docs


def _pod(
    name: str, namespace: str, requests: dict[str, str], node: str = "", scheduler: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests}}
        ]
    }
    if node:
        spec["nodeName"] = node
    if scheduler:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def workload_docs(pods_per_profile: int, unschedulable: int = 2) -> list[dict[str, Any]]:
    """One Deployment per profile (mixed requests), plus ``unschedulable`` pods that fit no node."""
    docs: list[dict[str, Any]] = []
    requests = (
        {"cpu": "500m", "memory": "1Gi"},
        {"cpu": "250m", "memory": "512Mi"},
        {"cpu": "1", "memory": "3Gi"},
    )
    for profile, req in zip(PROFILES, requests, strict=True):
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": profile, "namespace": "academy"},
                "spec": {
                    "replicas": pods_per_profile,
                    "selector": {"matchLabels": {"app": profile}},
                    "template": {
                        "metadata": {"labels": {"app": profile}},
                        "spec": {
                            "schedulerName": profile,
                            "containers": [
                                {
                                    "name": "main",
                                    "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": req},
                                }
                            ],
                        },
                    },
                },
            }
        )
    docs.append(_pod("probe", "academy", {"cpu": "100m", "memory": "128Mi"}, scheduler=PROFILES[0]))
    for i in range(unschedulable):
        docs.append(_pod(f"huge-{i}", "academy", {"cpu": "64", "memory": "1Gi"}, scheduler=PROFILES[0]))
    return docs


def config_doc(strategy: str = "LeastAllocated") -> dict[str, Any]:
    """Three profiles: the defaults, Concentrate on ``app``, and NodeResourcesFit MostAllocated."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": PROFILES[0],
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": strategy,
                                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                            }
                        },
                    }
                ],
            },
            {
                "schedulerName": PROFILES[1],
                "plugins": {"multiPoint": {"enabled": [{"name": "Concentrate", "weight": 10}]}},
                "pluginConfig": [{"name": "Concentrate", "args": {"labelKey": "app"}}],
            },
            {
                "schedulerName": PROFILES[2],
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                            }
                        },
                    }
                ],
            },
        ],
    }


def write_inputs(root: Path, nodes: int, pods_per_profile: int) -> tuple[Path, Path, Path, Path]:
    """(cluster, workload, config, second config with MostAllocated for the default profile) under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    paths = (root / "nodes.yaml", root / "workload.yaml", root / "least.yaml", root / "most.yaml")
    yamlio.write_atomic(paths[0], yamlio.dump_all(cluster_docs(nodes)))
    yamlio.write_atomic(paths[1], yamlio.dump_all(workload_docs(pods_per_profile)))
    yamlio.write_atomic(paths[2], yamlio.dump(config_doc("LeastAllocated")))
    yamlio.write_atomic(paths[3], yamlio.dump(config_doc("MostAllocated")))
    return paths


def berth(*argv: str | Path) -> None:
    code = main([str(a) for a in argv])
    assert code == 0, f"berth {' '.join(map(str, argv))} exited {code}"


def placement_pages(root: Path) -> dict[str, Path]:
    """simulate --report (4, 40 and 1,000 nodes; with --explain) and compare --report (40 nodes, --explain)."""
    pages: dict[str, Path] = {}
    two = REPO / "examples" / "two-profiles"
    pages["simulate-4"] = root / "simulate-4.html"
    berth(
        "schedule", "simulate", "--config", two / "config.yaml", "--cluster", two / "nodes.yaml",
        "--workload", two / "workload.yaml", "--explain", "packed-*", "-o", "json", "--report", pages["simulate-4"],
    )  # fmt: skip
    for nodes, per in ((40, 40), (1000, 150)):
        cluster, workload, least, most = write_inputs(root / f"in-{nodes}", nodes, per)
        name = f"simulate-{nodes}"
        pages[name] = root / f"{name}.html"
        explain = ["--explain", "academy/probe", "--explain", "academy/huge-0"] if nodes == 40 else []
        berth(
            "schedule", "simulate", "--config", least, "--cluster", cluster, "--workload", workload,
            *explain, "-o", "json", "--report", pages[name],
        )  # fmt: skip
        if nodes == 40:
            pages["compare-40"] = root / "compare-40.html"
            berth(
                "schedule", "compare", "--config", least, "--config", most, "--cluster", cluster,
                "--workload", workload, "--explain", "academy/probe", "-o", "json", "--report", pages["compare-40"],
            )  # fmt: skip
    return pages


def install_pages(root: Path) -> dict[str, Path]:
    """``install apply --report`` of the edge-hooks chart on an embedded cluster: a run that succeeds and one whose
    pre-install Job hook fails (``berth.dev/simulate-failure``), then ``install report`` of the failed receipt."""
    import shutil

    from install.live.conftest import setup_workdir, start_cluster

    template = setup_workdir(root / "setup", REPO / "examples" / "charts" / "edge-hooks", "edge")
    pages: dict[str, Path] = {}
    for name, fail in (("install-ok", False), ("install-failed", True)):
        work = root / name / "work"
        shutil.copytree(template, work)
        if fail:
            hook = work / "out" / "lifecycle" / "pre-install" / "job-edge-migrate.yaml"
            body = yamlio.load_file(hook)[0].body
            body["metadata"].setdefault("annotations", {})["berth.dev/simulate-failure"] = "true"
            yamlio.write_atomic(hook, yamlio.dump(body))
        cluster = start_cluster(root / name / "cluster")
        try:
            pages[name] = root / f"{name}.html"
            args = [
                "install",
                "apply",
                "--work-dir",
                work,
                "--kubeconfig",
                cluster.kubeconfig,
                "--timeout",
                "60s",
            ]
            code = main([str(a) for a in [*args, "--report", pages[name]]])
            assert code == (1 if fail else 0), f"install apply exited {code}"
        finally:
            cluster.stop()
    return pages


def live_page(root: Path) -> Path:
    """``schedule run --report``'s page, from a scheduler that placed a workload of bare Pods on 40 nodes."""
    from berth.schedule import Scheduler, report_live
    from berth.schedule import config as schedconfig

    sched = Scheduler(schedconfig.parse(config_doc()), seed=1)
    for doc in cluster_docs(40):
        (sched.add_node if doc["kind"] == "Node" else sched.add_pod)(doc)
    for i in range(120):
        req = {"cpu": f"{250 * (1 + i % 4)}m", "memory": f"{512 * (1 + i % 3)}Mi"}
        sched.add_pod(_pod(f"web-{i}", "academy", req, scheduler=PROFILES[i % 3]))
    sched.add_pod(_pod("huge-0", "academy", {"cpu": "64"}, scheduler=PROFILES[0]))
    sched.run_until_idle()
    return report_live.write(root / "run-40.html", sched, 12.0)


def demo_page(root: Path) -> Path:
    """The demo's page, its sections filled as a demo run fills them (the demo itself runs in tests/test_demo.py)."""
    from berth.demo import DemoResult, page
    from berth.demo.admin import Traffic
    from berth.demo.shapes import Comparison, Down, ShapeFigures, ThirdCost, Written
    from berth.schedule import Placement

    nodes = [f"node-{i}" for i in range(1, 5)]
    result = DemoResult(
        data_dir=root / "demo", nodes=nodes, profiles=["academy-default", "academy-concentrate"]
    )
    result.placements = [Placement(f"academy/spread-{i}", "academy-default", nodes[i % 4]) for i in range(6)]
    result.placements += [Placement(f"academy/packed-{i}", "academy-concentrate", "node-4") for i in range(6)]
    result.install_lines = [
        "+ Namespace berth-system",
        "+ Deployment berth-system/berth-scheduler",
        "Receipt: " + "x" * 200,
    ]
    result.forbidden = [
        f"missing permission: list {r} (core) cluster-wide -- {'forbidden: User cannot list resource ' * 4}"
        for r in ("nodes", "services", "persistentvolumes", "replicationcontrollers")
    ]
    result.bound_while_forbidden, result.rules_minimal, result.probe_node = 0, 23, "node-2"

    def shape(processes: int) -> ShapeFigures:
        written = Written(
            5 * processes, 399 * processes, {"ServiceAccount": processes, "Deployment": processes}
        )
        down = Down(("the scheduler",), {"academy-default": "", "academy-concentrate": ""}, 0.4)
        return ShapeFigures(
            "x", processes, (25,), written, Traffic(15 * processes, 15 * processes, 33 * processes), (18,), down,
            ThirdCost(6, 0, processes - 1, 0),
        )  # fmt: skip

    result.comparison = Comparison(shape(1), shape(2), window=4.0)
    return page.write(root / "demo.html", result)
