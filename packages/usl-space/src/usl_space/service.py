"""The app's handlers: what each button and page load does, over one engine shared by every visitor. The service
owns what lives between requests: the memo of finished views, each visitor's Stop flags, the thread that builds
the response side, the scratch folder of charts and downloads. usl_space.app lays the handlers out and wires them;
usl_space.views says what they show. (Just over 400 lines: the handlers of five tabs share that state, and a module
per tab would pass it around; the next split is an upload module, when uploads grow.)
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import gradio as gr
from crm_core.agreement import kendall_tau
from crm_core.data import DataValidationError, read_model_outputs_json, responses_by_instruction

from usl_space.charts import bar_chart, png, slope_chart
from usl_space.engine import Engine, Leaderboard
from usl_space.progress import Progress
from usl_space.request import RankRequest
from usl_space.taste import Profile, Vote, ask, fit_votes, moves
from usl_space.topics import TOPICS
from usl_space.views import (
    as_text,
    compact_frame,
    criteria_label,
    downloads,
    frame,
    reading,
    status,
    topic_frame,
)

MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # also the server's limit (launch max_file_size): bigger posts are never stored
MAX_UPLOADS = 3  # uploaded models per visitor; their responses are freed when the visitor leaves
UPLOAD_CHUNK = 32  # an upload's answers encoded per step (~0.25 s on 2 cores): Stop is heard between steps


def parse_upload(engine: Engine, path: str | None, name: str) -> tuple[str, dict[int, str]]:
    """An uploaded AlpacaEval model_outputs.json, checked: size, JSON, fields, instructions of this bench."""
    if not path:
        raise ValueError("choose a model_outputs.json file to upload")
    size = Path(path).stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is {size / 2**20:.1f} MB; at most {MAX_UPLOAD_BYTES // 2**20} MB")
    items = read_model_outputs_json(path)
    name = " ".join((name or "").split()) or str(next((i["generator"] for i in items if i.get("generator")), ""))
    if not name or len(name) > 80 or any(not ch.isprintable() for ch in name):
        raise ValueError("give the model a name of 1-80 printable characters")
    index = {text: idx for idx, text in engine.query.items()}
    rows = responses_by_instruction(name, items, index, Path(path).name)
    if not rows:
        raise ValueError("the file holds no responses")
    return f"upload:{name}", {row["idx"]: row["output"] for row in rows}


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


def share_link(request: gr.Request | None, profile: Profile) -> str:
    """The page's address with the profile as `?profile=TOKEN` (the browser's address, from the Referer the page
    sends; a bare query string when there is none)."""
    page = (request.headers.get("referer") or "") if request is not None else ""
    return f"{page.split('?', 1)[0]}?profile={profile.link_token(list(TOPICS))}"


class AppService:
    """Every handler of the app, bound to one engine."""

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

    def selected_ids(self, topics: list[str], free_text: str) -> list[int] | None:
        """The queries the topic controls select: the ticked topics, narrowed by the free-text topic when one is
        typed; None for all. No topic ticked and no free text is an error, not a silent 'all'."""
        topics, text = list(topics or []), (free_text or "").strip()
        if self.engine.topics is None or (set(topics) == set(self.topic_names) and not text):
            return None
        if not topics and not text:
            raise gr.Error("no topic is ticked: tick at least one topic (or Select all), or type a free-text topic")
        try:
            ids = set(self.engine.topics.select(topics).tolist()) if topics else set(self.engine.query)
            if text:
                ids &= set(self.engine.topics.select([], text).tolist())
        except ValueError as error:
            raise gr.Error(str(error)) from None
        if not ids:
            raise gr.Error("no query matches these topics; tick more topics or change the free-text topic")
        return sorted(ids)

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

    def form_request(self, topics, free_text, criteria, dislikes, baseline, models, n_queries) -> RankRequest:
        """Customize's controls as one checked request: the bench's own baseline is a row like any other under
        another baseline."""
        chosen = list(models or [])  # uploads are in the Models list, ticked when added; a visitor may untick them
        if baseline and baseline != self.engine.baseline and self.engine.baseline not in chosen:
            chosen.append(self.engine.baseline)
        if not chosen:
            raise gr.Error("select at least one model")
        other = baseline if baseline != self.engine.baseline else None  # the bench's own: one memo key, not two
        return checked(criteria, dislikes, query_ids=self.selected_ids(topics, free_text or ""), models=chosen,
                       baseline=other, n_queries=int(n_queries) if n_queries else None)  # fmt: skip

    def run(self, eng: Engine, request: RankRequest, what: str, should_stop=None, started=None):
        try:  # the engine checks the models before it scores anything
            for board in eng.stream_request(request, should_stop=should_stop):
                yield board, status(board, what, None if started is None else time.perf_counter() - started)
        except ValueError as error:
            raise gr.Error(str(error)) from None

    def chart(self, board: Leaderboard | None) -> str | None:
        return png(bar_chart(board), job_folder(self.work / "charts"))

    # -- handlers ------------------------------------------------------------------------------------------------
    def leaderboard_view(self):
        key = ("general",)
        if (seen := self.views.get(key)) is not None:
            yield seen
            return
        started = time.perf_counter()
        for text in self.bench_ready():
            yield gr.skip(), gr.skip(), gr.skip(), text
        for board, text in self.run(self.engine, RankRequest(), "General preference:", started=started):
            outputs = frame(board), topic_frame(board), self.chart(board), text
            yield outputs
        if board.done:
            self.views.put(key, outputs)

    def custom_engine(self, rank_request: RankRequest, uploads) -> Engine:
        """The engine for this visitor's request: its baseline, with their uploads."""
        eng = self.engine.for_request(rank_request)
        for name, outputs in (uploads or {}).items():
            eng = eng.with_model(name, outputs)
        return eng

    def customize(self, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                  request: gr.Request):  # fmt: skip
        started = time.perf_counter()  # what the status reports: the visitor's wait, not only the scoring
        stop = self.stops[str(request.session_hash)] = threading.Event()
        try:
            rank_request = self.form_request(topics, free_text, criteria, dislikes, baseline, models, n_queries)
            yield from self.custom_board(rank_request, uploads, stop, started)
        except gr.Error as error:  # said in the status line; the board shown before stays (no red "Error" over it)
            yield gr.skip(), gr.skip(), gr.skip(), f"**Not ranked:** {as_text(error.message)}", gr.skip()
        finally:
            if self.stops.get(str(request.session_hash)) is stop:
                del self.stops[str(request.session_hash)]

    def custom_board(self, rank_request: RankRequest, uploads, stop: threading.Event, started: float):
        for text in self.bench_ready(stop.is_set):  # Stop ends this visitor's wait, not the build others may wait for
            yield gr.skip(), gr.skip(), gr.skip(), text, gr.skip()
        if stop.is_set():
            yield gr.skip(), gr.skip(), gr.skip(), "Stopped while waiting for the bench.", gr.skip()
            return
        eng = self.custom_engine(rank_request, uploads)
        what = f"Custom ({criteria_label(rank_request.criteria, rank_request.dislikes)}):"
        key = None if uploads else ("custom", rank_request)
        if key is not None and (seen := self.views.get(key)) is not None:
            yield seen
            return
        board = None
        for board, text in self.run(eng, rank_request, what, stop.is_set, started):
            if not board.done:  # the finished board is shown once, below, with its downloads
                with eng.turns:  # drawing is CPU work: it takes a turn, as scoring does (cached views never do)
                    shown = frame(board), topic_frame(board), self.chart(board), text, gr.update()
                yield shown
        if board is None:
            yield frame(None), topic_frame(None), None, f"{what} stopped before any query was scored", None
            return
        text = status(board, what, time.perf_counter() - started) + reading(board)
        if stop.is_set() and not board.done:
            text = text.replace(" scoring... ", " stopped at ", 1) + " · the downloads hold this partial board"
        with eng.turns:  # one folder per job: visitors never share a download
            outputs = (frame(board), topic_frame(board), self.chart(board), text,
                       downloads(board, job_folder(self.work / "custom")))  # fmt: skip
        if key is not None and board.done:
            self.views.put(key, outputs)
        yield outputs

    def stop_job(self, request: gr.Request) -> None:
        event = self.stops.get(str(request.session_hash))
        if event is not None:
            event.set()

    # -- votes: "Help it learn your taste" (compositional CRMs) --------------------------------------------------
    def taste_step(self, taste, outcome, rank_request: RankRequest, topics, uploads,
                   request: gr.Request | None = None):  # fmt: skip
        """Record the vote on the pending pair (outcome None: just ask), refit, re-rank, ask the next pair
        (`topics`: the ticked ones, which a profile keeps)."""
        if not self.engine.instant:
            raise gr.Error("voting needs a compositional CRM (the default one)")
        eng = self.custom_engine(rank_request, uploads)
        criteria_lines, dislike_lines = list(rank_request.criteria), list(rank_request.dislikes)
        taste = dict(taste or {})
        votes = [Vote(**v) for v in taste.get("votes", [])]
        pending = taste.get("pending")
        if outcome is not None and pending:
            votes.append(Vote(int(pending[0]), pending[1], pending[2], float(outcome)))
        side, covariance, prior = fit_votes(eng, criteria_lines, dislike_lines, votes)
        *_, board = eng.stream_request(rank_request, side=side if votes else None)
        idx, a, b = ask(eng, side, covariance, [row["model"] for row in board.rows], votes)
        taste = {"votes": [asdict(v) for v in votes], "pending": [idx, a, b]}
        moved = moves(prior, side)
        read = f"{len(votes)} vote(s). The votes moved: {moved}" if moved else f"{len(votes)} vote(s)."
        read += " · Top 3 now: " + ", ".join(as_text(row["model"]) for row in board.rows[:3])  # seen by the buttons
        profile = Profile(criteria_lines, dislike_lines, list(topics or []), votes,
                          [float(w) for w in side.weights], [float(u) for u in side.voice])  # fmt: skip
        folder = self.work / "profiles" / f"{time.time_ns()}"
        folder.mkdir(parents=True, exist_ok=True)
        profile.save(folder / "usl-profile.json")
        text = status(board, "Custom (your votes):" if votes else "Custom:") + reading(board)
        return (taste, frame(board), topic_frame(board), self.chart(board), text, eng.query[idx],
                eng.output[(idx, a)], eng.output[(idx, b)], read, str(folder / "usl-profile.json"),
                share_link(request, profile))  # fmt: skip

    def taste_handler(self, outcome: float | None):
        def handler(taste, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                    request: gr.Request):  # fmt: skip
            rank_request = self.form_request(topics, free_text, criteria, dislikes, baseline, models, n_queries)
            for text in self.bench_ready():
                yield self.waiting(text)
            yield self.taste_step(taste, outcome, rank_request, topics, uploads, request)

        return handler

    def open_shared(self, request: gr.Request):
        """A share link (`?profile=TOKEN`) fills Customize with the profile and opens the tab; `shared_board`
        then ranks it. Without one, nothing changes."""
        token = (request.query_params or {}).get("profile") if request else None
        if not token:
            return (gr.skip(),) * 7
        try:
            profile = Profile.from_link_token(token)
        except ValueError as error:
            message = f"**Share link not opened:** {as_text(str(error))}"
            return (*(gr.skip(),) * 4, message, gr.Tabs(selected="customize"), gr.Accordion(open=True))
        known = [t for t in profile.topics if t in self.topic_names]
        taste = {"votes": [asdict(v) for v in profile.votes], "pending": None, "shared": True}
        return ("\n".join(profile.criteria), "\n".join(profile.dislikes), known or self.topic_names, taste,
                f"Shared profile opened: {len(profile.criteria)} criteria, {len(profile.votes)} vote(s).",
                gr.skip(), gr.Accordion(open=True))  # fmt: skip

    def waiting(self, text: str) -> tuple:
        """The vote handlers' outputs while the bench is not ready: only the status line (cu_status) changes."""
        return *(gr.skip(),) * 4, text, *(gr.skip(),) * 6

    def shared_board(self, taste, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                     request: gr.Request):  # fmt: skip
        if not (taste or {}).get("shared") or not self.engine.instant:
            yield (gr.skip(),) * 12
            return
        yield *self.waiting("Opening the shared profile: ranking it..."), gr.skip()
        for text in self.bench_ready():
            yield *self.waiting(text), gr.skip()
        rank_request = self.form_request(topics, free_text, criteria, dislikes, baseline, models, n_queries)
        board = self.taste_step({k: v for k, v in taste.items() if k != "shared"}, None, rank_request, topics, uploads,
                                request)  # fmt: skip
        yield *board, gr.Tabs(selected="customize")  # the tab opens on the finished board

    def load_profile(self, path):
        if not path:
            raise gr.Error("choose a profile JSON file")
        try:
            profile = Profile.load(path)
        except (OSError, ValueError) as error:
            raise gr.Error(str(error).replace(str(path), Path(path).name)) from None
        finally:
            Path(path).unlink(missing_ok=True)
        taste = {"votes": [asdict(v) for v in profile.votes], "pending": None}
        known = [t for t in profile.topics if t in self.topic_names]  # a profile from another version may name others
        return ("\n".join(profile.criteria), "\n".join(profile.dislikes), known or self.topic_names, taste,
                f"Profile loaded: {len(profile.criteria)} criteria, {len(profile.votes)} vote(s). Press "
                "**Ask me** to re-rank with it.")  # fmt: skip

    def compare(self, criteria_a, criteria_b, n_queries):
        for text in self.bench_ready():
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), text
        boards = {}
        for key, criteria in (("A", criteria_a), ("B", criteria_b)):
            rank_request = checked(criteria, n_queries=int(n_queries) if n_queries else None)
            for board, text in self.run(self.engine, rank_request, f"Set {key}:"):
                boards[key] = board
                yield (*self.compare_outputs(boards), text)
        yield (*self.compare_outputs(boards), "Both rankings done.")

    def compare_outputs(self, boards: dict) -> tuple:
        a, b = boards.get("A"), boards.get("B")
        if a is None or b is None:
            return compact_frame(a), compact_frame(b), None, ""
        rate_a = {r["model"]: r["win_rate"] for r in a.rows}
        rate_b = {r["model"]: r["win_rate"] for r in b.rows}
        common = sorted(set(rate_a) & set(rate_b))
        tau = kendall_tau([rate_a[m] for m in common], [rate_b[m] for m in common])
        slopes = png(slope_chart(a, b), job_folder(self.work / "charts"))
        return compact_frame(a), compact_frame(b), slopes, f"**Kendall tau** between the two rankings: {tau:+.3f}"

    def inspect(self, query_choice, model, criteria, dislikes, uploads):
        eng = self.engine.with_model(model, uploads[model]) if model in (uploads or {}) else self.engine
        if not query_choice or not model:
            raise gr.Error("pick a query and a model")
        idx = int(str(query_choice).split(":", 1)[0])
        asked = checked(criteria, dislikes)
        if (idx, model) not in eng.output:
            raise gr.Error(f"{as_text(model)} did not answer query {idx}")
        try:
            p, how = eng.judge_one(list(asked.criteria), list(asked.dislikes), idx, model)
        except ValueError as error:  # e.g. the baseline did not answer this query
            raise gr.Error(str(error)) from None
        detail = f"P({as_text(model)} preferred) = **{p:.3f}** ({how})"
        return eng.query[idx], eng.output[(idx, model)], eng.output[(idx, eng.baseline)], detail

    def upload(self, path, name, uploads, models, request: gr.Request):
        """Check the file, then encode its answers here, with progress (Stop ends it, nothing added): ranking with
        the upload is then as fast as with any other model."""
        started = time.perf_counter()
        unchanged = uploads, gr.skip(), gr.skip(), None  # the file box is emptied: the file is read once
        try:
            key, outputs = parse_upload(self.engine, path, name)
            if key not in (uploads or {}) and len(uploads or {}) >= MAX_UPLOADS:
                raise ValueError(f"at most {MAX_UPLOADS} uploaded models per visitor; reload the page to start over")
        except (ValueError, DataValidationError) as error:
            shown = str(error).replace(str(path), Path(path).name) if path else str(error)  # no server paths
            yield *unchanged, "**Upload refused:**\n\n" + "  \n".join(as_text(line) for line in shown.splitlines())
            return
        finally:
            if path:
                Path(path).unlink(missing_ok=True)  # read once: the upload is not kept on disk
        stop = self.stops[f"{request.session_hash}/upload"] = threading.Event()
        report = Progress(f"encoding the answers of {key}", len(outputs))
        prepared: list[bool] = []

        def encode() -> None:  # in a thread: this generator reports its progress meanwhile
            prepared.append(self.engine.prepare_upload(key, outputs, report, stop.is_set, UPLOAD_CHUNK))

        worker = threading.Thread(target=encode, daemon=True, name="upload")
        worker.start()
        try:
            while worker.is_alive():
                yield *unchanged, as_text(report.line()) + ". **Stop** ends it; nothing is added then."
                worker.join(1.0)
        finally:
            self.stops.pop(f"{request.session_hash}/upload", None)
        if not prepared:
            yield *unchanged, "**Upload failed** while encoding its answers; the server log says why."
            return
        if not prepared[0]:
            yield *unchanged, f"**Upload stopped** after {time.perf_counter() - started:.1f} s: nothing was added."
            return
        uploads = {**(uploads or {}), key: outputs}
        choices = self.model_names + list(uploads)  # the upload joins Models (ticked) and Inspect, for this visitor
        ticked = [*[m for m in models or [] if m != key], key]
        yield (uploads, gr.update(choices=choices, value=ticked), gr.update(choices=choices), None,
               f"Added **{as_text(key)}** ({len(outputs)} of {len(self.engine.query)} queries answered; its answers "
               f"encoded in {time.perf_counter() - started:.1f} s, so boards with it are as quick as any). It is "
               "ticked in Customize's Models and can be opened in Inspect, for this session only.")  # fmt: skip

    def stop_upload(self, request: gr.Request) -> None:
        event = self.stops.get(f"{request.session_hash}/upload")
        if event is not None:
            event.set()
