"""A share link against Rank, in a real browser: how long a visitor who opens a link with votes waits for its board,
beside a visitor who types criteria and clicks Rank, on the same running app, round after round.

Start the app first (the shipped CRM and its saved response side, as a Space serves it), then:

    uv run usl-space --data ../shared/data/usl/alpaca_eval --port 7861 &
    uv run python benchmarks/share_link.py --url http://127.0.0.1:7861/ --output benchmarks/results/share_link.json

Rank: from the click to a status that says "done". Link: from opening the page to the votes' board (its status
says how many votes were counted), and to that board scrolled into view; the page load is included, as a visitor
waits for it. Also the link's length.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip
TOP_OF_STATUS = (
    "(() => { const e = document.getElementById('custom-status'); return e ? e.getBoundingClientRect().y : null })"
)
TOP_OF_STATUS += "()"
VOTES = [(12, "Meta-Llama-3.1-405B-Instruct-Turbo", "claude-3-5-sonnet-20240620", 1.0),
         (301, "gpt-4o-2024-05-13", "Qwen2-72B-Instruct", 0.0),
         (77, "yi-large-preview", "gpt-4-turbo-2024-04-09", 0.5)]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:7861/", help="the running app (default data and CRM)")
    parser.add_argument("--rounds", type=int, default=3, help="Rank and link, one after the other, this many times")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="the browser (Debian's chromium)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from emit import emit
    from playwright.sync_api import sync_playwright
    from usl_space.taste import Profile, Vote
    from usl_space.topics import TOPICS

    profile = Profile(["Prefer short, concise answers."], [], list(TOPICS), [Vote(*v) for v in VOTES])
    link = f"{args.url}?profile={profile.link_token(list(TOPICS))}"
    ranks, links, in_view = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        for n in range(args.rounds):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(args.url)
            page.get_by_text("General preference: done").wait_for(timeout=600_000)
            page.get_by_role("tab", name="Customize").click()
            page.locator("#criteria textarea").fill(f"Prefer short, concise answers. Round {n}.")  # never seen
            started = time.perf_counter()
            page.locator("#rank").click()
            page.locator("#custom-status").get_by_text("done").wait_for(timeout=600_000)
            ranks.append(round(time.perf_counter() - started, 2))
            page.close()
            fresh = browser.new_page(viewport={"width": 1280, "height": 900})
            started = time.perf_counter()
            fresh.goto(link)
            fresh.locator("#taste-read").get_by_text(f"{len(VOTES)} vote(s)").wait_for(timeout=600_000)
            links.append(round(time.perf_counter() - started, 2))
            for _ in range(20):  # the board scrolls into view once it is drawn
                top = fresh.evaluate(TOP_OF_STATUS)
                if top is not None and -2 <= top < 900:
                    break
                fresh.wait_for_timeout(500)
            in_view.append(round(time.perf_counter() - started, 2) if top is not None and -2 <= top < 900 else None)
            fresh.close()
        browser.close()
    emit({"machine": f"{platform.machine()}, {os.cpu_count()} cores", "url": args.url,
          "link_characters": len(link), "votes": len(VOTES), "rank_seconds": ranks, "link_seconds": links,
          "rank_median": statistics.median(ranks), "link_median": statistics.median(links),
          "link_seconds_to_board_in_view": in_view}, args.output)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
