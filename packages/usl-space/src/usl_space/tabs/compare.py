"""The Compare tab: two criteria sets ranked side by side, their Kendall tau and a slope chart."""

from __future__ import annotations

import gradio as gr
from crm_core.agreement import kendall_tau

from usl_space.charts import png, slope_chart
from usl_space.service import TABLE_HEIGHT, AppService, checked, job_folder
from usl_space.views import compact_frame


class CompareTab:
    def __init__(self, svc: AppService, presets: dict[str, list[str]]):
        self.svc, self.presets = svc, presets

    def layout(self) -> None:
        n = len(self.svc.engine.query)
        with gr.Tab("Compare"):
            with gr.Row():
                self.crit_a = gr.Textbox(lines=3, label="Criteria A", value="\n".join(self.presets["concise"]))
                self.crit_b = gr.Textbox(lines=3, label="Criteria B", value="\n".join(self.presets["detailed"]))
            self.n_queries = gr.Slider(1, n, value=min(100, n), step=1, label="Queries")
            self.go = gr.Button("Compare", variant="primary")
            self.status, self.tau = gr.Markdown(), gr.Markdown()
            with gr.Row():
                self.a = gr.Dataframe(compact_frame(None), interactive=False, label="Ranking A", wrap=True,
                                      max_height=TABLE_HEIGHT, elem_id="compare-a")  # fmt: skip
                self.b = gr.Dataframe(compact_frame(None), interactive=False, label="Ranking B", wrap=True,
                                      max_height=TABLE_HEIGHT, elem_id="compare-b")  # fmt: skip
            self.plot = gr.Image(label="Rank under A and under B", type="filepath", interactive=False)

    def wire(self, api: str, max_jobs: int) -> None:
        self.go.click(self.compare, [self.crit_a, self.crit_b, self.n_queries],
                      [self.a, self.b, self.plot, self.tau, self.status], api_name=f"{api}compare",
                      concurrency_id="score", concurrency_limit=max_jobs)  # fmt: skip

    def compare(self, criteria_a, criteria_b, n_queries):
        for text in self.svc.bench_ready():
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), text
        boards = {}
        for key, criteria in (("A", criteria_a), ("B", criteria_b)):
            rank_request = checked(criteria, n_queries=int(n_queries) if n_queries else None)
            for board, text in self.svc.run(self.svc.engine, rank_request, f"Set {key}:"):
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
        slopes = png(slope_chart(a, b), job_folder(self.svc.work / "charts"))
        return compact_frame(a), compact_frame(b), slopes, f"**Kendall tau** between the two rankings: {tau:+.3f}"
