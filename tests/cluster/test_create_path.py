"""The create path's shortcuts keep what clients see: uids stay unique across a fork, one timestamp per create."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from berth.cluster import objmeta
from berth.cluster.api import Api
from berth.cluster.store import Store


def test_a_forked_child_draws_other_uids_than_its_parent() -> None:
    objmeta.new_uid()  # the pool now holds digits both processes would share without the fork hook
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next uids and leave at once
        try:
            os.write(write, ",".join(objmeta.new_uid() for _ in range(3)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        child = fh.read().decode().split(",")
    os.waitpid(pid, 0)
    parent = [objmeta.new_uid() for _ in range(3)]
    assert len(child) == 3 and not set(child) & set(parent)


def test_uids_keep_coming_past_one_draw_of_random_bytes() -> None:
    uids = [objmeta.new_uid() for _ in range(3 * objmeta.UID_BYTES // 16 + 7)]
    assert len(set(uids)) == len(uids)
    assert {u[14] for u in uids} == {"4"} and {u[19] for u in uids} <= set("89ab")


def test_a_create_stamps_creation_and_managed_fields_with_one_time() -> None:
    ticks = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in range(1000))
    api = Api(Store(), clock=lambda: next(ticks))
    created = api.create("configmaps", {"metadata": {"name": "a"}, "data": {"k": "v"}}, namespace="default")
    meta = created["metadata"]
    assert [e["time"] for e in meta["managedFields"]] == [meta["creationTimestamp"]]
    assert meta["managedFields"][0]["fieldsV1"] == {"f:data": {".": {}, "f:k": {}}}
