"""The Customize tab: topics, criteria and dislikes, baseline and models into one checked request, the board it
ranks (with its reading of the criteria, downloads and a Stop); votes that teach it the visitor's taste; profiles
that download, load and travel as share links."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict
from pathlib import Path

import gradio as gr

from usl_space.catalog import catalog
from usl_space.engine import Engine
from usl_space.request import RankRequest
from usl_space.service import TABLE_HEIGHT, AppService, checked, job_folder
from usl_space.taste import Profile, Vote, ask, fit_votes, moves
from usl_space.topics import TOPICS
from usl_space.views import (
    COLUMN_WIDTHS,
    LEGEND,
    SEMANTICS,
    as_text,
    criteria_label,
    downloads,
    frame,
    reading,
    status,
    topic_frame,
)

# after a board is ranked or a share link opened: its status line and table scrolled into view
SCROLL_TO_BOARD = "() => document.getElementById('custom-status')?.scrollIntoView({behavior: 'smooth', block: 'start'})"


def share_link(request: gr.Request | None, profile: Profile) -> str:
    """The page's address with the profile as `?profile=TOKEN` (the browser's address, from the Referer the page
    sends; a bare query string when there is none)."""
    page = (request.headers.get("referer") or "") if request is not None else ""
    return f"{page.split('?', 1)[0]}?profile={profile.link_token(list(TOPICS))}"


class CustomizeTab:
    def __init__(self, svc: AppService, presets: dict[str, list[str]]):
        self.svc, self.presets = svc, presets

    def layout(self) -> None:
        svc, engine = self.svc, self.svc.engine
        with gr.Tab("Customize", id="customize"):
            with gr.Row():
                with gr.Column():
                    self.topics = gr.CheckboxGroup(svc.topic_names, value=svc.topic_names, label="Topics")
                    with gr.Row():
                        self.all_btn, self.clear_btn = gr.Button("Select all", size="sm"), gr.Button("Clear", size="sm")
                    self.free_text = gr.Textbox(label="Free-text topic (optional)", placeholder="e.g. cooking")
                with gr.Column():
                    self.preset = gr.Dropdown(list(self.presets), value=next(iter(self.presets)), label="Preset")
                    self.criteria = gr.Textbox(lines=4, label="My criteria (one per line)", elem_id="criteria")
                    self.dislikes = gr.Textbox(lines=2, label="I dislike (one per line)")
            with gr.Row():
                self.baseline = gr.Dropdown(engine.models, value=engine.baseline, label="Baseline")
                self.n_queries = gr.Slider(1, len(engine.query), value=len(engine.query), step=1, label="Queries")
            with gr.Row():
                self.open_only = gr.Checkbox(False, label="Open-weights models only", elem_id="open-only")
            self.models = gr.CheckboxGroup(svc.model_names, value=svc.model_names, label="Models")
            with gr.Row():
                self.go = gr.Button("Rank", variant="primary", elem_id="rank")
                self.stop = gr.Button("Stop")
            self.status = gr.Markdown(elem_id="custom-status")
            self.table = gr.Dataframe(frame(None), interactive=False, wrap=True, elem_id="custom-table",
                                      max_height=TABLE_HEIGHT, elem_classes="usl-board",
                                      column_widths=COLUMN_WIDTHS)  # fmt: skip
            gr.Markdown(LEGEND)
            gr.Markdown(SEMANTICS, elem_id="semantics")
            with gr.Accordion("Win rate by topic (%)", open=False):
                self.by_topic = gr.Dataframe(topic_frame(None), interactive=False, max_height=TABLE_HEIGHT)
            self.plot = gr.Image(label="Win rate with 95% CI", type="filepath", interactive=False,
                                 elem_id="custom-chart")  # fmt: skip
            self.files = gr.File(label="Download (CSV, JSON)", file_count="multiple", elem_id="custom-files")
            with gr.Accordion("Help it learn your taste: vote on a few answers", open=False) as self.taste_box:
                gr.Markdown("Two answers to one query, chosen where your vote would change the ranking most. "
                            "Pick the one you prefer: the weights are refitted (close to what your criteria "
                            "say, so one vote cannot swing them) and the board re-ranks at once.")  # fmt: skip
                self.taste = gr.State({})
                self.taste_ask = gr.Button("Ask me", elem_id="taste-ask")
                self.taste_query = gr.Textbox(label="Query", interactive=False)
                with gr.Row():
                    self.taste_a = gr.Textbox(label="Answer A", lines=10, interactive=False)
                    self.taste_b = gr.Textbox(label="Answer B", lines=10, interactive=False)
                with gr.Row():
                    self.vote_a = gr.Button("A is better", elem_id="vote-a")
                    self.vote_tie = gr.Button("About the same", elem_id="vote-tie")
                    self.vote_b = gr.Button("B is better", elem_id="vote-b")
                self.taste_read = gr.Markdown(elem_id="taste-read")
                with gr.Row():
                    self.profile_out = gr.File(label="Your profile (criteria, votes, weights)", elem_id="profile-out")
                    self.profile_in = gr.File(label="Load a profile", file_types=[".json"], type="filepath",
                                              elem_id="profile-in")  # fmt: skip
                self.share = gr.Textbox(label="Share link: opens this board with your criteria and votes",
                                        interactive=False, buttons=["copy"], elem_id="share-link")  # fmt: skip

    def wire(self, page: gr.Blocks, api: str, max_jobs: int, uploads: gr.State, tabs: gr.Tabs) -> None:
        svc = self.svc
        self.all_btn.click(lambda: gr.update(value=svc.topic_names), None, self.topics)
        self.clear_btn.click(lambda: gr.update(value=[]), None, self.topics)
        open_models = [m for m in svc.model_names if m in catalog() and catalog()[m].open_weights]
        self.open_only.change(lambda on: gr.update(value=open_models if on else svc.model_names), self.open_only,
                              self.models)  # fmt: skip
        self.preset.change(lambda p: "\n".join(self.presets.get(p, [])), self.preset, self.criteria)
        form = [self.topics, self.free_text, self.criteria, self.dislikes, self.baseline, self.models, self.n_queries,
                uploads]  # fmt: skip
        # "always_last": a Rank pressed while a job is still finishing is run after it, never dropped
        self.go.click(self.customize, form, [self.table, self.by_topic, self.plot, self.status, self.files],
                      api_name=f"{api}customize", concurrency_id="score", concurrency_limit=max_jobs,
                      trigger_mode="always_last").then(None, js=SCROLL_TO_BOARD)  # fmt: skip
        self.stop.click(self.stop_job, None, None, api_name=f"{api}stop", concurrency_limit=None)
        outputs = [self.taste, self.table, self.by_topic, self.plot, self.status, self.taste_query, self.taste_a,
                   self.taste_b, self.taste_read, self.profile_out, self.share]  # fmt: skip
        for button, outcome, name in ((self.taste_ask, None, "ask"), (self.vote_a, 1.0, "vote_a"),
                                      (self.vote_tie, 0.5, "vote_tie"), (self.vote_b, 0.0, "vote_b")):  # fmt: skip
            button.click(self.taste_handler(outcome), [self.taste, *form], outputs, api_name=f"{api}{name}",
                         concurrency_id="score")  # fmt: skip
        page.load(
            self.open_shared,
            None,
            [self.criteria, self.dislikes, self.topics, self.taste, self.taste_read, tabs, self.taste_box],
            api_name=False,  # type: ignore[arg-type]  # False keeps it out of the API (Gradio's docs; its stubs say str)
        ).then(self.shared_board, [self.taste, *form], [*outputs, tabs], api_name=False, concurrency_id="score").then(
            None, js=SCROLL_TO_BOARD
        )
        self.profile_in.upload(self.load_profile, self.profile_in,
                               [self.criteria, self.dislikes, self.topics, self.taste, self.taste_read],
                               api_name=f"{api}load_profile")  # fmt: skip

    def selected_ids(self, topics: list[str], free_text: str) -> list[int] | None:
        """The queries the topic controls select: the ticked topics, narrowed by the free-text topic when one is
        typed; None for all. No topic ticked and no free text is an error, not a silent 'all'."""
        topics, text = list(topics or []), (free_text or "").strip()
        if self.svc.engine.topics is None or (set(topics) == set(self.svc.topic_names) and not text):
            return None
        if not topics and not text:
            raise gr.Error("no topic is ticked: tick at least one topic (or Select all), or type a free-text topic")
        try:
            ids = set(self.svc.engine.topics.select(topics).tolist()) if topics else set(self.svc.engine.query)
            if text:
                ids &= set(self.svc.engine.topics.select([], text).tolist())
        except ValueError as error:
            raise gr.Error(str(error)) from None
        if not ids:
            raise gr.Error("no query matches these topics; tick more topics or change the free-text topic")
        return sorted(ids)

    def form_request(self, topics, free_text, criteria, dislikes, baseline, models, n_queries) -> RankRequest:
        """Customize's controls as one checked request: the bench's own baseline is a row like any other under
        another baseline."""
        chosen = list(models or [])  # uploads are in the Models list, ticked when added; a visitor may untick them
        if baseline and baseline != self.svc.engine.baseline and self.svc.engine.baseline not in chosen:
            chosen.append(self.svc.engine.baseline)
        if not chosen:
            raise gr.Error("select at least one model")
        other = baseline if baseline != self.svc.engine.baseline else None  # the bench's own: one memo key, not two
        return checked(criteria, dislikes, query_ids=self.selected_ids(topics, free_text or ""), models=chosen,
                       baseline=other, n_queries=int(n_queries) if n_queries else None)  # fmt: skip

    def custom_engine(self, rank_request: RankRequest, uploads) -> Engine:
        """The engine for this visitor's request: its baseline, with their uploads."""
        eng = self.svc.engine.for_request(rank_request)
        for name, outputs in (uploads or {}).items():
            eng = eng.with_model(name, outputs)
        return eng

    def customize(self, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                  request: gr.Request):  # fmt: skip
        started = time.perf_counter()  # what the status reports: the visitor's wait, not only the scoring
        stop = self.svc.stops[str(request.session_hash)] = threading.Event()
        try:
            rank_request = self.form_request(topics, free_text, criteria, dislikes, baseline, models, n_queries)
            yield from self.custom_board(rank_request, uploads, stop, started)
        except gr.Error as error:  # said in the status line; the board shown before stays (no red "Error" over it)
            yield gr.skip(), gr.skip(), gr.skip(), f"**Not ranked:** {as_text(error.message)}", gr.skip()
        finally:
            if self.svc.stops.get(str(request.session_hash)) is stop:
                del self.svc.stops[str(request.session_hash)]

    def custom_board(self, rank_request: RankRequest, uploads, stop: threading.Event, started: float):
        # Stop ends this visitor's wait, not the build others may wait for
        for text in self.svc.bench_ready(stop.is_set):
            yield gr.skip(), gr.skip(), gr.skip(), text, gr.skip()
        if stop.is_set():
            yield gr.skip(), gr.skip(), gr.skip(), "Stopped while waiting for the bench.", gr.skip()
            return
        eng = self.custom_engine(rank_request, uploads)
        what = f"Custom ({criteria_label(rank_request.criteria, rank_request.dislikes)}):"
        key = None if uploads else ("custom", rank_request)
        if key is not None and (seen := self.svc.views.get(key)) is not None:
            yield seen
            return
        board = None
        for board, text in self.svc.run(eng, rank_request, what, stop.is_set, started):
            if not board.done:  # the finished board is shown once, below, with its downloads
                with eng.turns:  # drawing is CPU work: it takes a turn, as scoring does (cached views never do)
                    shown = frame(board), topic_frame(board), self.svc.chart(board), text, gr.update()
                yield shown
        if board is None:
            yield frame(None), topic_frame(None), None, f"{what} stopped before any query was scored", None
            return
        text = status(board, what, time.perf_counter() - started) + reading(board)
        if stop.is_set() and not board.done:
            text = text.replace(" scoring... ", " stopped at ", 1) + " · the downloads hold this partial board"
        with eng.turns:  # one folder per job: visitors never share a download
            outputs = (frame(board), topic_frame(board), self.svc.chart(board), text,
                       downloads(board, job_folder(self.svc.work / "custom")))  # fmt: skip
        if key is not None and board.done:
            self.svc.views.put(key, outputs)
        yield outputs

    def stop_job(self, request: gr.Request) -> None:
        event = self.svc.stops.get(str(request.session_hash))
        if event is not None:
            event.set()

    def taste_step(self, taste, outcome, rank_request: RankRequest, topics, uploads,
                   request: gr.Request | None = None):  # fmt: skip
        """Record the vote on the pending pair (outcome None: just ask), refit, re-rank, ask the next pair
        (`topics`: the ticked ones, which a profile keeps)."""
        if not self.svc.engine.instant:
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
        folder = self.svc.work / "profiles" / f"{time.time_ns()}"
        folder.mkdir(parents=True, exist_ok=True)
        profile.save(folder / "usl-profile.json")
        text = status(board, "Custom (your votes):" if votes else "Custom:") + reading(board)
        return (taste, frame(board), topic_frame(board), self.svc.chart(board), text, eng.query[idx],
                eng.output[(idx, a)], eng.output[(idx, b)], read, str(folder / "usl-profile.json"),
                share_link(request, profile))  # fmt: skip

    def taste_handler(self, outcome: float | None):
        def handler(taste, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                    request: gr.Request):  # fmt: skip
            rank_request = self.form_request(topics, free_text, criteria, dislikes, baseline, models, n_queries)
            for text in self.svc.bench_ready():
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
        known = [t for t in profile.topics if t in self.svc.topic_names]
        taste = {"votes": [asdict(v) for v in profile.votes], "pending": None, "shared": True}
        return ("\n".join(profile.criteria), "\n".join(profile.dislikes), known or self.svc.topic_names, taste,
                f"Shared profile opened: {len(profile.criteria)} criteria, {len(profile.votes)} vote(s).",
                gr.skip(), gr.Accordion(open=True))  # fmt: skip

    def waiting(self, text: str) -> tuple:
        """The vote handlers' outputs while the bench is not ready: only the status line (cu_status) changes."""
        return *(gr.skip(),) * 4, text, *(gr.skip(),) * 6

    def shared_board(self, taste, topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads,
                     request: gr.Request):  # fmt: skip
        if not (taste or {}).get("shared") or not self.svc.engine.instant:
            yield (gr.skip(),) * 12
            return
        yield *self.waiting("Opening the shared profile: ranking it..."), gr.skip()
        for text in self.svc.bench_ready():
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
        # a profile from another version may name other topics
        known = [t for t in profile.topics if t in self.svc.topic_names]
        return ("\n".join(profile.criteria), "\n".join(profile.dislikes), known or self.svc.topic_names, taste,
                f"Profile loaded: {len(profile.criteria)} criteria, {len(profile.votes)} vote(s). Press "
                "**Ask me** to re-rank with it.")  # fmt: skip
