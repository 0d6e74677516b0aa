"""The Inspect tab: one answer against the baseline's, under a criteria set, with how the judge got there."""

from __future__ import annotations

import gradio as gr

from usl_space.service import AppService, checked
from usl_space.views import as_text


class InspectTab:
    def __init__(self, svc: AppService):
        self.svc = svc

    def layout(self) -> None:
        engine, names = self.svc.engine, self.svc.model_names
        with gr.Tab("Inspect"):
            choices = [f"{idx}: {text[:90]}" for idx, text in sorted(engine.query.items())]
            with gr.Row():
                self.query = gr.Dropdown(choices, value=choices[0], label="Query", filterable=True)
                self.model = gr.Dropdown(names, value=names[0] if names else None, label="Model")
            self.criteria = gr.Textbox(lines=2, label="Criteria (one per line)")
            self.dislikes = gr.Textbox(lines=1, label="I dislike (one per line)")
            self.go = gr.Button("Judge", variant="primary")
            self.detail = gr.Markdown()
            self.text = gr.Textbox(label="Query", interactive=False)
            with gr.Row():
                self.model_out = gr.Textbox(label="Model's response", lines=14, interactive=False)
                self.base_out = gr.Textbox(label=f"Baseline's response ({engine.baseline})", lines=14,
                                           interactive=False)  # fmt: skip

    def wire(self, api: str, uploads: gr.State) -> None:
        self.go.click(self.inspect, [self.query, self.model, self.criteria, self.dislikes, uploads],
                      [self.text, self.model_out, self.base_out, self.detail], api_name=f"{api}inspect")  # fmt: skip

    def inspect(self, query_choice, model, criteria, dislikes, uploads):
        eng = self.svc.engine.with_model(model, uploads[model]) if model in (uploads or {}) else self.svc.engine
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
