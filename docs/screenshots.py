"""Screenshots of the running app for README.md (Debian's chromium through Playwright).

uv run usl-space --data ../shared/data/usl/alpaca_eval --port 7861 &
uv run python docs/screenshots.py --url http://127.0.0.1:7861/ --output docs
"""

from __future__ import annotations

import argparse

from playwright.sync_api import sync_playwright

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7861/", help="the running app")
    parser.add_argument("--output", default="docs", help="folder for the PNG files")
    parser.add_argument("--wait", type=float, default=20, help="seconds before the Leaderboard shot; the Customize "
                        "shot waits for the board to finish (at most 60 times this)")  # fmt: skip
    args = parser.parse_args()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(args.url)
        page.wait_for_timeout(args.wait * 1000)
        page.screenshot(path=f"{args.output}/leaderboard.png")
        page.get_by_role("tab", name="Customize").click()
        page.locator("#criteria textarea").fill("Prefer short, concise answers.\nI dislike long-winded answers.")
        page.locator("#rank").click()
        page.locator("#custom-status").get_by_text("done").wait_for(timeout=args.wait * 60_000)
        page.locator("#custom-chart").scroll_into_view_if_needed()  # the chart loads lazily, when scrolled to
        page.locator("#custom-chart img").wait_for(timeout=60_000)
        page.wait_for_timeout(1000)  # the image decodes
        page.screenshot(path=f"{args.output}/customize.png", full_page=True)
        page.get_by_text("Help it learn your taste").click()
        page.locator("#taste-ask").click()
        page.locator("#taste-read").get_by_text("0 vote(s)").wait_for(timeout=60_000)
        for n in (1, 2, 3):
            page.locator("#vote-b").click()
            page.locator("#taste-read").get_by_text(f"{n} vote(s)").wait_for(timeout=60_000)
        page.locator("#taste-read").scroll_into_view_if_needed()
        page.screenshot(path=f"{args.output}/taste.png")
        browser.close()


if __name__ == "__main__":
    main()
