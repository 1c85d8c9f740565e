"""YAML loader benchmark: ``python benchmarks/bench_yamlio.py [FILE ...] [--objects N] [--repeat R]``.

Times :func:`berth.kube.yamlio.load_documents` (Kubernetes' reading rules) and :func:`~berth.kube.yamlio.dump_all`
on FILE (a chart render, a CRD bundle) or, with no file, on a synthetic render of N Deployments, next to PyYAML's
own C loader on the same text as the floor any Python loader starts from. Prints the best of R runs and the
machine's load average, since figures on a shared machine mean little without it.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from berth.kube import yamlio


def synthetic(objects: int) -> str:
    """A render shaped like a real chart's: Deployments with labels, probes, env and resources."""
    docs = []
    for i in range(objects):
        docs.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"app-{i}", "labels": {"app": f"app-{i}", "tier": "web"}},
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": f"app-{i}"}},
                    "template": {
                        "metadata": {"labels": {"app": f"app-{i}"}, "annotations": {"checksum": "ab" * 16}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "main",
                                    "image": f"registry.example/app:{i}.0.1",
                                    "args": ["--port=8080", "--verbose", "--enable-feature=yes"],
                                    "env": [{"name": f"VAR_{k}", "value": str(k)} for k in range(6)],
                                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                                }
                            ]
                        },
                    },
                },
            }
        )
    return yamlio.dump_all(docs)


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(name: str, text: str, repeat: int) -> None:
    size_mb = len(text.encode()) / 1e6
    docs = yamlio.load_documents(text, name)
    load = best(lambda: yamlio.load_documents(text, name), repeat)
    dump = best(lambda: yamlio.dump_all(d.body for d in docs), repeat)
    try:
        floor = best(lambda: list(yaml.load_all(text, Loader=yaml.CSafeLoader)), repeat)
        floor_text = f"{floor:.3f} s"
    except yaml.YAMLError as exc:  # e.g. `- =` in kube-prometheus-stack's CRDs
        floor_text = f"refuses the file ({str(exc).splitlines()[0]})"
    print(f"{name}: {size_mb:.2f} MB, {len(docs)} documents")
    print(f"  yamlio.load_documents  {load:.3f} s  ({size_mb / load:.2f} MB/s)")
    print(f"  yamlio.dump_all        {dump:.3f} s")
    print(f"  PyYAML CSafeLoader     {floor_text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    if not args.files:
        measure(f"synthetic render ({args.objects} Deployments)", synthetic(args.objects), args.repeat)
    for path in args.files:
        measure(str(path), path.read_text(encoding="utf-8"), args.repeat)


if __name__ == "__main__":
    main()
