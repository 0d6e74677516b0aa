"""What a long step is doing, in words a visitor reads while waiting: counts, time so far and an estimate.

A step (building the bench's response side, encoding an upload) advances a `Progress` from the thread doing the
work; the app's handlers read it from theirs (a visitor may be waiting on a build another thread started) and
print the same line to the server log.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field


def duration(seconds: float) -> str:
    """'8 s', '2 min 5 s', '1 h 3 min': the units a person reads at a glance."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


@dataclass
class Progress:
    """`done` of `total` units of `what` (e.g. "answers encoded"), counted from `started`."""

    what: str
    total: int
    unit: str = "answers"
    done: int = 0
    started: float = field(default_factory=time.perf_counter)
    log: bool = True  # also print each update to the server log

    def advance(self, done: int) -> None:
        """Record that `done` units are finished in all (not an increment: callers report a running count)."""
        self.done = min(int(done), self.total)
        if self.log:
            print(f"usl: {self.line()}", file=sys.stderr, flush=True)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def left(self) -> float | None:
        """Seconds to go at the rate so far; None before the first unit is done."""
        if self.done <= 0:
            return None
        return self.elapsed / self.done * (self.total - self.done)

    def line(self) -> str:
        left = self.left()
        estimate = "estimating the time left" if left is None else f"about {duration(left)} left"
        share = 100 * self.done / max(self.total, 1)
        return (
            f"{self.what}: {self.done:,} of {self.total:,} {self.unit} ({share:.0f}%), {duration(self.elapsed)} "
            f"so far, {estimate}"
        )
