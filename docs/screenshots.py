"""Screenshots of the running app for README.md (Debian's chromium through Playwright): the board a visitor gets
for a criterion on a laptop (docs/app.png), and the general board on a 390 px phone (docs/phone.png).

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
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for a board (a first start "
                        "without a response store builds one for minutes)")  # fmt: skip
    args = parser.parse_args()
    wait = args.timeout * 1000
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        phone.goto(args.url)
        phone.get_by_text("General preference: done").wait_for(timeout=wait)
        phone.wait_for_timeout(1000)
        phone.screenshot(path=f"{args.output}/phone.png")
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(args.url)
        page.get_by_role("tab", name="Customize").click()
        page.locator("#criteria textarea").fill("Prefer short, concise answers.\nAnswer in French.")
        page.locator("#rank").click()
        page.locator("#custom-status").get_by_text("done").wait_for(timeout=wait)
        page.wait_for_timeout(2000)  # the board scrolls into view
        page.screenshot(path=f"{args.output}/app.png")
        browser.close()


if __name__ == "__main__":
    main()
