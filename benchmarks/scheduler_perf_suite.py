"""Every scheduler_perf-like workload of ``berth bench schedule``, each in a process of its own, as one table.

Usage: ``python benchmarks/scheduler_perf_suite.py [--verify] [--workload NAME]... [--json]``

Why a process per workload: peak memory (``ru_maxrss``) is a process's high-water mark, so workloads run one after
another in one process would each report the largest so far; and a fresh process gives each the same start (no
caches or frozen objects left by the one before).

Each row compares the wall pods/s with the threshold of the upstream scheduler_perf test it mirrors (a lower bound
upstream CI asserts for kube-scheduler on its own machines) -- only at that test's sizes, which are the defaults.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from berth.bench.schedule import WORKLOADS


def run_one(name: str, verify: bool) -> dict[str, object]:
    cmd = [sys.executable, "-m", "berth.cli", "bench", "schedule", "--workload", name, "-o", "json"]
    if verify:
        cmd.append("--verify")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"workload": name, "error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    doc: dict[str, object] = json.loads(done.stdout)
    return doc


def row(doc: dict[str, object]) -> str:
    if "error" in doc:
        return f"| {doc['workload']} | error: {doc['error']} |"
    threshold = doc.get("threshold")
    rate = float(str(doc["podsPerSecond"]))
    verdict = "" if threshold is None else ("met" if rate >= float(str(threshold)) else "below")
    mismatches = doc.get("mismatches")
    checked = "" if mismatches is None else f"{mismatches}/{doc['verified']}"
    return (
        f"| {doc['workload']} | {doc['nodes']} / {doc['initPods']} / {doc['pods']} | {doc['scheduled']} | "
        f"{rate:,.0f} | {float(str(doc['podsPerCpuSecond'])):,.0f} | {threshold if threshold is not None else '-'} "
        f"| {verdict} | {checked} | {doc['peakMemoryMiB']} | {doc['loadAverage']} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS), help="default: all of them")
    parser.add_argument("--verify", action="store_true", help="also re-run a sample on the reference path")
    parser.add_argument("--json", action="store_true", help="one JSON document per line instead of the table")
    args = parser.parse_args()
    names = args.workload or list(WORKLOADS)
    if not args.json:
        print("| workload | nodes / init / measured | scheduled | pods/s | pods per CPU s | upstream threshold | "
              "| mismatches | peak MiB | load |")  # fmt: skip
        print("|---|---|---:|---:|---:|---:|---|---|---:|---:|")
    for name in names:
        doc = run_one(name, args.verify)
        print(json.dumps(doc) if args.json else row(doc), flush=True)


if __name__ == "__main__":
    main()
