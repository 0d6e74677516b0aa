"""usl-space: the Gradio app. Leaderboard, Customize, Compare, Inspect and Add-a-model tabs over one Engine: the
layout and its wiring; what the tables and status lines show is usl_space.views.

Everything a visitor types goes through `check_criteria` and the upload validator, and is shown back only as
plain text (Textbox) or in table cells; no visitor input reaches a shell, eval or raw HTML. Scoring handlers
are generators: the table and chart update after every batch. Jobs take turns at the CRM one query at a time
(the engine's fair lock), Stop is seen before the next query, and finished views are remembered, so a visitor whose
request is cached is answered while other visitors' long jobs run.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path

import gradio as gr
from crm_core.data import DataValidationError
from crm_core.data.importers import responses_by_instruction

from usl_space.catalog import catalog
from usl_space.charts import bar_chart, png, slope_chart
from usl_space.engine import Engine, Leaderboard, check_criteria
from usl_space.progress import Progress
from usl_space.stats import kendall_tau
from usl_space.taste import Profile, Vote, ask, fit_votes, moves
from usl_space.topics import TOPICS
from usl_space.views import (
    COLUMN_WIDTHS,
    LEGEND,
    SEMANTICS,
    as_text,
    compact_frame,
    criteria_label,
    crm_label,
    downloads,
    frame,
    lines,
    reading,
    status,
    topic_frame,
)

PRESETS = {
    "(none: general preference)": [],
    "concise": ["Prefer short, concise answers.", "I dislike long-winded answers."],
    "detailed": ["Prefer detailed, thorough answers.", "I want comprehensive answers with lots of detail."],
    "creative": ["Prefer creative, original and vivid answers."],
    "formal": ["I prefer a formal, professional tone."],
    "code-first": ["Show working code first, then explain briefly."],
    "lists": ["I like answers formatted as bullet or numbered lists."],
    "academic": ["I prefer an academic style: rigorous, precise and formal, like a scholarly text."],
}
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # also the server's limit (launch max_file_size): bigger posts are never stored
MAX_UPLOADS = 3  # uploaded models per visitor; their responses are freed when the visitor leaves
UPLOAD_CHUNK = 32  # an upload's answers encoded per step (~0.25 s on 2 cores): Stop is heard between steps
TABLE_HEIGHT = 1700  # px: 40 models and the header without an inner scroll bar
# headers wrap between words only, never inside one ("Ran k"); the per-column menu (sort, copy) is hidden: it
# takes a header's room
BOARD_CSS = """
.usl-board th .header { white-space: normal; word-break: keep-all; overflow-wrap: normal; }
.usl-board .cell-menu-button { display: none; }
"""
# after a board is ranked or a share link opened: its status line and table scrolled into view
SCROLL_TO_BOARD = "() => document.getElementById('custom-status')?.scrollIntoView({behavior: 'smooth', block: 'start'})"


def parse_upload(engine: Engine, path: str | None, name: str) -> tuple[str, dict[int, str]]:
    """An uploaded AlpacaEval model_outputs.json, checked: size, JSON, fields, instructions of this bench."""
    if not path:
        raise ValueError("choose a model_outputs.json file to upload")
    size = Path(path).stat().st_size
    if size > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is {size / 2**20:.1f} MB; at most {MAX_UPLOAD_BYTES // 2**20} MB")
    from crm_core.data.importers import read_model_outputs_json

    items = read_model_outputs_json(path)
    name = " ".join((name or "").split()) or next((i.get("generator") for i in items if i.get("generator")), "")
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
        self.size, self.max_age, self._views, self._lock = size, max_age, OrderedDict(), threading.Lock()

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
    return f"{page.split('?', 1)[0]}?profile={profile.link_token(TOPICS)}"


def build_app(engine: Engine, title: str = "USL: the User-centric Subjective Leaderboard",
              max_jobs: int = 16) -> gr.Blocks:  # fmt: skip
    """The Space's Blocks, bound to one engine (shared by every visitor, as its cache is). Up to `max_jobs`
    leaderboard requests are served at once; they take turns at the engine's fair lock (a query of a cross-encoder,
    or a whole instant board, then its drawing), so a cached view, which takes no turn, never queues behind them."""
    n_models = len(engine.models)
    header = (f"# {title}\nusl-space {version('usl-space')} · bench **{engine.bench.name}**: "
              f"{len(engine.query)} queries, {n_models} models, baseline `{engine.baseline}` · CRM: "
              f"{crm_label(engine.scorer)} (checkpoint `{engine.checkpoint[:12]}`)")  # fmt: skip
    topic_names = list(TOPICS)
    model_names = [m for m in engine.models if m != engine.baseline]
    work = Path(tempfile.mkdtemp(prefix="usl-space-"))

    def selected_ids(topics: list[str], free_text: str) -> list[int] | None:
        """The queries the topic controls select: the ticked topics, narrowed by the free-text topic when one is
        typed; None for all. No topic ticked and no free text is an error, not a silent 'all'."""
        topics, text = list(topics or []), (free_text or "").strip()
        if engine.topics is None or (set(topics) == set(topic_names) and not text):
            return None
        if not topics and not text:
            raise gr.Error("no topic is ticked: tick at least one topic (or Select all), or type a free-text topic")
        try:
            ids = set(engine.topics.select(topics).tolist()) if topics else set(engine.query)
            if text:
                ids &= set(engine.topics.select([], text).tolist())
        except ValueError as error:
            raise gr.Error(str(error)) from None
        if not ids:
            raise gr.Error("no query matches these topics; tick more topics or change the free-text topic")
        return sorted(ids)

    builder: list[threading.Thread] = []  # the thread building the response side when a visitor started it

    def bench_ready(should_stop=None) -> Iterator[str]:
        """While the instant path's response side is not in memory (a first start without a response store builds
        it: minutes), a status line every second saying how far the build got; starts the build if nobody has.
        Returns when it is ready, or when `should_stop` says so."""
        if not engine.instant or engine.table_ready:
            return
        if engine.building is None and not any(t.is_alive() for t in builder):
            builder[:] = [threading.Thread(target=engine.response_table, daemon=True, name="response-side")]
            builder[0].start()
        while not engine.table_ready:
            if should_stop is not None and should_stop():
                return
            if builder and not builder[0].is_alive() and not engine.table_ready and engine.building is None:
                raise gr.Error("building the bench's response side failed; the server log says why")
            build = engine.building
            yield ("Waiting for the bench: " + (build.line() if build else "loading its response side")
                   + ". Boards take about a second once it is ready.")  # fmt: skip
            time.sleep(1.0)

    def run(eng: Engine, criteria, dislikes, ids, models, n_queries, what, should_stop=None, started=None):
        ids = eng.sample(int(n_queries) if n_queries else None, 0, ids)
        try:  # the engine checks the criteria before it scores anything
            for board in eng.stream(criteria, dislikes, ids, models, should_stop=should_stop):
                yield board, status(board, what, None if started is None else time.perf_counter() - started)
        except ValueError as error:
            raise gr.Error(str(error)) from None

    def chart(board: Leaderboard | None) -> str | None:
        return png(bar_chart(board), job_folder(work / "charts"))

    # finished views by request: asked again (the general leaderboard on every page load, a criteria set another
    # visitor ranked), they are served without ranking or drawing, so they stay fast while others' jobs run
    views = ViewMemo()

    # -- handlers ------------------------------------------------------------------------------------------------
    def leaderboard_view():
        key = ("general",)
        if (seen := views.get(key)) is not None:
            yield seen
            return
        started = time.perf_counter()
        for text in bench_ready():
            yield gr.skip(), gr.skip(), gr.skip(), text
        for board, text in run(engine, [], [], None, None, None, "General preference:", started=started):
            outputs = frame(board), topic_frame(board), chart(board), text
            yield outputs
        if board.done:
            views.put(key, outputs)

    def custom_engine(baseline, models, uploads) -> tuple[Engine, list[str]]:
        eng = engine.with_baseline(baseline) if baseline and baseline != engine.baseline else engine
        for name, outputs in (uploads or {}).items():
            eng = eng.with_model(name, outputs)
        chosen = list(models or [])  # uploads are in the Models list, ticked when added; a visitor may untick them
        if eng.baseline != engine.baseline and engine.baseline not in chosen:
            chosen.append(engine.baseline)  # the bench's own baseline is a row like any other under another one
        if not chosen:
            raise gr.Error("select at least one model")
        return eng, chosen

    stops: dict[str, threading.Event] = {}  # per visitor (session): set by Stop, seen by their job within a query

    def customize(topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                  request: gr.Request):  # fmt: skip
        started = time.perf_counter()  # what the status reports: the visitor's wait, not only the scoring
        stop = stops[request.session_hash] = threading.Event()
        try:
            yield from custom_board(topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                                    stop, started)  # fmt: skip
        except gr.Error as error:  # said in the status line; the board shown before stays (no red "Error" over it)
            yield gr.skip(), gr.skip(), gr.skip(), f"**Not ranked:** {as_text(error.message)}", gr.skip()
        finally:
            if stops.get(request.session_hash) is stop:
                del stops[request.session_hash]

    def custom_board(topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads, stop, started):
        for text in bench_ready(stop.is_set):  # Stop ends this visitor's wait, not the build others may wait for
            yield gr.skip(), gr.skip(), gr.skip(), text, gr.skip()
        if stop.is_set():
            yield gr.skip(), gr.skip(), gr.skip(), "Stopped while waiting for the bench.", gr.skip()
            return
        eng, chosen = custom_engine(baseline, models, uploads)
        ids = selected_ids(topics, free_text or "")
        criteria, dislikes = lines(criteria), lines(dislikes)
        what = f"Custom ({criteria_label(criteria, dislikes)}):"
        key = None if uploads else ("custom", eng.baseline, tuple(chosen), tuple(criteria), tuple(dislikes),
                                    None if ids is None else tuple(ids), n_queries)  # fmt: skip
        if key is not None and (seen := views.get(key)) is not None:
            yield seen
            return
        board = None
        for board, text in run(eng, criteria, dislikes, ids, chosen, n_queries, what, stop.is_set, started):
            if not board.done:  # the finished board is shown once, below, with its downloads
                with eng.turns:  # drawing is CPU work: it takes a turn, as scoring does (cached views never do)
                    shown = frame(board), topic_frame(board), chart(board), text, gr.update()
                yield shown
        if board is None:
            yield frame(None), topic_frame(None), None, f"{what} stopped before any query was scored", None
            return
        text = status(board, what, time.perf_counter() - started) + reading(eng, board.criteria, board.dislikes)
        if stop.is_set() and not board.done:
            text = text.replace(" scoring... ", " stopped at ", 1) + " · the downloads hold this partial board"
        with eng.turns:  # one folder per job: visitors never share a download
            outputs = (frame(board), topic_frame(board), chart(board), text,
                       downloads(board, job_folder(work / "custom")))  # fmt: skip
        if key is not None and board.done:
            views.put(key, outputs)
        yield outputs

    def stop_job(request: gr.Request) -> None:
        event = stops.get(request.session_hash)
        if event is not None:
            event.set()

    # -- votes: "Help it learn your taste" (compositional CRMs) --------------------------------------------------
    def taste_step(taste, outcome, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                   request: gr.Request | None = None):  # fmt: skip
        """Record the vote on the pending pair (outcome None: just ask), refit, re-rank, ask the next pair."""
        if not engine.instant:
            raise gr.Error("voting needs a compositional CRM (the default one)")
        eng, chosen = custom_engine(baseline, models, uploads)
        try:
            criteria_lines, dislike_lines = check_criteria(lines(criteria)), check_criteria(lines(dislikes), "dislikes")
        except ValueError as error:
            raise gr.Error(str(error)) from None
        taste = dict(taste or {})
        votes = [Vote(**v) for v in taste.get("votes", [])]
        pending = taste.get("pending")
        if outcome is not None and pending:
            votes.append(Vote(int(pending[0]), pending[1], pending[2], float(outcome)))
        side, covariance, prior = fit_votes(eng, criteria_lines, dislike_lines, votes)
        ids = selected_ids(topics, free_text or "")
        board = eng.rank(criteria_lines, dislike_lines, query_ids=eng.sample(int(n_queries), 0, ids),
                         models=chosen, side=side if votes else None)  # fmt: skip
        idx, a, b = ask(eng, side, covariance, [row["model"] for row in board.rows], votes)
        taste = {"votes": [asdict(v) for v in votes], "pending": [idx, a, b]}
        moved = moves(prior, side)
        read = f"{len(votes)} vote(s). The votes moved: {moved}" if moved else f"{len(votes)} vote(s)."
        read += " · Top 3 now: " + ", ".join(as_text(row["model"]) for row in board.rows[:3])  # seen by the buttons
        profile = Profile(criteria_lines, dislike_lines, list(topics or []), votes,
                          [float(w) for w in side.weights], [float(u) for u in side.voice])  # fmt: skip
        folder = work / "profiles" / f"{time.time_ns()}"
        folder.mkdir(parents=True, exist_ok=True)
        profile.save(folder / "usl-profile.json")
        text = status(board, "Custom (your votes):" if votes else "Custom:") + reading(eng, criteria_lines,
                                                                                       dislike_lines)  # fmt: skip
        return (taste, frame(board), topic_frame(board), chart(board), text, eng.query[idx],
                eng.output[(idx, a)], eng.output[(idx, b)], read, str(folder / "usl-profile.json"),
                share_link(request, profile))  # fmt: skip

    def taste_handler(outcome: float | None):
        def handler(taste, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                    request: gr.Request):  # fmt: skip
            for text in bench_ready():
                yield waiting(text)
            yield taste_step(taste, outcome, topics, free_text, criteria, dislikes, baseline, models, n_queries,
                             uploads, request)  # fmt: skip

        return handler

    def open_shared(request: gr.Request):
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
        known = [t for t in profile.topics if t in topic_names]
        taste = {"votes": [asdict(v) for v in profile.votes], "pending": None, "shared": True}
        return ("\n".join(profile.criteria), "\n".join(profile.dislikes), known or topic_names, taste,
                f"Shared profile opened: {len(profile.criteria)} criteria, {len(profile.votes)} vote(s).",
                gr.Tabs(selected="customize"), gr.Accordion(open=True))  # fmt: skip

    def waiting(text: str) -> tuple:
        """The vote handlers' outputs while the bench is not ready: only the status line (cu_status) changes."""
        return *(gr.skip(),) * 4, text, *(gr.skip(),) * 6

    def shared_board(taste, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                     request: gr.Request):  # fmt: skip
        if not (taste or {}).get("shared") or not engine.instant:
            yield (gr.skip(),) * 11
            return
        yield waiting("Opening the shared profile: ranking it...")
        for text in bench_ready():
            yield waiting(text)
        yield taste_step({k: v for k, v in taste.items() if k != "shared"}, None, topics, free_text, criteria,
                         dislikes, baseline, models, n_queries, uploads, request)  # fmt: skip

    def load_profile(path):
        if not path:
            raise gr.Error("choose a profile JSON file")
        try:
            profile = Profile.load(path)
        except (OSError, ValueError) as error:
            raise gr.Error(str(error).replace(str(path), Path(path).name)) from None
        finally:
            Path(path).unlink(missing_ok=True)
        taste = {"votes": [asdict(v) for v in profile.votes], "pending": None}
        known = [t for t in profile.topics if t in topic_names]  # a profile from another version may name others
        return ("\n".join(profile.criteria), "\n".join(profile.dislikes), known or topic_names, taste,
                f"Profile loaded: {len(profile.criteria)} criteria, {len(profile.votes)} vote(s). Press "
                "**Ask me** to re-rank with it.")  # fmt: skip

    def compare(criteria_a, criteria_b, n_queries):
        for text in bench_ready():
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), text
        boards = {}
        for key, criteria in (("A", criteria_a), ("B", criteria_b)):
            for board, text in run(engine, lines(criteria), [], None, None, n_queries, f"Set {key}:"):
                boards[key] = board
                yield (*compare_outputs(boards), text)
        yield (*compare_outputs(boards), "Both rankings done.")

    def compare_outputs(boards: dict) -> tuple:
        a, b = boards.get("A"), boards.get("B")
        if a is None or b is None:
            return compact_frame(a), compact_frame(b), None, ""
        rate_a = {r["model"]: r["win_rate"] for r in a.rows}
        rate_b = {r["model"]: r["win_rate"] for r in b.rows}
        common = sorted(set(rate_a) & set(rate_b))
        tau = kendall_tau([rate_a[m] for m in common], [rate_b[m] for m in common])
        slopes = png(slope_chart(a, b), job_folder(work / "charts"))
        return compact_frame(a), compact_frame(b), slopes, f"**Kendall tau** between the two rankings: {tau:+.3f}"

    def inspect(query_choice, model, criteria, dislikes, uploads):
        eng = engine.with_model(model, uploads[model]) if model in (uploads or {}) else engine
        if not query_choice or not model:
            raise gr.Error("pick a query and a model")
        idx = int(str(query_choice).split(":", 1)[0])
        try:
            criteria, dislikes = check_criteria(lines(criteria)), check_criteria(lines(dislikes), "dislikes")
        except ValueError as error:
            raise gr.Error(str(error)) from None
        if (idx, model) not in eng.output:
            raise gr.Error(f"{as_text(model)} did not answer query {idx}")
        scores = eng.score(criteria, dislikes, [idx], [model])
        p, _ = eng.preference(scores, idx, model)
        value, value2, _ = scores[(idx, model)]
        if eng.pointwise:
            detail = (f"P({as_text(model)} preferred) = **{p:.3f}** (pointwise CRM: scores {value:+.3f} vs "
                      f"{scores[(idx, eng.baseline)][0]:+.3f}; order plays no part)")  # fmt: skip
        else:
            detail = (f"P({as_text(model)} preferred) = **{p:.3f}**: {value:.3f} with it shown first, "
                      f"{value2:.3f} with it shown second")  # fmt: skip
        return eng.query[idx], eng.output[(idx, model)], eng.output[(idx, eng.baseline)], detail

    def forget_uploads(visitor_uploads: dict | None) -> None:
        # a plain function, not the bound method: Gradio deep-copies what a State holds, engine included
        engine.forget_uploads(visitor_uploads)

    def upload(path, name, uploads, models, request: gr.Request):
        """Check the file, then encode its answers here, with progress (Stop ends it, nothing added): ranking with
        the upload is then as fast as with any other model."""
        started = time.perf_counter()
        unchanged = uploads, gr.skip(), gr.skip(), None  # the file box is emptied: the file is read once
        try:
            key, outputs = parse_upload(engine, path, name)
            if key not in (uploads or {}) and len(uploads or {}) >= MAX_UPLOADS:
                raise ValueError(f"at most {MAX_UPLOADS} uploaded models per visitor; reload the page to start over")
        except (ValueError, DataValidationError) as error:
            shown = str(error).replace(str(path), Path(path).name) if path else str(error)  # no server paths
            yield *unchanged, "**Upload refused:**\n\n" + "  \n".join(as_text(line) for line in shown.splitlines())
            return
        finally:
            if path:
                Path(path).unlink(missing_ok=True)  # read once: the upload is not kept on disk
        stop = stops[f"{request.session_hash}/upload"] = threading.Event()
        report = Progress(f"encoding the answers of {key}", len(outputs))
        prepared: list[bool] = []

        def encode() -> None:  # in a thread: this generator reports its progress meanwhile
            prepared.append(engine.prepare_upload(key, outputs, report, stop.is_set, UPLOAD_CHUNK))

        worker = threading.Thread(target=encode, daemon=True, name="upload")
        worker.start()
        try:
            while worker.is_alive():
                yield *unchanged, as_text(report.line()) + ". **Stop** ends it; nothing is added then."
                worker.join(1.0)
        finally:
            stops.pop(f"{request.session_hash}/upload", None)
        if not prepared:
            yield *unchanged, "**Upload failed** while encoding its answers; the server log says why."
            return
        if not prepared[0]:
            yield *unchanged, f"**Upload stopped** after {time.perf_counter() - started:.1f} s: nothing was added."
            return
        uploads = {**(uploads or {}), key: outputs}
        choices = model_names + list(uploads)  # the upload joins Models (ticked) and Inspect, for this visitor
        ticked = [*[m for m in models or [] if m != key], key]
        yield (uploads, gr.update(choices=choices, value=ticked), gr.update(choices=choices), None,
               f"Added **{as_text(key)}** ({len(outputs)} of {len(engine.query)} queries answered; its answers "
               f"encoded in {time.perf_counter() - started:.1f} s, so boards with it are as quick as any). It is "
               "ticked in Customize's Models and can be opened in Inspect, for this session only.")  # fmt: skip

    def stop_upload(request: gr.Request) -> None:
        event = stops.get(f"{request.session_hash}/upload")
        if event is not None:
            event.set()

    # -- layout ------------------------------------------------------------------------------------------------
    with gr.Blocks(title="USL") as demo:
        gr.HTML(f"<style>{BOARD_CSS}</style>", padding=False)  # here, not launch(css=): every launcher gets it
        gr.Markdown(header)
        uploads = gr.State({}, delete_callback=forget_uploads)  # the visitor left: free their uploads
        with gr.Tabs() as tabs:
            with gr.Tab("Leaderboard"):
                lb_status = gr.Markdown("Loading the general-preference leaderboard...")
                lb_table = gr.Dataframe(frame(None), interactive=False, wrap=True, max_height=TABLE_HEIGHT,
                                        elem_id="leaderboard-table", elem_classes="usl-board",
                                        column_widths=COLUMN_WIDTHS)  # fmt: skip
                gr.Markdown(LEGEND)
                with gr.Accordion("Win rate by topic (%)", open=False):
                    lb_topics = gr.Dataframe(topic_frame(None), interactive=False, max_height=TABLE_HEIGHT)
                lb_plot = gr.Image(label="Win rate with 95% CI", type="filepath", interactive=False)
            with gr.Tab("Customize", id="customize"):
                with gr.Row():
                    with gr.Column():
                        topics = gr.CheckboxGroup(topic_names, value=topic_names, label="Topics")
                        with gr.Row():
                            all_btn, clear_btn = gr.Button("Select all", size="sm"), gr.Button("Clear", size="sm")
                        free_text = gr.Textbox(label="Free-text topic (optional)", placeholder="e.g. cooking")
                    with gr.Column():
                        preset = gr.Dropdown(list(PRESETS), value=next(iter(PRESETS)), label="Preset")
                        criteria = gr.Textbox(lines=4, label="My criteria (one per line)", elem_id="criteria")
                        dislikes = gr.Textbox(lines=2, label="I dislike (one per line)")
                with gr.Row():
                    baseline = gr.Dropdown(engine.models, value=engine.baseline, label="Baseline")
                    n_queries = gr.Slider(1, len(engine.query), value=len(engine.query), step=1, label="Queries")
                with gr.Row():
                    open_only = gr.Checkbox(False, label="Open-weights models only", elem_id="open-only")
                models = gr.CheckboxGroup(model_names, value=model_names, label="Models")
                with gr.Row():
                    go = gr.Button("Rank", variant="primary", elem_id="rank")
                    stop = gr.Button("Stop")
                cu_status = gr.Markdown(elem_id="custom-status")
                cu_table = gr.Dataframe(frame(None), interactive=False, wrap=True, elem_id="custom-table",
                                        max_height=TABLE_HEIGHT, elem_classes="usl-board",
                                        column_widths=COLUMN_WIDTHS)  # fmt: skip
                gr.Markdown(LEGEND)
                gr.Markdown(SEMANTICS, elem_id="semantics")
                with gr.Accordion("Win rate by topic (%)", open=False):
                    cu_topics = gr.Dataframe(topic_frame(None), interactive=False, max_height=TABLE_HEIGHT)
                cu_plot = gr.Image(
                    label="Win rate with 95% CI", type="filepath", interactive=False, elem_id="custom-chart"
                )
                files = gr.File(label="Download (CSV, JSON)", file_count="multiple", elem_id="custom-files")
                with gr.Accordion("Help it learn your taste: vote on a few answers", open=False) as taste_box:
                    gr.Markdown("Two answers to one query, chosen where your vote would change the ranking most. "
                                "Pick the one you prefer: the weights are refitted (close to what your criteria "
                                "say, so one vote cannot swing them) and the board re-ranks at once.")  # fmt: skip
                    taste = gr.State({})
                    taste_ask = gr.Button("Ask me", elem_id="taste-ask")
                    taste_query = gr.Textbox(label="Query", interactive=False)
                    with gr.Row():
                        taste_a = gr.Textbox(label="Answer A", lines=10, interactive=False)
                        taste_b = gr.Textbox(label="Answer B", lines=10, interactive=False)
                    with gr.Row():
                        vote_a = gr.Button("A is better", elem_id="vote-a")
                        vote_tie = gr.Button("About the same", elem_id="vote-tie")
                        vote_b = gr.Button("B is better", elem_id="vote-b")
                    taste_read = gr.Markdown(elem_id="taste-read")
                    with gr.Row():
                        profile_out = gr.File(label="Your profile (criteria, votes, weights)", elem_id="profile-out")
                        profile_in = gr.File(label="Load a profile", file_types=[".json"], type="filepath",
                                             elem_id="profile-in")  # fmt: skip
                    share = gr.Textbox(label="Share link: opens this board with your criteria and votes",
                                       interactive=False, buttons=["copy"], elem_id="share-link")  # fmt: skip
            with gr.Tab("Compare"):
                with gr.Row():
                    crit_a = gr.Textbox(lines=3, label="Criteria A", value="\n".join(PRESETS["concise"]))
                    crit_b = gr.Textbox(lines=3, label="Criteria B", value="\n".join(PRESETS["detailed"]))
                cmp_n = gr.Slider(1, len(engine.query), value=min(100, len(engine.query)), step=1, label="Queries")
                cmp_go = gr.Button("Compare", variant="primary")
                cmp_status, cmp_tau = gr.Markdown(), gr.Markdown()
                with gr.Row():
                    cmp_a = gr.Dataframe(compact_frame(None), interactive=False, label="Ranking A", wrap=True,
                                         max_height=TABLE_HEIGHT, elem_id="compare-a")  # fmt: skip
                    cmp_b = gr.Dataframe(compact_frame(None), interactive=False, label="Ranking B", wrap=True,
                                         max_height=TABLE_HEIGHT, elem_id="compare-b")  # fmt: skip
                cmp_plot = gr.Image(label="Rank under A and under B", type="filepath", interactive=False)
            with gr.Tab("Inspect"):
                choices = [f"{idx}: {text[:90]}" for idx, text in sorted(engine.query.items())]
                with gr.Row():
                    in_query = gr.Dropdown(choices, value=choices[0], label="Query", filterable=True)
                    in_model = gr.Dropdown(model_names, value=model_names[0] if model_names else None, label="Model")
                in_criteria = gr.Textbox(lines=2, label="Criteria (one per line)")
                in_dislikes = gr.Textbox(lines=1, label="I dislike (one per line)")
                in_go = gr.Button("Judge", variant="primary")
                in_detail = gr.Markdown()
                in_text = gr.Textbox(label="Query", interactive=False)
                with gr.Row():
                    in_model_out = gr.Textbox(label="Model's response", lines=14, interactive=False)
                    in_base_out = gr.Textbox(label=f"Baseline's response ({engine.baseline})", lines=14,
                                             interactive=False)  # fmt: skip
            with gr.Tab("Add a model"):
                gr.Markdown("Upload AlpacaEval `model_outputs.json` (a JSON array of `{instruction, output, "
                            f"generator}}`, at most {MAX_UPLOAD_BYTES // 2**20} MB). It is judged under the "
                            "Customize tab's criteria and ranked there, for your session only.")  # fmt: skip
                up_file = gr.File(
                    label="model_outputs.json", file_types=[".json"], type="filepath", elem_id="upload-file"
                )
                up_name = gr.Textbox(label="Model name (default: the file's generator)")
                with gr.Row():
                    up_go = gr.Button("Add", variant="primary", elem_id="upload-add")
                    up_stop = gr.Button("Stop", elem_id="upload-stop")
                up_status = gr.Markdown(elem_id="upload-status")

        demo.load(leaderboard_view, None, [lb_table, lb_topics, lb_plot, lb_status], concurrency_id="score",
                  concurrency_limit=max_jobs)  # fmt: skip
        all_btn.click(lambda: gr.update(value=topic_names), None, topics)
        open_models = [m for m in model_names if m in catalog() and catalog()[m].open_weights]
        open_only.change(lambda on: gr.update(value=open_models if on else model_names), open_only, models)
        clear_btn.click(lambda: gr.update(value=[]), None, topics)
        preset.change(lambda p: "\n".join(PRESETS.get(p, [])), preset, criteria)
        # "always_last": a Rank pressed while a job is still finishing is run after it, never dropped
        go.click(customize, [topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads],
                 [cu_table, cu_topics, cu_plot, cu_status, files], api_name="customize", concurrency_id="score",
                 concurrency_limit=max_jobs, trigger_mode="always_last").then(None, js=SCROLL_TO_BOARD)  # fmt: skip
        stop.click(stop_job, None, None, api_name="stop", concurrency_limit=None)
        taste_inputs = [topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads]
        taste_outputs = [taste, cu_table, cu_topics, cu_plot, cu_status, taste_query, taste_a, taste_b, taste_read,
                         profile_out, share]  # fmt: skip
        for button, outcome, name in ((taste_ask, None, "ask"), (vote_a, 1.0, "vote_a"), (vote_tie, 0.5, "vote_tie"),
                                      (vote_b, 0.0, "vote_b")):  # fmt: skip
            button.click(taste_handler(outcome), [taste, *taste_inputs], taste_outputs, api_name=name,
                         concurrency_id="score")  # fmt: skip
        demo.load(
            open_shared, None, [criteria, dislikes, topics, taste, taste_read, tabs, taste_box], api_name=False
        ).then(shared_board, [taste, *taste_inputs], taste_outputs, api_name=False, concurrency_id="score").then(
            None, js=SCROLL_TO_BOARD
        )
        profile_in.upload(load_profile, profile_in, [criteria, dislikes, topics, taste, taste_read],
                          api_name="load_profile")  # fmt: skip
        cmp_go.click(compare, [crit_a, crit_b, cmp_n], [cmp_a, cmp_b, cmp_plot, cmp_tau, cmp_status],
                     api_name="compare", concurrency_id="score", concurrency_limit=max_jobs)  # fmt: skip
        in_go.click(inspect, [in_query, in_model, in_criteria, in_dislikes, uploads],
                    [in_text, in_model_out, in_base_out, in_detail], api_name="inspect")  # fmt: skip
        up_stop.click(stop_upload, None, None, api_name="stop_upload", concurrency_limit=None)
        up_go.click(upload, [up_file, up_name, uploads, models], [uploads, models, in_model, up_file, up_status],
                    api_name="upload")  # fmt: skip
    return demo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="usl-space", description="Run the USL Gradio app.")
    parser.add_argument("--data", metavar="DIR", help="bench or AlpacaEval-style folder (default: pull the public "
                        "AlpacaEval responses into the cache first, with progress)")  # fmt: skip
    parser.add_argument("--model", metavar="DIR", help="CRM checkpoint folder (default: the CRM in space/models/)")
    parser.add_argument("--backend", choices=["auto", "onnx", "torch"], default="auto", help="how to run the CRM")
    parser.add_argument("--baseline", metavar="NAME", help="baseline model (default: the bench's)")
    parser.add_argument("--cache", metavar="FILE", help="score cache (default: ~/.cache/usl/scores.sqlite)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 in a Space)")
    parser.add_argument("--port", type=int, default=7860, help="port to listen on")
    parser.add_argument("--max-jobs", type=int, default=16, help="leaderboard requests served at once (more wait "
                        "in the queue); they share the CRM one query at a time, taking turns, so cached views "
                        "never wait behind long jobs")  # fmt: skip
    parser.add_argument("--no-warm", action="store_true", help="do not score the general leaderboard in the "
                        "background at start (by default it is, so visitors find it in the cache)")  # fmt: skip
    args = parser.parse_args(argv)
    from usl_space.loading import load_engine

    data = args.data
    if data is None:
        data = pull_default_data()
    started = time.perf_counter()
    print(f"usl-space: loading the bench from {data}, its topics and the CRM (about half a minute)", flush=True)
    engine = load_engine(data, args.model, args.backend, args.cache, True, args.baseline)
    print(f"usl-space: {len(engine.models)} models, {len(engine.query)} queries, CRM {crm_label(engine.scorer)} "
          f"loaded in {time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    if not args.no_warm:
        threading.Thread(target=warm_general_leaderboard, args=(engine,), daemon=True, name="warm").start()
    # Gradio's own routes use a constant Starlette deprecated: one warning per click, nothing a user can act on
    warnings.filterwarnings("ignore", message=".HTTP_422_UNPROCESSABLE_ENTITY. is deprecated")
    demo = build_app(engine, max_jobs=args.max_jobs)
    demo.queue(default_concurrency_limit=args.max_jobs)
    demo.launch(server_name=args.host, server_port=args.port, max_file_size=MAX_UPLOAD_BYTES)
    return 0


def warm_general_leaderboard(engine: Engine) -> None:
    """Score every query under general preference into the shared cache, so page loads find the Leaderboard
    tab ready. The engine scores one query per turn at the CRM, so visitors' jobs interleave with this one. For a
    compositional CRM this builds (or loads) the bench's response side, after which every leaderboard is
    instant."""
    started = time.perf_counter()
    print("usl-space: scoring the general leaderboard into the cache in the background")
    engine.fill([], [], engine.query_ids, progress=True, batch_queries=2)
    print(f"usl-space: the general leaderboard is ready ({time.perf_counter() - started:.0f} s)")


def pull_default_data() -> str:
    """First start without --data: download the public AlpacaEval responses of the default models, with a
    progress bar, into the cache (resumed if interrupted); later starts find them there."""
    from crm_core.data import ALPACA_EVAL_BASELINE
    from crm_core.paths import cache_dir

    from usl_space.catalog import default_models
    from usl_space.pull import pull

    folder = cache_dir() / "alpaca_eval"
    print(f"usl-space: getting the public AlpacaEval responses into {folder} (once)")
    report = pull(default_models(), folder, ALPACA_EVAL_BASELINE, progress=True)
    if report.failed:
        first = next(iter(report.failed.values()))
        raise SystemExit(f"usl-space: could not download the default bench ({len(report.failed)} model(s) failed; "
                         f"first: {first}). Without network, pass --data DIR (an AlpacaEval folder or a usl-data "
                         "bench) to run offline.")  # fmt: skip
    return str(folder)


if __name__ == "__main__":
    raise SystemExit(main())
