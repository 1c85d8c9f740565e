"""A work queue of object keys, like client-go's ``workqueue``: de-duplicating, delayed, with per-key backoff.

Why: informers call handlers for every event, often several per object in a burst; a controller wants to reconcile
each object once per burst, never the same key in two workers at once, and to come back later (a timer for a
simulated delay, or a retry after a conflict) without a thread per timer.

Key states::

    add(k) ──▶ queued ──get()──▶ processing ──done(k)──▶ gone
                 ▲                  │ add(k) while processing marks it dirty
                 └──────────────────┘ done(k) re-queues a dirty key
    add_after(k, d) parks k in a timer heap until due, then add(k).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque


class WorkQueue:
    """Thread-safe queue of string keys. ``get`` blocks up to a timeout and returns None when idle or shut down."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1.0) -> None:
        self._cond = threading.Condition()
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._timers: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._failures: dict[str, int] = {}
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._shutdown = False

    def add(self, key: str) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: str) -> None:
        if self._shutdown or key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._queue.append(key)
            self._cond.notify()

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds (at once when ``delay <= 0``)."""
        if delay <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shutdown:
                return
            heapq.heappush(self._timers, (time.monotonic() + delay, next(self._seq), key))
            self._cond.notify()

    def add_rate_limited(self, key: str) -> None:
        """Re-queue after an exponential backoff that grows with each failure of ``key`` until :meth:`forget`."""
        with self._cond:
            n = self._failures.get(key, 0)
            self._failures[key] = n + 1
        self.add_after(key, min(self._base_delay * (2**n), self._max_delay))

    def forget(self, key: str) -> None:
        with self._cond:
            self._failures.pop(key, None)

    def _promote_due_locked(self) -> float | None:
        """Move due timers into the queue; return seconds until the next timer (None if none)."""
        now = time.monotonic()
        while self._timers and self._timers[0][0] <= now:
            _, _, key = heapq.heappop(self._timers)
            self._add_locked(key)
        return self._timers[0][0] - now if self._timers else None

    def get(self, timeout: float = 0.2) -> str | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                wait_timer = self._promote_due_locked()
                if self._shutdown:
                    return None
                if self._queue:
                    key = self._queue.popleft()
                    self._processing.add(key)
                    self._dirty.discard(key)
                    return key
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(min(remaining, wait_timer) if wait_timer is not None else remaining)

    def done(self, key: str) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._queue.append(key)
                self._cond.notify()

    def shutdown(self) -> None:
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    def idle(self) -> bool:
        """True when nothing is queued or being processed (timers may still be pending)."""
        with self._cond:
            return not self._queue and not self._processing
