"""Fair turns at the CRM: a first-come, first-served lock.

Every visitor's job scores one query per turn and then queues again, so with a FIFO lock several jobs take turns
round-robin (a plain `threading.Lock` lets one thread win again and again), and a Stop is seen between turns:
within one query. Cached views never take a turn.
"""

from __future__ import annotations

import threading


class FairLock:
    """A lock granted in the order it was asked for (a ticket lock)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._next_ticket = 0
        self._serving = 0

    def acquire(self) -> None:
        with self._condition:
            ticket = self._next_ticket
            self._next_ticket += 1
            self._condition.wait_for(lambda: self._serving == ticket)

    def release(self) -> None:
        with self._condition:
            self._serving += 1
            self._condition.notify_all()

    @property
    def waiting(self) -> int:
        """Threads holding or waiting for the lock."""
        with self._condition:
            return self._next_ticket - self._serving

    def __enter__(self) -> FairLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
