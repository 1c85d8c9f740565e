"""Benchmarks, above the parts: every ``berth bench ...`` command and what it measures, printing figures (never
timed tests). Each may drive several parts -- the install and scheduler benchmarks run on the embedded cluster --
and may time a part's inner steps, which is why it sits here and not inside a part: no part imports it.

- :mod:`.install` / :mod:`.install_cli`: render + split + plan vs ``helm template``; ``--live``: an install apply
- :mod:`.schedule` / :mod:`.schedule_cli`: scheduler_perf's workloads in simulation (``--verify``: the vectorised
  path against the plain plugin forms); :mod:`.schedule_live`: pods bound per second through the API
- :mod:`.cluster` / :mod:`.cluster_cli`: the embedded API server's start-up, creates/s, watch latency, memory

The scripts in ``benchmarks/`` (outside the package) are thin entry points over these modules and the YAML reader.
"""
