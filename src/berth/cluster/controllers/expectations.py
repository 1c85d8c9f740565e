"""Controller expectations: "I created 3 pods and deleted pod X; wait until the informer shows that".

Why: a controller reads pods from its informer cache, which trails the writes it just made. Without this, a
ReplicaSet reconciled twice in a burst would see too few pods the second time and create extras (upstream's
``ControllerExpectations`` / ``UIDTrackingControllerExpectations`` exist for exactly this). Expectations expire
after ``ttl`` seconds so a lost event cannot wedge a controller.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass
class _Expectation:
    adds: int = 0
    deletes: set[str] = field(default_factory=set)
    stamp: float = field(default_factory=time.monotonic)


class Expectations:
    """Per controller key: how many creations and which deletions (by pod uid) are still unobserved."""

    def __init__(self, ttl: float = 30.0) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._items: dict[str, _Expectation] = {}

    def expect_creations(self, key: str, count: int) -> None:
        with self._lock:
            e = self._items.setdefault(key, _Expectation())
            e.adds += count
            e.stamp = time.monotonic()

    def expect_deletions(self, key: str, uids: list[str]) -> None:
        with self._lock:
            e = self._items.setdefault(key, _Expectation())
            e.deletes.update(uids)
            e.stamp = time.monotonic()

    def creation_observed(self, key: str) -> None:
        with self._lock:
            e = self._items.get(key)
            if e is not None and e.adds > 0:
                e.adds -= 1

    def deletion_observed(self, key: str, uid: str) -> None:
        with self._lock:
            e = self._items.get(key)
            if e is not None:
                e.deletes.discard(uid)

    def satisfied(self, key: str) -> bool:
        with self._lock:
            e = self._items.get(key)
            if e is None:
                return True
            if e.adds <= 0 and not e.deletes:
                return True
            return time.monotonic() - e.stamp > self.ttl

    def forget(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)
