"""The Leaderboard tab: the general-preference board, shown on every page load (from the memo once ranked)."""

from __future__ import annotations

import time

import gradio as gr

from usl_space.request import RankRequest
from usl_space.service import TABLE_HEIGHT, AppService
from usl_space.views import COLUMN_WIDTHS, LEGEND, frame, panel_note, topic_frame


class LeaderboardTab:
    def __init__(self, svc: AppService):
        self.svc = svc

    def layout(self) -> None:
        with gr.Tab("Leaderboard"):
            self.status = gr.Markdown("Loading the general-preference leaderboard...")
            self.table = gr.Dataframe(frame(None), interactive=False, wrap=True, max_height=TABLE_HEIGHT,
                                      elem_id="leaderboard-table", elem_classes="usl-board",
                                      column_widths=COLUMN_WIDTHS)  # fmt: skip
            gr.Markdown(LEGEND)
            with gr.Accordion("Win rate by topic (%)", open=False):
                self.topics = gr.Dataframe(topic_frame(None), interactive=False, max_height=TABLE_HEIGHT)
            self.plot = gr.Image(label="Win rate with 95% CI", type="filepath", interactive=False)

    def wire(self, page: gr.Blocks, max_jobs: int) -> None:
        page.load(self.leaderboard_view, None, [self.table, self.topics, self.plot, self.status],
                  concurrency_id="score", concurrency_limit=max_jobs)  # fmt: skip

    def leaderboard_view(self):
        key = ("general",)
        if (seen := self.svc.views.get(key)) is not None:
            yield seen
            return
        started = time.perf_counter()
        for text in self.svc.bench_ready():
            yield gr.skip(), gr.skip(), gr.skip(), text
        for board, text in self.svc.run(self.svc.engine, RankRequest(), "General preference:", started=started):
            if board.done:  # on a bench without the reference panel: whose answers quality was judged against
                text += panel_note(self.svc.engine.own_panel)
            outputs = frame(board), topic_frame(board), self.svc.chart(board), text
            yield outputs
        if board.done:
            self.svc.views.put(key, outputs)
