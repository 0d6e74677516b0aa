"""Does the CRM follow length criteria on the leaderboard's own pairs? For a seeded sample of AlpacaEval queries,
every model's response is scored against the baseline's under "Prefer detailed, thorough answers." and under
"Prefer short, concise answers."; "follows" is the share of pairs in which the CRM prefers the longer (detailed)
or the shorter (concise) response, by how much the word counts differ (|log ratio| buckets). Diagnostic for the
Kendall tau between those two leaderboards (issue 6): a judge that followed length every time would give -1.

    uv run python training/experiments/length_following.py --data ../shared/data/usl/alpaca_eval --queries 30
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np
import polars as pl
from usl_space.loading import open_data, open_scorer

CRITERIA = {"detailed": "Prefer detailed, thorough answers.", "concise": "Prefer short, concise answers."}
BUCKETS = [(0.0, 0.1), (0.1, 0.25), (0.25, 0.5), (0.5, 0.8), (0.8, float("inf"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a bench folder (e.g. ../shared/data/usl/alpaca_eval)")
    parser.add_argument("--model", help="CRM folder (default: the shipped CRM)")
    parser.add_argument("--queries", type=int, default=30, help="queries sampled (seeded)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results/length_following.json")
    args = parser.parse_args()

    bench, crm = open_data(args.data), open_scorer(args.model)
    ids = random.Random(args.seed).sample(bench.queries["idx"].to_list(), args.queries)
    report: dict = {"model": args.model or "shipped", "bench": bench.name, "queries": args.queries, "seed": args.seed}
    for kind, criterion in CRITERIA.items():
        log_ratio, margin = [], []
        for idx in ids:
            query = bench.queries.filter(pl.col("idx") == idx)["instruction"][0]
            rows = bench.responses.filter(pl.col("idx") == idx)
            outputs = dict(zip(rows["model"].to_list(), rows["output"].to_list(), strict=True))
            others = [m for m in outputs if m != bench.baseline]
            base = outputs[bench.baseline]
            scores = crm.score_responses([criterion], query, [base] + [outputs[m] for m in others], batch_size=32)
            for model, score in zip(others, scores[1:], strict=True):
                log_ratio.append(np.log(max(len(outputs[model].split()), 1) / max(len(base.split()), 1)))
                margin.append(float(score - scores[0]))
        x, y = np.array(log_ratio), np.array(margin)
        follows = np.sign(y) == (1 if kind == "detailed" else -1) * np.sign(x)
        buckets = []
        for low, high in BUCKETS:
            mask = (np.abs(x) >= low) & (np.abs(x) < high)
            bound = None if high == float("inf") else high  # JSON has no infinity
            share = float(follows[mask].mean())
            buckets.append({"abs_log_ratio": [low, bound], "n": int(mask.sum()), "follows": share})
        report[kind] = {"criterion": criterion, "n": len(x), "follows": float(follows.mean()), "buckets": buckets}
        print(f"{criterion} follows length in {follows.mean():.3f} of {len(x)} pairs")
        for b in buckets:
            print(f"  |log ratio| {b['abs_log_ratio']}: n={b['n']} follows={b['follows']:.3f}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
