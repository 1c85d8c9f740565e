"""Store: global revision, event log, compaction boundary, persistence across reopen, the JSON encoding."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

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


def _history(st: S.Store, rng: random.Random, ops: int) -> None:
    """Random creates, updates and deletes over a few objects of two resources and two namespaces."""
    for _ in range(ops):
        resource, ns, name = (
            rng.choice(["configmaps", "secrets"]),
            rng.choice(["a", "b"]),
            rng.choice("uvwxy"),
        )
        if st.get(resource, ns, name) is not None and rng.random() < 0.3:
            st.remove(resource, ns, name, {"metadata": {"name": name}})
        else:
            st.put(
                resource, ns, name, {"metadata": {"name": name}, "data": {"r": str(rng.random())}}, "ADDED"
            )
        if rng.random() < 0.05:
            st.compact()


@pytest.mark.parametrize("seed", [1, 2, 3], ids=["seed-1", "seed-2", "seed-3"])
def test_compaction_keeps_exactly_the_live_rows_below_the_boundary_and_everything_above(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    st = S.open_store(tmp_path, retain=9)
    _history(st, rng, 120)
    st.close()  # the rows superseded before this reopen are found by the load
    st = S.open_store(tmp_path, retain=9)
    _history(st, rng, 120)
    boundary = st.compact()
    live = {r: st.list(r) for r in ("configmaps", "secrets")}
    replay = st.events_after(boundary)
    st.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "store.db")) as db:
        rows = db.execute("SELECT rv, type, resource, namespace, name FROM log ORDER BY rv").fetchall()
    newest: dict[tuple[str, str, str], tuple[int, str]] = {}
    for rv, typ, resource, ns, name in rows:
        newest[(resource, ns, name)] = (rv, typ)
    kept_below = [rv for rv, *_ in rows if rv <= boundary]
    live_rvs = sorted(e[0] for items, _rv in live.values() for _ns, _n, e in items)
    assert kept_below == [rv for rv in live_rvs if rv <= boundary]
    assert (
        [rv for rv, *_ in rows if rv > boundary] == [e.rv for e in replay] == list(range(boundary + 1, 241))
    )
    again = S.open_store(tmp_path, retain=9)
    assert {r: again.list(r) for r in ("configmaps", "secrets")} == live
    assert again.events_after(boundary) == replay


def test_a_store_written_with_the_old_key_index_opens_and_drops_it(tmp_path: Path) -> None:
    with contextlib.closing(sqlite3.connect(tmp_path / "store.db")) as db:
        db.executescript(
            "CREATE TABLE log (rv INTEGER PRIMARY KEY, type TEXT NOT NULL, resource TEXT NOT NULL,"
            " namespace TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, prev TEXT);"
            "CREATE INDEX log_key ON log (resource, namespace, name, rv);"
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO meta VALUES ('schema', '2');"
            """INSERT INTO log VALUES (1, 'ADDED', 'configmaps', 'ns', 'a', '{"v":1}', NULL);"""
            """INSERT INTO log VALUES (2, 'MODIFIED', 'configmaps', 'ns', 'a', '{"v":2}', '{"v":1}');"""
        )
    st = S.open_store(tmp_path)
    assert st.get("configmaps", "ns", "a") == (2, '{"v":2}') and st.revision == 2
    st.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "store.db")) as db:
        assert (
            db.execute("SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='log'").fetchall()
            == []
        )


@pytest.mark.parametrize(
    "value",
    [
        {"metadata": {"name": "a", "labels": {"k": "v"}}, "data": {"x": "y"}},
        {"unicode": "gr\u00fc\u00df \u2603 \U0001f600", "quote": 'a"b\\c\n\t'},
        {"numbers": [0, -1, 2**70, 1.5, 1e100, float("nan"), float("inf")], "flags": [True, False, None]},
        {"nested": [[{}], [], {"a": [{"b": {}}]}]},
    ],
    ids=["object", "strings", "numbers", "nested"],
)
def test_the_store_encodes_compact_json_that_reads_back_the_same(value: dict[str, Any]) -> None:
    """orjson's text is json.dumps' compact text for ASCII, with UTF-8 instead of escapes; what orjson refuses
    (here a 70-bit integer) goes through json.dumps itself."""
    text = S._encode(value)
    if "unicode" in value:
        assert json.loads(text) == value and "grüß ☃ 😀" in text
    else:
        assert text == json.dumps(value, separators=(",", ":"))


def test_an_unencodable_value_is_a_type_error_and_nothing_is_stored() -> None:
    st = S.Store()
    with pytest.raises(TypeError, match="not JSON serializable"):
        st.put("configmaps", "ns", "a", {"metadata": {"name": "a"}, "data": {"x": object()}}, "ADDED")
    assert st.revision == 0 and st.get("configmaps", "ns", "a") is None


class _FailingCompaction:
    """The store's connection, except that the next compaction fails once, at ``fail_at``."""

    def __init__(self, db: sqlite3.Connection, fail_at: str) -> None:
        self.db, self.fail_at, self.failed = db, fail_at, False

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql.startswith(self.fail_at) and not self.failed:
            self.failed = True
            raise sqlite3.OperationalError("disk I/O error")
        return self.db.execute(sql, *args)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        return self.db.executemany(sql, rows)


@pytest.mark.parametrize(
    "fail_at",
    ["SAVEPOINT", "INSERT OR REPLACE INTO meta VALUES ('rv'"],
    ids=["at-the-start", "after-the-deletes"],
)
def test_a_failed_automatic_compaction_keeps_the_write_and_the_next_one_deletes_the_dead_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: str
) -> None:
    monkeypatch.setattr(S, "COMPACT_EVERY", 4)
    st = S.open_store(tmp_path, retain=2)
    real = st._db
    st._db = _FailingCompaction(real, fail_at)  # type: ignore[assignment]
    for i in range(4):
        st.put("configmaps", "ns", "a", {"metadata": {"name": "a"}, "data": {"i": str(i)}}, "ADDED")
    assert st.revision == 4 and st.compacted == 0  # the write at revision 4 stands; its compaction failed
    assert real.execute("SELECT COUNT(*) FROM log").fetchone()[0] == 4  # and deleted nothing
    st._db = real
    assert st.compact() == 2
    st.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "store.db")) as db:
        assert [rv for (rv,) in db.execute("SELECT rv FROM log ORDER BY rv")] == [3, 4]
