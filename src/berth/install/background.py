"""A call that runs in a thread of its own while the caller goes on, its result (or error) taken later.

Why: setup overlaps its own work with Helm's (the machine has another core, and a render is mostly Helm's time):
the install dry run starts before the other renders are even built, and the renders' collection hands each one
over while the other still runs. A plain thread rather than ``concurrent.futures``, whose imports (logging,
traceback, ~3 ms) would come before Helm can start.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

_T = TypeVar("_T")


class Call(Generic[_T]):
    """``call()`` started at once in a thread named ``name``; :meth:`result` waits for it and returns what it
    returned or raises what it raised, in the caller's thread."""

    def __init__(self, call: Callable[[], _T], name: str) -> None:
        self._call = call
        self._out: list[_T] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._out.append(self._call())
        except BaseException as exc:  # raised again by result(), in the caller's thread
            self._error = exc

    def wait(self) -> None:
        """Until the call has ended, whichever way."""
        self._thread.join()

    def result(self) -> _T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out[0]
