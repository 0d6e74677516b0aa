"""usl-space: the Gradio app. Leaderboard, Customize, Compare, Inspect and Add-a-model tabs over one Engine per
bench, a page per bench: each tab's layout and handlers are a module of usl_space.tabs, what they share is
usl_space.service, what the tables and status lines show is usl_space.views.

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
from crm_core.compositional.cues import written_in
from crm_core.guard import fail

from usl_space.benches import BenchPage, bench_pages, switch_address
from usl_space.engine import Engine
from usl_space.service import AppService
from usl_space.tabs.add_model import MAX_UPLOAD_BYTES, AddModelTab
from usl_space.tabs.compare import CompareTab
from usl_space.tabs.customize import CustomizeTab
from usl_space.tabs.inspect import InspectTab
from usl_space.tabs.leaderboard import LeaderboardTab
from usl_space.views import crm_label

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
# headers wrap between words only, never inside one ("Ran k"); the per-column menu (sort, copy) is hidden: it
# takes a header's room
BOARD_CSS = """
.usl-board th .header { white-space: normal; word-break: keep-all; overflow-wrap: normal; }
.usl-board .cell-menu-button { display: none; }
"""
# the bench picker: open the address switch_address made (the other bench's page, the criteria in its link)
OPEN_ADDRESS = "(address) => { if (address) window.location.href = new URL(address, window.location.href).href; }"


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
    """One bench's tabs (usl_space.tabs, one module each) inside `page` (the app's Blocks, or one of its routes),
    and what joins them: the visitor's uploads, which Customize ranks and Inspect opens, and the bench picker, which
    carries Customize's criteria to another bench. API names carry the bench's prefix on every page but the first
    (`speechmap_customize`): each bench is reachable by gradio_client."""
    api = pages[index].api_prefix
    header = (f"# {title}\nusl-space {version('usl-space')} · bench **{engine.bench.name}**: "
              f"{len(engine.query)} queries, {len(engine.models)} models, baseline `{engine.baseline}` · CRM: "
              f"{crm_label(engine.scorer)} (checkpoint `{engine.checkpoint[:12]}`)")  # fmt: skip
    svc = AppService(engine)
    board, custom = LeaderboardTab(svc), CustomizeTab(svc, PRESETS)
    compare, inspect, add = CompareTab(svc, PRESETS), InspectTab(svc), AddModelTab(svc)

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
        for tab in (board, custom, compare, inspect, add):
            tab.layout()
    board.wire(page, max_jobs)
    custom.wire(page, api, max_jobs, uploads, tabs)
    compare.wire(api, max_jobs)
    inspect.wire(api, uploads)
    add.wire(api, uploads, custom.models, inspect.model)
    if len(pages) > 1:
        picker.change(lambda label, *form: switch_address(pages, label, *form),
                      [picker, custom.criteria, custom.dislikes, custom.topics], address,
                      api_name=False).then(None, address, None, js=OPEN_ADDRESS)  # type: ignore[arg-type]  # fmt: skip


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
    written_in("Keep it brief.")  # the check for wishes in another language loads its models once (about 1 s)
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
