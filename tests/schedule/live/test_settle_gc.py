"""``berth schedule run``'s process settles its collector once the informers have synced (``settle_gc``); a
scheduler embedded in another process (the cluster's default-scheduler, tests) leaves the collector alone."""

from __future__ import annotations

import gc

from .conftest import Env, eventually, pod
from .test_faults import PROFILE, bound_names, one_profile


def test_settle_gc_freezes_what_the_informers_loaded_and_schedules_as_before(env: Env) -> None:
    threshold = gc.get_threshold()
    gc.unfreeze()
    try:
        plain = env.scheduler(one_profile())
        with plain:
            assert plain.wait_synced(30)
            assert gc.get_freeze_count() == 0 and gc.get_threshold() == threshold
        settled = env.scheduler(one_profile(), settle_gc=True)
        with settled:
            assert settled.wait_synced(30)
            assert gc.get_freeze_count() > 0 and gc.get_threshold() == (10_000, 20, 20)
            env.create(pod("after-settling", scheduler=PROFILE))
            eventually(lambda: "after-settling" in bound_names(env.pods("default")), 30, "the pod bound")
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
