"""A new visitor's path through the running app, on real data, through its public API (gradio_client): a custom
leaderboard that refines live, compare, inspect, and an uploaded model ranked. Prints what each step returned
and how long it took; exits 1 at the first step that does not do what a visitor expects.

    uv run usl-space --data ../shared/data/usl/alpaca_eval --port 7861 &
    uv run python docs/walkthrough.py --url http://127.0.0.1:7861/ --data ../shared/data/usl/alpaca_eval
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import polars as pl
from gradio_client import Client, handle_file
from usl_space.loading import open_data
from usl_space.topics import TOPICS

ALL_TOPICS = list(TOPICS)  # every topic ticked: every query


def check(ok: bool, what: str) -> None:
    print(("  ok   " if ok else "  FAIL ") + what, flush=True)
    if not ok:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:7861/", help="the running app")
    parser.add_argument("--data", required=True, help="the folder the app was started with (for the upload)")
    parser.add_argument("--queries", type=int, default=24, help="queries in the custom leaderboard")
    args = parser.parse_args()
    bench = open_data(args.data, None)
    models = sorted(m for m in bench.responses["model"].unique().to_list() if m != bench.baseline)
    client = Client(args.url, verbose=False)

    print(f"customize: 'Prefer short, concise answers.' over {args.queries} queries, {len(models)} models")
    started = time.perf_counter()
    job = client.submit(ALL_TOPICS, "", "Prefer short, concise answers.", "I dislike emojis.", bench.baseline,
                        models, args.queries, api_name="/customize")  # fmt: skip
    statuses = []
    for update in job:
        statuses.append(update[3])  # outputs: table, topic table, chart, status, files
        if len(statuses) == 1:
            print(f"  first table after {time.perf_counter() - started:.1f} s: {update[3]!r}")
    table = job.result()[0]
    print(f"  full table after {time.perf_counter() - started:.1f} s: {statuses[-1]!r}")
    done = "done" in statuses[-1]  # a compositional CRM answers in one update; a cross-encoder refines live
    check(done and (len(statuses) >= 2 or "Read your criteria as" in statuses[-1]),
          f"the table arrived ({len(statuses)} update(s)), finished")  # fmt: skip
    check(len(table["data"]) == len(models) + 1, f"{len(table['data'])} rows: every model and the baseline")
    print("  top 3:", [row[1] for row in table["data"][:3]])

    print("compare: 'Prefer detailed, thorough answers.' vs 'Prefer short, concise answers.', 12 queries")
    a, b, _plot, tau, status = client.predict("Prefer detailed, thorough answers.", "Prefer short, concise answers.",
                                              12, api_name="/compare")  # fmt: skip
    check(len(a["data"]) == len(b["data"]) == len(models) + 1 and "Kendall tau" in tau, tau.strip())

    first = bench.queries.sort("idx").row(0, named=True)
    choice = f"{first['idx']}: {first['instruction'][:80]}"
    print(f"inspect: query {first['idx']}, model {models[0]}")
    query, model_out, base_out, detail = client.predict(choice, models[0], "Prefer short, concise answers.", "",
                                                        api_name="/inspect")  # fmt: skip
    check(bool(query) and bool(model_out) and bool(base_out) and "preferred" in detail, detail)

    print("add a model: the baseline's answers cut to their first sentence, as 'terse'")
    base = bench.responses.filter(pl.col("model") == bench.baseline).join(bench.queries, on="idx")
    items = [{"instruction": r["instruction"], "output": r["output"].split(". ")[0] + ".", "generator": "terse"}
             for r in base.iter_rows(named=True)]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        upload = Path(tmp) / "model_outputs.json"
        upload.write_text(json.dumps(items))
        message = client.predict(handle_file(str(upload)), "terse", api_name="/upload")
    check("Added" in message, message.splitlines()[0])
    table, _, _, status, _ = client.predict(ALL_TOPICS, "", "Prefer short, concise answers.", "", bench.baseline,
                                         models[:5], args.queries, api_name="/customize")  # fmt: skip
    ranked = [row[1] for row in table["data"]]
    check("upload:terse" in ranked, f"the upload is ranked: place {ranked.index('upload:terse') + 1} of "
          f"{len(ranked)} under 'Prefer short, concise answers.' ({status.strip()})")  # fmt: skip


if __name__ == "__main__":
    main()
