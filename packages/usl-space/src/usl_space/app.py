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
import threading
import time
import warnings
from collections.abc import Sequence
from importlib.metadata import version

import gradio as gr
from crm_core.guard import fail

from usl_space.benches import BenchPage, bench_pages, switch_address
from usl_space.catalog import catalog
from usl_space.engine import Engine
from usl_space.service import MAX_UPLOAD_BYTES, AppService
from usl_space.views import (
    COLUMN_WIDTHS,
    LEGEND,
    SEMANTICS,
    compact_frame,
    crm_label,
    frame,
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
TABLE_HEIGHT = 1700  # px: 40 models and the header without an inner scroll bar
# headers wrap between words only, never inside one ("Ran k"); the per-column menu (sort, copy) is hidden: it
# takes a header's room
BOARD_CSS = """
.usl-board th .header { white-space: normal; word-break: keep-all; overflow-wrap: normal; }
.usl-board .cell-menu-button { display: none; }
"""
# after a board is ranked or a share link opened: its status line and table scrolled into view
# the bench picker: open the address switch_address made (the other bench's page, the criteria in its link)
OPEN_ADDRESS = "(address) => { if (address) window.location.href = new URL(address, window.location.href).href; }"
SCROLL_TO_BOARD = "() => document.getElementById('custom-status')?.scrollIntoView({behavior: 'smooth', block: 'start'})"


def build_app(engines: Engine | Sequence[Engine], title: str = "USL: the User-centric Subjective Leaderboard",
              max_jobs: int = 16) -> gr.Blocks:  # fmt: skip
    """The Space's Blocks: one page per bench, each bound to its engine (shared by every visitor, as its cache is);
    the first bench at the root, the others at their own paths, a picker on each page that opens another bench's page
    with the criteria typed so far. Up to `max_jobs` leaderboard requests are served at once; they take turns at an
    engine's fair lock (a query of a cross-encoder, or a whole instant board, then its drawing), so a cached view,
    which takes no turn, never queues behind them."""
    engines = [engines] if isinstance(engines, Engine) else list(engines)
    pages = bench_pages(engines)
    with gr.Blocks(title="USL") as demo:
        bench_page(demo, engines[0], pages, 0, title, max_jobs)
    for index in range(1, len(engines)):
        # the picker, not Gradio's navbar, opens another bench: it keeps the criteria typed so far
        with demo.route(pages[index].label, pages[index].path, show_in_navbar=False) as page:
            bench_page(page, engines[index], pages, index, title, max_jobs)
    return demo


def bench_page(page: gr.Blocks, engine: Engine, pages: list[BenchPage], index: int, title: str,
               max_jobs: int) -> None:  # fmt: skip
    """One bench's tabs and their wiring, inside `page` (the app's Blocks, or one of its routes). API names carry
    the bench's prefix on every page but the first (`speechmap_customize`): each bench is reachable by gradio_client."""
    api = pages[index].api_prefix
    n_models = len(engine.models)
    header = (f"# {title}\nusl-space {version('usl-space')} · bench **{engine.bench.name}**: "
              f"{len(engine.query)} queries, {n_models} models, baseline `{engine.baseline}` · CRM: "
              f"{crm_label(engine.scorer)} (checkpoint `{engine.checkpoint[:12]}`)")  # fmt: skip

    svc = AppService(engine)

    def forget_uploads(visitor_uploads: dict | None) -> None:
        # a plain function, not the bound method: Gradio deep-copies what a State holds, and with a bound method
        # it would copy the service, engine included
        engine.forget_uploads(visitor_uploads)

    gr.HTML(f"<style>{BOARD_CSS}</style>", padding=False)  # here, not launch(css=): every launcher gets it
    gr.Markdown(header)
    if len(pages) > 1:
        with gr.Row():
            picker = gr.Dropdown([p.label for p in pages], value=pages[index].label, label="Bench",
                                 elem_id="bench-picker", scale=4)  # fmt: skip
            address = gr.Textbox(visible=False)
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
                    topics = gr.CheckboxGroup(svc.topic_names, value=svc.topic_names, label="Topics")
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
            models = gr.CheckboxGroup(svc.model_names, value=svc.model_names, label="Models")
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
            cu_plot = gr.Image(label="Win rate with 95% CI", type="filepath", interactive=False, elem_id="custom-chart")
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
                first = svc.model_names[0] if svc.model_names else None
                in_model = gr.Dropdown(svc.model_names, value=first, label="Model")
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
            up_file = gr.File(label="model_outputs.json", file_types=[".json"], type="filepath", elem_id="upload-file")
            up_name = gr.Textbox(label="Model name (default: the file's generator)")
            with gr.Row():
                up_go = gr.Button("Add", variant="primary", elem_id="upload-add")
                up_stop = gr.Button("Stop", elem_id="upload-stop")
            up_status = gr.Markdown(elem_id="upload-status")

    page.load(svc.leaderboard_view, None, [lb_table, lb_topics, lb_plot, lb_status], concurrency_id="score",
              concurrency_limit=max_jobs)  # fmt: skip
    all_btn.click(lambda: gr.update(value=svc.topic_names), None, topics)
    open_models = [m for m in svc.model_names if m in catalog() and catalog()[m].open_weights]
    open_only.change(lambda on: gr.update(value=open_models if on else svc.model_names), open_only, models)
    clear_btn.click(lambda: gr.update(value=[]), None, topics)
    preset.change(lambda p: "\n".join(PRESETS.get(p, [])), preset, criteria)
    # "always_last": a Rank pressed while a job is still finishing is run after it, never dropped
    go.click(svc.customize, [topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads],
             [cu_table, cu_topics, cu_plot, cu_status, files], api_name=f"{api}customize", concurrency_id="score",
             concurrency_limit=max_jobs, trigger_mode="always_last").then(None, js=SCROLL_TO_BOARD)  # fmt: skip
    stop.click(svc.stop_job, None, None, api_name=f"{api}stop", concurrency_limit=None)
    taste_inputs = [topics, free_text, criteria, dislikes, baseline, models, n_queries, uploads]
    taste_outputs = [taste, cu_table, cu_topics, cu_plot, cu_status, taste_query, taste_a, taste_b, taste_read,
                     profile_out, share]  # fmt: skip
    for button, outcome, name in ((taste_ask, None, "ask"), (vote_a, 1.0, "vote_a"), (vote_tie, 0.5, "vote_tie"),
                                  (vote_b, 0.0, "vote_b")):  # fmt: skip
        button.click(svc.taste_handler(outcome), [taste, *taste_inputs], taste_outputs, api_name=f"{api}{name}",
                     concurrency_id="score")  # fmt: skip
    page.load(
        svc.open_shared,
        None,
        [criteria, dislikes, topics, taste, taste_read, tabs, taste_box],
        api_name=False,  # type: ignore[arg-type]  # False keeps it out of the API (Gradio's docs; its stubs say str)
    ).then(
        svc.shared_board, [taste, *taste_inputs], [*taste_outputs, tabs], api_name=False, concurrency_id="score"
    ).then(None, js=SCROLL_TO_BOARD)
    profile_in.upload(svc.load_profile, profile_in, [criteria, dislikes, topics, taste, taste_read],
                      api_name=f"{api}load_profile")  # fmt: skip
    cmp_go.click(svc.compare, [crit_a, crit_b, cmp_n], [cmp_a, cmp_b, cmp_plot, cmp_tau, cmp_status],
                 api_name=f"{api}compare", concurrency_id="score", concurrency_limit=max_jobs)  # fmt: skip
    in_go.click(svc.inspect, [in_query, in_model, in_criteria, in_dislikes, uploads],
                [in_text, in_model_out, in_base_out, in_detail], api_name=f"{api}inspect")  # fmt: skip
    up_stop.click(svc.stop_upload, None, None, api_name=f"{api}stop_upload", concurrency_limit=None)
    up_go.click(svc.upload, [up_file, up_name, uploads, models], [uploads, models, in_model, up_file, up_status],
                api_name=f"{api}upload")  # fmt: skip
    if len(pages) > 1:
        picker.change(lambda label, *form: switch_address(pages, label, *form), [picker, criteria, dislikes, topics],
                      address, api_name=False).then(None, address, None, js=OPEN_ADDRESS)  # type: ignore[arg-type]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="usl-space", description="Run the USL Gradio app.")
    parser.add_argument("--data", metavar="DIR", action="append", help="bench or AlpacaEval-style folder; repeat it "
                        "to serve several benches, each on its own page with a picker (the first is the default, at "
                        "the root) (default: pull the public AlpacaEval responses into the cache first, with "
                        "progress)")  # fmt: skip
    parser.add_argument("--model", metavar="DIR", help="CRM checkpoint folder (default: the CRM in space/models/)")
    parser.add_argument("--backend", choices=["auto", "onnx", "torch"], default="auto", help="how to run the CRM")
    parser.add_argument("--baseline", metavar="NAME", help="baseline model of the first bench (default: the bench's)")
    parser.add_argument("--cache", metavar="FILE", help="score cache (default: ~/.cache/usl/scores.sqlite)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 in a Space)")
    parser.add_argument("--port", type=int, default=7860, help="port to listen on")
    parser.add_argument("--max-jobs", type=int, default=16, help="leaderboard requests served at once (more wait "
                        "in the queue); they share the CRM one query at a time, taking turns, so cached views "
                        "never wait behind long jobs")  # fmt: skip
    parser.add_argument("--no-warm", action="store_true", help="do not score the general leaderboard in the "
                        "background at start (by default it is, so visitors find it in the cache)")  # fmt: skip
    args = parser.parse_args(argv)
    from usl_space.loading import load_engines

    folders = args.data or [pull_default_data()]
    started = time.perf_counter()
    print(f"usl-space: loading {len(folders)} bench(es) from {', '.join(folders)}, their topics and the CRM (about "
          "half a minute each)", flush=True)  # fmt: skip
    try:
        engines = load_engines(folders, args.model, args.backend, args.cache, args.baseline)
    except Exception as error:  # a bad folder or model is one line, as in every other command; a bug a traceback
        return fail("usl-space", error, 2)
    for engine in engines:
        print(f"usl-space: {engine.bench.name}: {len(engine.models)} models, {len(engine.query)} queries", flush=True)
    print(f"usl-space: CRM {crm_label(engines[0].scorer)}; loaded in {time.perf_counter() - started:.0f} s", flush=True)
    if not args.no_warm:
        for engine in engines:  # each in its own thread; they take turns at the CRM
            threading.Thread(target=warm_general_leaderboard, args=(engine,), daemon=True, name="warm").start()
    # Gradio's own routes use a constant Starlette deprecated: one warning per click, nothing a user can act on
    warnings.filterwarnings("ignore", message=".HTTP_422_UNPROCESSABLE_ENTITY. is deprecated")
    demo = build_app(engines, max_jobs=args.max_jobs)
    demo.queue(default_concurrency_limit=args.max_jobs)
    demo.launch(server_name=args.host, server_port=args.port, max_file_size=MAX_UPLOAD_BYTES)
    return 0


def warm_general_leaderboard(engine: Engine) -> None:
    """Score every query under general preference into the shared cache, so page loads find the Leaderboard
    tab ready. The engine scores one query per turn at the CRM, so visitors' jobs interleave with this one. For a
    compositional CRM this builds (or loads) the bench's response side, after which every leaderboard is
    instant."""
    started = time.perf_counter()
    print(f"usl-space: scoring {engine.bench.name}'s general leaderboard into the cache in the background")
    engine.fill([], [], engine.query_ids.tolist(), progress=True, batch_queries=2)
    print(f"usl-space: {engine.bench.name}'s general leaderboard is ready ({time.perf_counter() - started:.0f} s)")


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
