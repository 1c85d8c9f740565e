"""Install benchmark as a script: ``python benchmarks/bench_install.py [CHART] [--objects N] [--repeat R]``.

Same measurement as ``berth bench install`` (render + split + plan vs ``helm template`` alone, same run), for
sweeping chart sizes: with no chart it runs the synthetic chart at 100, 500 and 2000 objects.
"""

from __future__ import annotations

import argparse
import json

from berth.bench import install as bench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("chart", nargs="?")
    parser.add_argument("--objects", type=int, action="append", help="synthetic chart size (repeatable)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [0] if args.chart else (args.objects or [100, 500, 2000])
    for n in sizes:
        figures = bench.run(args.chart, n, args.repeat)
        print(json.dumps(figures) if args.json else "\n".join(bench.text(figures)) + "\n")


if __name__ == "__main__":
    main()
