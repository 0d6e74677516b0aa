"""Click to table in a real browser: the Space on the default bench, Debian's chromium driven by Playwright.

The app is served from this process on 127.0.0.1 (as `usl-space` serves it, with the shipped compositional CRM
and its saved response side). For each of N never-seen criteria sets the benchmark types them into Customize,
clicks Rank and stops the clock when the table has shown its busy state and dropped it again and the
status says "done": what a visitor waits.
It records the median and the slowest, and the process's memory (RSS) with the app up and after the requests.

    uv run python benchmarks/browser_leaderboard.py --data ../shared/data/usl/alpaca_eval \\
        --output benchmarks/results/browser_leaderboard_cpu.json
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip
# Gradio shows a status tracker on the table while a request runs: an observer (installed before each click, so no
# state change is missed between polls) marks the request finished when the tracker has shown and hidden again
WATCH = """() => {
  const tracker = document.querySelector('#custom-table [data-testid="status-tracker"]');
  window.uslSeen = false; window.uslDone = false;
  if (window.uslObserver) window.uslObserver.disconnect();
  window.uslObserver = new MutationObserver(() => {
    if (!tracker.classList.contains('hide')) window.uslSeen = true;
    else if (window.uslSeen) window.uslDone = true;
  });
  window.uslObserver.observe(tracker, {attributes: true, attributeFilter: ['class']});
}"""
FINISHED = "() => window.uslDone && document.querySelector('#custom-status').innerText.includes('done')"
CRITERIA = ["No emojis, please.", "Short answers with a table.", "Explain like I am twelve.",
            "Formal tone for my manager.", "Give step by step instructions.", "I love a closing summary.",
            "Avoid markdown headings.", "Be witty.", "Cite sources with links.", "Keep sentences short."]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the bench (AlpacaEval folder or usl-data bench)")
    parser.add_argument("--model", help="CRM folder (default: the shipped compositional one)")
    parser.add_argument("--cache-dir", help="cache folder; its saved response side is reused (default: a new one, "
                        "built before the clock starts)")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from emit import emit

    if not CHROMIUM.exists():
        parser.error(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)")
    from instant_leaderboard import rss_mb
    from playwright.sync_api import sync_playwright
    from usl_space.app import build_app
    from usl_space.loading import load_engine

    cache_dir = Path(args.cache_dir or tempfile.mkdtemp(prefix="usl-browser-"))
    engine = load_engine(args.data, args.model, cache=cache_dir / "scores.sqlite")
    build = engine.response_table(progress=True)
    demo = build_app(engine)
    demo.queue(default_concurrency_limit=2)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    result = {"machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores",
              "queries": len(engine.query), "models": len(engine.models),
              "response_side_build_seconds": round(build.seconds, 1), "rss_mb_app_up": round(rss_mb())}  # fmt: skip
    seconds = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"http://127.0.0.1:{port}/")
        page.get_by_text("General preference: done").wait_for(timeout=120_000)
        page.get_by_role("tab", name="Customize").click()
        for i, criteria in enumerate(CRITERIA):
            page.locator("#criteria textarea").fill(f"{criteria} (visitor {i})")
            page.evaluate(WATCH)
            started = time.perf_counter()
            page.locator("#rank").click()
            page.wait_for_function(FINISHED, timeout=120_000, polling=10)
            seconds.append(time.perf_counter() - started)
            print(f"{criteria!r}: {seconds[-1]:.2f} s", flush=True)
        browser.close()
    demo.close()
    result["click_to_table_seconds"] = {"median": round(statistics.median(seconds), 3),
                                        "max": round(max(seconds), 3), "n": len(seconds),
                                        "all": [round(s, 3) for s in seconds]}  # fmt: skip
    result["rss_mb_after_requests"] = round(rss_mb())
    emit(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
