"""What the app's tabs share, over one engine shared by every visitor (usl_space.tabs: one module per tab, its
layout and handlers). The service owns what lives between requests: the memo of finished views, each visitor's Stop
flags, the thread that builds the response side, the scratch folder of charts and downloads; and the steps every
board takes: waiting for the bench, ranking a checked request, drawing its chart.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import gradio as gr

from usl_space.charts import bar_chart, png
from usl_space.engine import Engine, Leaderboard
from usl_space.request import RankRequest
from usl_space.topics import TOPICS
from usl_space.views import status

TABLE_HEIGHT = 1700  # px: 40 models and the header without an inner scroll bar


class ViewMemo:
    """The last `size` finished views (a handler's outputs) by request, shared by every visitor's thread; a view
    is kept at most `max_age` seconds, less than `job_folder` keeps the files it names."""

    def __init__(self, size: int = 64, max_age: float = 1800.0):
        self.size, self.max_age, self._lock = size, max_age, threading.Lock()
        self._views: OrderedDict[tuple, tuple[float, tuple]] = OrderedDict()

    def get(self, key: tuple) -> tuple | None:
        with self._lock:
            if key not in self._views:
                return None
            made, outputs = self._views[key]
            if time.monotonic() - made > self.max_age:
                del self._views[key]
                return None
            self._views.move_to_end(key)
            return outputs

    def put(self, key: tuple, outputs: tuple) -> None:
        with self._lock:
            self._views[key] = (time.monotonic(), outputs)
            while len(self._views) > self.size:
                self._views.popitem(last=False)


def checked(criteria: str | None, dislikes: str | None = None, **rest) -> RankRequest:
    """A request from the criteria and dislikes boxes' text, cleaned by the one rule for criteria
    (crm_core.guard.check_criteria), and the rest of `RankRequest`'s fields; what breaks it is said to the visitor."""
    try:
        return RankRequest.checked(criteria, dislikes, **rest)
    except ValueError as error:
        raise gr.Error(str(error)) from None


def job_folder(parent: Path, keep_seconds: float = 3600.0) -> Path:
    """A new folder under `parent` for one job's files; folders older than `keep_seconds` are removed, so a
    long-running Space does not fill its disk (ViewMemo forgets a view before its files go)."""
    parent.mkdir(parents=True, exist_ok=True)
    now = time.time_ns()
    for old in parent.iterdir():
        if old.name.isdigit() and now - int(old.name) > keep_seconds * 1e9:
            shutil.rmtree(old, ignore_errors=True)
    folder = parent / str(now)
    folder.mkdir()
    return folder


class AppService:
    """What every tab of one bench's page shares, bound to its engine (each tab holds it as `svc`)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.topic_names = list(TOPICS)
        self.model_names = [m for m in engine.models if m != engine.baseline]
        self.work = Path(tempfile.mkdtemp(prefix="usl-space-"))
        # finished views by request: asked again (the general leaderboard on every page load, a criteria set another
        # visitor ranked), they are served without ranking or drawing, so they stay fast while others' jobs run
        self.views = ViewMemo()
        self.stops: dict[str, threading.Event] = {}  # per visitor (session): set by Stop, seen by their job
        self.builder: threading.Thread | None = None  # the thread building the response side, if a visitor started it

    def bench_ready(self, should_stop=None) -> Iterator[str]:
        """While the instant path's response side is not in memory (a first start without a response store builds
        it: minutes), a status line every second saying how far the build got; starts the build if nobody has.
        Returns when it is ready, or when `should_stop` says so."""
        if self.engine.table_ready:
            return
        if self.engine.building is None and (self.builder is None or not self.builder.is_alive()):
            self.builder = threading.Thread(target=self.engine.warm, daemon=True, name="response-side")
            self.builder.start()
        while not self.engine.table_ready:
            if should_stop is not None and should_stop():
                return
            failed = self.builder is not None and not self.builder.is_alive() and self.engine.building is None
            if failed and not self.engine.table_ready:
                raise gr.Error("building the bench's response side failed; the server log says why")
            build = self.engine.building
            yield ("Waiting for the bench: " + (build.line() if build else "loading its response side")
                   + ". Boards take about a second once it is ready.")  # fmt: skip
            time.sleep(1.0)

    def run(self, eng: Engine, request: RankRequest, what: str, should_stop=None, started=None):
        try:  # the engine checks the models before it scores anything
            for board in eng.stream_request(request, should_stop=should_stop):
                yield board, status(board, what, None if started is None else time.perf_counter() - started)
        except ValueError as error:
            raise gr.Error(str(error)) from None

    def chart(self, board: Leaderboard | None) -> str | None:
        return png(bar_chart(board), job_folder(self.work / "charts"))

    # -- handlers ------------------------------------------------------------------------------------------------

    # -- votes: "Help it learn your taste" (compositional CRMs) --------------------------------------------------
