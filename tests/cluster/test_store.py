"""Store: global revision, event log, compaction boundary, persistence across reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.cluster import store as S


def test_every_write_bumps_one_global_revision() -> None:
    st = S.Store()
    a = st.put("configmaps", "default", "a", {"metadata": {"name": "a"}}, "ADDED")
    b = st.put("secrets", "default", "b", {"metadata": {"name": "b"}}, "ADDED")
    c = st.remove("configmaps", "default", "a", {"metadata": {"name": "a"}})
    assert (a, b, c) == (1, 2, 3)
    assert st.revision == 3
    assert st.get("configmaps", "default", "a") is None
    assert [e.type for e in st.events_after(0)] == ["ADDED", "ADDED", "DELETED"]


def test_events_after_returns_only_newer_entries_with_previous_value() -> None:
    st = S.Store()
    st.put("configmaps", "ns", "a", {"metadata": {"name": "a"}, "data": {"v": "1"}}, "ADDED")
    st.put("configmaps", "ns", "a", {"metadata": {"name": "a"}, "data": {"v": "2"}}, "MODIFIED")
    events = st.events_after(1)
    assert [e.rv for e in events] == [2]
    assert '"v":"1"' in (events[0].prev or "")


def test_compaction_makes_old_revisions_gone() -> None:
    st = S.Store(retain=5)
    for i in range(20):
        st.put("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}"}}, "ADDED")
    assert st.compact() == 15
    with pytest.raises(S.Compacted) as info:
        st.events_after(3)
    assert "too old resource version: 3 (16)" in str(info.value)
    assert [e.rv for e in st.events_after(15)] == [16, 17, 18, 19, 20]


def test_objects_and_log_survive_reopen(tmp_path: Path) -> None:
    st = S.open_store(tmp_path)
    st.put("configmaps", "ns", "a", {"metadata": {"name": "a"}}, "ADDED")
    st.put("configmaps", "ns", "b", {"metadata": {"name": "b"}}, "ADDED")
    st.close()
    again = S.open_store(tmp_path)
    assert again.revision == 2
    assert again.get("configmaps", "ns", "b") is not None
    assert [e.name for e in again.events_after(1)] == ["b"]
    items, rv = again.list("configmaps")
    assert [n for _ns, n, _e in items] == ["a", "b"] and rv == 2


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "store.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(S.StoreError, match="not a usable berth store"):
        S.open_store(tmp_path)


def test_wait_returns_when_a_write_happens_and_times_out_otherwise() -> None:
    st = S.Store()
    assert st.wait(0, 0.01) is False
    st.put("configmaps", "ns", "a", {"metadata": {"name": "a"}}, "ADDED")
    assert st.wait(0, 0.01) is True


def test_compaction_keeps_live_objects_and_drops_history(tmp_path: Path) -> None:
    st = S.open_store(tmp_path, retain=3)
    st.put("configmaps", "ns", "old", {"metadata": {"name": "old"}}, "ADDED")
    st.put("configmaps", "ns", "gone", {"metadata": {"name": "gone"}}, "ADDED")
    st.remove("configmaps", "ns", "gone", {"metadata": {"name": "gone"}})
    for i in range(5):
        st.put("configmaps", "ns", "hot", {"metadata": {"name": "hot"}, "data": {"i": str(i)}}, "ADDED")
    assert st.compact() == 5
    st.close()
    again = S.open_store(tmp_path, retain=3)
    items, rv = again.list("configmaps")
    assert [n for _ns, n, _e in items] == ["hot", "old"] and rv == 8
    assert '"i":"4"' in (again.get("configmaps", "ns", "hot") or (0, ""))[1]
    assert [e.rv for e in again.events_after(5)] == [6, 7, 8]


def test_a_quiet_resource_is_not_expired_by_other_resources_churn() -> None:
    st = S.Store(retain=5)
    st.put("secrets", "ns", "s", {"metadata": {"name": "s"}}, "ADDED")
    for i in range(20):
        st.put("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}"}}, "ADDED")
    st.compact()
    replay = st.events_after(1, resource="secrets")
    assert replay[0].rv == st.compacted + 1 and all(e.resource == "configmaps" for e in replay)
    with pytest.raises(S.Compacted):
        st.events_after(1, resource="configmaps")
    with pytest.raises(S.Compacted):
        st.events_after(0, resource="secrets")  # the secret's own event was compacted
